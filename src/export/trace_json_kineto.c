/*
 * trace_json_kineto.c — the keys of Kineto's object form that torch 2.x
 * readers look up besides the events (reference torch2_adapter_facts §11,
 * perfetto_hta_kineto.md):
 *
 * - "deviceProperties": one entry per described device, with what the
 *   raw data says of it (id, name, vendor, kind, back end); Kineto lists
 *   its GPUs there and `[]` on a CPU-only build, and so do we.  Figures
 *   we did not record (totalGlobalMem, numSms...) are left out, not made up.
 * - "distributedInfo": torch 2.x's `_KinetoProfile.start_trace()` writes
 *   {backend, rank, world_size, pg_count, pg_config} when a process group
 *   exists.  HTA takes the rank of a file from it, or else from the first
 *   line matching `"rank":\s+(\d+)` — with the space json.dumps() puts
 *   there — and without either loads every file as rank 0.  When
 *   profiler_metadata.json has the key (a caller's add_metadata_json), that
 *   text is written; otherwise it is derived from what the communication
 *   collectors recorded (the largest group is the world) and the rank of
 *   profiler_info.json, written the way json.dumps() writes it.  Nothing
 *   when neither a rank nor a group was recorded, as torch writes nothing
 *   without a process group.
 */
#include "trace_json_int.h"

#include <stdlib.h>
#include <string.h>

/* String `id` of p as a JSON string (escaped like every string of the
 * trace; "" when undefined). */
static void put_model_str(aip__out *o, const aip__process *p, uint32_t id)
{
    size_t n;
    const char *s = aip__model_str(p, id, &n);
    char *buf = malloc(AIP_JSON_ESC_MAX(n));
    if (!buf) {
        AIP_OUT_LIT(o, "\"\"");
        return;
    }
    aip__out_put(o, buf, aip__json_quote(s, n, buf));
    free(buf);
}

void aip__trace_kineto_devices(aip__out *o, const aip__model *m)
{
    int any = 0;
    AIP_OUT_LIT(o, "\"deviceProperties\":[");
    for (size_t pi = 0; pi < m->n_procs; pi++) {
        const aip__process *p = &m->procs[pi];
        for (uint32_t d = 0; d < p->devices.n; d++) {
            const aip__device *dv = aip__model_device(p, d);
            if (!dv)
                continue;
            if (any)
                AIP_OUT_LIT(o, ",");
            AIP_OUT_LIT(o, "\n{\"id\":");
            any = 1;
            aip__out_u64(o, d);
            AIP_OUT_LIT(o, ",\"name\":");
            put_model_str(o, p, dv->name);
            AIP_OUT_LIT(o, ",\"vendor\":");
            put_model_str(o, p, dv->vendor);
            AIP_OUT_LIT(o, ",\"kind\":");
            aip__trace_put_cstr(o, aip__dev_kind_name(dv->kind));
            AIP_OUT_LIT(o, ",\"backend\":");
            aip__trace_put_cstr(o, aip__raw_backend(dv->backend)->kineto);
            if (m->n_procs > 1) {
                AIP_OUT_LIT(o, ",\"pid\":");
                aip__out_i64(o, p->pid);
            }
            AIP_OUT_LIT(o, "}");
        }
    }
    AIP_OUT_LIT(o, "]");
}

/* torch's backend names (ProcessGroup's getBackendName()). */
static const char *backend_name(uint8_t lib)
{
    switch (lib) {
    case AIP_COMMLIB_MPI: return "mpi";
    case AIP_COMMLIB_GLOO: return "gloo";
    case AIP_COMMLIB_NCCL: return "nccl";
    case AIP_COMMLIB_HCCL: return "hccl";
    default: return NULL;
    }
}

/* The world: the group with the most ranks (the first of equals). */
static const aip__comm_group_info *world_group(const aip__process *p)
{
    const aip__comm_group_info *w = NULL;
    for (uint32_t g = 0; g < p->comm_groups.n; g++) {
        const aip__comm_group_info *c = aip__model_comm_group(p, g);
        if (c && (!w || c->n_ranks > w->n_ranks))
            w = c;
    }
    return w;
}

static void pg_config(aip__out *o, const aip__process *p)
{
    int first = 1;
    AIP_OUT_LIT(o, ", \"pg_config\": [");
    for (uint32_t g = 0; g < p->comm_groups.n; g++) {
        const aip__comm_group_info *c = aip__model_comm_group(p, g);
        if (!c)
            continue;
        if (!first)
            AIP_OUT_LIT(o, ", ");
        AIP_OUT_LIT(o, "{\"pg_name\": ");
        first = 0;
        put_model_str(o, p, c->name);
        AIP_OUT_LIT(o, ", \"pg_size\": ");
        aip__out_u64(o, c->n_ranks);
        AIP_OUT_LIT(o, ", \"ranks\": [");
        for (uint32_t i = 0; i < c->listed; i++) {
            if (i)
                AIP_OUT_LIT(o, ", ");
            aip__out_u64(o, c->ranks[i]);
        }
        AIP_OUT_LIT(o, "]}");
    }
    AIP_OUT_LIT(o, "]");
}

int aip__trace_kineto_dist_info(aip__out *o, const aip__model *m)
{
    const aip__process *p = m->n_procs ? &m->procs[0] : NULL;
    const aip__comm_group_info *w = p ? world_group(p) : NULL;
    int64_t rank = m->info.rank;
    if (rank < 0 && w)
        rank = w->my_rank < w->listed ? w->ranks[w->my_rank] : w->my_rank;
    if (rank < 0)
        return 0;
    const char *backend = p && p->comm_ops.n ? backend_name(p->comm_ops.v[0].lib) : NULL;
    AIP_OUT_LIT(o, "\"distributedInfo\": {");
    if (backend) {
        AIP_OUT_LIT(o, "\"backend\": ");
        aip__trace_put_cstr(o, backend);
        AIP_OUT_LIT(o, ", ");
    }
    AIP_OUT_LIT(o, "\"rank\": ");
    aip__out_i64(o, rank);
    if (w) {
        uint64_t n = 0;
        for (uint32_t g = 0; g < p->comm_groups.n; g++)
            n += aip__model_comm_group(p, g) != NULL;
        AIP_OUT_LIT(o, ", \"world_size\": ");
        aip__out_u64(o, w->n_ranks);
        AIP_OUT_LIT(o, ", \"pg_count\": ");
        aip__out_u64(o, n);
        pg_config(o, p);
    }
    AIP_OUT_LIT(o, "}");
    return 1;
}
