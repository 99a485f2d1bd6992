/*
 * comm_load.c — communication records into the process (raw format 1.4,
 * docs/RAW_FORMAT.md "Communication records").
 *
 * Called by model_load.c for COMM_GROUP and COMM_OP once the chunk's sizes
 * were checked.  Groups form a table indexed by raw id, bounded by
 * AIP_RAW_MAX_GROUPS; a group record listing more ranks than its size
 * holds, or naming an id beyond the table, is counted in comm_bad_records
 * and left out.  A later description of the same id replaces the earlier
 * one (each trace of a process describes its groups again).
 */
#include "analysis_int.h"
#include "error.h"
#include "double_hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t aip__comm_min_size(uint8_t kind)
{
    switch (kind) {
    case AIP_REC_COMM_GROUP: return sizeof(aip__rec_comm_group);
    case AIP_REC_COMM_OP: return sizeof(aip__rec_comm_op);
    default: return 0;
    }
}

static uint32_t name_id(uint32_t id) { return id <= AIP_NAME_ID_MAX ? id : 0; }

static aip_status decode_group(aip__process *p, const uint8_t *r, const aip__rec_header *h)
{
    aip__rec_comm_group g;
    memcpy(&g, r, sizeof g);
    if (g.group_id >= AIP_RAW_MAX_GROUPS || g.listed > g.n_ranks ||
        g.listed > (h->size - sizeof g) / 4) {
        p->comm_bad_records++;
        return AIP_OK;
    }
    if (g.group_id >= p->comm_groups.n) {
        aip_status s = aip__array_grow((void **)&p->comm_groups.v, &p->comm_groups.cap,
                                       (size_t)g.group_id + 1, sizeof *p->comm_groups.v);
        if (s)
            return s;
        memset(p->comm_groups.v + p->comm_groups.n, 0,
               ((size_t)g.group_id + 1 - p->comm_groups.n) * sizeof *p->comm_groups.v);
        p->comm_groups.n = (size_t)g.group_id + 1;
    }
    aip__comm_group_info *cg = &p->comm_groups.v[g.group_id];
    uint32_t *ranks = NULL;
    if (g.listed) {
        ranks = malloc((size_t)g.listed * sizeof *ranks);
        if (!ranks)
            return aip__fail(AIP_ERR_NOMEM, "no memory for a communication group's ranks");
        memcpy(ranks, r + sizeof g, (size_t)g.listed * sizeof *ranks);
    }
    free(cg->ranks);
    cg->present = 1;
    cg->ranks_cut = (h->flags & AIP_COMMF_RANKS_CUT) || g.listed < g.n_ranks;
    cg->name = name_id(h->name);
    cg->my_rank = g.my_rank;
    cg->n_ranks = g.n_ranks;
    cg->listed = g.listed;
    cg->ranks = ranks;
    return AIP_OK;
}

aip_status aip__comm_decode(aip__process *p, uint32_t ti, const uint8_t *r,
                            const aip__rec_header *h)
{
    if (h->kind == AIP_REC_COMM_GROUP)
        return decode_group(p, r, h);
    if (h->kind != AIP_REC_COMM_OP)
        return AIP_OK;
    aip__rec_comm_op o;
    memcpy(&o, r, sizeof o);
    if (o.end < o.start) {
        p->comm_bad_records++;
        return AIP_OK;
    }
    AIP_VEC_PUSH(p->comm_ops, ((aip__comm_event){
                                 .start = (int64_t)o.start,
                                 .end = (int64_t)o.end,
                                 .bytes = o.bytes,
                                 .seq = o.seq,
                                 .count = o.count,
                                 .name = name_id(h->name),
                                 .dtype = name_id(o.dtype),
                                 .group = o.group_id < AIP_RAW_MAX_GROUPS ? o.group_id
                                                                          : AIP_RAW_NO_RANK,
                                 .peer = o.peer,
                                 .root = o.root,
                                 .tag = o.tag,
                                 .thread = ti,
                                 .kind = o.kind,
                                 .lib = o.lib,
                                 .flags = h->flags,
                             }));
    return AIP_OK;
}

static int cmp_op(const void *a, const void *b)
{
    const aip__comm_event *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (x->end > y->end) - (x->end < y->end);
}

void aip__comm_sort(aip__process *p)
{
    for (size_t g = 0; g < p->comm_groups.n; g++) {
        aip__comm_group_info *cg = &p->comm_groups.v[g];
        size_t n = 0;
        const char *name = cg->present && cg->name ? aip__model_str(p, cg->name, &n) : "";
        if (n)
            snprintf(cg->label, sizeof cg->label, "%llu", aip__double_hash(name, n));
        else
            snprintf(cg->label, sizeof cg->label, "ungrouped");
    }
    if (p->comm_ops.n > 1)
        qsort(p->comm_ops.v, p->comm_ops.n, sizeof *p->comm_ops.v, cmp_op);
}
