/*
 * test_analysis_nesting.c — the slices a timeline draws (nesting.c): the
 * record_function pattern with_stack produces, the two yield rules, spans
 * that nest already (no copy), and random overlapping spans of every kind:
 * the slices always nest, and the pieces of each span cover it exactly.
 */
#include "aip_test.h"
#include "analysis_int.h"

enum { PY = AIP_SPAN_PYFUNC, ANN = AIP_SPAN_ANNOTATION, OP = AIP_SPAN_OP, RNG = AIP_SPAN_RANGE };

typedef struct spec {
    int64_t start, end;
    unsigned kind;
} spec;

/* A thread holding `n` spans named 1..n (in that order), sorted. */
static void make_thread(aip__thread *t, const spec *sp, size_t n)
{
    memset(t, 0, sizeof *t);
    t->spans = calloc(n ? n : 1, sizeof *t->spans);
    for (size_t i = 0; i < n; i++)
        t->spans[i] = (aip__span){.start = sp[i].start, .end = sp[i].end,
                                  .name = (uint32_t)i + 1, .kind = sp[i].kind};
    t->n_spans = t->cap_spans = n;
    if (aip__spans_sort(t->spans, n))
        abort();
}

static void free_thread(aip__thread *t)
{
    free(t->spans);
    aip__array_free(t->slices);
}

/* Pairs of slices that partially overlap (quadratic: small inputs). */
static size_t overlaps(const aip__span *s, size_t n)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            if (s[i].start < s[j].start && s[j].start < s[i].end && s[i].end < s[j].end)
                bad++;
    return bad;
}

/* The pieces of span `name`, in draw order, as "start-end" text. */
static const char *pieces_of(const aip__thread *t, uint32_t name, char *buf, size_t cap)
{
    size_t n, len = 0;
    const aip__span *s = aip__thread_slices(t, &n);
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++)
        if (s[i].name == name)
            len += (size_t)snprintf(buf + len, cap - len, "%s%lld-%lld%s", len ? " " : "",
                                    (long long)s[i].start, (long long)s[i].end,
                                    s[i].piece ? "+" : "");
    return buf;
}

static void test_record_function_with_stack(void)
{
    /* record_function: __enter__ calls _ops.py __call__, which opens the
     * range; __exit__'s __call__ closes it. */
    const spec sp[] = {
        {0, 50, PY},     /* 1 __enter__ */
        {10, 40, PY},    /* 2 _ops __call__ (opens the range) */
        {30, 200, ANN},  /* 3 the range */
        {60, 100, OP},   /* 4 an op inside it */
        {190, 230, PY},  /* 5 __exit__ */
        {195, 220, PY},  /* 6 _ops __call__ (closes it) */
        {300, 310, PY},  /* 7 later, apart */
    };
    aip__thread t;
    make_thread(&t, sp, 7);
    ASSERT_EQ(overlaps(t.spans, t.n_spans), 4);
    uint64_t pieces = 0;
    ASSERT_EQ(aip__slices_build(&t, &pieces), AIP_OK);
    ASSERT_TRUE(t.slices != NULL);
    ASSERT_EQ(pieces, 4);
    ASSERT_EQ(t.n_slices, 11);
    ASSERT_EQ(overlaps(t.slices, t.n_slices), 0);
    char b[200];
    ASSERT_STREQ(pieces_of(&t, 1, b, sizeof b), "0-30 30-50+");
    ASSERT_STREQ(pieces_of(&t, 2, b, sizeof b), "10-30 30-40+");
    ASSERT_STREQ(pieces_of(&t, 3, b, sizeof b), "30-200"); /* the range is whole */
    ASSERT_STREQ(pieces_of(&t, 4, b, sizeof b), "60-100");
    ASSERT_STREQ(pieces_of(&t, 5, b, sizeof b), "190-200 200-230+");
    ASSERT_STREQ(pieces_of(&t, 6, b, sizeof b), "195-200 200-220+");
    /* the recorded spans are untouched */
    ASSERT_EQ(overlaps(t.spans, t.n_spans), 4);
    for (size_t i = 1; i < t.n_slices; i++)
        ASSERT_TRUE(t.slices[i - 1].start <= t.slices[i].start);
    free_thread(&t);
}

