/*
 * test_analysis_model.c — raw file → model: every record kind, clock
 * conversion, nesting and self time, steps and the step trace arithmetic,
 * range pairing, fwdbwd pairing, damaged contents inside valid chunks, a
 * big file's spans (decoded on a second thread) in file order.
 */
#include "aip_test.h"
#include "export.h"
#include "analysis_int.h"
#include "raw_builder.h"

static char dir[64];

#define R0 1700000000000000000LL
/* 2 GHz ticks: T(ns) converts to R0 + ns with the two sync points below. */
#define T(ns) (2000000ull + 2ull * (uint64_t)(ns))

static void write_raw(const rb_buf *b, const char *name, char *path)
{
    snprintf(path, 200, "%s/%s", dir, name);
    if (rb_write_file(path, b->data, b->len))
        abort();
}

/* Write `b` as dir/name, free it, and load and derive it into `m`
 * (initialised here; the caller frees it): the first failure. */
static aip_status load_built(rb_buf *b, const char *name, aip__model *m)
{
    char path[200];
    write_raw(b, name, path);
    rb_free(b);
    aip__model_init(m);
    aip_status st = aip__model_load_raw(m, path);
    return st ? st : aip__model_derive(m);
}

static const aip__span *find_span(const aip__process *p, size_t ti, const char *name, int nth)
{
    const aip__thread *t = &p->threads[ti];
    for (size_t i = 0; i < t->n_spans; i++) {
        size_t len;
        const char *s = aip__model_str(p, t->spans[i].name, &len);
        if (strcmp(s, name) == 0 && nth-- == 0)
            return &t->spans[i];
    }
    return NULL;
}

static int64_t self_of(const aip__process *p, size_t ti, const aip__span *s)
{
    return p->threads[ti].self_ns[s - p->threads[ti].spans];
}

static void build_round_trip(rb_buf *bp)
{
    rb_buf b = {0};
    rb_header(&b, 1, 0);
    rb_info(&b, 4242, "prog", 2e9);
    const char *names[] = {"aten::mm", "ProfilerStep#3", "[[2, 3], [3, 4]]", "[float, float]",
                           "train.py(10): main;\nmodel.py(5): forward", "nn.Module: MLP_0",
                           "dom", "range msg", "mark msg", "main thread", "async msg",
                           "aten::add", "orphan"};
    rb_strings(&b, 1, names, NULL, 13);
    rb_clock(&b, T(0), 1000000, (uint64_t)R0);
    rb_buf e = {0};
    ev_thread_name(&e, 10, T(0));
    ev_op_full(&e, 1, T(10), T(20), AIP_OPF_SEQ | AIP_OPF_FWD | AIP_OPF_SHAPES | AIP_OPF_STACK,
               5, 0, 3, 4, 5, 6);
    ev_range(&e, 8, 7, T(25), T(30));
    ev_mark(&e, 9, 7, T(31));
    ev_range_start(&e, 11, 7, T(32), 99);
    ev_memory(&e, T(33), 0x1000, 4096, 8192, 16384, 20, 1);
    ev_gc(&e, T(34), T(36));
    ev_annotation(&e, 2, T(5), T(40));
    rb_events(&b, 100, &e);
    rb_free(&e);
    ev_op_full(&e, 12, T(50), T(60), AIP_OPF_SEQ | AIP_OPF_FWD | AIP_OPF_BACKWARD, 5, 100, 0, 0,
               0, 0);
    ev_range_end(&e, T(55), 99);
    ev_range_end(&e, T(56), 12345);
    ev_range_start(&e, 13, 0, T(57), 7);
    rb_events(&b, 200, &e);
    rb_free(&e);
    rb_stats1(&b, 100, 8, 3);
    rb_clock(&b, T(1000000000), 1000000 + 1000000000ull, (uint64_t)R0 + 1000000000ull);
    rb_end(&b);
    *bp = b;
}

