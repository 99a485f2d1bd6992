/*
 * test_flight.c — the flight recorder (docs/FLIGHT_RECORDER.md): an API
 * dump holds the ring's events and counts what the ring overwrote
 * exactly (held + overwritten + outside the window + dropped == emitted)
 * while the ring's files never pass their bound; a signal dumps; a
 * planted slow step and a planted hang are in a dump with the steps
 * before them, the hung thread's range written unfinished; events older
 * than the window are left out and counted; a SIGKILL while armed loses
 * nothing the last flush wrote (aip_flight_salvage); a stop without a
 * trigger leaves nothing.  No timing is asserted: sleeps only make sure
 * a watchdog or a window has passed, and dumps are waited for.
 */
#include "aip_test.h"
#include "aiprof.h"
#include "flight.h"
#include "raw_count.h"
#include "session_helpers.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RING (4ull << 20)

static char tmp[PATH_MAX], ring[PATH_MAX + 16];

static void fresh(const char *tag)
{
    make_tmpdir(tmp, sizeof tmp, tag);
    snprintf(ring, sizeof ring, "%s/ring", tmp);
}

static void flight_config(aip_config *c, double window)
{
    base_config(c, tmp);
    c->flight_recorder_seconds = window;
    c->flight_ring_bytes = RING;
    c->flight_ring_dir = ring;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* The bytes of the ring's segment files (the process's ring directory). */
static uint64_t ring_bytes_now(void)
{
    uint64_t total = 0;
    DIR *d = opendir(ring);
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char sub[PATH_MAX * 2];
        snprintf(sub, sizeof sub, "%s/%s", ring, e->d_name);
        DIR *s = opendir(sub);
        if (!s)
            continue;
        struct dirent *f;
        while ((f = readdir(s))) {
            char p[PATH_MAX * 3];
            struct stat st;
            snprintf(p, sizeof p, "%s/%s", sub, f->d_name);
            if (!strncmp(f->d_name, "seg_", 4) && stat(p, &st) == 0)
                total += (uint64_t)st.st_size;
        }
        closedir(s);
    }
    closedir(d);
    return total;
}

/* What a dump's raw file says: its FLIGHT counts, and the records named
 * `name` (how many, how many flagged unfinished). */
typedef struct dump_view {
    aip__flight_counts counts;
    int has_counts;
    uint64_t named, unfinished, marks;
} dump_view;

/* The ids a dump gives the text `name` (at most 64: a dump may define one
 * text again in each segment it copies). */
typedef struct want_ids {
    const char *name;
    uint32_t id[64];
    size_t n;
} want_ids;

static void want_ids_put(void *arg, uint32_t id, const char *text, uint32_t len)
{
    want_ids *w = arg;
    if (len == strlen(w->name) && !memcmp(text, w->name, len) && w->n < 64)
        w->id[w->n++] = id;
}

static dump_view read_dump(const char *dir, const char *name)
{
    dump_view v;
    memset(&v, 0, sizeof v);
    char path[PATH_MAX];
    if (!raw_find(dir, path, sizeof path))
        return v;
    aip__raw_reader *r;
    if (aip__raw_open(path, &r) != AIP_OK)
        return v;
    want_ids w = {name, {0}, 0};
    aip__raw_chunk c;
    while (aip__raw_next(r, &c) == 1) {
        if (c.type == AIP_CHUNK_FLIGHT && c.size >= sizeof v.counts) {
            memcpy(&v.counts, c.payload, sizeof v.counts);
            v.has_counts = 1;
        } else if (c.type == AIP_CHUNK_STRINGS) {
            raw_strings_each(&c, want_ids_put, &w);
        } else if (c.type == AIP_CHUNK_EVENTS) {
            for (uint32_t off = 0; off + 8 <= c.size;) {
                aip__rec_header h;
                memcpy(&h, c.payload + off, sizeof h);
                if (h.size < 8)
                    break;
                v.marks += h.kind == AIP_REC_MARK;
                for (size_t i = 0; i < w.n; i++)
                    if (h.name == w.id[i] && h.kind != AIP_REC_THREAD_NAME) {
                        v.named++;
                        v.unfinished += (h.flags & AIP_REC_UNFINISHED) != 0;
                        break;
                    }
                off += h.size;
            }
        }
    }
    aip__raw_close(r);
    return v;
}

