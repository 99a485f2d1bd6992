/*
 * test_threads.c — the buffers under load: 8 threads × 1 M events, where
 * recorded (counted in the raw file) + dropped (STATS) == emitted exactly,
 * once with a cap small enough to force drops and once with room for all.
 * Also threads that start and exit during a trace, and a crash-safety run:
 * a child killed with SIGKILL mid-trace leaves every flushed chunk readable.
 * Sanitizer builds use fewer events (AIP_SANITIZER is set by the test runner).
 */
#include "aip_test.h"
#include "aiprof.h"
#include "aiprof_integration.h"
#include "model.h"
#include "raw_count.h"
#include "recorder.h"

#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmp[PATH_MAX];
static uint64_t per_thread = 1000000;

#define NTHREADS 8

/* CPU activity into this test's directory. */
static void cpu_config(aip_config *c)
{
    aip_config_init(c);
    c->dir_name = tmp;
    c->activities = AIP_ACTIVITY_CPU;
}

static void *emit(void *arg)
{
    uint64_t n = *(uint64_t *)arg;
    aip_string_id name = aip_intern("work");
    for (uint64_t i = 0; i < n; i++) {
        aip_annotation_push_id(name);
        aip_annotation_pop();
    }
    return NULL;
}

static raw_counts run(size_t cap, uint64_t n, const char **dir_out, aip_session **keep)
{
    aip_config c;
    cpu_config(&c);
    c.buffer_cap_bytes = cap;
    aip_session *s;
    raw_counts rc;
    memset(&rc, 0, sizeof rc);
    if (aip_session_create(&c, &s) || aip_session_start(s))
        return rc;
    pthread_t th[NTHREADS];
    for (int i = 0; i < NTHREADS; i++)
        pthread_create(&th[i], NULL, emit, &n);
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
    aip_session_stop(s);
    char raw[PATH_MAX];
    if (raw_find(aip_session_result_dir(s), raw, sizeof raw))
        rc = raw_count_file(raw, NULL);
    *dir_out = aip_session_result_dir(s);
    *keep = s;
    return rc;
}

static void test_exact_accounting_with_drops(void)
{
    const char *dir;
    aip_session *s;
    raw_counts rc = run(1u << 20, per_thread, &dir, &s); /* 1 MiB: drops certain */
    uint64_t emitted = NTHREADS * per_thread;
    uint64_t recorded = rc.by_kind[AIP_REC_ANNOTATION];
    printf("  cap 1 MiB: recorded %llu, dropped %llu of %llu\n", (unsigned long long)recorded,
           (unsigned long long)rc.stats_dropped, (unsigned long long)emitted);
    ASSERT_TRUE(rc.clean_end);
    ASSERT_EQ(recorded, rc.stats_recorded);
    ASSERT_EQ(recorded + rc.stats_dropped, emitted);
    ASSERT_EQ(aip_session_dropped_events(s), rc.stats_dropped);
    aip_session_destroy(s);
}

static void test_no_drops_with_room(void)
{
    const char *dir;
    aip_session *s;
    uint64_t n = per_thread / 4;
    raw_counts rc = run((size_t)NTHREADS * n * 24 + (64u << 20), n, &dir, &s);
    ASSERT_TRUE(rc.clean_end);
    ASSERT_EQ(rc.stats_dropped, 0);
    ASSERT_EQ(rc.by_kind[AIP_REC_ANNOTATION], NTHREADS * n);
    aip_session_destroy(s);
}

/* Thread names at the buffer cap: 4 threads hold the 4 buffers of a 1 MiB
 * cap while 4 more name themselves, so no buffer is left for their names.
 * Each name is sent later or counted as dropped, never lost uncounted. */
static pthread_barrier_t cap_barrier;
#define NAME_EVENTS 1000

static void *named_worker(void *arg)
{
    int late = *(int *)arg;
    if (late)
        pthread_barrier_wait(&cap_barrier); /* the early ones hold every buffer */
    aip_thread_name(late ? "late" : "early");
    emit(&(uint64_t){NAME_EVENTS});
    if (!late)
        pthread_barrier_wait(&cap_barrier);
    pthread_barrier_wait(&cap_barrier); /* the late ones have emitted too */
    return NULL;
}