static void test_round_trip(void)
{
    rb_buf b;
    build_round_trip(&b);
    aip__model m;
    ASSERT_EQ(load_built(&b, "aiprof_4242.raw", &m), AIP_OK);
    ASSERT_EQ(m.n_procs, 1);
    const aip__process *p = &m.procs[0];
    ASSERT_EQ(p->pid, 4242);
    ASSERT_STREQ(p->hostname, "testhost");
    ASSERT_STREQ(p->program, "prog");
    ASSERT_STREQ(p->clock_name, "tsc");
    ASSERT_EQ(p->raw.clean_end, 1);
    ASSERT_EQ(p->raw.corrupt_chunks + p->raw.truncated_bytes + p->bad_event_chunks, 0);
    ASSERT_EQ(p->clock_fallback, 0);
    ASSERT_EQ(p->events, 12);
    ASSERT_EQ(p->n_threads, 2);
    ASSERT_EQ(p->threads[0].tid, 100);
    ASSERT_EQ(p->threads[1].tid, 200);
    size_t len;
    ASSERT_STREQ(aip__model_str(p, p->threads[0].name, &len), "main thread");
    ASSERT_EQ(p->threads[0].dropped, 3);
    ASSERT_EQ(m.dropped_events, 3);

    /* thread 100: step annotation, op, range — in start order */
    const aip__thread *t = &p->threads[0];
    ASSERT_EQ(t->n_spans, 3);
    ASSERT_EQ(t->spans[0].kind, AIP_SPAN_ANNOTATION);
    ASSERT_EQ(t->spans[0].start, R0 + 5);
    ASSERT_EQ(t->spans[0].end, R0 + 40);
    ASSERT_EQ(t->spans[1].kind, AIP_SPAN_OP);
    ASSERT_EQ(t->spans[1].start, R0 + 10);
    ASSERT_EQ(t->spans[1].end, R0 + 20);
    ASSERT_EQ(t->spans[1].top_op, 1);
    ASSERT_EQ(t->spans[2].kind, AIP_SPAN_RANGE);
    ASSERT_STREQ(aip__model_str(p, aip__model_range_domain(t, &t->spans[2]), &len), "dom");
    ASSERT_EQ(t->self_ns[0], 35 - 10 - 5);
    ASSERT_EQ(t->self_ns[1], 10);
    ASSERT_EQ(t->self_ns[2], 5);
    aip__op_fields f;
    aip__model_op_fields(t, &t->spans[1], &f);
    ASSERT_EQ(f.has_seq, 1);
    ASSERT_EQ(f.sequence_number, 5);
    ASSERT_EQ(f.fwd_thread_id, 0);
    ASSERT_STREQ(aip__model_str(p, f.input_shapes, &len), "[[2, 3], [3, 4]]");
    ASSERT_STREQ(aip__model_str(p, f.input_dtypes, &len), "[float, float]");
    ASSERT_STREQ(aip__model_str(p, f.call_stack, &len), "train.py(10): main;\nmodel.py(5): forward");
    ASSERT_STREQ(aip__model_str(p, f.module_hierarchy, &len), "nn.Module: MLP_0");
    aip__model_op_fields(&p->threads[1], &p->threads[1].spans[0], &f);
    ASSERT_EQ(f.fwd_thread_id, 100);
    ASSERT_EQ(f.is_backward, 1);

    ASSERT_EQ(p->marks.n, 1);
    ASSERT_EQ(p->marks.v[0].ts, R0 + 31);
    ASSERT_STREQ(aip__model_str(p, p->marks.v[0].name, &len), "mark msg");
    ASSERT_EQ(p->marks.v[0].thread, 0);
    ASSERT_EQ(p->memory.n, 1);
    ASSERT_EQ(p->memory.v[0].ts, R0 + 33);
    ASSERT_EQ(p->memory.v[0].address, 0x1000);
    ASSERT_EQ(p->memory.v[0].bytes, 4096);
    ASSERT_EQ(p->memory.v[0].total_allocated, 8192);
    ASSERT_EQ(p->memory.v[0].total_reserved, 16384);
    ASSERT_EQ(p->memory.v[0].device_type, 20);
    ASSERT_EQ(p->memory.v[0].device_index, 1);
    ASSERT_EQ(p->gc.n, 1);
    ASSERT_EQ(p->gc.v[0].start, R0 + 34);
    ASSERT_EQ(p->gc.v[0].end, R0 + 36);

    /* the async range ends on the other thread; one orphan of each side */
    ASSERT_EQ(p->range_starts.n, 2);
    ASSERT_EQ(p->range_starts.v[0].thread, 0);
    ASSERT_EQ(p->range_starts.v[0].match, 0);
    ASSERT_EQ(p->range_ends.v[0].thread, 1);
    ASSERT_EQ(p->range_ends.v[0].ts, R0 + 55);
    ASSERT_EQ(p->range_starts.v[1].match, -1);
    ASSERT_EQ(p->unmatched_range_starts, 1);
    ASSERT_EQ(p->unmatched_range_ends, 1);

    ASSERT_EQ(m.n_steps, 1);
    ASSERT_EQ(m.steps[0].number, 3);
    ASSERT_EQ(m.n_flows, 1);
    ASSERT_EQ(m.flows[0].fwd_thread, 0);
    ASSERT_EQ(m.flows[0].fwd_span, 1);
    ASSERT_EQ(m.flows[0].bwd_thread, 1);
    ASSERT_EQ(m.first_ns, R0 + 5);
    ASSERT_EQ(m.last_ns, R0 + 60);
    ASSERT_EQ(m.n_step_rows, 1);
    /* host Computing: the op [10, 20] and the mstx range [25, 30]
     * (docs/RESULT_LAYOUT.md); the step's own annotation is not work */
    ASSERT_EQ(m.step_rows[0].computing, 15);
    ASSERT_EQ(m.step_rows[0].preparing, 5);
    aip__model_free(&m);
}

