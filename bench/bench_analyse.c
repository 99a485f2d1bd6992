/*
 * bench_analyse.c — how fast and how lean is `aiprof analyse`?
 *
 * Writes a raw profile straight from the format structs (no recording core
 * involved): N framework ops without shapes on T threads, nested two levels
 * (a parent op with two children; parents carry an autograd sequence
 * number), ProfilerStep#N annotations on the first thread.  Then times
 * aip_analyse_dir() in this process and reports events/s, raw bytes per
 * event, trace_view.json bytes per event and peak RSS (ru_maxrss, which
 * includes the small generation phase) relative to the raw file size.
 *
 * With --device every op triple also launches a device task: a runtime
 * call (DEVICE_API) inside the parent op and a kernel (DEVICE_TASK) on one
 * of two queues, 5 records per triple, with clock samples at both ends.
 * An event is a recorded record (op, annotation, runtime call, kernel),
 * so both profiles have the same number; a kernel legitimately makes more
 * output than an op (its slice, two flows, its call's slice, overlap
 * sections, rows in four tables), which is what the comparison measures.
 * --compare-device analyses the host-only profile and the device profile
 * of the same event count ROUNDS times, interleaved (host, device, then
 * device, host, ...: drift of a shared machine falls on both), prints each
 * round's ratio of their throughputs, the median and the spread, and
 * "ok" or "MISS" against issue 14's target (median device >= host-only)
 * (bench_analyse_device).  Also printed: the ratio of the CPU time (user +
 * system) the two took, which other load on the machine moves less.
 *
 * --floor (bench_analyse_full) measures issue 30's ratios on one host-only
 * profile, ROUNDS times in rotating order: the analysis on every usable
 * core, the analysis pinned to one core, and the floor: reading the raw
 * file and writing as many bytes as the analysis wrote (what `dd` does,
 * in 1 MiB blocks), all in this process.  It prints each round, then the
 * medians: analysis / floor (target <= 1.3) and one core / every core
 * (the second core's speed-up, target >= 1.5), wall and CPU time.
 *
 * Usage: bench_analyse [N_EVENTS (default 2000000)] [THREADS (default 4)]
 *                      [--export text|db|text,db] [--full] [--keep]
 *                      [--device | --compare-device | --floor]
 *                      [--rounds ROUNDS (default 5)]
 * --export chooses the export type (default text, which also writes the
 * databases, as the seed's text export does); --full is the large run:
 * 10 M events, text + db (bench_analyse_full, run by `make bench`).  The
 * default run stays short.
 * Targets: text + db >= 2 M events/s, peak RSS <= 2 x raw size.
 */
#include "bench_median.h"
#include "aiprof.h"
#include "raw_format.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef BENCH_ANALYSE_DEFAULT_EVENTS /* bench_analyse_full.c sets 10 M */
#define BENCH_ANALYSE_DEFAULT_EVENTS 2000000
#endif
#define CHUNK_EVENTS_BYTES (256u * 1024u)
#define OPS_PER_STEP 30000u

static int fd = -1;
static uint64_t raw_bytes;
static int with_device;        /* --device: op triples launch device tasks */
static uint64_t next_corr = 1;

static void put(const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w <= 0) {
            perror("write");
            exit(1);
        }
        c += w;
        n -= (size_t)w;
        raw_bytes += (uint64_t)w;
    }
}

static void chunk(uint16_t type, uint64_t tid, const void *payload, uint32_t size)
{
    aip__chunk_header h;
    aip__chunk_fill(&h, type, tid, payload, size);
    static const uint8_t zeros[8];
    put(&h, sizeof h);
    if (size)
        put(payload, size);
    put(zeros, aip__chunk_pad(size));
}

typedef struct tbuf {
    uint8_t data[CHUNK_EVENTS_BYTES + 64];
    uint32_t len;
    uint64_t tid;
    uint64_t t;               /* this thread's clock, ns */
} tbuf;

static void flush(tbuf *b)
{
    if (b->len)
        chunk(AIP_CHUNK_EVENTS, b->tid, b->data, b->len);
    b->len = 0;
}

static void rec(tbuf *b, const void *r, size_t n)
{
    if (b->len + n > CHUNK_EVENTS_BYTES)
        flush(b);
    memcpy(b->data + b->len, r, n);
    b->len += (uint32_t)n;
}