static void test_thread_names_at_the_cap_are_counted(void)
{
    aip_config c;
    cpu_config(&c);
    c.buffer_cap_bytes = 1u << 20; /* 4 buffers, the minimum */
    aip_session *s;
    ASSERT_EQ(aip_session_create(&c, &s), AIP_OK);
    ASSERT_EQ(aip_session_start(s), AIP_OK);
    pthread_barrier_init(&cap_barrier, NULL, NTHREADS);
    pthread_t th[NTHREADS];
    int late[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        late[i] = i >= 4;
        pthread_create(&th[i], NULL, named_worker, &late[i]);
    }
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&cap_barrier);
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    raw_counts rc;
    ASSERT_TRUE(raw_count_session(s, NULL, &rc));
    uint64_t recorded = rc.by_kind[AIP_REC_ANNOTATION] + rc.by_kind[AIP_REC_THREAD_NAME];
    printf("  names recorded %llu of %d, dropped %llu\n",
           (unsigned long long)rc.by_kind[AIP_REC_THREAD_NAME], NTHREADS,
           (unsigned long long)rc.stats_dropped);
    ASSERT_EQ(recorded, rc.stats_recorded);
    ASSERT_EQ(recorded + rc.stats_dropped, (uint64_t)NTHREADS * (NAME_EVENTS + 1));
    aip_session_destroy(s);
}

static void *short_lived(void *arg)
{
    (void)arg;
    aip_thread_name("short");
    for (int i = 0; i < 1000; i++) {
        AIP_ANNOTATION_PUSH("x");
        AIP_ANNOTATION_POP();
    }
    return NULL;
}

static void test_threads_exiting_mid_trace(void)
{
    aip_config c;
    cpu_config(&c);
    aip_session *s;
    ASSERT_EQ(aip_session_create(&c, &s), AIP_OK);
    ASSERT_EQ(aip_session_start(s), AIP_OK);
    for (int round = 0; round < 20; round++) {
        pthread_t th[4];
        for (int i = 0; i < 4; i++)
            pthread_create(&th[i], NULL, short_lived, NULL);
        for (int i = 0; i < 4; i++)
            pthread_join(th[i], NULL);
    }
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    raw_counts rc;
    ASSERT_TRUE(raw_count_session(s, NULL, &rc));
    ASSERT_EQ(rc.by_kind[AIP_REC_ANNOTATION], 20 * 4 * 1000);
    ASSERT_EQ(rc.by_kind[AIP_REC_THREAD_NAME], 20 * 4);
    aip_session_destroy(s);
}

/* A paused thread records no ops and no annotations, in this trace or the
 * next, until it resumes; its mstx marks still count; others are unaffected. */
static void *paused_worker(void *arg)
{
    (void)arg;
    aip_op_info op = {.name = "paused_op", .sequence_number = -1};
    aip_thread_pause(1);
    for (int i = 0; i < 100; i++) {
        aip_annotation_push("paused_ann");
        aip_op_begin(&op);
        aip_op_end();
        aip_annotation_pop();
    }
    aip_mark("dom", "paused_mark");
    aip_thread_pause(0);
    op.name = "resumed_op";
    aip_op_begin(&op);
    aip_op_end();
    return NULL;
}

/* A CPU (and mstx) trace in which `worker` runs on its own thread, then the
 * main thread runs `main_op`; the raw data counted (names by `prefix`). */
static aip_session *trace_with_worker(void *(*worker)(void *), const aip_op_info *main_op,
                                      const char *prefix, raw_counts *rc)
{
    aip_config c;
    cpu_config(&c); /* no record_shapes, no with_flops */
    c.mstx = 1;
    aip_session *s;
    if (aip_session_create(&c, &s) != AIP_OK)
        return NULL;
    pthread_t th;
    if (aip_session_start(s) != AIP_OK || pthread_create(&th, NULL, worker, NULL) != 0) {
        aip_session_destroy(s);
        return NULL;
    }
    pthread_join(th, NULL);
    aip_op_begin(main_op);
    aip_op_end();
    if (aip_session_stop(s) != AIP_OK || !raw_count_session(s, prefix, rc)) {
        aip_session_destroy(s);
        return NULL;
    }
    return s;
}

static void test_paused_thread_is_left_out(void)
{
    aip_op_info op = {.name = "main_op", .sequence_number = -1};
    raw_counts rc;
    aip_session *s = trace_with_worker(paused_worker, &op, "paused_", &rc);
    ASSERT_TRUE(s != NULL);
    ASSERT_EQ(rc.prefix_hits, 1); /* the mark only */
    ASSERT_EQ(rc.by_kind[AIP_REC_OP], 2); /* resumed_op, main_op */
    ASSERT_EQ(rc.by_kind[AIP_REC_ANNOTATION], 0);
    aip_session_destroy(s);
}

