/*
 * result_load.c — a result directory into a derived model: its raw data,
 * with every problem found described in the run log, and what
 * profiler_info.json and profiler_metadata.json said.  Shared by the analysis
 * (analyse_dir.c) and the commands that read a profile directly (memory
 * timeline, summary).
 *
 * Damaged raw data is the normal case after a crash, so problems found in a
 * raw file (torn tail, corrupt chunks, dropped events, unpaired ranges) are
 * warnings and everything recoverable is kept.  Only "nothing to analyse"
 * (no FRAMEWORK, no readable raw file) is an error.
 */
#include "result.h"
#include "error.h"
#include "fs.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_list(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* The FRAMEWORK/ raw files, sorted by name so that the output is reproducible. */
static aip_status list_raw(aip__run_log *r, char ***out, size_t *count)
{
    char fw[PATH_MAX];
    *out = NULL;
    *count = 0;
    aip_status s = aip__join(fw, sizeof fw, r->dir, "FRAMEWORK");
    if (s)
        return s;
    DIR *d = opendir(fw);
    if (!d)
        return aip__fail(errno == ENOENT ? AIP_ERR_NOT_FOUND : AIP_ERR_IO,
                         "%s has no readable FRAMEWORK directory (%s): nothing to analyse",
                         r->dir, strerror(errno));
    char **v = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while (!s && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".raw") != 0)
            continue;
        char path[PATH_MAX];
        struct stat st;
        if (aip__join(path, sizeof path, fw, e->d_name) || lstat(path, &st) != 0)
            continue;
        if (S_ISLNK(st.st_mode)) {
            aip__runlog_warn(r, "skipping FRAMEWORK/%s: it is a symbolic link", e->d_name);
            continue;
        }
        if (!S_ISREG(st.st_mode))
            continue;
        s = aip__model_grow((void **)&v, &cap, n + 1, sizeof *v);
        if (!s && !(v[n++] = strdup(path)))
            s = aip__fail(AIP_ERR_NOMEM, "no memory");
    }
    closedir(d);
    if (s) {
        free_list(v, n);
        return s;
    }
    if (!n) {
        free(v);
        return aip__fail(AIP_ERR_NOT_FOUND, "%s/FRAMEWORK holds no .raw file: nothing to analyse",
                         r->dir);
    }
    qsort(v, n, sizeof *v, cmp_str);
    *out = v;
    *count = n;
    return AIP_OK;
}

static void describe_process(aip__run_log *r, const aip__process *p)
{
    const char *base = strrchr(p->source, '/');
    base = base ? base + 1 : p->source;
    size_t spans = 0;
    for (size_t i = 0; i < p->n_threads; i++)
        spans += p->threads[i].n_spans;
    aip__runlog_line(r, "read FRAMEWORK/%s: %llu bytes, %llu chunks, %llu events (%zu spans), "
                     "%zu threads, pid %lld%s", base, (unsigned long long)p->file_bytes,
                     (unsigned long long)p->chunks, (unsigned long long)p->events, spans,
                     p->n_threads, (long long)p->pid, p->raw.clean_end ? ", closed cleanly" : "");
    if (p->raw.truncated_bytes)
        aip__runlog_warn(r, "FRAMEWORK/%s: %llu bytes at the end do not form a complete chunk "
                         "(the program probably stopped while writing); everything before them "
                         "was recovered [%s]",
                         base, (unsigned long long)p->raw.truncated_bytes, p->raw.first_message);
    else if (!p->raw.clean_end)
        aip__runlog_warn(r, "FRAMEWORK/%s has no END chunk: the recording did not stop cleanly",
                         base);
    if (p->raw.corrupt_chunks)
        aip__runlog_warn(r, "FRAMEWORK/%s: %llu corrupt chunk(s) skipped [%s]", base,
                         (unsigned long long)p->raw.corrupt_chunks, p->raw.first_message);
    if (p->bad_event_chunks || p->bad_other_chunks)
        aip__runlog_warn(r, "FRAMEWORK/%s: %llu chunk(s) with inconsistent contents skipped [%s]",
                         base, (unsigned long long)(p->bad_event_chunks + p->bad_other_chunks),
                         p->load_problem);
    else if (p->load_problem[0])
        aip__runlog_warn(r, "FRAMEWORK/%s: %s", base, p->load_problem);
    if (!p->has_info)
        aip__runlog_warn(r, "FRAMEWORK/%s: no INFO chunk; pid taken from the file name", base);
    if (p->clock_fallback)
        aip__runlog_warn(r, "FRAMEWORK/%s: no usable CLOCK sync points; times are approximate",
                         base);
    if (p->dropped)
        aip__runlog_warn(r, "FRAMEWORK/%s: %llu events were dropped while recording (buffer cap, "
                         "failed write or size limit reached; see the trace's log)", base,
                         (unsigned long long)p->dropped);
    if (p->dev_bad_records)
        aip__runlog_warn(r, "FRAMEWORK/%s: %llu device record(s) named an unknown device or had "
                         "impossible times (no start, or an end before the start): left out",
                         base, (unsigned long long)p->dev_bad_records);
    if (p->has_flight)
        aip__runlog_line(r, "FRAMEWORK/%s: a flight recorder dump of the last %.3f s: dropped "
                         "by the flight recorder ring: %llu events; %llu older than the window "
                         "left out; %llu ranges still open written unfinished", base,
                         (double)p->flight_window_ns / 1e9,
                         (unsigned long long)p->flight_overwritten,
                         (unsigned long long)p->flight_outside_window,
                         (unsigned long long)p->flight_open_ranges);
    /* Normal at trace edges (a range started before or ended after the
     * trace): logged, not warned; the starts appear as instant events. */
    if (p->unmatched_range_starts || p->unmatched_range_ends)
        aip__runlog_line(r, "FRAMEWORK/%s: %llu mstx range start(s) without end, %llu end(s) "
                         "without start (ranges crossing the trace's edges)",
                         base, (unsigned long long)p->unmatched_range_starts,
                         (unsigned long long)p->unmatched_range_ends);
    /* with_stack makes these in every profile that has record_function:
     * logged, not warned (docs/ANALYSIS.md "Nesting"). */
    if (p->split_slices)
        aip__runlog_line(r, "FRAMEWORK/%s: %llu slices were split so that every thread's "
                         "slices nest (a Python call or a range closed across another's "
                         "boundary); recorded times are unchanged",
                         base, (unsigned long long)p->split_slices);
}