/* ns ticks with one sync point at 0: times are the tick values. */
static void build_tree_file(rb_buf *b, int with_steps)
{
    rb_header(b, 1, 0);
    rb_info(b, 1, "tree", 1e9);
    const char *names[] = {"ProfilerStep#1", "A", "B", "C", "R", "D", "ProfilerStep#2", "H",
                           "E", "F", "G"};
    rb_strings(b, 1, names, NULL, 11);
    rb_clock(b, 0, 0, 0);
    rb_buf e = {0};
    ev_op(&e, 3, 20, 30);      /* B */
    ev_range(&e, 5, 0, 36, 40); /* R inside C */
    ev_op(&e, 4, 35, 50);      /* C */
    ev_op(&e, 2, 10, 60);      /* A */
    ev_op(&e, 6, 70, 90);      /* D */
    if (with_steps)
        ev_annotation(&e, 1, 0, 100);
    ev_op(&e, 8, 120, 130);    /* H */
    if (with_steps)
        ev_op(&e, 7, 100, 200); /* a step recorded as an op still is a step */
    rb_events(b, 1, &e);
    rb_free(&e);
    ev_op(&e, 9, 5, 95);       /* E */
    ev_op(&e, 10, 150, 180);   /* F */
    ev_op(&e, 11, 190, 210);   /* G crosses the step end */
    rb_events(b, 2, &e);
    rb_free(&e);
    rb_end(b);
}

static void test_nesting_and_step_trace(void)
{
    rb_buf b = {0};
    build_tree_file(&b, 1);
    aip__model m;
    ASSERT_EQ(load_built(&b, "tree.raw", &m), AIP_OK);
    const aip__process *p = &m.procs[0];
    const aip__span *A = find_span(p, 0, "A", 0), *B = find_span(p, 0, "B", 0),
                   *C = find_span(p, 0, "C", 0), *R = find_span(p, 0, "R", 0),
                   *D = find_span(p, 0, "D", 0), *S1 = find_span(p, 0, "ProfilerStep#1", 0),
                   *S2 = find_span(p, 0, "ProfilerStep#2", 0), *E = find_span(p, 1, "E", 0);
    ASSERT_TRUE(A && B && C && R && D && S1 && S2 && E);
    ASSERT_EQ(self_of(p, 0, A), 50 - 10 - 15);
    ASSERT_EQ(self_of(p, 0, B), 10);
    ASSERT_EQ(self_of(p, 0, C), 15 - 4);
    ASSERT_EQ(self_of(p, 0, R), 4);
    ASSERT_EQ(self_of(p, 0, D), 20);
    ASSERT_EQ(self_of(p, 0, S1), 100 - 50 - 20);
    ASSERT_EQ(self_of(p, 0, S2), 100 - 10);
    ASSERT_EQ(self_of(p, 1, E), 90);
    ASSERT_EQ(A->top_op, 1);
    ASSERT_EQ(D->top_op, 1);
    ASSERT_EQ(E->top_op, 1);
    ASSERT_EQ(B->top_op, 0);
    ASSERT_EQ(C->top_op, 0);
    ASSERT_EQ(S2->kind, AIP_SPAN_ANNOTATION);
    ASSERT_EQ(S1 < A && A < B && B < C && C < R && R < D, 1); /* pre-order */

    ASSERT_EQ(m.n_steps, 2);
    ASSERT_EQ(m.n_step_rows, 2);
    const aip__step_row *r1 = &m.step_rows[0], *r2 = &m.step_rows[1];
    ASSERT_EQ(r1->number, 1);
    ASSERT_EQ(r1->start, 0);
    ASSERT_EQ(r1->end, 100);
    ASSERT_EQ(r1->computing, 90); /* union of A, D, E = [5, 95] */
    ASSERT_EQ(r1->preparing, 5);
    ASSERT_EQ(r1->free, 100 - 90);
    ASSERT_EQ(r1->stage, 100); /* no bubble on the host */
    ASSERT_EQ(r1->communication | r1->overlapped | r1->bubble, 0);
    int64_t cols[AIP_STEP_TRACE_COLS]; /* the files' order */
    aip__step_row_columns(r1, cols);
    ASSERT_EQ(cols[0], 90);
    ASSERT_EQ(cols[4], 10);
    ASSERT_EQ(cols[5], 100);
    ASSERT_EQ(cols[AIP_STEP_TRACE_COLS - 1], 5);
    ASSERT_EQ(r2->number, 2);
    ASSERT_EQ(r2->computing, 10 + 30 + 10); /* H, F, G clipped at 200 */
    ASSERT_EQ(r2->preparing, 20);
    aip__model_free(&m);

    /* Without ProfilerStep#: one row over the whole profile. */
    build_tree_file(&b, 0);
    ASSERT_EQ(load_built(&b, "tree2.raw", &m), AIP_OK);
    ASSERT_EQ(m.n_steps, 0);
    ASSERT_EQ(m.n_step_rows, 1);
    ASSERT_EQ(m.step_rows[0].has_number, 0);
    ASSERT_EQ(m.step_rows[0].start, 5);
    ASSERT_EQ(m.step_rows[0].end, 210);
    ASSERT_EQ(m.step_rows[0].computing, 90 + 10 + 30 + 20);
    ASSERT_EQ(m.step_rows[0].preparing, 0);
    aip__model_free(&m);
}