/* aip_thread_op_options(): a thread's ops keep shapes and FLOPs the config
 * lacks; other threads' do not, and 0 ends it. */
static void *options_worker(void *arg)
{
    (void)arg;
    aip_op_info op = {.name = "opt_op", .sequence_number = -1, .input_shapes = "[[2, 3]]",
                      .input_dtypes = "[float]", .flops = 12};
    aip_thread_op_options(AIP_THREAD_WITH_FLOPS); /* implies shapes */
    aip_op_begin(&op);
    aip_op_end();
    aip_thread_op_options(0);
    aip_op_begin(&op);
    aip_op_end();
    return NULL;
}

static void test_thread_op_options(void)
{
    aip_op_info op = {.name = "main_op", .sequence_number = -1, .input_shapes = "[[1]]",
                      .flops = 5};
    raw_counts rc;
    aip_session *s = trace_with_worker(options_worker, &op, NULL, &rc);
    ASSERT_TRUE(s != NULL);
    ASSERT_EQ(rc.by_kind[AIP_REC_OP], 3);
    ASSERT_EQ(rc.ops_with_shapes, 1);
    ASSERT_EQ(rc.ops_with_flops, 1);
    aip_session_destroy(s);
}

/* Stop while threads are still recording: nothing torn, counts consistent. */
static volatile int keep_going;
static void *spinner(void *arg)
{
    (void)arg;
    while (__atomic_load_n(&keep_going, __ATOMIC_RELAXED)) {
        AIP_ANNOTATION_PUSH("spin");
        AIP_ANNOTATION_POP();
    }
    return NULL;
}

static void test_stop_while_threads_record(void)
{
    aip_config c;
    cpu_config(&c);
    for (int round = 0; round < 3; round++) {
        aip_session *s;
        ASSERT_EQ(aip_session_create(&c, &s), AIP_OK);
        __atomic_store_n(&keep_going, 1, __ATOMIC_RELAXED);
        pthread_t th[3];
        for (int i = 0; i < 3; i++)
            pthread_create(&th[i], NULL, spinner, NULL);
        ASSERT_EQ(aip_session_start(s), AIP_OK);
        usleep(50000);
        ASSERT_EQ(aip_session_stop(s), AIP_OK);
        usleep(10000);
        __atomic_store_n(&keep_going, 0, __ATOMIC_RELAXED);
        for (int i = 0; i < 3; i++)
            pthread_join(th[i], NULL);
        raw_counts rc;
        ASSERT_TRUE(raw_count_session(s, NULL, &rc));
        ASSERT_TRUE(rc.clean_end);
        ASSERT_EQ(rc.corrupt, 0);
        ASSERT_TRUE(rc.by_kind[AIP_REC_ANNOTATION] > 0);
        ASSERT_EQ(rc.by_kind[AIP_REC_ANNOTATION], rc.stats_recorded);
        /* No stale bytes from a recycled buffer: only the kinds recorded. */
        ASSERT_EQ(raw_total_events(&rc), rc.by_kind[AIP_REC_ANNOTATION] +
                                             rc.by_kind[AIP_REC_THREAD_NAME]);
        aip_session_destroy(s);
    }
}

/* A thread inside Python calls when the trace stops: the stopper ends
 * them (the thread waits meanwhile, as Python threads wait for the GIL). */
static pthread_mutex_t py_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t py_cond = PTHREAD_COND_INITIALIZER;
static int py_state; /* 0 start, 1 inside the calls, 2 trace stopped */

static void *py_worker(void *arg)
{
    (void)arg;
    aip_pyfunc_push(aip_intern("w.py(1): outer_call"), 0);
    aip_pyfunc_push(aip_intern("w.py(5): inner_call"), 0);
    aip_pyfunc_push(aip_intern("w.py(9): leaf_call"), 0);
    aip_pyfunc_pop(); /* leaf_call returned while recording */
    pthread_mutex_lock(&py_lock);
    py_state = 1;
    pthread_cond_broadcast(&py_cond);
    while (py_state != 2)
        pthread_cond_wait(&py_cond, &py_lock);
    pthread_mutex_unlock(&py_lock);
    aip_pyfunc_pop(); /* after the stop: not recorded again */
    aip_pyfunc_pop();
    return NULL;
}

