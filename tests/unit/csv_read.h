/*
 * csv_read.h — test helper: an output CSV file of a result directory read
 * strictly (RFC 4180 quoting, CRLF line ends, every row as wide as the
 * header), its cells looked up by row and column name.
 */
#ifndef AIP_CSV_READ_H
#define AIP_CSV_READ_H

#include "aip_test.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct csv {
    char *text;
    char **cell;              /* rows × cols cells */
    size_t rows, cols;
} csv;

/* Parse an RFC 4180 file with CRLF line ends; every row must have the
 * header's number of cells.  0 on success. */
static inline int csv_read(csv *c, const char *dir, const char *file)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/ASCEND_PROFILER_OUTPUT/%s", dir, file);
    size_t n;
    memset(c, 0, sizeof *c);
    c->text = aip_test_slurp(path, &n);
    if (!c->text)
        return -1;
    size_t cap = 64;
    c->cell = malloc(cap * sizeof *c->cell);
    char *p = c->text, *e = c->text + n;
    size_t k = 0, row_cells = 0;
    while (p < e) {
        char *out = p, *cell = p;
        if (*p == '"') { /* quoted: "" is a quote */
            p++;
            for (;;) {
                if (p >= e)
                    return -1;
                if (*p == '"' && p + 1 < e && p[1] == '"') {
                    *out++ = '"';
                    p += 2;
                } else if (*p == '"') {
                    p++;
                    break;
                } else {
                    *out++ = *p++;
                }
            }
        } else {
            while (p < e && *p != ',' && *p != '\r')
                *out++ = *p++;
        }
        int eol = p < e && *p == '\r';
        if (!(p < e && (*p == ',' || eol)))
            return -1;
        p += eol ? 2 : 1;
        *out = 0;
        if (k == cap)
            c->cell = realloc(c->cell, (cap *= 2) * sizeof *c->cell);
        c->cell[k++] = cell;
        row_cells++;
        if (eol) {
            if (!c->cols)
                c->cols = row_cells;
            else if (row_cells != c->cols)
                return -1;
            row_cells = 0;
        }
    }
    c->rows = c->cols ? k / c->cols - 1 : 0; /* data rows, after the header */
    return row_cells ? -1 : 0;
}

static inline void csv_free(csv *c)
{
    free(c->text);
    free(c->cell);
}

/* Column index of `name` in the header, -1 if absent. */
static inline int col(const csv *c, const char *name)
{
    for (size_t i = 0; i < c->cols; i++)
        if (!strcmp(c->cell[i], name))
            return (int)i;
    return -1;
}

/* Cell of data row r (0 = the first after the header), column `name`. */
static inline const char *at(const csv *c, size_t r, const char *name)
{
    int k = col(c, name);
    return k < 0 ? "<no column>" : c->cell[(r + 1) * c->cols + (size_t)k];
}

/* A "<us>.<3 decimals>" cell in ns (as the CSVs write µs). */
static inline int64_t us_cell(const csv *c, size_t r, const char *name)
{
    const char *v = at(c, r, name);
    long long a = 0, f = 0;
    sscanf(v, "%lld.%lld", &a, &f);
    return a * 1000 + f;
}

/* The length of [a0, a1) ∩ [b0, b1). */
static inline int64_t overlap(int64_t a0, int64_t a1, int64_t b0, int64_t b1)
{
    int64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;
    return hi > lo ? hi - lo : 0;
}

#endif