/* The n-th (from 0) result directory under tmp, by name; 0 if none. */
static int find_dump(int nth, char *out, size_t cap)
{
    DIR *d = opendir(tmp);
    if (!d)
        return 0;
    char *names[64];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 64) {
        size_t len = strlen(e->d_name);
        if (len > 10 && !strcmp(e->d_name + len - 10, "_ascend_pt"))
            names[n++] = strdup(e->d_name);
    }
    closedir(d);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (strcmp(names[j], names[i]) < 0) {
                char *t = names[i];
                names[i] = names[j];
                names[j] = t;
            }
    int found = nth < n;
    if (found)
        snprintf(out, cap, "%s/%s", tmp, names[nth]);
    for (int i = 0; i < n; i++)
        free(names[i]);
    return found;
}

/* A complete dump directory (its raw file's END written) that holds a
 * record named `name`, waited for.  Every dump is looked at, not only the
 * first: on a loaded machine a watchdog or a step may fire once early
 * (a preempted thread is a real hang or slow step to the recorder), and
 * that dump is correct but not the one the test planted. */
static int wait_dump(const char *name, char *out, size_t cap)
{
    for (int i = 0; i < 1000; i++) {
        for (int nth = 0; find_dump(nth, out, cap); nth++) {
            char raw[PATH_MAX];
            if (raw_find(out, raw, sizeof raw) && raw_count_file(raw, NULL).clean_end &&
                read_dump(out, name).named > 0)
                return 1;
        }
        sleep_ms(20);
    }
    return 0;
}

#define EMITTED 400000

static void test_api_dump_counts_what_the_ring_overwrote(void)
{
    fresh("flight_api");
    aip_config c;
    flight_config(&c, 1000); /* a window longer than the run: the ring bounds it */
    aip_session *s = start_new(&c);
    ASSERT_TRUE(s != NULL);
    aip_string_id dom = aip_intern("flight"), msg = aip_intern("m");
    uint64_t largest = 0;
    for (int i = 0; i < EMITTED; i++) {
        aip_mark_id(dom, msg);
        if (i % 20000 == 0) {
            uint64_t b = ring_bytes_now();
            largest = b > largest ? b : largest;
        }
    }
    char none[PATH_MAX];
    ASSERT_TRUE(!find_dump(0, none, sizeof none)); /* nothing written before a trigger */
    char dir[PATH_MAX];
    ASSERT_EQ(aip_flight_dump("test", dir, sizeof dir), AIP_OK);
    uint64_t after = ring_bytes_now();
    largest = after > largest ? after : largest;
    ASSERT_TRUE(largest > 0);
    ASSERT_TRUE(largest <= RING);
    char raw[PATH_MAX];
    ASSERT_TRUE(raw_find(dir, raw, sizeof raw));
    raw_counts rc = raw_count_file(raw, NULL);
    ASSERT_TRUE(rc.clean_end);
    dump_view v = read_dump(dir, "m");
    ASSERT_TRUE(v.has_counts);
    ASSERT_EQ(v.counts.recorded, rc.by_kind[AIP_REC_MARK]);
    ASSERT_TRUE(v.counts.overwritten > 0); /* 9.6 MB of marks through a 4 MiB ring */
    ASSERT_EQ(v.counts.recorded + v.counts.overwritten + v.counts.outside_window +
                  rc.stats_dropped, EMITTED);
    /* The dump is a normal result directory. */
    aip_analyse_options o;
    aip_analyse_options_init(&o);
    o.quiet = 1;
    o.outputs = AIP_OUTPUTS_TRACE_VIEW;
    ASSERT_EQ(aip_analyse_dir(dir, &o), AIP_OK);
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    aip_session_destroy(s);
    /* A stop removes the ring: only dumps stay. */
    ASSERT_EQ(ring_bytes_now(), 0);
    rm_rf(tmp);
}

static void test_signal_dumps(void)
{
    fresh("flight_sig");
    aip_config c;
    flight_config(&c, 60);
    aip_session *s = start_new(&c);
    ASSERT_TRUE(s != NULL);
    aip_mark("flight", "before_signal");
    raise(SIGUSR2); /* the handler only sets a flag: the writer dumps */
    char dir[PATH_MAX];
    ASSERT_TRUE(wait_dump("before_signal", dir, sizeof dir));
    dump_view v = read_dump(dir, "before_signal");
    ASSERT_EQ(v.named, 1);
    ASSERT_TRUE(v.has_counts);
    ASSERT_TRUE(v.counts.reasons & AIP_FLIGHT_SIGNAL);
    aip_session_destroy(s);
    rm_rf(tmp);
}