static void test_later_starting_yields(void)
{
    /* Annotations closed out of order (a step range closed inside a user
     * range), and two Python calls: the later-starting one is split. */
    const spec sp[] = {{0, 100, ANN}, {50, 150, ANN}, {200, 300, PY}, {250, 320, PY},
                       {400, 500, PY}, {450, 550, OP}};
    aip__thread t;
    make_thread(&t, sp, 6);
    uint64_t pieces = 0;
    ASSERT_EQ(aip__slices_build(&t, &pieces), AIP_OK);
    ASSERT_EQ(overlaps(t.slices, t.n_slices), 0);
    char b[200];
    ASSERT_STREQ(pieces_of(&t, 1, b, sizeof b), "0-100");
    ASSERT_STREQ(pieces_of(&t, 2, b, sizeof b), "50-100 100-150+");
    ASSERT_STREQ(pieces_of(&t, 3, b, sizeof b), "200-300");
    ASSERT_STREQ(pieces_of(&t, 4, b, sizeof b), "250-300 300-320+");
    /* a Python call yields to an op even when it started first */
    ASSERT_STREQ(pieces_of(&t, 5, b, sizeof b), "400-450 450-500+");
    ASSERT_STREQ(pieces_of(&t, 6, b, sizeof b), "450-550");
    ASSERT_EQ(pieces, 3);
    free_thread(&t);
}

static void test_nested_spans_get_no_copy(void)
{
    /* Touching, equal starts, zero length, identical intervals: all nest. */
    const spec sp[] = {{0, 100, PY}, {0, 50, ANN}, {50, 100, OP}, {50, 50, OP},
                       {60, 70, PY}, {60, 70, PY}, {100, 120, RNG}};
    aip__thread t;
    make_thread(&t, sp, 7);
    uint64_t pieces = 0;
    ASSERT_EQ(aip__slices_build(&t, &pieces), AIP_OK);
    ASSERT_TRUE(t.slices == NULL);
    ASSERT_EQ(pieces, 0);
    size_t n;
    ASSERT_TRUE(aip__thread_slices(&t, &n) == t.spans);
    ASSERT_EQ(n, 7);
    free_thread(&t);
}

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void test_random_overlaps(void)
{
    enum { N = 60 };
    for (int round = 0; round < 300; round++) {
        spec sp[N];
        size_t n = 2 + rnd() % (N - 2);
        for (size_t i = 0; i < n; i++) {
            int64_t a = (int64_t)(rnd() % 1000), len = (int64_t)(rnd() % 300);
            sp[i] = (spec){a, a + len, (unsigned)(rnd() % 4)};
        }
        aip__thread t;
        make_thread(&t, sp, n);
        uint64_t pieces = 0;
        ASSERT_EQ(aip__slices_build(&t, &pieces), AIP_OK);
        size_t ns;
        const aip__span *s = aip__thread_slices(&t, &ns);
        ASSERT_EQ(overlaps(s, ns), 0);
        ASSERT_EQ(ns, n + pieces);
        for (size_t i = 1; i < ns; i++)
            ASSERT_TRUE(s[i - 1].start < s[i].start ||
                        (s[i - 1].start == s[i].start && s[i - 1].end >= s[i].end));
        /* The pieces of each span: first at its start, contiguous, last at
         * its end, of its kind; only pieces after the first are marked. */
        for (uint32_t name = 1; name <= n; name++) {
            const spec *o = &sp[name - 1];
            int64_t at = o->start;
            int first = 1;
            for (size_t i = 0; i < ns; i++) {
                if (s[i].name != name)
                    continue;
                ASSERT_EQ(s[i].start, at);
                ASSERT_EQ(s[i].kind, o->kind);
                ASSERT_EQ(s[i].piece, !first);
                ASSERT_TRUE(s[i].end >= s[i].start);
                at = s[i].end;
                first = 0;
            }
            ASSERT_TRUE(!first);
            ASSERT_EQ(at, o->end);
        }
        free_thread(&t);
    }
}

int main(void)
{
    static const aip_test_case cases[] = {
        TEST_CASE(test_record_function_with_stack),
        TEST_CASE(test_later_starting_yields),
        TEST_CASE(test_nested_spans_get_no_copy),
        TEST_CASE(test_random_overlaps),
    };
    return aip_test_run(cases, sizeof cases / sizeof cases[0]);
}