static void op(tbuf *b, uint32_t name, uint64_t s, uint64_t e, int64_t seq)
{
    if (seq < 0) {
        aip__rec_span r = {{AIP_REC_OP, 0, 24, name}, s, e};
        rec(b, &r, sizeof r);
    } else {
        uint8_t r[32];
        aip__rec_span h = {{AIP_REC_OP, AIP_OPF_SEQ, 32, name}, s, e};
        memcpy(r, &h, 24);
        memcpy(r + 24, &seq, 8);
        rec(b, r, sizeof r);
    }
}

/* A DEVICE_API call inside the parent op, then its kernel on the device
 * (device clock = ticks: one clock sample per end says so exactly). */
static void launch(tbuf *b, uint32_t api_name, uint32_t kernel, uint64_t t, unsigned queue)
{
    aip__rec_device_api a = {{AIP_REC_DEVICE_API, 0, sizeof a, api_name}, t + 2, t + 8,
                             next_corr, 0, 0};
    rec(b, &a, sizeof a);
    aip__rec_device_task k;
    memset(&k, 0, sizeof k);
    k.h = (aip__rec_header){AIP_REC_DEVICE_TASK, AIP_TASKF_QUEUED | AIP_TASKF_SUBMIT,
                            sizeof k, kernel};
    k.device_id = 0;
    k.queue_id = queue;
    k.task_kind = AIP_TASK_KERNEL;
    k.correlation = next_corr++;
    k.queued = t + 9;
    k.submit = t + 12;
    k.start = t + 20;
    k.end = t + 280;
    k.global[0] = 4096;
    k.local[0] = 64;
    rec(b, &k, sizeof k);
}

static void describe_device(tbuf *b, uint32_t dev_name, uint32_t q0, uint32_t q1)
{
    aip__rec_device d = {{AIP_REC_DEVICE, 0, sizeof d, dev_name}, 0, 0, AIP_DEVKIND_GPU,
                         AIP_BACKEND_OPENCL, 0, 0};
    rec(b, &d, sizeof d);
    aip__rec_device_queue qa = {{AIP_REC_DEVICE_QUEUE, 0, sizeof qa, q0}, 0, 0, 0};
    aip__rec_device_queue qb = {{AIP_REC_DEVICE_QUEUE, 0, sizeof qb, q1}, 0, 1, 0};
    rec(b, &qa, sizeof qa);
    rec(b, &qb, sizeof qb);
}

static void device_clock(tbuf *b, uint64_t t)
{
    aip__rec_device_clock c;
    memset(&c, 0, sizeof c);
    c.h = (aip__rec_header){AIP_REC_DEVICE_CLOCK, 0, sizeof c, 0};
    c.ticks = t;
    c.device_ns = t;
    c.method = AIP_SYNC_SAME_CLOCK;
    rec(b, &c, sizeof c);
}

static const char *op_names[] = {"aten::linear", "aten::addmm", "aten::relu", "aten::mm",
                                 "aten::add", "aten::mul", "aten::sum", "aten::copy_",
                                 "aten::empty", "aten::view", "aten::t", "aten::softmax"};
#define N_NAMES (sizeof op_names / sizeof op_names[0])