static void test_slow_step_in_dump_with_steps_before(void)
{
    fresh("flight_slow");
    aip_config c;
    flight_config(&c, 60);
    c.flight_slow_step = 5;
    aip_session *s = start_new(&c);
    ASSERT_TRUE(s != NULL);
    for (int i = 0; i < 30; i++) {
        aip_mark("flight", "early_step_work");
        sleep_ms(4); /* steps of some length: a preempted one is not 5 x slower */
        aip_session_step(s);
    }
    aip_range_push("flight", "slow_work");
    sleep_ms(300); /* far above 5 x the median of steps of 4 ms */
    aip_range_pop();
    aip_session_step(s);
    char dir[PATH_MAX];
    ASSERT_TRUE(wait_dump("slow_work", dir, sizeof dir));
    ASSERT_EQ(read_dump(dir, "early_step_work").named, 30); /* the steps before it */
    ASSERT_EQ(read_dump(dir, "ProfilerStep#30").named, 1);  /* the slow step itself */
    ASSERT_EQ(read_dump(dir, "ProfilerStep#0").named, 1);
    ASSERT_TRUE(read_dump(dir, "slow_work").counts.reasons & AIP_FLIGHT_SLOW_STEP);
    aip_session_destroy(s);
    rm_rf(tmp);
}

static void test_hang_dumps_open_ranges(void)
{
    fresh("flight_hang");
    aip_config c;
    flight_config(&c, 60);
    c.flight_hang_seconds = 0.3;
    aip_session *s = start_new(&c);
    ASSERT_TRUE(s != NULL);
    for (int i = 0; i < 10; i++) {
        aip_mark("flight", "before_hang");
        aip_session_step(s);
    }
    aip_range_push("flight", "hung_here");
    aip_annotation_push("stuck_call");
    char dir[PATH_MAX];
    int dumped = wait_dump("hung_here", dir, sizeof dir); /* no step: the watchdog dumps */
    aip_annotation_pop();
    aip_range_pop();
    ASSERT_TRUE(dumped);
    dump_view v = read_dump(dir, "hung_here");
    ASSERT_EQ(v.named, 1);
    ASSERT_EQ(v.unfinished, 1);
    ASSERT_EQ(read_dump(dir, "stuck_call").unfinished, 1);
    ASSERT_EQ(read_dump(dir, "before_hang").named, 10);
    ASSERT_TRUE(v.counts.reasons & AIP_FLIGHT_HANG);
    ASSERT_TRUE(v.counts.open_ranges >= 2);
    /* trace_view.json shows them as unfinished, never as finished spans. */
    aip_analyse_options o;
    aip_analyse_options_init(&o);
    o.quiet = 1;
    o.outputs = AIP_OUTPUTS_TRACE_VIEW;
    ASSERT_EQ(aip_analyse_dir(dir, &o), AIP_OK);
    char trace[PATH_MAX + 64];
    snprintf(trace, sizeof trace, "%s/ASCEND_PROFILER_OUTPUT/trace_view.json", dir);
    size_t len = 0;
    char *text = aip_test_slurp(trace, &len);
    ASSERT_TRUE(text != NULL);
    ASSERT_TRUE(strstr(text, "\"name\":\"hung_here (unfinished)\"") != NULL);
    ASSERT_TRUE(strstr(text, "\"name\":\"stuck_call (unfinished)\"") != NULL);
    ASSERT_TRUE(strstr(text, "\"name\":\"hung_here\"") == NULL);
    ASSERT_TRUE(strstr(text, "\"unfinished\":true") != NULL);
    free(text);
    aip_session_destroy(s);
    rm_rf(tmp);
}