/* A started session with with_stack on (NULL if it did not start). */
static aip_session *start_with_stack(void)
{
    aip_config c;
    cpu_config(&c);
    c.with_stack = 1;
    aip_session *s;
    if (aip_session_create(&c, &s) != AIP_OK)
        return NULL;
    if (aip_session_start(s) != AIP_OK) {
        aip_session_destroy(s);
        return NULL;
    }
    return s;
}

static void test_open_python_calls_of_other_threads_end_at_stop(void)
{
    aip_session *s = start_with_stack();
    ASSERT_TRUE(s != NULL);
    py_state = 0;
    pthread_t th;
    pthread_create(&th, NULL, py_worker, NULL);
    pthread_mutex_lock(&py_lock);
    while (py_state != 1)
        pthread_cond_wait(&py_cond, &py_lock);
    pthread_mutex_unlock(&py_lock);
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    pthread_mutex_lock(&py_lock);
    py_state = 2;
    pthread_cond_broadcast(&py_cond);
    pthread_mutex_unlock(&py_lock);
    pthread_join(th, NULL);
    raw_counts rc;
    ASSERT_TRUE(raw_count_session(s, "w.py", &rc));
    ASSERT_EQ(rc.corrupt, 0);
    ASSERT_EQ(rc.by_kind[AIP_REC_PYFUNC], 3); /* leaf, then inner and outer at the stop */
    ASSERT_EQ(rc.prefix_hits, 3);
    ASSERT_EQ(rc.by_kind[AIP_REC_PYFUNC] + rc.by_kind[AIP_REC_THREAD_NAME], rc.stats_recorded);
    aip_session_destroy(s);
}

/* Forks a child that starts a trace, runs `before`, sends the parent its
 * result directory and then runs `until_killed`, which never returns.  The
 * parent gets the child's pid and that directory ("" if the child failed
 * before sending it). */
static pid_t fork_tracing_child(void (*before)(void), void (*until_killed)(void), char *dir,
                                size_t cap)
{
    int pipefd[2];
    dir[0] = '\0';
    if (pipe(pipefd) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(pipefd[0]);
        aip_config c;
        cpu_config(&c);
        aip_session *s;
        if (aip_session_create(&c, &s) || aip_session_start(s))
            _exit(3);
        if (before)
            before();
        const char *d = aip_session_result_dir(s);
        if (write(pipefd[1], d, strlen(d) + 1) < 0)
            _exit(4);
        until_killed();
        _exit(5);
    }
    close(pipefd[1]);
    if (pid > 0 && read(pipefd[0], dir, cap - 1) <= 0)
        dir[0] = '\0';
    dir[cap - 1] = '\0';
    close(pipefd[0]);
    return pid;
}

static void tick_forever(void)
{
    for (;;) {
        AIP_ANNOTATION_PUSH("until killed");
        usleep(100);
        AIP_ANNOTATION_POP();
    }
}

/* SIGKILL mid-trace: the periodic flush put data on disk; the reader
 * recovers every complete chunk and reports the missing end. */
static void test_sigkill_recovers_flushed_chunks(void)
{
    char dir[PATH_MAX];
    pid_t pid = fork_tracing_child(NULL, tick_forever, dir, sizeof dir);
    ASSERT_TRUE(pid > 0);
    if (dir[0])
        usleep(600000); /* several 100 ms flushes */
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(dir[0] != '\0');
    ASSERT_TRUE(WIFSIGNALED(status));
    char raw[PATH_MAX];
    ASSERT_TRUE(raw_find(dir, raw, sizeof raw));
    raw_counts rc = raw_count_file(raw, NULL);
    ASSERT_TRUE(rc.ok);
    ASSERT_TRUE(!rc.clean_end);
    ASSERT_EQ(rc.corrupt, 0);
    ASSERT_TRUE(rc.by_kind[AIP_REC_ANNOTATION] > 100);
    char info[PATH_MAX];
    snprintf(info, sizeof info, "%s/profiler_info.json", dir);
    ASSERT_EQ(access(info, R_OK), 0); /* written at trace start */
}

