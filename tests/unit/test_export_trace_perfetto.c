/*
 * test_export_trace_perfetto.c — the protobuf encoder (pb_writer.h) on the
 * wire format's edge cases, and trace.perfetto-trace of the rich profile
 * walked at the wire level here (no protobuf library: every packet is a
 * length-delimited field 1 whose lengths add up exactly, every event packet
 * has a sequence id, the slices' begins and ends balance, flow ids leave
 * and end in pairs, and the same model writes the same bytes).  The full
 * decode with Perfetto's schema is tests/python/perfetto_check.py's.
 */
#include "aip_test.h"
#include "export.h"
#include "pb_writer.h"
#include "rich_profile.h"

#include <stdlib.h>
#include <string.h>

static void test_varints(void)
{
    uint8_t b[16];
    ASSERT_EQ(aip__pb_varint(b, 0) - b, 1);
    ASSERT_EQ(b[0], 0);
    ASSERT_EQ(aip__pb_varint(b, 127) - b, 1);
    ASSERT_EQ(aip__pb_varint(b, 128) - b, 2);
    ASSERT_EQ(b[0], 0x80);
    ASSERT_EQ(b[1], 0x01);
    ASSERT_EQ(aip__pb_varint(b, 300) - b, 2);
    ASSERT_EQ(b[0], 0xAC);
    ASSERT_EQ(b[1], 0x02);
    ASSERT_EQ(aip__pb_varint(b, UINT64_MAX) - b, 10);
    ASSERT_EQ(b[9], 0x01);
    ASSERT_EQ(aip__pb_varint_len(UINT64_MAX), 10);
    /* field 60, length-delimited: (60 << 3 | 2) = 482 = 0xE2 0x03 */
    ASSERT_EQ(aip__pb_tag(b, 60, AIP_PB_LEN) - b, 2);
    ASSERT_EQ(b[0], 0xE2);
    ASSERT_EQ(b[1], 0x03);
    uint8_t *e = aip__pb_fixed64(b, 47, 0x0102030405060708ull);
    ASSERT_EQ(e - b, 10);
    ASSERT_EQ(b[0], 0xF9); /* 47 << 3 | 1 = 377 */
    ASSERT_EQ(b[1], 0x02);
    ASSERT_EQ(b[2], 0x08);
    ASSERT_EQ(b[9], 0x01);
}

/* A nested message of `n` body bytes closes to tag, varint(n), body. */
static void check_nested(size_t n)
{
    uint8_t *b = malloc(n + 32), *mark;
    ASSERT_TRUE(b != NULL);
    uint8_t *d = aip__pb_open(b, 1, &mark);
    for (size_t i = 0; i < n; i++)
        *d++ = (uint8_t)(i * 7);
    d = aip__pb_close(d, mark);
    size_t hdr = 1 + aip__pb_varint_len(n);
    ASSERT_EQ((size_t)(d - b), hdr + n);
    uint64_t len = 0;
    for (unsigned i = 0, shift = 0; i < 10; i++, shift += 7) {
        len |= (uint64_t)(b[1 + i] & 0x7F) << shift;
        if (!(b[1 + i] & 0x80))
            break;
    }
    ASSERT_EQ(len, n);
    for (size_t i = 0; i < n; i++)
        ASSERT_EQ(b[hdr + i], (uint8_t)(i * 7));
    free(b);
}

static void test_nested_lengths(void)
{
    size_t sizes[] = {0, 1, 127, 128, 129, 16383, 16384, 300000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        check_nested(sizes[i]);
}

static int truncated; /* a varint ran past its message */

static uint64_t rd_varint(const uint8_t **p, const uint8_t *end)
{
    uint64_t v = 0;
    for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
        uint8_t c = *(*p)++;
        v |= (uint64_t)(c & 0x7F) << shift;
        if (!(c & 0x80))
            return v;
    }
    truncated = 1;
    *p = end;
    return 0;
}

typedef struct walk {
    size_t packets, with_seq, events, begins, ends, flows_out, flows_in;
} walk;