/* ---- random trees against a brute-force oracle ------------------------ */

typedef struct iv {
    int64_t s, e;
} iv;

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Properly nested intervals inside (lo, hi), appended in post-order. */
static void gen(iv *v, size_t *n, size_t max, int64_t lo, int64_t hi, int depth)
{
    int64_t at = lo + 1;
    while (*n < max && depth < 6 && hi - at > 4 && next_rand() % 4) {
        int64_t len = 2 + (int64_t)(next_rand() % (uint64_t)((hi - at) / 2 + 1));
        int64_t s = at + (int64_t)(next_rand() % 3), e = s + len;
        if (e >= hi)
            break;
        gen(v, n, max, s, e, depth + 1);
        if (*n < max)
            v[(*n)++] = (iv){s, e};
        at = e + (int64_t)(next_rand() % 3);
    }
}

static void check_random(int shuffle)
{
    enum { MAX = 3000 };
    static iv v[MAX];
    size_t n = 0;
    for (int64_t w = 0; n < MAX - 100 && w < 100000; w++)
        gen(v, &n, MAX, w * 100000, (w + 1) * 100000, 0);
    ASSERT_TRUE(n > 1000);
    if (shuffle)
        for (size_t i = n - 1; i > 0; i--) {
            size_t j = next_rand() % (i + 1);
            iv x = v[i];
            v[i] = v[j];
            v[j] = x;
        }
    rb_buf b = {0}, e = {0};
    rb_header(&b, 1, 0);
    const char *nm[] = {"op"};
    rb_strings(&b, 1, nm, NULL, 1);
    for (size_t i = 0; i < n; i++)
        ev_op(&e, 1, (uint64_t)v[i].s, (uint64_t)v[i].e);
    rb_events(&b, 9, &e);
    rb_free(&e);
    aip__model m;
    ASSERT_EQ(load_built(&b, "random.raw", &m), AIP_OK);
    const aip__thread *t = &m.procs[0].threads[0];
    ASSERT_EQ(t->n_spans, n);
    for (size_t i = 1; i < n; i++)
        ASSERT_TRUE(t->spans[i - 1].start < t->spans[i].start ||
                    (t->spans[i - 1].start == t->spans[i].start &&
                     t->spans[i - 1].end >= t->spans[i].end));
    /* oracle: parent = smallest strictly containing interval */
    for (size_t i = 0; i < n; i++) {
        const aip__span *s = &t->spans[i];
        int64_t children = 0;
        int has_parent = 0;
        for (size_t j = 0; j < n; j++) {
            const aip__span *c = &t->spans[j];
            if (j == i)
                continue;
            if (c->start <= s->start && c->end >= s->end)
                has_parent = 1;
            if (c->start >= s->start && c->end <= s->end) {
                /* direct child: no other span between them */
                int direct = 1;
                for (size_t k = 0; k < n && direct; k++) {
                    const aip__span *x = &t->spans[k];
                    if (k != i && k != j && x->start <= c->start && x->end >= c->end &&
                        x->start >= s->start && x->end <= s->end)
                        direct = 0;
                }
                if (direct)
                    children += c->end - c->start;
            }
        }
        ASSERT_EQ(t->self_ns[i], (s->end - s->start) - children);
        ASSERT_EQ(s->top_op, !has_parent);
        if (i > 200 && !shuffle)
            break; /* the oracle is cubic; a prefix suffices for the easy path */
    }
    aip__model_free(&m);
}

static void test_random_trees_completion_order(void) { check_random(0); }
static void test_random_trees_shuffled(void) { check_random(1); }