static uint64_t write_profile(const char *path, uint64_t n_events, unsigned threads,
                              uint64_t *steps_out)
{
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0640);
    if (fd < 0) {
        perror(path);
        exit(1);
    }
    uint8_t hdr[AIP_RAW_HEADER_SIZE] = {0};
    uint16_t major = AIP_RAW_VERSION_MAJOR, minor = AIP_RAW_VERSION_MINOR;
    uint32_t hs = AIP_RAW_HEADER_SIZE;
    memcpy(hdr, AIP_RAW_MAGIC, 8);
    memcpy(hdr + 8, &major, 2);
    memcpy(hdr + 10, &minor, 2);
    memcpy(hdr + 12, &hs, 4);
    put(hdr, sizeof hdr);
    const char *info = "{\"pid\": 31337, \"hostname\": \"bench\", \"program\": \"Python\", "
                       "\"clock\": \"monotonic\", \"ticks_per_second\": 1e9, "
                       "\"aiprof_version\": \"0.1.0\"}";
    chunk(AIP_CHUNK_INFO, 0, info, (uint32_t)strlen(info));
    /* string ids 1..N_NAMES: op names; then step names as they are needed */
    uint64_t max_steps = n_events / OPS_PER_STEP + 2;
    /* with --device: 4 more names after the steps' (device, queues, call) */
    static const char *dev_names[] = {"Bench Device", "queue 0", "queue 1",
                                      "clEnqueueNDRangeKernel"};
    size_t cap = 64 + N_NAMES * 32 + (size_t)max_steps * 32 + 4 * 32;
    uint8_t *sp = malloc(cap);
    uint32_t first = 1, count = (uint32_t)(N_NAMES + max_steps + 4), off = 8;
    uint32_t dev_first = (uint32_t)(N_NAMES + max_steps + 1); /* id of dev_names[0] */
    memcpy(sp, &first, 4);
    memcpy(sp + 4, &count, 4);
    for (uint32_t i = 0; i < count; i++) {
        char buf[40];
        const char *s = buf;
        if (i < N_NAMES)
            s = op_names[i];
        else if (i >= dev_first - 1)
            s = dev_names[i - (dev_first - 1)];
        else
            snprintf(buf, sizeof buf, "ProfilerStep#%u", i - (uint32_t)N_NAMES);
        uint32_t len = (uint32_t)strlen(s);
        memcpy(sp + off, &len, 4);
        memcpy(sp + off + 4, s, len);
        off += 4 + len;
    }
    chunk(AIP_CHUNK_STRINGS, 0, sp, off);
    free(sp);
    aip__clock_pair c0 = {1000, 1000, 1700000000000000000ull};
    chunk(AIP_CHUNK_CLOCK, 0, &c0, sizeof c0);

    tbuf *tb = calloc(threads, sizeof *tb);
    for (unsigned i = 0; i < threads; i++) {
        tb[i].tid = 100000 + i;
        tb[i].t = 2000;
    }
    if (with_device) {
        describe_device(&tb[0], dev_first, dev_first + 1, dev_first + 2);
        device_clock(&tb[0], 1000);
    }
    uint64_t events = 0, step = 0, seq = 0;
    while (events < n_events) {
        /* one step: the main thread's annotation spans every thread's ops */
        uint64_t step_start = tb[0].t;
        for (unsigned i = 0; i < threads; i++)
            if (tb[i].t < step_start)
                step_start = tb[i].t;
        for (unsigned i = 0; i < threads; i++)
            tb[i].t = step_start + 50;
        uint64_t per_thread = OPS_PER_STEP / threads / 3;
        uint64_t step_end = step_start;
        for (unsigned i = 0; i < threads && events < n_events; i++) {
            tbuf *b = &tb[i];
            for (uint64_t k = 0; k < per_thread && events < n_events; k++) {
                uint64_t t = b->t;
                uint32_t nm = (uint32_t)(k % N_NAMES) + 1;
                op(b, nm % N_NAMES + 1, t + 10, t + 100, -1);
                op(b, (nm + 5) % N_NAMES + 1, t + 120, t + 250, -1);
                op(b, nm, t, t + 300, (int64_t)seq++);
                events += 3;
                if (with_device) {
                    launch(b, dev_first + 3, nm, t + 100, (unsigned)(k & 1));
                    events += 2;
                }
                b->t = t + 350;
            }
            if (b->t > step_end)
                step_end = b->t;
        }
        aip__rec_span a = {{AIP_REC_ANNOTATION, 0, 24, (uint32_t)(N_NAMES + 1 + step)},
                          step_start, step_end + 10};
        rec(&tb[0], &a, sizeof a);
        events++;
        step++;
        for (unsigned i = 0; i < threads; i++)
            tb[i].t = step_end + 20;
    }
    if (with_device)
        device_clock(&tb[0], tb[0].t + 500);
    for (unsigned i = 0; i < threads; i++)
        flush(&tb[i]);
    uint8_t stats[8 + 64 * sizeof(aip__stats_entry)];
    uint32_t ns = threads < 64 ? threads : 64, zero = 0;
    memcpy(stats, &ns, 4);
    memcpy(stats + 4, &zero, 4);
    for (uint32_t i = 0; i < ns; i++) {
        aip__stats_entry e = {tb[i].tid, events / threads, 0};
        memcpy(stats + 8 + i * sizeof e, &e, sizeof e);
    }
    chunk(AIP_CHUNK_STATS, 0, stats, 8 + ns * (uint32_t)sizeof(aip__stats_entry));
    aip__clock_pair c1 = {tb[0].t + 1000, tb[0].t + 1000, 1700000000000000000ull + tb[0].t};
    chunk(AIP_CHUNK_CLOCK, 0, &c1, sizeof c1);
    chunk(AIP_CHUNK_END, 0, NULL, 0);
    close(fd);
    free(tb);
    *steps_out = step;
    return events;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long long file_size(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 ? (long long)st.st_size : -1;
}

