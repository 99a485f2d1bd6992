/*
 * trace_json_comm.c — the Communication layer of trace_view.json
 * (reference §2.1: msprof's "Communication" process, sort index 16, one
 * thread per group named "Group <group> Communication"), for the ops the
 * communication collectors recorded (MPI, torch.distributed).
 *
 * The process is pid (pid<<10)|(16<<5)|31 with label "CPU": these are host
 * collectives (torch_npu maps a layer to a device by an "NPU <n>" label,
 * and none is meant here).  Each op is an X event named as in
 * communication.json (comm_derive.c: hcom_allReduce__3_0_1), from its
 * start to its completion, args: the recorded name, group, group size and
 * this rank's place, bytes, count, data type, sequence, peer / root, tag.
 * Non-blocking ops of one group overlap without nesting, and slices on one
 * track must nest or be disjoint (tests/e2e/check_nesting.py): such an op
 * goes to the group's first extra lane where it is disjoint from the
 * lane's last op (first fit in start order), a sibling thread
 * "Group <group> Communication (k+1)".
 */
#include "trace_json_int.h"
#include "comm_derive.h"
#include "error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SORT_COMMUNICATION 16
#define NO_GROUP AIP_RAW_MAX_GROUPS          /* the track of ops of no group */
#define LANE_STRIDE (AIP_RAW_MAX_GROUPS + 1) /* tid = group + lane * stride */

typedef struct lane_set {
    uint32_t group;
    int64_t *ends;             /* per lane: the end of its last op */
    size_t n, cap;
} lane_set;

const char *aip__tj_comm_lib_name(uint8_t lib)
{
    switch (lib) {
    case AIP_COMMLIB_MPI: return "MPI";
    case AIP_COMMLIB_GLOO: return "gloo";
    case AIP_COMMLIB_NCCL: return "NCCL";
    case AIP_COMMLIB_HCCL: return "HCCL";
    default: return "other";
    }
}

static void thread_meta(aip__tj *w, const aip__process *p, int64_t cpid, uint32_t group,
                        size_t lane, uint64_t tid)
{
    const aip__comm_group_info *g = aip__model_comm_group(p, group);
    /* torch_npu's track name: "Group <hashed name> Communication" */
    const char *name = g ? g->label : "ungrouped";
    size_t n = strlen(name);
    char *buf = malloc(n + 48);
    if (!buf) {
        if (!w->status)
            w->status = aip__fail(AIP_ERR_NOMEM, "no memory for the communication layer");
        return;
    }
    int k = snprintf(buf, n + 48, "Group ");
    memcpy(buf + k, name, n);
    if (lane)
        snprintf(buf + k + n, 48 - (size_t)k, " Communication (%zu)", lane + 1);
    else
        snprintf(buf + k + n, 48 - (size_t)k, " Communication");
    aip__tj_meta_str(w, "thread_name", cpid, tid, "name", buf);
    aip__tj_meta_sort(w, "thread_sort_index", cpid, tid, tid);
    free(buf);
}

/* The lane of an op starting at `start` in group `gi`'s set; grows it. */
static int take_lane(lane_set *ls, int64_t start, int64_t end, size_t *lane, int *is_new)
{
    for (size_t l = 0; l < ls->n; l++)
        if (ls->ends[l] <= start) {
            ls->ends[l] = end;
            *lane = l;
            *is_new = 0;
            return 0;
        }
    if (aip__model_grow((void **)&ls->ends, &ls->cap, ls->n + 1, sizeof *ls->ends))
        return -1;
    ls->ends[ls->n] = end;
    *lane = ls->n++;
    *is_new = 1;
    return 0;
}

