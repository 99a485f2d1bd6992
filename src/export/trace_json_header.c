/*
 * trace_json_header.c — what trace_view.json says besides its events:
 * the run-wide facts (host, rank, the switches profiler_info.json gave,
 * aiprof's counters) and the top of Kineto's object form with the
 * add_metadata entries as keys.  trace_json.c writes the events and puts
 * these where each form has room for them.
 */
#include "trace_json_int.h"
#include "text_escape.h"

#include <stdlib.h>
#include <string.h>

void aip__trace_put_cstr(aip__out *o, const char *s)
{
    size_t n = strlen(s);
    char small[256];
    char *buf = AIP_JSON_ESC_MAX(n) <= sizeof small ? small : malloc(AIP_JSON_ESC_MAX(n));
    if (!buf) {
        AIP_OUT_LIT(o, "\"\"");
        return;
    }
    aip__out_put(o, buf, aip__json_quote(s, n, buf));
    if (buf != small)
        free(buf);
}

void aip__trace_run_facts(aip__out *o, const aip__model *m)
{
    const aip__profiler_info_data *info = &m->info;
    const aip__process *p0 = m->n_procs ? &m->procs[0] : NULL;
    uint64_t corrupt = 0, truncated = 0, unmatched = 0;
    for (size_t i = 0; i < m->n_procs; i++) {
        const aip__process *p = &m->procs[i];
        corrupt += p->raw.corrupt_chunks + p->bad_event_chunks + p->bad_other_chunks;
        truncated += p->raw.truncated_bytes;
        unmatched += p->unmatched_range_starts + p->unmatched_range_ends;
    }
    AIP_OUT_LIT(o, "\"hostname\":");
    aip__trace_put_cstr(o, p0 && p0->hostname ? p0->hostname : "");
    AIP_OUT_LIT(o, ",\"pid\":");
    aip__out_i64(o, p0 ? p0->pid : 0);
    AIP_OUT_LIT(o, ",\"rank\":");
    aip__out_i64(o, info->rank);
    if (info->has_config) {
        AIP_OUT_LIT(o, ",\"record_shapes\":");
        aip__out_u64(o, (uint64_t)info->record_shapes);
        AIP_OUT_LIT(o, ",\"profile_memory\":");
        aip__out_u64(o, (uint64_t)info->profile_memory);
        AIP_OUT_LIT(o, ",\"with_stack\":");
        aip__out_u64(o, (uint64_t)info->with_stack);
        AIP_OUT_LIT(o, ",\"with_flops\":");
        aip__out_u64(o, (uint64_t)info->with_flops);
        AIP_OUT_LIT(o, ",\"with_modules\":");
        aip__out_u64(o, (uint64_t)info->with_modules);
    }
    AIP_OUT_LIT(o, ",\"aiprof\":{\"version\":");
    aip__trace_put_cstr(o, aip_version());
    AIP_OUT_LIT(o, ",\"droppedEvents\":");
    aip__out_u64(o, m->dropped_events);
    AIP_OUT_LIT(o, ",\"events\":");
    aip__out_u64(o, m->n_events);
    AIP_OUT_LIT(o, ",\"rawFiles\":");
    aip__out_u64(o, m->n_procs);
    AIP_OUT_LIT(o, ",\"corruptChunks\":");
    aip__out_u64(o, corrupt);
    AIP_OUT_LIT(o, ",\"truncatedBytes\":");
    aip__out_u64(o, truncated);
    AIP_OUT_LIT(o, ",\"unmatchedRanges\":");
    aip__out_u64(o, unmatched);
    AIP_OUT_LIT(o, "}");
}

/* Keys of Kineto's header that a profiler_metadata.json entry must not
 * repeat (a JSON object with a key twice is read differently by different
 * parsers); ENV_VARIABLES is torch_npu's own entry, not an add_metadata
 * one.  A skipped entry stays in profiler_metadata.json. */
static int reserved_key(const char *k)
{
    static const char *const keys[] = {
        "schemaVersion", "deviceProperties", "displayTimeUnit", "baseTimeNanoseconds",
        "traceEvents", "traceName", "distributedInfo", "hostname", "pid", "rank", "record_shapes",
        "profile_memory", "with_stack", "with_flops", "with_modules", "aiprof", "ENV_VARIABLES"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (!strcmp(k, keys[i]))
            return 1;
    return 0;
}

/* A value from profiler_metadata.json: JSON text as json.dumps() wrote it.
 * `<`, `>` and `&` can only stand inside its strings, where \u escapes
 * mean the same: the rule of every other string in the trace. */
static void put_json_text(aip__out *o, const char *v)
{
    for (const char *run = v;; v++) {
        if (*v && *v != '<' && *v != '>' && *v != '&')
            continue;
        aip__out_put(o, run, (size_t)(v - run));
        if (!*v)
            return;
        AIP_OUT_LIT(o, "\\u00");
        aip__out_str(o, *v == '<' ? "3c" : *v == '>' ? "3e" : "26");
        run = v + 1;
    }
}

/* The index of profiler_metadata.json's "distributedInfo" entry, or -1. */
static long dist_info_entry(const aip__metadata *md)
{
    for (size_t i = 0; i < md->n; i++)
        if (md->keys[i] && md->values[i] && !strcmp(md->keys[i], "distributedInfo"))
            return (long)i;
    return -1;
}

/* Kineto's order: schemaVersion, deviceProperties, the metadata keys
 * (distributedInfo first here: HTA takes a file's rank from the first
 * line with `"rank": N`, and a caller's entry could hold another),
 * displayTimeUnit, baseTimeNanoseconds, traceEvents, traceName. */
void aip__trace_kineto_header(aip__out *o, const aip__model *m, int64_t base)
{
    const aip__metadata *md = &m->meta;
    long dist = dist_info_entry(md);
    AIP_OUT_LIT(o, "{\"schemaVersion\":1,\n");
    aip__trace_kineto_devices(o, m);
    AIP_OUT_LIT(o, ",\n");
    if (dist >= 0) {
        AIP_OUT_LIT(o, "\"distributedInfo\":");
        put_json_text(o, md->values[dist]);
        AIP_OUT_LIT(o, ",\n");
    } else if (aip__trace_kineto_dist_info(o, m)) {
        AIP_OUT_LIT(o, ",\n");
    }
    aip__trace_run_facts(o, m);
    for (size_t i = 0; i < md->n; i++) {
        if (!md->keys[i] || !md->values[i] || reserved_key(md->keys[i]) || (long)i == dist)
            continue;
        AIP_OUT_LIT(o, ",\n");
        aip__trace_put_cstr(o, md->keys[i]);
        AIP_OUT_LIT(o, ":");
        put_json_text(o, md->values[i]);
    }
    AIP_OUT_LIT(o, ",\n\"displayTimeUnit\":\"ms\",\"baseTimeNanoseconds\":");
    aip__out_i64(o, base);
    AIP_OUT_LIT(o, ",\n\"traceEvents\":[");
}

void aip__trace_kineto_footer(aip__out *o)
{
    /* Kineto names the file it wrote; ours is the result directory's */
    AIP_OUT_LIT(o, "\n],\n\"traceName\":\"trace_view.json\"}\n");
}