typedef struct run_result {
    double events_per_s;      /* < 0: failed */
    double cpu_s;             /* user + system CPU of the analysis */
} run_result;

/* One profile written and analysed; `verbose` prints its figures. */
static run_result run_one(uint64_t n, unsigned threads, unsigned export_type, int keep,
                          int verbose)
{
    run_result fail = {-1, 0};
    raw_bytes = 0;
    next_corr = 1;
    char root[] = "/tmp/aip_bench_XXXXXX";
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return fail;
    }
    char dir[256], fw[300], raw[400], json[400], db[400];
    snprintf(dir, sizeof dir, "%s/bench_ascend_pt", root);
    snprintf(fw, sizeof fw, "%s/FRAMEWORK", dir);
    snprintf(raw, sizeof raw, "%s/aiprof_31337.raw", fw);
    snprintf(json, sizeof json, "%s/ASCEND_PROFILER_OUTPUT/trace_view.json", dir);
    snprintf(db, sizeof db, "%s/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler.db", dir);
    mkdir(dir, 0750);
    mkdir(fw, 0750);
    uint64_t steps;
    double g0 = now();
    uint64_t events = write_profile(raw, n, threads, &steps);
    double g1 = now();

    aip_analyse_options o;
    aip_analyse_options_init(&o);
    o.quiet = 1;
    o.export_type = export_type;
    struct rusage ru0;
    getrusage(RUSAGE_SELF, &ru0);
    double t0 = now();
    aip_status s = aip_analyse_dir(dir, &o);
    double t1 = now();
    if (s) {
        fprintf(stderr, "aip_analyse_dir failed: %s\n", aip_last_error());
        return fail;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double cpu = (double)(ru.ru_utime.tv_sec - ru0.ru_utime.tv_sec) +
                 (double)(ru.ru_utime.tv_usec - ru0.ru_utime.tv_usec) / 1e6;
    double sys = (double)(ru.ru_stime.tv_sec - ru0.ru_stime.tv_sec) +
                 (double)(ru.ru_stime.tv_usec - ru0.ru_stime.tv_usec) / 1e6;
    double secs = t1 - t0, rss = (double)ru.ru_maxrss * 1024.0;
    long long json_bytes = file_size(json), db_bytes = file_size(db);
    if (!verbose)
        goto done;
    printf("bench_analyse: %llu events (%u threads, %llu steps%s), raw %.1f MB written in %.2f s\n",
           (unsigned long long)events, threads, (unsigned long long)steps,
           with_device ? ", 2 of every 5 events device activity" : "", raw_bytes / 1e6, g1 - g0);
    printf("  analyse time          %.3f s wall, %.3f s user + %.3f s system CPU\n", secs, cpu,
           sys);
    /* What the cores can do at best: the writers run on their own threads,
     * so no schedule on C cores beats (user + system CPU) / C; a wall time
     * well above CPU / wall = 1 on an idle machine means waiting. */
    printf("  cores busy            %.2f (CPU / wall); on 2 cores no schedule beats %.3f s\n",
           (cpu + sys) / secs, (cpu + sys) / 2);
    printf("  export type           %s%s\n", export_type & AIP_EXPORT_TEXT ? "text (JSON, CSV, db)" : "",
           export_type == AIP_EXPORT_DB ? "db" : "");
    printf("  events/s              %.2f M   (target with the db >= 2 M)\n", events / secs / 1e6);
    printf("  raw bytes/event       %.1f\n", (double)raw_bytes / (double)events);
    if (json_bytes >= 0)
        printf("  trace_view.json       %.1f bytes/event (%.1f MB)\n",
               (double)json_bytes / (double)events, json_bytes / 1e6);
    printf("  ascend_pytorch_profiler.db %.1f bytes/event (%.1f MB)\n",
           (double)db_bytes / (double)events, db_bytes / 1e6);
    printf("  peak RSS              %.1f MB = %.2f x raw size (target <= 2)\n", rss / 1e6,
           rss / (double)raw_bytes);
    char logp[400], line[512];
    snprintf(logp, sizeof logp, "%s/logs/analyse.log", dir);
    FILE *lf = fopen(logp, "r");
    while (lf && fgets(line, sizeof line, lf))
        if (strstr(line, " in ") && (strstr(line, "loaded") || strstr(line, "wrote")))
            printf("  log: %s", line);
    if (lf)
        fclose(lf);
done:
    if (keep) {
        printf("  kept %s\n", dir);
    } else {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", root);
    }
    return (run_result){events / secs, cpu + sys};
}