/* Drops survive SIGKILL: the counters are persisted with every flush, so
 * the analysis of a killed run reports them.  Annotations nested 200 deep
 * drop the 72 beyond the stack depth at each pop (counted like drops at
 * the buffer cap), so the counts are known exactly. */
#define KILL_DEPTH 200
#define KILL_ROUNDS 200

static void nest_too_deep(void)
{
    aip_string_id name = aip_intern("deep");
    for (int r = 0; r < KILL_ROUNDS; r++) {
        for (int d = 0; d < KILL_DEPTH; d++)
            aip_annotation_push_id(name);
        for (int d = 0; d < KILL_DEPTH; d++)
            aip_annotation_pop();
    }
}

static void pause_forever(void)
{
    for (;;)
        pause(); /* killed here, without a stop */
}

static void test_sigkill_keeps_drop_counts(void)
{
    char dir[PATH_MAX];
    pid_t pid = fork_tracing_child(nest_too_deep, pause_forever, dir, sizeof dir);
    ASSERT_TRUE(pid > 0);
    int got = dir[0] != '\0';
    char raw[PATH_MAX];
    int found = 0;
    uint64_t emitted = (uint64_t)KILL_ROUNDS * KILL_DEPTH;
    raw_counts rc;
    /* The writer thread creates the raw file at its first write (a full
     * buffer or the first 100 ms flush), and the next flush persists the
     * counts: wait for both, then kill (also when they never come, so that
     * no child outlives a failed test). */
    for (int i = 0; got > 0 && i < 200; i++) {
        if (found || (found = raw_find(dir, raw, sizeof raw))) {
            rc = raw_count_file(raw, NULL);
            if (rc.stats_recorded + rc.stats_dropped == emitted)
                break;
        }
        usleep(50000);
    }
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(got > 0);
    ASSERT_TRUE(found);
    ASSERT_TRUE(WIFSIGNALED(status));
    rc = raw_count_file(raw, NULL);
    ASSERT_TRUE(!rc.clean_end);
    ASSERT_EQ(rc.corrupt, 0);
    printf("  killed: recorded %llu, dropped %llu of %llu\n",
           (unsigned long long)rc.stats_recorded, (unsigned long long)rc.stats_dropped,
           (unsigned long long)emitted);
    ASSERT_EQ(rc.by_kind[AIP_REC_ANNOTATION], rc.stats_recorded);
    ASSERT_EQ(rc.stats_dropped, (uint64_t)KILL_ROUNDS * (KILL_DEPTH - AIP_STACK_DEPTH));
    ASSERT_EQ(rc.stats_recorded + rc.stats_dropped, emitted);

    /* and the analysis reports them */
    aip__model m;
    aip__model_init(&m);
    ASSERT_EQ(aip__model_load_raw(&m, raw), AIP_OK);
    ASSERT_EQ(aip__model_derive(&m), AIP_OK);
    ASSERT_EQ(m.dropped_events, rc.stats_dropped);
    aip__model_free(&m);
}

static void setup(void)
{
    make_tmpdir(tmp, sizeof tmp, "threads");
    const char *san = getenv("AIP_SANITIZER");
    if (san && *san)
        per_thread = 100000;
}
static void teardown(void) { rm_rf(tmp); }

/* OP records with every mix of optional fields, across buffer ends: the
 * recorder writes an op's whole 64-byte frame where the buffer has room
 * past the record, and only the record's own bytes in the last 64 bytes
 * of a buffer.  First 20000 ops of 32 bytes (a sequence number alone),
 * which fill a 512 KiB buffer exactly, so its last record is written the
 * short way; then ops of 24 to 64 bytes.  Every record reads back with
 * its own fields. */
#define OPS_EXACT 20000u
#define OPS_MIXED 40000u

static void op_fields(uint32_t i, aip_op_info *op, aip_string_id name, aip_string_id shapes)
{
    memset(op, 0, sizeof *op);
    op->name_id = name;
    int mixed = i >= OPS_EXACT;
    op->sequence_number = mixed && i % 7 == 0 ? -1 : (int64_t)i;
    op->fwd_thread_id = mixed && i % 3 == 0 ? 77 : 0;
    op->input_shapes_id = mixed && i % 2 ? shapes : 0;
    op->input_dtypes_id = op->input_shapes_id;
    op->call_stack_id = mixed && i % 4 == 1 ? shapes : 0;
    op->flops = mixed && i % 5 == 0 ? i + 1 : 0;
}

