/*
 * strlist.h — NULL-terminated string lists (mstx domain include/exclude)
 * owned by the library: one copy and one free for every layer.
 */
#ifndef AIP_STRLIST_H
#define AIP_STRLIST_H

/* aip__strlist_copy() : a copy of `src` (NULL or empty → NULL). */
char **aip__strlist_copy(const char *const *src);

/* aip__strlist_free() : free a list from aip__strlist_copy(); NULL is a no-op. */
void aip__strlist_free(char **list);

#endif