aip_status aip__result_load(aip__run_log *r, const aip__profiler_info_data *info, aip__model *m)
{
    char **raws;
    size_t n_raws;
    aip__model_init(m);
    m->info = *info; /* before loading: its start sync may be needed for the clock */
    aip_status s = aip__metadata_read(r->dir, &m->meta);
    if (!s)
        s = list_raw(r, &raws, &n_raws);
    if (s) {
        aip__model_free(m);
        return s;
    }
    aip_status first_error = AIP_OK;
    char first_msg[512] = "";
    for (size_t i = 0; i < n_raws && s != AIP_ERR_NOMEM; i++) {
        s = aip__model_load_raw(m, raws[i]);
        if (s) {
            aip__runlog_warn(r, "skipping a raw file: %s", aip_last_error());
            if (!first_error) {
                first_error = s;
                snprintf(first_msg, sizeof first_msg, "%s", aip_last_error());
            }
        }
    }
    free_list(raws, n_raws);
    double load_secs = aip__runlog_lap(r);
    if (s == AIP_ERR_NOMEM || !m->n_procs) {
        aip__model_free(m);
        return s == AIP_ERR_NOMEM ? s
               : aip__fail(first_error, "no raw data could be read: %s", first_msg);
    }
    s = aip__model_derive(m);
    double derive_secs = aip__runlog_lap(r);
    for (size_t i = 0; i < m->n_procs; i++)
        describe_process(r, &m->procs[i]);
    aip__runlog_line(r, "loaded in %.3f s, derived in %.3f s", load_secs, derive_secs);
    aip__runlog_line(r, "events: %llu, steps: %zu, fwdbwd flows: %zu, dropped events: %llu",
                     (unsigned long long)m->n_events, m->n_steps, m->n_flows,
                     (unsigned long long)m->dropped_events);
    /* Both change what the outputs say: never silently.  The cut count
     * is written when the trace is saved; a program killed before has none. */
    char cut[64];
    if (m->info.has_texts_cut)
        snprintf(cut, sizeof cut, "%llu", (unsigned long long)m->info.texts_cut);
    else
        snprintf(cut, sizeof cut, "unknown (the trace was not saved)");
    aip__runlog_line(r, "texts cut at %u bytes when recorded: %s; texts with invalid UTF-8 "
                     "(each bad byte written as U+FFFD): %llu", AIP_RAW_STRING_MAX_LEN, cut,
                     (unsigned long long)m->invalid_utf8_texts);
    if (s)
        aip__model_free(m);
    return s;
}

aip_status aip__result_open(const char *result_dir, int quiet, aip__run_log *r, aip__model *m)
{
    aip__model_init(m);
    aip__runlog_init(r, result_dir, quiet);
    aip__profiler_info_data info;
    aip_status s = aip__path_usable(result_dir, "result directory");
    if (!s)
        s = aip__existing_dir(result_dir, "result directory");
    if (!s)
        s = aip__profiler_info_read(result_dir, &info);
    if (!s)
        s = aip__result_load(r, &info, m);
    return s;
}