#define MAX_ROUNDS 50

/* --compare-device: ROUNDS interleaved pairs, the ratio and its spread. */
static int compare_device(uint64_t n, unsigned threads, unsigned export_type, int rounds,
                          int keep)
{
    double ratio[MAX_ROUNDS] = {0}, cpu_ratio[MAX_ROUNDS] = {0}, host[MAX_ROUNDS] = {0},
           dev[MAX_ROUNDS] = {0};
    for (int r = 0; r < rounds; r++) {
        run_result h = {0, 0}, d = {0, 0};
        for (int k = 0; k < 2; k++) {
            with_device = (k + r) % 2; /* odd rounds start with the device profile */
            run_result x = run_one(n, threads, export_type, keep, r == 0);
            if (x.events_per_s <= 0)
                return 1;
            *(with_device ? &d : &h) = x;
        }
        host[r] = h.events_per_s;
        dev[r] = d.events_per_s;
        ratio[r] = d.events_per_s / h.events_per_s;
        cpu_ratio[r] = h.cpu_s / d.cpu_s; /* same events: CPU per event, inverted */
        printf("  round %d: host-only %.2f M events/s (%.3f s CPU), device %.2f M events/s "
               "(%.3f s CPU): %.2f x\n", r + 1, h.events_per_s / 1e6, h.cpu_s,
               d.events_per_s / 1e6, d.cpu_s, ratio[r]);
    }
    double lo = ratio[0], hi = ratio[0];
    for (int r = 1; r < rounds; r++) {
        lo = ratio[r] < lo ? ratio[r] : lo;
        hi = ratio[r] > hi ? ratio[r] : hi;
    }
    double med = median(ratio, rounds), med_cpu = median(cpu_ratio, rounds);
    double med_host = median(host, rounds), med_dev = median(dev, rounds);
    printf("bench_analyse_device: device profile %.2f M events/s = %.2f x the host-only "
           "profile's %.2f M events/s (median of %d interleaved rounds, spread %.2f..%.2f; "
           "CPU time %.2f x) target >= 1: %s\n", med_dev / 1e6, med, med_host / 1e6, rounds,
           lo, hi, med_cpu, med >= 1 ? "ok" : "MISS");
    return 0;
}

/* CPU time (user + system) of this process so far, s. */
static double cpu_now(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

typedef struct timed {
    double wall, cpu;         /* s; wall < 0: failed */
} timed;

static void rm_rf(const char *path)
{
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", path);
}

/* Bytes of the files in dir (the analysis' outputs). */
static long long dir_bytes(const char *dir)
{
    DIR *d = opendir(dir);
    long long sum = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (e->d_name[0] != '.' && stat(p, &st) == 0 && S_ISREG(st.st_mode))
            sum += st.st_size;
    }
    if (d)
        closedir(d);
    return sum;
}

static int cpus_usable(void)
{
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
}

/* One analysis of dir from scratch (no earlier outputs to replace); with
 * one_core the calling thread, and so every thread it starts, runs on one
 * CPU of its mask. */
