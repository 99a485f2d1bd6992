/*
 * op_rows.h — what the two halves of aip_result_op_rows() share: the rows
 * gathered from the model (op_rows.c) before torch's nesting rules are
 * applied to them (op_rows_tree.c).
 */
#ifndef AIP_OP_ROWS_H
#define AIP_OP_ROWS_H

#include "aiprof_integration.h"

#include <stddef.h>
#include <stdint.h>

/* A row while it is built: times absolute (wall-clock ns). */
typedef struct aip__orow {
    aip_op_row r;           /* r.start_ns absolute until the rows are finished */
    int32_t nchild;
    uint8_t removed;        /* folded into its parent */
} aip__orow;

/* A memory record: bytes at `ts` on thread `tid`. */
typedef struct aip__omem {
    int64_t tid, bytes, ts;
} aip__omem;

/* The strings rows name (a view into the model's string blobs). */
typedef struct aip__ostrings {
    const char **text;
    size_t *len;
    size_t n;
} aip__ostrings;

/* aip__op_rows_tree() : nest, fold, self times and memory of `v` (n rows in
 * any order; capacity for n + nm), then the finished rows, start-ordered,
 * with start_ns from `base`, into *out (malloc'd) and *n_out. */
aip_status aip__op_rows_tree(aip__orow *v, size_t n, aip__omem *m, size_t nm,
                             int32_t memory_name, const aip__ostrings *s, int64_t base,
                             aip_op_row **out, size_t *n_out);

#endif