static void test_damaged_contents(void)
{
    rb_buf b = {0}, e = {0};
    rb_header(&b, 1, 3); /* a newer minor: unknown kinds and flags are skipped */
    const char *nm[] = {"x", "y"};
    rb_strings(&b, 1, nm, NULL, 2);
    uint32_t huge[3] = {200000000u, 1, 1}; /* first id beyond what the file can hold */
    rb_chunk(&b, AIP_CHUNK_STRINGS, 0, huge, sizeof huge);
    uint8_t short_strings[12] = {1, 0, 0, 0, 5, 0, 0, 0, 99, 0, 0, 0};
    rb_chunk(&b, AIP_CHUNK_STRINGS, 0, short_strings, sizeof short_strings);
    rb_chunk(&b, AIP_CHUNK_INFO, 0, "not json", 8);
    ev_op(&e, 1, 10, 20);
    rb_events(&b, 1, &e); /* good */
    rb_free(&e);
    ev_op(&e, 2, 30, 40);
    e.data[2] = 0; /* record size 0: the whole chunk is inconsistent */
    e.data[3] = 0;
    rb_events(&b, 1, &e);
    rb_free(&e);
    /* an unknown record kind, and an op with an unknown flag and trailing field */
    uint8_t unk[16] = {200, 0, 16, 0};
    rb_put(&e, unk, sizeof unk);
    ev_op_full(&e, 2, 50, 60, AIP_OPF_SEQ, 7, 0, 0, 0, 0, 0);
    e.data[16 + 1] |= 0x40;
    e.data[16 + 2] = 40;
    uint64_t extra = 0xdeadbeef;
    rb_put(&e, &extra, 8);
    ev_op(&e, 99, 70, 80); /* undefined string id */
    rb_events(&b, 1, &e);
    rb_free(&e);
    rb_chunk(&b, 250, 0, "future", 6); /* unknown chunk type */
    uint8_t bad_stats[8] = {9};
    rb_chunk(&b, AIP_CHUNK_STATS, 0, bad_stats, sizeof bad_stats);
    aip__model m;
    ASSERT_EQ(load_built(&b, "damaged.raw", &m), AIP_OK);
    const aip__process *p = &m.procs[0];
    ASSERT_EQ(p->bad_event_chunks, 1);
    ASSERT_EQ(p->bad_other_chunks, 4);
    ASSERT_TRUE(p->load_problem[0] != '\0');
    ASSERT_EQ(p->has_info, 0);
    ASSERT_EQ(p->clock_fallback, 1);
    const aip__thread *t = &p->threads[0];
    ASSERT_EQ(t->n_spans, 3);
    ASSERT_EQ(t->spans[0].start, 10);
    ASSERT_EQ(t->spans[1].start, 50);
    aip__op_fields f;
    aip__model_op_fields(t, &t->spans[1], &f);
    ASSERT_EQ(f.sequence_number, 7);
    size_t len;
    ASSERT_STREQ(aip__model_str(p, t->spans[2].name, &len), "");
    aip__model_free(&m);
}

/* A raw file's start for the fwdbwd tests: names 1 "fwd", 2 "bwd". */
static void flows_raw_begin(rb_buf *b)
{
    rb_header(b, 1, 0);
    const char *nm[] = {"fwd", "bwd"};
    rb_strings(b, 1, nm, NULL, 2);
    rb_clock(b, 0, 0, 0);
}

static void test_fwdbwd_choice(void)
{
    /* seq 5: two forward ops (the later one launches backward), a backward
     * op on another thread; seq 6: backward only → no flow. */
    rb_buf b = {0}, e = {0};
    flows_raw_begin(&b);
    ev_op_full(&e, 1, 10, 11, AIP_OPF_SEQ, 5, 0, 0, 0, 0, 0);
    ev_op_full(&e, 1, 20, 21, AIP_OPF_SEQ | AIP_OPF_FWD, 5, 0, 0, 0, 0, 0);
    ev_op_full(&e, 1, 200, 201, AIP_OPF_SEQ, 5, 0, 0, 0, 0, 0); /* after the backward */
    rb_events(&b, 11, &e);
    rb_free(&e);
    ev_op_full(&e, 2, 100, 110, AIP_OPF_SEQ | AIP_OPF_FWD, 5, 11, 0, 0, 0, 0);
    ev_op_full(&e, 2, 120, 130, AIP_OPF_SEQ | AIP_OPF_FWD, 5, 11, 0, 0, 0, 0);
    ev_op_full(&e, 2, 140, 150, AIP_OPF_SEQ | AIP_OPF_FWD, 6, 11, 0, 0, 0, 0);
    rb_events(&b, 22, &e);
    rb_free(&e);
    aip__model m;
    ASSERT_EQ(load_built(&b, "flows.raw", &m), AIP_OK);
    ASSERT_EQ(m.n_flows, 1);
    const aip__process *p = &m.procs[0];
    const aip__flow *f = &m.flows[0];
    ASSERT_EQ(p->threads[f->fwd_thread].tid, 11);
    ASSERT_EQ(p->threads[f->fwd_thread].spans[f->fwd_span].start, 20);
    ASSERT_EQ(p->threads[f->bwd_thread].tid, 22);
    ASSERT_EQ(p->threads[f->bwd_thread].spans[f->bwd_span].start, 100);
    aip__model_free(&m);
}

/* The flow of a backward op starting at `bwd_start`, or NULL. */
static const aip__flow *flow_to(const aip__model *m, int64_t bwd_start)
{
    const aip__process *p = &m->procs[0];
    for (size_t k = 0; k < m->n_flows; k++) {
        const aip__flow *f = &m->flows[k];
        if (p->threads[f->bwd_thread].spans[f->bwd_span].start == bwd_start)
            return f;
    }
    return NULL;
}