static void op_event(aip__tj *w, const aip__process *p, const aip__comm_event *e,
                     const aip__comm_name *nm)
{
    const aip__comm_group_info *g = aip__model_comm_group(p, e->group);
    aip__tj_begin(w);
    AIP_OUT_LIT(w->o, "{\"ph\":\"X\",\"name\":");
    aip__trace_put_cstr(w->o, nm->s);
    aip__out_put(w->o, w->pfx, w->pfx_len);
    aip__tj_ts(w, e->start);
    AIP_OUT_LIT(w->o, ",\"dur\":");
    aip__tj_dur(w, e->start, e->end);
    AIP_OUT_LIT(w->o, ",\"cat\":\"communication\",\"args\":{\"op\":");
    aip__tj_put_id(w, e->name);
    AIP_OUT_LIT(w->o, ",\"lib\":");
    aip__trace_put_cstr(w->o, aip__tj_comm_lib_name(e->lib));
    if (g) {
        AIP_OUT_LIT(w->o, ",\"group\":");
        aip__tj_put_id(w, g->name);
        aip__out_printf(w->o, ",\"rank_size\":%u,\"group_rank\":%u", g->n_ranks, g->my_rank);
    }
    aip__out_printf(w->o, ",\"size(Byte)\":%llu,\"count\":%llu",
                    (unsigned long long)e->bytes, (unsigned long long)e->count);
    if (e->dtype) {
        AIP_OUT_LIT(w->o, ",\"data_type\":");
        aip__tj_put_id(w, e->dtype);
    }
    if (e->kind == AIP_COMM_COLLECTIVE)
        aip__out_printf(w->o, ",\"seq\":%llu", (unsigned long long)e->seq);
    if (e->peer != AIP_RAW_NO_RANK)
        aip__out_printf(w->o, ",\"%s\":%u", e->kind == AIP_COMM_RECV ? "src rank" : "dst rank",
                        e->peer);
    if (e->root != AIP_RAW_NO_RANK)
        aip__out_printf(w->o, ",\"root\":%u", e->root);
    if (e->tag >= 0)
        aip__out_printf(w->o, ",\"tag\":%d", e->tag);
    if (e->flags & AIP_COMMF_NONBLOCKING)
        AIP_OUT_LIT(w->o, ",\"non_blocking\":true");
    AIP_OUT_LIT(w->o, "}}");
}

void aip__trace_comm_layer(aip__tj *w, const aip__process *p)
{
    if (!p->comm_ops.n || w->status)
        return;
    aip__comm_name *names;
    if ((w->status = aip__comm_op_names(p, &names)))
        return;
    int64_t cpid = aip__tj_layer_pid(p->pid, SORT_COMMUNICATION, AIP__TJ_HOST_DEVICE);
    aip__tj_layer_meta(w, cpid, "Communication", "CPU", SORT_COMMUNICATION);
    lane_set *sets = NULL;
    size_t n_sets = 0, cap_sets = 0;
    for (size_t i = 0; i < p->comm_ops.n && !w->status; i++) {
        const aip__comm_event *e = &p->comm_ops.v[i];
        uint32_t gi = aip__model_comm_group(p, e->group) ? e->group : NO_GROUP;
        size_t si = 0;
        while (si < n_sets && sets[si].group != gi)
            si++;
        if (si == n_sets) {
            if (aip__model_grow((void **)&sets, &cap_sets, n_sets + 1, sizeof *sets)) {
                w->status = AIP_ERR_NOMEM;
                break;
            }
            sets[n_sets++] = (lane_set){.group = gi};
        }
        size_t lane;
        int is_new;
        if (take_lane(&sets[si], e->start, e->end, &lane, &is_new)) {
            w->status = AIP_ERR_NOMEM;
            break;
        }
        uint64_t tid = gi + (uint64_t)lane * LANE_STRIDE;
        if (is_new)
            thread_meta(w, p, cpid, gi, lane, tid);
        aip__tj_prefix(w, cpid, tid);
        op_event(w, p, e, &names[i]);
    }
    for (size_t si = 0; si < n_sets; si++)
        free(sets[si].ends);
    free(sets);
    free(names);
    if (w->status == AIP_ERR_NOMEM)
        aip__fail(AIP_ERR_NOMEM, "no memory for the communication layer");
}