static void test_events_older_than_the_window_are_left_out(void)
{
    fresh("flight_window");
    aip_config c;
    /* The window is measured back from the dump, which the writer thread
     * does: "new" stays in it unless that thread waits a second. */
    flight_config(&c, 1.0);
    aip_session *s = start_new(&c);
    ASSERT_TRUE(s != NULL);
    for (int i = 0; i < 100; i++)
        aip_mark("flight", "old");
    sleep_ms(1200); /* past the window */
    aip_mark("flight", "new");
    char dir[PATH_MAX];
    ASSERT_EQ(aip_flight_dump(NULL, dir, sizeof dir), AIP_OK);
    dump_view v = read_dump(dir, "old");
    ASSERT_EQ(v.named, 0);
    ASSERT_EQ(read_dump(dir, "new").named, 1);
    ASSERT_EQ(v.counts.outside_window, 100);
    ASSERT_EQ(v.counts.recorded, 1);
    aip_session_destroy(s);
    rm_rf(tmp);
}

/* In a child: arm, record `filler` marks "m" (through the ring, which
 * recycles), then `n` marks, wait until the ring's files hold them all (a
 * flush wrote them), tell the parent, wait to be killed. */
static void armed_child(int fd, int n, int filler)
{
    aip_config c;
    flight_config(&c, 60);
    aip_session *s = start_new(&c);
    if (!s)
        _exit(2);
    for (int i = 0; i < filler; i++)
        aip_mark("flight", "m");
    for (int i = 0; i < n; i++)
        aip_mark("flight", "before_kill");
    char seg_dir[PATH_MAX * 2] = "";
    for (int tries = 0; tries < 1000; tries++) {
        DIR *d = opendir(ring);
        struct dirent *e;
        uint64_t marks = 0;
        while (d && (e = readdir(d)))
            if (e->d_name[0] != '.')
                snprintf(seg_dir, sizeof seg_dir, "%s/%s", ring, e->d_name);
        if (d)
            closedir(d);
        DIR *sd = seg_dir[0] ? opendir(seg_dir) : NULL;
        while (sd && (e = readdir(sd))) {
            char p[PATH_MAX * 3];
            snprintf(p, sizeof p, "%s/%s", seg_dir, e->d_name);
            if (!strncmp(e->d_name, "seg_", 4))
                marks += raw_count_file(p, "before_kill").prefix_hits;
        }
        if (sd)
            closedir(sd);
        if (marks == (uint64_t)n)
            break;
        sleep_ms(20);
    }
    if (write(fd, "k", 1) != 1)
        _exit(3);
    for (;;)
        pause();
}

/* Kill an armed child (armed_child) once its marks are flushed; the
 * ring it leaves, in `out`. */
static void kill_armed_child(int n, int filler, char *out, size_t cap)
{
    int p[2];
    ASSERT_EQ(pipe(p), 0);
    pid_t pid = fork();
    ASSERT_TRUE(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        armed_child(p[1], n, filler);
    }
    close(p[1]);
    char b;
    ASSERT_EQ(read(p[0], &b, 1), 1);
    close(p[0]);
    kill(pid, SIGKILL);
    int status;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status));
    DIR *d = opendir(ring);
    ASSERT_TRUE(d != NULL);
    struct dirent *e;
    out[0] = '\0';
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            snprintf(out, cap, "%s/%s", ring, e->d_name);
    closedir(d);
    ASSERT_TRUE(out[0]);
}

/* The segment of `ring_dir` with the highest (or lowest) number. */
static int segment_at(const char *ring_dir, int highest, char *out, size_t cap)
{
    DIR *d = opendir(ring_dir);
    struct dirent *e;
    char best[256] = "";
    while (d && (e = readdir(d)))
        if (!strncmp(e->d_name, "seg_", 4) &&
            (!best[0] || (strcmp(e->d_name, best) > 0) == highest))
            snprintf(best, sizeof best, "%s", e->d_name);
    if (d)
        closedir(d);
    return best[0] && snprintf(out, cap, "%s/%s", ring_dir, best) < (int)cap;
}

static void append_file(const char *to, const char *from, long skip)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "ab");
    ASSERT_TRUE(in && out);
    ASSERT_EQ(fseek(in, skip, SEEK_SET), 0);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        ASSERT_EQ(fwrite(buf, 1, n, out), n);
    fclose(in);
    fclose(out);
}

/* A recycled segment's file is reused in place (flight_ring.c): after a
 * SIGKILL the live segment's bytes past the last flush may be an older
 * segment's whole chunks, and a file renamed for the next segment may
 * still hold an older one's.  Planted here at their worst (the older
 * chunks start exactly where ours end): the salvage takes neither, so
 * that what the ring recycled (and counted) is never also recorded. */