/* The fields of one message [p, end); `depth` 0: a packet, 1: a track event. */
static void walk_fields(const uint8_t *p, const uint8_t *end, int depth, walk *w, int *has_seq)
{
    while (p < end) {
        uint64_t key = rd_varint(&p, end);
        unsigned field = (unsigned)(key >> 3), wire = (unsigned)(key & 7);
        if (wire == 0) {
            uint64_t v = rd_varint(&p, end);
            if (depth == 0 && field == 10)
                *has_seq = 1;
            if (depth == 1 && field == 9) {
                w->begins += v == 1;
                w->ends += v == 2;
            }
        } else if (wire == 1) {
            ASSERT_TRUE(end - p >= 8);
            p += 8;
            if (depth == 1 && field == 47)
                w->flows_out++;
            if (depth == 1 && field == 48)
                w->flows_in++;
        } else {
            ASSERT_EQ(wire, 2u);
            uint64_t n = rd_varint(&p, end);
            ASSERT_TRUE(n <= (uint64_t)(end - p));
            if (depth == 0 && field == 11) {
                w->events++;
                walk_fields(p, p + n, 1, w, has_seq);
            }
            p += n;
        }
    }
    ASSERT_TRUE(p == end);
}

static void export_rich(const char *dir, const char *name, char **text, size_t *len)
{
    *text = NULL;
    rb_buf b = {0};
    rich_raw(&b);
    char raw[300], out[300];
    snprintf(raw, sizeof raw, "%s/aiprof_%d.raw", dir, RICH_PID);
    snprintf(out, sizeof out, "%s/%s", dir, name);
    rb_write_file(raw, b.data, b.len);
    rb_free(&b);
    aip__model m;
    aip__model_init(&m);
    ASSERT_EQ(aip__model_load_raw(&m, raw), AIP_OK);
    ASSERT_EQ(aip__model_derive(&m), AIP_OK);
    m.trace_format = AIP_TRACE_PERFETTO;
    aip__out o;
    ASSERT_EQ(aip__out_open(&o, out), AIP_OK);
    ASSERT_EQ(aip__out_finish(&o, aip__export_trace_perfetto(&m, &o)), AIP_OK);
    aip__model_free(&m);
    *text = aip_test_slurp(out, len);
}

static void test_rich_profile_wire(void)
{
    char dir[] = "/tmp/aip_pf_test_XXXXXX";
    ASSERT_TRUE(mkdtemp(dir) != NULL);
    size_t n, n2;
    char *t, *t2;
    export_rich(dir, "a.perfetto-trace", &t, &n);
    export_rich(dir, "b.perfetto-trace", &t2, &n2);
    ASSERT_TRUE(t && t2);
    ASSERT_EQ(n, n2);
    ASSERT_TRUE(memcmp(t, t2, n) == 0); /* same model, same bytes */
    const uint8_t *p = (const uint8_t *)t, *end = p + n;
    walk w = {0};
    while (p < end) {
        ASSERT_EQ(rd_varint(&p, end), (uint64_t)(1u << 3 | 2u)); /* Trace.packet */
        uint64_t len = rd_varint(&p, end);
        ASSERT_TRUE(len <= (uint64_t)(end - p));
        int has_seq = 0;
        size_t events = w.events;
        walk_fields(p, p + len, 0, &w, &has_seq);
        w.packets++;
        if (w.events > events)
            ASSERT_TRUE(has_seq); /* interning and deltas need their sequence */
        p += len;
    }
    ASSERT_TRUE(!truncated);
    ASSERT_TRUE(w.packets > 20);
    ASSERT_TRUE(w.begins > 10);
    ASSERT_EQ(w.begins, w.ends);
    ASSERT_TRUE(w.flows_out >= 1); /* the rich profile's backward pass: fwdbwd */
    ASSERT_EQ(w.flows_out, w.flows_in);
    free(t);
    free(t2);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ASSERT_EQ(system(cmd), 0);
}

int main(void)
{
    static const aip_test_case cases[] = {
        TEST_CASE(test_varints),
        TEST_CASE(test_nested_lengths),
        TEST_CASE(test_rich_profile_wire),
    };
    return aip_test_run(cases, sizeof cases / sizeof cases[0]);
}
