/*
 * strlist.c — see strlist.h.
 */
#include "strlist.h"

#include <stdlib.h>
#include <string.h>

char **aip__strlist_copy(const char *const *src)
{
    if (!src || !src[0])
        return NULL;
    size_t n = 0;
    while (src[n])
        n++;
    char **dst = calloc(n + 1, sizeof *dst);
    for (size_t i = 0; dst && i < n; i++)
        dst[i] = strdup(src[i]);
    return dst;
}

void aip__strlist_free(char **list)
{
    for (char **p = list; p && *p; p++)
        free(*p);
    free(list);
}