static void test_sigkill_after_recycling_takes_no_older_bytes(void)
{
    fresh("flight_kill_reuse");
    enum { N = 3000, FILLER = EMITTED };
    char proc_ring[PATH_MAX * 2], live[PATH_MAX * 3], oldest[PATH_MAX * 3];
    char next[PATH_MAX * 3];
    kill_armed_child(N, FILLER, proc_ring, sizeof proc_ring);
    ASSERT_TRUE(segment_at(proc_ring, 1, live, sizeof live));
    ASSERT_TRUE(segment_at(proc_ring, 0, oldest, sizeof oldest));
    ASSERT_TRUE(strcmp(live, oldest) != 0);
    unsigned long long seq = strtoull(strrchr(live, '/') + 5, NULL, 10);
    snprintf(next, sizeof next, "%s/seg_%010llu.raw", proc_ring, seq + 1);
    append_file(next, oldest, 0);                    /* renamed, not begun */
    append_file(live, oldest, AIP_RAW_HEADER_SIZE); /* whole older chunks after ours */
    char dir[PATH_MAX];
    ASSERT_EQ(aip_flight_salvage(proc_ring, tmp, dir, sizeof dir), AIP_OK);
    dump_view v = read_dump(dir, "before_kill");
    ASSERT_EQ(v.named, N);
    char raw[PATH_MAX];
    ASSERT_TRUE(raw_find(dir, raw, sizeof raw));
    raw_counts rc = raw_count_file(raw, NULL);
    ASSERT_EQ(v.counts.recorded, rc.by_kind[AIP_REC_MARK]);
    ASSERT_TRUE(v.counts.overwritten + v.counts.outside_window > 0); /* it recycled */
    ASSERT_EQ(v.counts.recorded + v.counts.overwritten + v.counts.outside_window +
                  rc.stats_dropped, (uint64_t)N + FILLER);
    rm_rf(tmp);
}

static void test_sigkill_loses_nothing_flushed(void)
{
    fresh("flight_kill");
    /* The ring is left behind: salvage it. */
    char proc_ring[PATH_MAX * 2];
    kill_armed_child(5000, 0, proc_ring, sizeof proc_ring);
    char dir[PATH_MAX];
    ASSERT_EQ(aip_flight_salvage(proc_ring, tmp, dir, sizeof dir), AIP_OK);
    dump_view v = read_dump(dir, "before_kill");
    ASSERT_EQ(v.named, 5000);
    ASSERT_EQ(v.marks, 5000);
    ASSERT_TRUE(v.counts.reasons & AIP_FLIGHT_SALVAGE);
    aip_analyse_options o;
    aip_analyse_options_init(&o);
    o.quiet = 1;
    o.outputs = AIP_OUTPUTS_TRACE_VIEW;
    ASSERT_EQ(aip_analyse_dir(dir, &o), AIP_OK);
    rm_rf(tmp);
}

static void test_config_checked(void)
{
    aip_config c;
    aip_config_init(&c);
    c.flight_recorder_seconds = -1;
    ASSERT_EQ(aip_config_validate(&c), AIP_ERR_INVALID_ARG);
    aip_config_init(&c);
    c.flight_recorder_seconds = 10;
    c.flight_ring_bytes = 1 << 20;
    ASSERT_EQ(aip_config_validate(&c), AIP_ERR_INVALID_ARG);
    aip_config_init(&c);
    c.flight_slow_step = 0.5;
    ASSERT_EQ(aip_config_validate(&c), AIP_ERR_INVALID_ARG);
    aip_config_init(&c);
    c.flight_signal = SIGKILL;
    ASSERT_EQ(aip_config_validate(&c), AIP_ERR_INVALID_ARG);
    ASSERT_EQ(aip_flight_dump(NULL, NULL, 0), AIP_ERR_STATE); /* nothing armed */
}

TEST_MAIN(TEST_CASE(test_config_checked), TEST_CASE(test_api_dump_counts_what_the_ring_overwrote),
          TEST_CASE(test_signal_dumps), TEST_CASE(test_slow_step_in_dump_with_steps_before),
          TEST_CASE(test_hang_dumps_open_ranges),
          TEST_CASE(test_events_older_than_the_window_are_left_out),
          TEST_CASE(test_sigkill_loses_nothing_flushed),
          TEST_CASE(test_sigkill_after_recycling_takes_no_older_bytes))
