/*
 * summary.c — the facts of `aiprof summary` (aip__summary_build) and their
 * terminal form.  "Not collected" notes state only what follows from the
 * recorded configuration and this build: a switch that was off, a device
 * that does not exist here, a collector aiprof does not have.
 */
#include "summary.h"
#include "osrt_export.h"
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void aip__summary_note(aip__summary_data *s, const char *fmt, ...)
{
    if (s->n_notes >= AIP_SUMMARY_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->notes[s->n_notes++], sizeof s->notes[0], fmt, ap);
    va_end(ap);
}

static int cmp_self(const void *a, const void *b)
{
    const aip__op_stat *x = a, *y = b;
    if (x->self_ns != y->self_ns)
        return x->self_ns > y->self_ns ? -1 : 1;
    return aip__text_cmp(x->name, x->len, y->name, y->len);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Any device record at all: tasks, runtime calls or device memory. */
static int has_device_data(const aip__model *m)
{
    for (size_t i = 0; i < m->n_procs; i++)
        if (m->procs[i].dev_tasks.n || m->procs[i].dev_api.n || m->procs[i].dev_memory.n)
            return 1;
    return 0;
}

static void config_notes(aip__summary_data *s)
{
    const aip__profiler_info_data *in = s->info;
    if (!in->found) {
        aip__summary_note(s, "profiler_info.json not found (%s): the collection switches are unknown",
             in->problem);
        return;
    }
    if ((in->activities & AIP_ACTIVITY_DEVICES) && !has_device_data(s->m))
        aip__summary_note(s, "%s activity requested, but no device activity was recorded (no device back end "
             "found a device, or the program ran no device work): no kernel_details.csv, no "
             "device columns in operator_details.csv, no device tables",
             in->activities & AIP_ACTIVITY_NPU ? "NPU" : in->activities & AIP_ACTIVITY_CUDA
             ? "CUDA" : "XPU");
    if (in->has_config && in->activities && !(in->activities & AIP_ACTIVITY_CPU))
        aip__summary_note(s, "CPU activity off: no framework ops were recorded");
    int dev_mem = 0, has_comm = 0;
    for (size_t i = 0; i < s->m->n_procs; i++) {
        dev_mem |= s->m->procs[i].dev_memory.n != 0;
        has_comm |= s->m->procs[i].comm_ops.n != 0;
    }
    if (in->has_config && !in->profile_memory && !dev_mem)
        aip__summary_note(s, "memory not recorded (profile_memory=False): no memory_record.csv, "
             "operator_memory.csv or memory timeline");
    else if (in->has_config && !in->profile_memory)
        aip__summary_note(s, "framework memory not recorded (profile_memory=False): memory_record.csv, "
             "operator_memory.csv and the memory timeline hold the device back end's buffers only");
    /* the seed writes npu_module_mem.csv whenever profile_memory is on */
    if (in->has_config && in->profile_memory)
        aip__summary_note(s, "npu_module_mem.csv not written: no back end reports the memory a "
             "device's own components hold (docs/MEMORY.md)");
    if (in->has_config && !in->record_shapes && !in->with_flops) /* with_flops records them */
        aip__summary_note(s, "input shapes not recorded (record_shapes=False)");
    if (in->has_config && !in->with_stack)
        aip__summary_note(s, "call stacks not recorded (with_stack=False)");
    if (in->has_config && in->with_flops)
        aip__summary_note(s, "with_flops: FLOPs are estimated, as torch.profiler does, for aten::mm, addmm, "
             "bmm, baddbmm, conv2d, mul and add only (trace \"flops\" args)");
    if (!in->gc_detect)
        aip__summary_note(s, "GC passes not recorded (gc_detect_threshold=None)");
    if (!in->mstx)
        aip__summary_note(s, "mstx ranges and marks not recorded unless mstx=True (only record_function "
             "scopes are)");
    if (in->profiler_level < AIP_LEVEL1)
        aip__summary_note(s, "api_statistic.csv not written: it needs profiler_level Level1 or Level2 "
             "(this profile: %s)", aip_profiler_level_name(in->profiler_level));
    if (has_comm && !aip__info_comm_summaries(in))
        aip__summary_note(s, "%s", aip__comm_level_note(in));
    if (in->sys_interconnection)
        aip__summary_note(s, "sys_interconnection: no PCIe / HCCS / interconnect counter source on this host "
             "(docs/HOST_SYS.md says what was looked for): not collected");
    if (in->l2_cache || in->op_attr)
        aip__summary_note(s, "%s%sneed a device (CANN): not collected", in->l2_cache ? "l2_cache " : "",
             in->op_attr ? "op_attr " : "");
}

static void data_notes(aip__summary_data *s)
{
    const aip__model *m = s->m;
    if (m->dropped_events)
        aip__summary_note(s, "%llu events were dropped while recording (buffer cap reached): the trace has "
             "gaps", (unsigned long long)m->dropped_events);
    if (m->flight_overwritten)
        aip__summary_note(s, "dropped by the flight recorder ring: %llu events (discarded while "
             "younger than the window: flight_ring_bytes is too small for it)",
             (unsigned long long)m->flight_overwritten);
    if (m->dev_bad_records)
        aip__summary_note(s, "%llu device record(s) named an unknown device or had impossible times "
             "(no start, or an end before the start): left out of every output",
             (unsigned long long)m->dev_bad_records);
    if (m->info.texts_cut)
        aip__summary_note(s, "%llu text(s) longer than %u bytes (names, shapes, call stacks) were cut to "
             "that length when recorded", (unsigned long long)m->info.texts_cut,
             AIP_RAW_STRING_MAX_LEN);
    if (m->invalid_utf8_texts)
        aip__summary_note(s, "%llu recorded text(s) are not valid UTF-8: each invalid byte is written as "
             "U+FFFD in the outputs", (unsigned long long)m->invalid_utf8_texts);
    for (size_t i = 0; i < m->n_procs; i++) {
        const aip__process *p = &m->procs[i];
        if (p->raw.truncated_bytes)
            aip__summary_note(s, "pid %lld: the raw file ends in %llu bytes of an incomplete chunk (the "
                 "program stopped while writing); all before was recovered", (long long)p->pid,
                 (unsigned long long)p->raw.truncated_bytes);
        else if (!p->raw.clean_end)
            aip__summary_note(s, "pid %lld: the recording did not stop cleanly (no END chunk)",
                 (long long)p->pid);
        if (p->raw.corrupt_chunks || p->bad_event_chunks)
            aip__summary_note(s, "pid %lld: %llu damaged chunk(s) skipped", (long long)p->pid,
                 (unsigned long long)(p->raw.corrupt_chunks + p->bad_event_chunks));
    }
}

aip_status aip__summary_build(const char *dir, const aip__model *m, aip__summary_data *s)
{
    memset(s, 0, sizeof *s);
    s->dir = dir;
    s->m = m;
    s->info = &m->info;
    aip_status st = aip__op_stats(m, AIP_STAT_OPS, &s->ops, &s->n_ops);
    if (st)
        return st;
    for (size_t i = 0; i < s->n_ops; i++)
        s->ops_self_total = aip__sat_add(s->ops_self_total, s->ops[i].self_ns);
    if (s->n_ops > 1)
        qsort(s->ops, s->n_ops, sizeof *s->ops, cmp_self);
    if (m->n_steps) {
        s->step_ns = malloc(m->n_steps * sizeof *s->step_ns);
        int64_t *sorted = malloc(m->n_steps * sizeof *sorted);
        if (!s->step_ns || !sorted) {
            free(sorted);
            aip__summary_free(s);
            return aip__fail(AIP_ERR_NOMEM, "no memory for the summary");
        }
        int64_t sum = 0;
        for (size_t i = 0; i < m->n_steps; i++) {
            s->step_ns[i] = sorted[i] = m->steps[i].end - m->steps[i].start;
            sum += sorted[i];
        }
        s->n_steps = m->n_steps;
        qsort(sorted, s->n_steps, sizeof *sorted, cmp_i64);
        s->step_min = sorted[0];
        s->step_max = sorted[s->n_steps - 1];
        s->step_median = s->n_steps % 2 ? sorted[s->n_steps / 2]
                                        : (sorted[s->n_steps / 2 - 1] + sorted[s->n_steps / 2]) / 2;
        s->step_mean = sum / (int64_t)s->n_steps;
        if (s->n_steps >= 3) { /* the middle steps' median, first and last left out */
            size_t n = s->n_steps - 2;
            memcpy(sorted, s->step_ns + 1, n * sizeof *sorted);
            qsort(sorted, n, sizeof *sorted, cmp_i64);
            s->inner_median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
            s->has_inner = 1;
        }
        free(sorted);
    }
    st = aip__summary_device_build(s);
    if (!st)
        st = aip__summary_host_build(s);
    if (!st)
        st = aip__summary_mstx_build(s);
    if (st) {
        aip__summary_free(s);
        return st;
    }
    /* the chart: the framework's first device with records, else the
     * first device with device-buffer records */
    char dev[24] = "";
    if (m->n_mem_peaks) {
        const aip__mem_peak *pk = &m->mem_peaks[0];
        if (pk->device_type == AIP_DEVICE_CPU)
            snprintf(dev, sizeof dev, "cpu");
        else
            snprintf(dev, sizeof dev, "%s:%d", pk->device_type == AIP_DEVICE_NPU ? "npu" : "cuda",
                     pk->device_index);
    } else if (s->n_dev_mem) {
        snprintf(dev, sizeof dev, "%s:%u",
                 s->dev_mem[0].tag_type == AIP_DEVICE_CUDA ? "cuda" : "npu", s->dev_mem[0].id);
    }
    if (*dev) {
        st = aip__mem_timeline_build(m, dev, &s->mem);
        if (st) {
            aip__summary_free(s);
            return st;
        }
        s->has_mem = 1;
    }
    config_notes(s);
    data_notes(s);
    return AIP_OK;
}

void aip__summary_free(aip__summary_data *s)
{
    free(s->ops);
    free(s->step_ns);
    if (s->has_mem)
        aip__mem_timeline_free(&s->mem);
    aip__summary_device_free(s);
    aip__summary_host_free(s);
    aip__summary_mstx_free(s);
    s->ops = NULL;
    s->step_ns = NULL;
    s->has_mem = 0;
}

/* ---- terminal text ----------------------------------------------------- */

/* A recorded name for a terminal: control bytes (escape sequences!) and
 * invalid UTF-8 become '?', at most `max` characters. */
void aip__summary_put_term(aip__out *o, const char *s, size_t n, size_t max)
{
    char *d = aip__out_reserve(o, 4 * max + 8);
    size_t chars = 0, i = 0;
    while (i < n && chars < max) {
        unsigned char c = (unsigned char)s[i];
        size_t k = c < 0x80 ? 1 : c >= 0xC2 && c < 0xE0 ? 2 : c >= 0xE0 && c < 0xF0 ? 3
                 : c >= 0xF0 && c < 0xF5 ? 4 : 0;
        int ok = k && i + k <= n;
        for (size_t j = 1; ok && j < k; j++)
            ok = ((unsigned char)s[i + j] & 0xC0) == 0x80;
        if (!ok || c < 0x20 || c == 0x7f) {
            *d++ = '?';
            i++;
        } else {
            memcpy(d, s + i, k);
            d += k;
            i += k;
        }
        chars++;
    }
    if (i < n) {
        memcpy(d, "...", 3);
        d += 3;
    }
    aip__out_commit(o, d);
}

void aip__summary_put_bytes(aip__out *o, int64_t b)
{
    double v = (double)b;
    if (b >= 1 << 30)
        aip__out_printf(o, "%.2f GiB", v / (1 << 30));
    else if (b >= 1 << 20)
        aip__out_printf(o, "%.2f MiB", v / (1 << 20));
    else if (b >= 1 << 10)
        aip__out_printf(o, "%.2f KiB", v / (1 << 10));
    else
        aip__out_printf(o, "%lld B", (long long)b);
}

static const char *device_name(uint8_t type)
{
    return type == AIP_DEVICE_CPU ? "CPU" : type == AIP_DEVICE_NPU ? "NPU"
         : type == AIP_DEVICE_CUDA ? "CUDA" : "device";
}

aip_status aip__summary_text(const aip__summary_data *s, aip__out *o)
{
    const aip__model *m = s->m;
    AIP_OUT_LIT(o, "aiprof summary: ");
    aip__summary_put_term(o, s->dir, strlen(s->dir), 200);
    AIP_OUT_LIT(o, "\n");
    for (size_t i = 0; i < m->n_procs; i++) {
        const aip__process *p = &m->procs[i];
        const char *h = p->hostname ? p->hostname : "?", *prog = p->program ? p->program : "?";
        AIP_OUT_LIT(o, "  process ");
        aip__summary_put_term(o, prog, strlen(prog), 40);
        aip__out_printf(o, ", pid %lld on ", (long long)p->pid);
        aip__summary_put_term(o, h, strlen(h), 60);
        aip__out_printf(o, ": %llu events, %zu threads\n", (unsigned long long)p->events,
                        p->n_threads);
    }
    aip__out_printf(o, "  recorded span: %.3f ms, %llu events, %llu dropped\n",
                    (double)(m->last_ns - m->first_ns) / 1e6, (unsigned long long)m->n_events,
                    (unsigned long long)m->dropped_events);
    size_t top = s->n_ops < AIP_SUMMARY_TOP ? s->n_ops : AIP_SUMMARY_TOP;
    aip__out_printf(o, "\nTop %zu of %zu ops by self time:\n", top, s->n_ops);
    aip__out_printf(o, "  %12s %7s %8s %12s %12s  %s\n", "Self(ms)", "Self%", "Calls", "Total(ms)",
                    "AvgSelf(us)", "Name");
    for (size_t i = 0; i < top; i++) {
        const aip__op_stat *st = &s->ops[i];
        double self_pct =
            s->ops_self_total ? 100.0 * (double)st->self_ns / (double)s->ops_self_total : 0.0;
        aip__out_printf(o, "  %12.3f %6.2f%% %8llu %12.3f %12.3f  ", (double)st->self_ns / 1e6,
                        self_pct, (unsigned long long)st->count, (double)st->total_ns / 1e6,
                        (double)st->self_ns / 1e3 / (double)st->count);
        aip__summary_put_term(o, st->name, st->len, 70);
        AIP_OUT_LIT(o, "\n");
    }
    if (s->n_steps) {
        aip__out_printf(o, "\nSteps: %zu  min %.3f ms  median %.3f ms  max %.3f ms  mean %.3f ms\n",
                        s->n_steps, (double)s->step_min / 1e6, (double)s->step_median / 1e6,
                        (double)s->step_max / 1e6, (double)s->step_mean / 1e6);
        for (size_t i = 0; i < s->n_steps; i++) {
            /* the first and the last step: where the profiler started and
             * stopped (the seed's FAQ on performance inflation) */
            int edge = i == 0 || i + 1 == s->n_steps;
            if (i >= 20 && !(i + 1 == s->n_steps))
                continue;
            if (i + 1 == s->n_steps && s->n_steps > 21)
                aip__out_printf(o, "  ... %zu more\n", s->n_steps - 21);
            aip__out_printf(o, "  step %-8lld %10.3f ms%s\n", (long long)m->steps[i].number,
                            (double)s->step_ns[i] / 1e6,
                            !edge ? ""
                            : i == 0 && i + 1 == s->n_steps
                                ? "  (profiler start and stop: may include their cost)"
                            : i == 0 ? "  (profiler start: may include its start-up cost)"
                                     : "  (profiler stop: may include its stop and save cost)");
        }
        if (s->has_inner)
            aip__out_printf(o, "  the steps between: median %.3f ms (the seed's FAQ: compare "
                            "these, not the first and last)\n",
                            (double)s->inner_median / 1e6);
    } else {
        AIP_OUT_LIT(o, "\nSteps: none (no ProfilerStep#N: the profile had no schedule)\n");
    }
    aip__summary_device_text(s, o);
    aip__summary_host_text(s, o);
    aip__summary_mstx_text(s, o);
    AIP_OUT_LIT(o, "\nMemory:");
    if (!m->n_mem_peaks && !s->n_dev_mem)
        AIP_OUT_LIT(o, " no memory records");
    AIP_OUT_LIT(o, "\n");
    for (size_t i = 0; i < m->n_mem_peaks; i++) {
        const aip__mem_peak *pk = &m->mem_peaks[i];
        aip__out_printf(o, "  pid %lld %s", (long long)m->procs[pk->process].pid,
                        device_name(pk->device_type));
        if (pk->device_type != AIP_DEVICE_CPU)
            aip__out_printf(o, ":%d", pk->device_index);
        AIP_OUT_LIT(o, ": peak allocated ");
        aip__summary_put_bytes(o, pk->max_allocated);
        AIP_OUT_LIT(o, ", peak reserved ");
        aip__summary_put_bytes(o, pk->max_reserved);
        aip__out_printf(o, " (%llu records)\n", (unsigned long long)pk->records);
    }
    aip__summary_devmem_text(s, o);
    aip__summary_osrt_text(s, o);
    if (s->advice_text)
        s->advice_text(s->advice_ctx, o);
    AIP_OUT_LIT(o, "\nNot collected / problems:");
    if (!s->n_notes)
        AIP_OUT_LIT(o, " none");
    AIP_OUT_LIT(o, "\n");
    for (size_t i = 0; i < s->n_notes; i++)
        aip__out_printf(o, "  - %s\n", s->notes[i]);
    return o->status;
}