static timed analyse_timed(const char *dir, unsigned export_type, int one_core,
                           long long *out_bytes)
{
    char out[600], logs[600];
    snprintf(out, sizeof out, "%s/ASCEND_PROFILER_OUTPUT", dir);
    snprintf(logs, sizeof logs, "%s/logs", dir);
    rm_rf(out);
    rm_rf(logs);
    cpu_set_t all, one;
    sched_getaffinity(0, sizeof all, &all);
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &all)) {
            CPU_SET(c, &one);
            break;
        }
    if (one_core)
        sched_setaffinity(0, sizeof one, &one);
    aip_analyse_options o;
    aip_analyse_options_init(&o);
    o.quiet = 1;
    o.export_type = export_type;
    double c0 = cpu_now(), t0 = now();
    aip_status s = aip_analyse_dir(dir, &o);
    timed r = {now() - t0, cpu_now() - c0};
    if (one_core)
        sched_setaffinity(0, sizeof all, &all);
    if (s) {
        fprintf(stderr, "aip_analyse_dir failed: %s\n", aip_last_error());
        r.wall = -1;
    }
    *out_bytes = dir_bytes(out);
    return r;
}

/* The floor: read the raw file, write `bytes` into a new file beside it
 * (1 MiB blocks, as `dd bs=1M`), close it; the file is removed after. */
static timed floor_timed(const char *dir, const char *raw, long long bytes)
{
    static char buf[1 << 20];
    char path[600];
    snprintf(path, sizeof path, "%s/floor.out", dir);
    double c0 = cpu_now(), t0 = now();
    int in = open(raw, O_RDONLY), out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0640);
    timed r = {-1, 0};
    if (in < 0 || out < 0) {
        perror("floor");
        goto done;
    }
    while (read(in, buf, sizeof buf) > 0)
        ;
    for (long long left = bytes; left > 0;) {
        ssize_t w = write(out, buf, left < (long long)sizeof buf ? (size_t)left : sizeof buf);
        if (w <= 0) {
            perror("floor write");
            goto done;
        }
        left -= w;
    }
    if (close(out) == 0) {
        out = -1;
        r = (timed){now() - t0, cpu_now() - c0};
    }
done:
    if (in >= 0)
        close(in);
    if (out >= 0)
        close(out);
    unlink(path);
    return r;
}

/* --floor: ROUNDS of (every core, one core, floor) in rotating order. */
static int floor_compare(uint64_t n, unsigned threads, unsigned export_type, int rounds,
                         int keep)
{
    char root[] = "/tmp/aip_bench_XXXXXX";
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 1;
    }
    char dir[256], fw[300], raw[400];
    snprintf(dir, sizeof dir, "%s/bench_ascend_pt", root);
    snprintf(fw, sizeof fw, "%s/FRAMEWORK", dir);
    snprintf(raw, sizeof raw, "%s/aiprof_31337.raw", fw);
    mkdir(dir, 0750);
    mkdir(fw, 0750);
    uint64_t steps, events = write_profile(raw, n, threads, &steps);
    double all_wall[MAX_ROUNDS], one_wall[MAX_ROUNDS], floor_wall[MAX_ROUNDS];
    double all_cpu[MAX_ROUNDS], one_cpu[MAX_ROUNDS], floor_cpu[MAX_ROUNDS];
    double to_floor[MAX_ROUNDS], to_floor_cpu[MAX_ROUNDS], second[MAX_ROUNDS];
    long long out_bytes = 0, ob = 0;
    printf("bench_analyse --floor: %llu host-only events (%u threads), raw %.1f MB, %d usable "
           "CPUs, load average at start: ", (unsigned long long)events, threads,
           raw_bytes / 1e6, cpus_usable());
    fflush(stdout);
    if (system("cut -d' ' -f1-3 /proc/loadavg") != 0)
        printf("?\n");
    /* Not counted: tells the floor how many bytes the outputs are. */
    if (analyse_timed(dir, export_type, 0, &out_bytes).wall < 0)
        return 1;
    for (int r = 0; r < rounds; r++) {
        timed all = {0, 0}, one = {0, 0}, fl = {0, 0};
        for (int k = 0; k < 3; k++) {
            int which = (k + r) % 3; /* rotate: drift of a shared machine falls on each */
            if (which == 0)
                all = analyse_timed(dir, export_type, 0, &out_bytes);
            else if (which == 1)
                one = analyse_timed(dir, export_type, 1, &ob);
            else
                fl = floor_timed(dir, raw, out_bytes);
            if (all.wall < 0 || one.wall < 0 || fl.wall < 0)
                return 1;
        }
        all_wall[r] = all.wall, one_wall[r] = one.wall, floor_wall[r] = fl.wall;
        all_cpu[r] = all.cpu, one_cpu[r] = one.cpu, floor_cpu[r] = fl.cpu;
        to_floor[r] = all.wall / fl.wall;
        to_floor_cpu[r] = all.cpu / fl.cpu;
        second[r] = one.wall / all.wall;
        printf("  round %d: every core %.3f s (%.3f s CPU), one core %.3f s (%.3f s CPU), "
               "floor %.3f s (%.3f s CPU): %.2f x the floor, second core %.2f x\n", r + 1,
               all.wall, all.cpu, one.wall, one.cpu, fl.wall, fl.cpu, to_floor[r], second[r]);
    }
    printf("  outputs %.1f MB = %.1f bytes/event; analysis %.2f M events/s (median)\n",
           out_bytes / 1e6, (double)out_bytes / (double)events,
           events / median(all_wall, rounds) / 1e6);
    printf("  floor (read the raw, write the outputs' bytes): %.3f s wall, %.3f s CPU; one core "
           "%.3f s wall (medians)\n", median(floor_wall, rounds), median(floor_cpu, rounds),
           median(one_wall, rounds));
    double tf = median(to_floor, rounds), tfc = median(to_floor_cpu, rounds);
    double sc = median(second, rounds), oc = median(one_cpu, rounds), ac = median(all_cpu, rounds);
    printf("bench_analyse_full: analysis / floor %.2f x wall (target <= 1.3: %s), %.2f x CPU "
           "time; median of %d rounds\n", tf, tf <= 1.3 ? "ok" : "MISS", tfc, rounds);
    printf("bench_analyse_full: second core %.2f x (one core's wall / every core's; target >= "
           "1.5: %s); CPU time one core %.3f s, every core %.3f s; median of %d rounds\n", sc,
           sc >= 1.5 ? "ok" : "MISS", oc, ac, rounds);
    if (keep)
        printf("  kept %s\n", dir);
    else
        rm_rf(root);
    return 0;
}

