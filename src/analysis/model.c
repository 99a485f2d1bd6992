/*
 * model.c — lifetime of the analysis model (and of the profiler_info /
 * profiler_metadata parts src/result/ fills in) and small accessors
 * exporters share: string lookup and decoding of a span's side fields.
 */
#include "model.h"
#include "device_tracks.h"
#include "error.h"

#include <stdlib.h>
#include <string.h>

void aip__profiler_info_defaults(aip__profiler_info_data *info)
{
    memset(info, 0, sizeof *info);
    info->rank = -1;
    info->profiler_level = AIP_LEVEL0;
    info->data_simplification = 1;
}

int aip__info_comm_summaries(const aip__profiler_info_data *info)
{
    return !info->level_known || info->profiler_level >= AIP_LEVEL1;
}

#define COMM_LEVEL_NOTE(level)                                                              \
    "communication.json and communication_matrix.json not written (nor analysis.db's "      \
    "CommAnalyzer* tables): profiler_level=" level " (the seed writes them at Level1 and "   \
    "Level2: aiprof run --profiler-level Level1, or experimental_config "                   \
    "profiler_level=Level1); the communication ops are in trace_view.json, "                \
    "step_trace_time and COMMUNICATION_OP"

const char *aip__comm_level_note(const aip__profiler_info_data *info)
{
    return info->profiler_level == AIP_LEVEL_NONE ? COMM_LEVEL_NOTE("Level_none")
                                                  : COMM_LEVEL_NOTE("Level0");
}

void aip__metadata_free(aip__metadata *md)
{
    for (size_t i = 0; i < md->n; i++) {
        free(md->keys[i]);
        free(md->values[i]);
    }
    free(md->keys);
    free(md->values);
    memset(md, 0, sizeof *md);
}

void aip__model_init(aip__model *m)
{
    memset(m, 0, sizeof *m);
    aip__profiler_info_defaults(&m->info);
}

static void process_free(aip__process *p)
{
    for (size_t i = 0; i < p->n_threads; i++) {
        aip__array_free(p->threads[i].spans);
        aip__array_free(p->threads[i].aux);
        free(p->threads[i].self_ns);
        aip__array_free(p->threads[i].slices);
    }
    free(p->threads);
    aip__array_free(p->strings.blob);
    aip__array_free(p->strings.ent);
    aip__array_free(p->marks.v);
    aip__array_free(p->range_starts.v);
    aip__array_free(p->range_ends.v);
    aip__array_free(p->memory.v);
    aip__array_free(p->mem_info);
    aip__array_free(p->mem_labels.v);
    aip__array_free(p->mem_order);
    aip__array_free(p->gc.v);
    aip__array_free(p->devices.v);
    aip__array_free(p->queues.v);
    aip__array_free(p->dev_tasks.v);
    aip__array_free(p->dev_api.v);
    aip__array_free(p->dev_memory.v);
    aip__array_free(p->dev_clocks.v);
    for (size_t i = 0; i < p->comm_groups.n; i++)
        free(p->comm_groups.v[i].ranks);
    aip__array_free(p->comm_groups.v);
    aip__array_free(p->comm_ops.v);
    aip__array_free(p->host.v);
    aip__array_free(p->osrt.v);
    free(p->source);
    free(p->hostname);
    free(p->program);
    free(p->clock_name);
    free(p->writer_version);
    free(p->host_uid);
}

int aip__model_has_device_tasks(const aip__model *m)
{
    for (size_t i = 0; i < m->n_procs; i++)
        if (m->procs[i].dev_tasks.n)
            return 1;
    return 0;
}

void aip__model_free(aip__model *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n_procs; i++)
        process_free(&m->procs[i]);
    free(m->procs);
    free(m->steps);
    free(m->step_rows);
    aip__array_free(m->flows);
    free(m->mem_peaks);
    aip__metadata_free(&m->meta);
    aip__dev_share_free(m->dev_share);
    aip__model_init(m);
}

aip_status aip__model_grow(void **v, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return AIP_OK;
    size_t c = *cap ? *cap : 64;
    while (c < need) {
        if (c > SIZE_MAX / 2 / elem)
            return aip__fail(AIP_ERR_NOMEM, "analysis array too large");
        c = c < (1u << 20) ? c * 2 : c + c / 2;
    }
    /* Large arrays are mmap-backed by malloc, so realloc moves pages rather
     * than copying and untouched capacity costs no resident memory. */
    void *p = realloc(*v, c * elem);
    if (!p)
        return aip__fail(AIP_ERR_NOMEM, "no memory for %zu analysis records", c);
    *v = p;
    *cap = c;
    return AIP_OK;
}

const char *aip__model_str(const aip__process *p, uint32_t id, size_t *len)
{
    if (id == 0 || id >= p->strings.n_ent || !p->strings.ent[id].defined) {
        *len = 0;
        return "";
    }
    *len = p->strings.ent[id].len;
    return p->strings.blob + p->strings.ent[id].offset;
}

void aip__model_op_fields(const aip__thread *t, const aip__span *s, aip__op_fields *out)
{
    memset(out, 0, sizeof *out);
    out->sequence_number = -1;
    unsigned f = s->opflags;
    out->is_backward = (f & AIP_OPF_BACKWARD) != 0;
    if (!s->aux)
        return;
    const uint64_t *w = t->aux + (s->aux - 1);
    if (f & AIP_OPF_SEQ) {
        out->sequence_number = (int64_t)*w++;
        out->has_seq = 1;
    }
    if (f & AIP_OPF_FWD)
        out->fwd_thread_id = *w++;
    if (f & AIP_OPF_SHAPES) {
        out->input_shapes = (uint32_t)*w;
        out->input_dtypes = (uint32_t)(*w++ >> 32);
        out->has_shapes = 1;
    }
    if (f & AIP_OPF_STACK) {
        out->call_stack = (uint32_t)*w;
        out->module_hierarchy = (uint32_t)(*w++ >> 32);
        out->has_stack = 1;
    }
    if (f & AIP_OPF_FLOPS)
        out->flops = *w;
}

uint32_t aip__model_range_domain(const aip__thread *t, const aip__span *s)
{
    return s->aux ? (uint32_t)t->aux[s->aux - 1] : 0;
}

void aip__model_pyfunc_fields(const aip__thread *t, const aip__span *s, aip__pyfunc_fields *out)
{
    memset(out, 0, sizeof *out);
    if (!s->aux)
        return;
    const uint64_t *w = t->aux + (s->aux - 1);
    out->python_id = (uint32_t)w[0];
    out->parent_id = (uint32_t)(w[0] >> 32);
    out->module_id = (uint32_t)w[1];
}
