/*
 * comm_derive.h — the per-rank communication analysis (comm_derive.c):
 * from the model's recorded communication ops, the rows that
 * communication.json, communication_matrix.json, analysis.db's
 * CommAnalyzer* tables and the step trace's communication columns print
 * (docs/COMMUNICATION.md says every rule).  No I/O: the exporters in
 * src/export format these rows.
 */
#ifndef AIP_COMM_DERIVE_H
#define AIP_COMM_DERIVE_H

#include "model.h"

/* Transport types (reference §2.4 ENUM_HCCL_TRANSPORT_TYPE's names). */
enum aip__comm_transport { AIP_TRANSPORT_SDMA = 0, AIP_TRANSPORT_RDMA = 1,
                           AIP_TRANSPORT_LOCAL = 2 };
const char *aip__comm_transport_name(uint8_t t);

/* One op of communication.json / CommAnalyzerTime.  ns and bytes. */
typedef struct aip__comm_row {
    int has_step;              /* 0: no steps in the profile ("step") */
    int64_t step;              /* ProfilerStep number whose range holds the start */
    uint8_t p2p;               /* 1: send / receive / sendrecv */
    uint8_t transport;         /* of its peer traffic (AIP_TRANSPORT_*) */
    const char *type;          /* "allReduce", "send", "receive", ... */
    const char *type_lower;    /* "allreduce", ... (matrix keys) */
    char name[64];             /* "hcom_allReduce__3_0_1" (without @group) */
    const char *group;         /* the group's label (its hashed name), "ungrouped" */
    size_t group_len;
    int64_t start, elapse;
    uint64_t bytes;
    uint32_t me, peer;         /* group-local ranks; peer UINT32_MAX = collective */
    int send;                  /* p2p: this rank sends to peer (else receives) */
} aip__comm_row;

/* One entry of communication_matrix.json / CommAnalyzerMatrix. */
typedef struct aip__comm_link {
    const aip__comm_row *of;   /* the row whose step / p2p / group / type it has */
    const char *label;         /* "top1", "middle", "bottom1".."bottom3", "total" (only
                                * when timed: an untimed total is left out) */
    uint32_t src, dst;         /* group-local ranks */
    uint8_t transport;
    uint64_t bytes;
    int64_t time;              /* ns; 0 when !timed */
    uint8_t timed;             /* 0: a collective's self link, whose transfer time
                                * one rank cannot know (cluster analysis fills it) */
    const char *op_name;       /* the op it came from (total: the first op) */
} aip__comm_link;

typedef struct aip__comm_tables {
    aip__comm_row *rows;       /* by step, collective before p2p, group, start */
    size_t n_rows;
    aip__comm_link *links;     /* by row block (step, p2p, group, type), label, link */
    size_t n_links;
    uint64_t outside_steps;    /* ops whose start lies in no step (left out) */
} aip__comm_tables;

/* The name of each op of a process (the key of communication.json, the
 * timeline's event name) and what it is. */
typedef struct aip__comm_name {
    char s[64];                /* "hcom_allReduce__3_0_1" */
    const char *type, *type_lower;
    uint32_t me, peer;         /* group-local ranks; peer UINT32_MAX = collective */
} aip__comm_name;
/* aip__comm_op_names() : names of p->comm_ops (derived: sorted by start),
 * malloc'd; NULL without ops. */
aip_status aip__comm_op_names(const aip__process *p, aip__comm_name **out);

/* aip__comm_tables_build() : every op of every process of the derived model. */
aip_status aip__comm_tables_build(const aip__model *m, aip__comm_tables *t);
void aip__comm_tables_free(aip__comm_tables *t);

/* aip__comm_same_block() : a and b belong to the same (step, p2p) key. */
static inline int aip__comm_same_step(const aip__comm_row *a, const aip__comm_row *b)
{
    return a->has_step == b->has_step && a->step == b->step && a->p2p == b->p2p;
}

/* aip__comm_intervals() : the union of every comm op's [start, end] (or
 * only the receives when `recv_only`), sorted, as pairs iv[2k], iv[2k+1]
 * (malloc'd, *n pairs; NULL and 0 when none). */
aip_status aip__comm_intervals(const aip__model *m, int recv_only, int64_t **iv, size_t *n);

/* 1 MB in Transit Size(MB) and the Size Distribution keys. */
#define AIP_COMM_MB 1048576.0
/* A transfer at least this big counts in Large Packet Ratio. */
#define AIP_COMM_LARGE_PACKET (1024 * 1024)

#endif