#ifndef BENCH_ANALYSE_FLOOR /* bench_analyse_full.c sets 1 */
#define BENCH_ANALYSE_FLOOR 0
#endif

#ifndef BENCH_ANALYSE_COMPARE_DEVICE /* bench_analyse_device.c sets 1 */
#define BENCH_ANALYSE_COMPARE_DEVICE 0
#endif

int main(int argc, char **argv)
{
    uint64_t n = BENCH_ANALYSE_DEFAULT_EVENTS;
    unsigned threads = 4;
    unsigned export_type = AIP_EXPORT_TEXT;
    int keep = 0, pos = 0, compare = BENCH_ANALYSE_COMPARE_DEVICE, rounds = 5;
    int floor_mode = BENCH_ANALYSE_FLOOR;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--keep"))
            keep = 1;
        else if (!strcmp(argv[i], "--full"))
            n = 10000000;
        else if (!strcmp(argv[i], "--device"))
            with_device = 1;
        else if (!strcmp(argv[i], "--compare-device"))
            compare = 1;
        else if (!strcmp(argv[i], "--floor"))
            floor_mode = 1;
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--export") && i + 1 < argc) {
            const char *t = argv[++i];
            export_type = (strstr(t, "text") ? AIP_EXPORT_TEXT : 0) | (strstr(t, "db") ? AIP_EXPORT_DB : 0);
            if (!export_type) {
                fprintf(stderr, "--export takes text, db or text,db\n");
                return 2;
            }
        } else if (pos++ == 0)
            n = strtoull(argv[i], NULL, 10);
        else
            threads = (unsigned)atoi(argv[i]);
    }
    if (!n || !threads || threads > 64 || rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "usage: bench_analyse [N_EVENTS] [THREADS 1..64] [--export text|db|text,db] "
                "[--full] [--keep] [--device | --compare-device | --floor] [--rounds 1..%d]\n", MAX_ROUNDS);
        return 2;
    }
    if (floor_mode)
        return floor_compare(n, threads, export_type, rounds, keep);
    if (!compare)
        return run_one(n, threads, export_type, keep, 1).events_per_s < 0;
    /* The anchor: the host-only profile of the same size, in the same run. */
    return compare_device(n, threads, export_type, rounds, keep);
}