static void test_fwdbwd_per_thread(void)
{
    /* Sequence numbers are per thread: thread 11 and thread 33 both have
     * forward ops numbered 0 and 3.  Backward ops on thread 22 name their
     * forward thread; each links only to that thread's op. */
    rb_buf b = {0}, e = {0};
    flows_raw_begin(&b);
    ev_op_full(&e, 1, 10, 11, AIP_OPF_SEQ, 3, 0, 0, 0, 0, 0);
    ev_op_full(&e, 1, 15, 16, AIP_OPF_SEQ, 4, 0, 0, 0, 0, 0);
    ev_op_full(&e, 1, 300, 301, AIP_OPF_SEQ, 7, 0, 0, 0, 0, 0); /* after its backward */
    rb_events(&b, 11, &e);
    rb_free(&e);
    ev_op_full(&e, 1, 30, 31, AIP_OPF_SEQ, 0, 0, 0, 0, 0, 0);
    ev_op_full(&e, 1, 40, 41, AIP_OPF_SEQ, 3, 0, 0, 0, 0, 0); /* latest seq 3 of all */
    ev_op_full(&e, 1, 45, 46, AIP_OPF_SEQ, 4, 0, 0, 0, 0, 0);
    ev_op_full(&e, 1, 50, 51, AIP_OPF_SEQ, 7, 0, 0, 0, 0, 0);
    rb_events(&b, 33, &e);
    rb_free(&e);
    /* seq 0 of thread 11: its forward op was not recorded → no flow, even
     * though thread 33 has a seq 0 op that started before. */
    ev_op_full(&e, 2, 100, 110, AIP_OPF_SEQ | AIP_OPF_FWD | AIP_OPF_BACKWARD, 0, 11, 0, 0, 0, 0);
    ev_op_full(&e, 2, 120, 130, AIP_OPF_SEQ | AIP_OPF_FWD | AIP_OPF_BACKWARD, 3, 11, 0, 0, 0, 0);
    ev_op_full(&e, 2, 140, 150, AIP_OPF_SEQ | AIP_OPF_FWD | AIP_OPF_BACKWARD, 3, 33, 0, 0, 0, 0);
    /* seq 4 of thread 11 is linked; thread 33's seq 4 has no backward op */
    ev_op_full(&e, 2, 160, 170, AIP_OPF_SEQ | AIP_OPF_FWD | AIP_OPF_BACKWARD, 4, 11, 0, 0, 0, 0);
    /* seq 7 of thread 11 started only after: no flow (not thread 33's) */
    ev_op_full(&e, 2, 180, 190, AIP_OPF_SEQ | AIP_OPF_FWD | AIP_OPF_BACKWARD, 7, 11, 0, 0, 0, 0);
    rb_events(&b, 22, &e);
    rb_free(&e);
    aip__model m;
    ASSERT_EQ(load_built(&b, "flows_threads.raw", &m), AIP_OK);
    const aip__process *p = &m.procs[0];
    ASSERT_EQ(m.n_flows, 3);
    ASSERT_TRUE(flow_to(&m, 100) == NULL);
    ASSERT_TRUE(flow_to(&m, 180) == NULL);
    static const int64_t bwd[] = {120, 140, 160}, fwd[] = {10, 40, 15};
    static const uint64_t tid[] = {11, 33, 11};
    for (int k = 0; k < 3; k++) {
        const aip__flow *f = flow_to(&m, bwd[k]);
        ASSERT_TRUE(f != NULL);
        ASSERT_EQ(p->threads[f->fwd_thread].tid, tid[k]);
        ASSERT_EQ(p->threads[f->fwd_thread].spans[f->fwd_span].start, fwd[k]);
    }
    aip__model_free(&m);
}

static void test_clock_single_sync_uses_frequency(void)
{
    rb_buf b = {0}, e = {0};
    rb_header(&b, 1, 0);
    rb_info(&b, 1, "p", 3e9); /* 3 GHz, one sync point (a crashed run) */
    rb_clock(&b, 3000, 500, 1000000000000ull);
    ev_op(&e, 0, 3000 + 3000000, 3000 + 6000000);
    rb_events(&b, 1, &e);
    char path[200];
    write_raw(&b, "onesync.raw", path);
    rb_free(&b);
    rb_free(&e);
    aip__model m;
    aip__model_init(&m);
    ASSERT_EQ(aip__model_load_raw(&m, path), AIP_OK);
    const aip__span *s = &m.procs[0].threads[0].spans[0];
    ASSERT_EQ(s->start, 1000000000000LL + 1000000);
    ASSERT_EQ(s->end, 1000000000000LL + 2000000);
    ASSERT_EQ(m.procs[0].clock_fallback, 0);
    aip__model_free(&m);
}

/* Every prefix of a file loads (or is refused as too short), never crashes,
 * and recovers more events the more of the file there is; every single-bit
 * flip loads too.  Each model is also exported, to /dev/null. */