static void test_op_records_across_buffer_ends(void)
{
    aip_session *s = start_with_stack();
    ASSERT_TRUE(s != NULL);
    aip_thread_op_options(AIP_THREAD_WITH_FLOPS);
    aip_string_id name = aip_intern("buffer_end_op"), shapes = aip_intern("[[1]]");
    for (uint32_t i = 0; i < OPS_EXACT + OPS_MIXED; i++) {
        aip_op_info op;
        op_fields(i, &op, name, shapes);
        aip_op_begin(&op);
        aip_op_end();
    }
    aip_thread_op_options(0);
    aip_session_stop(s);
    char raw[PATH_MAX];
    ASSERT_TRUE(raw_find(aip_session_result_dir(s), raw, sizeof raw));
    aip__raw_reader *r;
    ASSERT_EQ(aip__raw_open(raw, &r), AIP_OK);
    aip__raw_chunk ch;
    uint32_t i = 0, bad = 0;
    while (aip__raw_next(r, &ch) == 1) {
        if (ch.type != AIP_CHUNK_EVENTS)
            continue;
        for (uint32_t off = 0; off + 8 <= ch.size;) {
            aip__rec_header h;
            memcpy(&h, ch.payload + off, sizeof h);
            if (h.size < 8 || off + h.size > ch.size)
                break;
            if (h.kind == AIP_REC_OP && h.name == name) {
                aip_op_info want;
                op_fields(i, &want, name, shapes);
                const uint8_t *q = ch.payload + off + 24;
                uint64_t v[2];
                int ok = 1;
                memcpy(v, ch.payload + off + 8, 16);
                ok &= v[0] <= v[1];
                ok &= !(h.flags & AIP_OPF_SEQ) == (want.sequence_number < 0);
                if (h.flags & AIP_OPF_SEQ) {
                    memcpy(v, q, 8);
                    ok &= v[0] == (uint64_t)want.sequence_number;
                    q += 8;
                }
                ok &= !(h.flags & AIP_OPF_FWD) == !want.fwd_thread_id;
                if (h.flags & AIP_OPF_FWD) {
                    memcpy(v, q, 8);
                    ok &= v[0] == 77;
                    q += 8;
                }
                ok &= !(h.flags & AIP_OPF_SHAPES) == !want.input_shapes_id;
                if (h.flags & AIP_OPF_SHAPES) {
                    uint32_t ids[2];
                    memcpy(ids, q, 8);
                    ok &= ids[0] == shapes && ids[1] == shapes;
                    q += 8;
                }
                ok &= !(h.flags & AIP_OPF_STACK) == !want.call_stack_id;
                if (h.flags & AIP_OPF_STACK) {
                    uint32_t ids[2];
                    memcpy(ids, q, 8);
                    ok &= ids[0] == shapes && ids[1] == 0;
                    q += 8;
                }
                ok &= !(h.flags & AIP_OPF_FLOPS) == !want.flops;
                if (h.flags & AIP_OPF_FLOPS) {
                    memcpy(v, q, 8);
                    ok &= v[0] == want.flops;
                    q += 8;
                }
                ok &= (uint32_t)(q - (ch.payload + off)) == h.size;
                if (!ok && bad++ < 5)
                    printf("  op %u: record of %u bytes, flags %#x, not as recorded\n", i, h.size,
                           h.flags);
                i++;
            }
            off += h.size;
        }
    }
    ASSERT_TRUE(aip__raw_problems(r)->clean_end);
    aip__raw_close(r);
    ASSERT_EQ(bad, 0);
    ASSERT_EQ(i, OPS_EXACT + OPS_MIXED);
    aip_session_destroy(s);
}

TEST_MAIN(TEST_CASE(setup), TEST_CASE(test_exact_accounting_with_drops),
          TEST_CASE(test_no_drops_with_room),
          TEST_CASE(test_thread_names_at_the_cap_are_counted), TEST_CASE(test_threads_exiting_mid_trace),
          TEST_CASE(test_stop_while_threads_record), TEST_CASE(test_paused_thread_is_left_out),
          TEST_CASE(test_thread_op_options), TEST_CASE(test_op_records_across_buffer_ends),
          TEST_CASE(test_open_python_calls_of_other_threads_end_at_stop),
          TEST_CASE(test_sigkill_recovers_flushed_chunks),
          TEST_CASE(test_sigkill_keeps_drop_counts),
          TEST_CASE(teardown))
