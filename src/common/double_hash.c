/*
 * double_hash.c — msprof-analyze's double_hash (common_func/utils.py),
 * shared by the communication exporters (group labels) and the cluster
 * pass (parallel_group_info matching).
 */
#include "double_hash.h"

unsigned long long aip__double_hash(const char *s, size_t n)
{
    unsigned long long a = 0, b = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        a = (a * 29 + c) & 0xFFFFFFFFull;
        b = (b * 131 + c) & 0xFFFFFFFFull;
    }
    return a << 32 | b;
}