static void test_every_cut_and_flip(void)
{
    rb_buf b;
    build_round_trip(&b);
    char path[200];
    snprintf(path, sizeof path, "%s/cut.raw", dir);
    int devnull = open("/dev/null", O_WRONLY);
    uint64_t prev = 0;
    for (size_t cut = 0; cut <= b.len + b.len * 8; cut++) {
        int flip = cut > b.len;
        size_t n = flip ? b.len : cut;
        if (flip)
            b.data[(cut - b.len - 1) / 8] ^= (uint8_t)(1u << ((cut - b.len - 1) % 8));
        rb_write_file(path, b.data, n);
        if (flip)
            b.data[(cut - b.len - 1) / 8] ^= (uint8_t)(1u << ((cut - b.len - 1) % 8));
        aip__model m;
        aip__model_init(&m);
        aip_status s = aip__model_load_raw(&m, path);
        if (n < AIP_RAW_HEADER_SIZE) {
            ASSERT_EQ(s, AIP_ERR_FORMAT);
            continue;
        }
        if (s == AIP_OK) {
            ASSERT_EQ(aip__model_derive(&m), AIP_OK);
            if (!flip) {
                ASSERT_TRUE(m.procs[0].events >= prev);
                prev = m.procs[0].events;
            }
            aip__out o;
            ASSERT_EQ(aip__out_init_fd(&o, devnull), AIP_OK);
            ASSERT_EQ(aip__export_trace_json(&m, &o), AIP_OK);
            ASSERT_EQ(aip__export_operator_details(&m, &o), AIP_OK);
            ASSERT_EQ(aip__export_step_trace(&m, &o), AIP_OK);
            ASSERT_EQ(aip__out_close(&o), AIP_OK);
        } else {
            ASSERT_TRUE(flip && cut - b.len - 1 < 8 * AIP_RAW_HEADER_SIZE); /* header bits */
        }
        aip__model_free(&m);
    }
    ASSERT_EQ(prev, 12);
    close(devnull);
    rb_free(&b);
}

static void test_step_names(void)
{
    int64_t n = -1;
    ASSERT_EQ(aip__step_number("ProfilerStep#12", 15, &n), 1);
    ASSERT_EQ(n, 12);
    ASSERT_EQ(aip__step_number("ProfilerStep#", 13, &n), 0);
    ASSERT_EQ(aip__step_number("ProfilerStep#1x", 15, &n), 0);
    ASSERT_EQ(aip__step_number("ProfilerStep12", 14, &n), 0);
    ASSERT_EQ(aip__step_number("ProfilerStep#99999999999999999999", 33, &n), 0);
}

/* Format 1.3: the STATS slot (a page-sized STATS after a PAD chunk) holds
 * in a file that ends without a final STATS (a killed run); a later STATS
 * supersedes it.  Either way the counts are those of the last STATS. */
static void build_slot_file(rb_buf *b, int final)
{
    rb_header(b, 1, 3);
    rb_clock(b, 0, 0, 1000);
    uint8_t pad[1000] = {0};
    rb_chunk(b, AIP_CHUNK_PAD, 0, pad, sizeof pad);
    uint8_t slot[4072] = {0};
    uint32_t count = 2;
    aip__stats_entry e[2] = {{11, 5, 40}, {12, 0, 2}};
    memcpy(slot, &count, 4);
    memcpy(slot + 8, e, sizeof e);
    rb_chunk(b, AIP_CHUNK_STATS, 0, slot, sizeof slot);
    static const char *const names[] = {"n"};
    rb_strings(b, 1, names, NULL, 1);
    rb_buf ev = {0};
    for (int i = 0; i < 5; i++)
        ev_annotation(&ev, 1, 10 * i, 10 * i + 5);
    rb_events(b, 11, &ev);
    rb_free(&ev);
    if (final) {
        rb_stats1(b, 11, 5, 50);
        rb_end(b);
    }
}

static void test_stats_slot_and_last_stats(void)
{
    for (int final = 0; final < 2; final++) {
        rb_buf b = {0};
        build_slot_file(&b, final);
        aip__model m;
        ASSERT_EQ(load_built(&b, final ? "slot_final.raw" : "slot_killed.raw", &m), AIP_OK);
        const aip__process *p = &m.procs[0];
        ASSERT_EQ(p->raw.corrupt_chunks + p->bad_other_chunks, 0);
        ASSERT_EQ(m.n_events, 5);
        ASSERT_EQ(m.dropped_events, final ? 50 : 42);
        ASSERT_EQ(p->recorded, 5);
        aip__model_free(&m);
    }
}

/* A raw file past the size from which the spans are decoded on a second
 * thread (span_load.c): 3 threads' chunks interleaved, each chunk mixing
 * ops (their seq counts the thread's ops), ranges (domain counts the
 * thread's ranges), marks and memory records, one inconsistent chunk
 * skipped whole.  Every thread's spans come out in file order with their
 * side fields, the process-wide records in file order with their
 * threads, as a serial load gives them. */
#define BIG_THREADS 3
#define BIG_CHUNKS 100
#define BIG_RECORDS 1000

static void test_big_file_spans_in_order(void)
{
    rb_buf b = {0};
    rb_header(&b, 1, 0);
    rb_info(&b, 4343, "prog", 1e9);
    const char *nm[] = {"op", "range", "mark", "bad"};
    rb_strings(&b, 1, nm, NULL, 4);
    int64_t ops[BIG_THREADS] = {0}, ranges[BIG_THREADS] = {0};
    uint64_t t_now = 1000, marks = 0, mems = 0;
    for (int c = 0; c < BIG_CHUNKS; c++)
        for (int th = 0; th < BIG_THREADS; th++) {
            rb_buf e = {0};
            uint64_t tid = 900 - (uint64_t)th; /* sorted by tid: reversed indices */
            int bad = c == BIG_CHUNKS / 2 && th == 1;
            for (int r = 0; r < BIG_RECORDS; r++, t_now += 10) {
                if (bad) {
                    ev_op(&e, 4, t_now, t_now + 5);
                } else if (r % 10 == 9) {
                    ev_range(&e, 2, (uint32_t)ranges[th]++, t_now, t_now + 5);
                } else if (r % 50 == 25) {
                    ev_mark(&e, 3, (uint32_t)th, t_now);
                    marks++;
                } else if (r % 50 == 26) {
                    ev_memory(&e, t_now, 0x1000 + tid, 64, 64, 128, 0, -1);
                    mems++;
                } else {
                    ev_op_full(&e, 1, t_now, t_now + 5, AIP_OPF_SEQ, ops[th]++, 0, 0, 0, 0, 0);
                }
            }
            if (bad) { /* a record size past the chunk: the chunk is skipped */
                e.data[e.len - 24 + 2] = 0xF8;
                e.data[e.len - 24 + 3] = 0x7F;
            }
            rb_events(&b, tid, &e);
            rb_free(&e);
        }
    rb_end(&b);
    ASSERT_TRUE(b.len > (8u << 20));
    char path[200];
    write_raw(&b, "big.raw", path);
    rb_free(&b);
    aip__model m;
    aip__model_init(&m);
    ASSERT_EQ(aip__model_load_raw(&m, path), AIP_OK);
    const aip__process *p = &m.procs[0];
    ASSERT_EQ(p->bad_event_chunks, 1);
    ASSERT_EQ(p->n_threads, BIG_THREADS);
    for (int th = 0; th < BIG_THREADS; th++) {
        const aip__thread *t = &p->threads[BIG_THREADS - 1 - th];
        ASSERT_EQ(t->tid, 900 - (uint64_t)th);
        ASSERT_EQ(t->n_spans, (size_t)(ops[th] + ranges[th]));
        int64_t op = 0, range = 0, last = -1;
        for (size_t i = 0; i < t->n_spans; i++) {
            const aip__span *sp = &t->spans[i];
            ASSERT_TRUE(sp->start > last); /* file order */
            last = sp->start;
            if (sp->kind == AIP_SPAN_RANGE) {
                ASSERT_TRUE(sp->aux > 0);
                ASSERT_EQ((int64_t)t->aux[sp->aux - 1], range++);
                continue;
            }
            ASSERT_EQ(sp->kind, AIP_SPAN_OP);
            aip__op_fields f;
            aip__model_op_fields(t, sp, &f);
            ASSERT_EQ(f.sequence_number, op++);
        }
        ASSERT_EQ(op, ops[th]);
        ASSERT_EQ(range, ranges[th]);
    }
    /* the skipped chunk's marks are gone with it: none were in it */
    ASSERT_EQ(p->marks.n, marks);
    ASSERT_EQ(p->memory.n, mems);
    for (size_t i = 0; i < p->marks.n; i++) {
        const aip__mark_ev *k = &p->marks.v[i];
        ASSERT_EQ(p->threads[k->thread].tid, 900 - (uint64_t)k->domain);
        ASSERT_TRUE(i == 0 || k->ts > p->marks.v[i - 1].ts);
    }
    for (size_t i = 0; i < p->memory.n; i++)
        ASSERT_EQ(p->memory.v[i].address, 0x1000 + p->threads[p->memory.v[i].thread].tid);
    aip__model_free(&m);
}

static void setup(void) { rb_tempdir(dir, sizeof dir, "model"); }
static void teardown(void) { rb_rmtree(dir); }

TEST_MAIN(TEST_CASE(setup), TEST_CASE(test_round_trip), TEST_CASE(test_nesting_and_step_trace),
          TEST_CASE(test_random_trees_completion_order), TEST_CASE(test_random_trees_shuffled),
          TEST_CASE(test_damaged_contents), TEST_CASE(test_fwdbwd_choice),
          TEST_CASE(test_fwdbwd_per_thread),
          TEST_CASE(test_clock_single_sync_uses_frequency), TEST_CASE(test_every_cut_and_flip),
          TEST_CASE(test_step_names), TEST_CASE(test_stats_slot_and_last_stats),
          TEST_CASE(test_big_file_spans_in_order), TEST_CASE(teardown))
