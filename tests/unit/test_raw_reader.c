/*
 * test_raw_reader.c — the chunk reader on good, truncated, corrupted,
 * foreign and future-version files.
 */
#include "aip_test.h"
#include "raw.h"
#include "raw_builder.h"

static char dir[64];

typedef struct chunk_pos {
    size_t off, end; /* end = offset after the payload (before padding) */
    uint16_t type;
} chunk_pos;

/* A small file with one chunk of every type; records where chunks are. */
static size_t build_small(rb_buf *b, chunk_pos *pos)
{
    size_t n = 0;
    rb_header(b, 1, 0);
#define NOTE(expr, t)                                            \
    do {                                                         \
        size_t o_ = (expr);                                      \
        pos[n].off = o_;                                         \
        pos[n].type = (t);                                       \
        n++;                                                     \
    } while (0)
    NOTE(rb_info(b, 42, "prog", 1e9), AIP_CHUNK_INFO);
    const char *names[] = {"aten::mm", "step"};
    NOTE(rb_strings(b, 1, names, NULL, 2), AIP_CHUNK_STRINGS);
    NOTE(rb_clock(b, 1000, 1000, 5000), AIP_CHUNK_CLOCK);
    rb_buf e = {0};
    ev_op(&e, 1, 1100, 1200);
    ev_annotation(&e, 2, 1050, 1300);
    NOTE(rb_events(b, 7, &e), AIP_CHUNK_EVENTS);
    rb_free(&e);
    NOTE(rb_stats1(b, 7, 2, 0), AIP_CHUNK_STATS);
    NOTE(rb_clock(b, 2000, 2000, 6000), AIP_CHUNK_CLOCK);
    NOTE(rb_end(b), AIP_CHUNK_END);
#undef NOTE
    for (size_t i = 0; i < n; i++) {
        aip__chunk_header h;
        memcpy(&h, b->data + pos[i].off, sizeof h);
        pos[i].end = pos[i].off + sizeof h + h.payload_size;
    }
    return n;
}

static void write_tmp(const char *name, const void *data, size_t len, char *path)
{
    snprintf(path, 200, "%s/%s", dir, name);
    if (rb_write_file(path, data, len) != 0)
        abort();
}

/* Read all chunks; @return count, offsets in offs. */
static int read_all(const char *path, uint64_t *offs, int max, aip__raw_damage *pr,
                    aip_status *open_status)
{
    aip__raw_reader *r;
    *open_status = aip__raw_open(path, &r);
    if (*open_status)
        return -1;
    aip__raw_chunk c;
    int n = 0, rc;
    while ((rc = aip__raw_next(r, &c)) == 1) {
        if (n < max)
            offs[n] = c.offset;
        n++;
    }
    *pr = *aip__raw_problems(r);
    aip__raw_close(r);
    return rc < 0 ? -2 : n;
}

static void test_good_file(void)
{
    rb_buf b = {0};
    chunk_pos pos[16];
    size_t n = build_small(&b, pos);
    char path[200];
    write_tmp("good.raw", b.data, b.len, path);
    aip__raw_reader *r;
    ASSERT_EQ(aip__raw_open(path, &r), AIP_OK);
    ASSERT_EQ(aip__raw_version_minor(r), 0);
    aip__raw_chunk c;
    for (size_t i = 0; i < n; i++) {
        ASSERT_EQ(aip__raw_next(r, &c), 1);
        ASSERT_EQ(c.offset, pos[i].off);
        ASSERT_EQ(c.type, pos[i].type);
        if (c.type == AIP_CHUNK_EVENTS) {
            ASSERT_EQ(c.tid, 7);
            ASSERT_EQ(c.size, 48);
        }
    }
    ASSERT_EQ(aip__raw_next(r, &c), 0);
    ASSERT_EQ(aip__raw_next(r, &c), 0);
    const aip__raw_damage *p = aip__raw_problems(r);
    ASSERT_EQ(p->corrupt_chunks, 0);
    ASSERT_EQ(p->truncated_bytes, 0);
    ASSERT_EQ(p->clean_end, 1);
    ASSERT_STREQ(p->first_message, "");
    aip__raw_close(r);
    rb_free(&b);
}

/* Cut the file at every byte: complete chunks survive, the rest is the
 * truncated tail, nothing crashes. */
static void test_truncated_everywhere(void)
{
    rb_buf b = {0};
    chunk_pos pos[16];
    size_t n = build_small(&b, pos);
    char path[200];
    for (size_t cut = 0; cut <= b.len; cut++) {
        write_tmp("cut.raw", b.data, cut, path);
        uint64_t offs[16];
        aip__raw_damage pr;
        aip_status st;
        int got = read_all(path, offs, 16, &pr, &st);
        if (cut < AIP_RAW_HEADER_SIZE) {
            ASSERT_EQ(st, AIP_ERR_FORMAT);
            continue;
        }
        ASSERT_EQ(st, AIP_OK);
        size_t complete = 0, last_end = AIP_RAW_HEADER_SIZE;
        for (size_t i = 0; i < n; i++) {
            if (pos[i].end <= cut) {
                complete++;
                last_end = pos[i].end + aip__chunk_pad(pos[i].end - pos[i].off - 24);
            }
        }
        ASSERT_EQ(got, (int)complete);
        for (size_t i = 0; i < complete; i++)
            ASSERT_EQ(offs[i], pos[i].off);
        ASSERT_EQ(pr.corrupt_chunks, 0);
        uint64_t tail = cut > last_end ? cut - last_end : 0;
        ASSERT_EQ(pr.truncated_bytes, tail);
        ASSERT_EQ(pr.clean_end, complete == n);
        if (tail)
            ASSERT_TRUE(strstr(pr.first_message, "truncated") != NULL);
    }
    rb_free(&b);
}

/* Flip one bit anywhere in the chunks: that chunk is lost and reported,
 * every other chunk is still read. */
static void test_bit_flips(void)
{
    rb_buf b = {0};
    chunk_pos pos[16];
    size_t n = build_small(&b, pos);
    char path[200];
    uint8_t *copy = malloc(b.len);
    for (size_t at = AIP_RAW_HEADER_SIZE; at < b.len; at++) {
        size_t hit = n;
        for (size_t i = 0; i < n; i++)
            if (at >= pos[i].off && at < pos[i].end)
                hit = i;
        for (int bit = 0; bit < 8; bit += 3) {
            memcpy(copy, b.data, b.len);
            copy[at] ^= (uint8_t)(1u << bit);
            write_tmp("flip.raw", copy, b.len, path);
            uint64_t offs[16];
            aip__raw_damage pr;
            aip_status st;
            int got = read_all(path, offs, 16, &pr, &st);
            ASSERT_EQ(st, AIP_OK);
            if (hit == n) { /* padding is not covered by the CRC and not used */
                ASSERT_EQ(got, (int)n);
                continue;
            }
            ASSERT_EQ(got, (int)n - 1);
            for (size_t i = 0, k = 0; i < n; i++)
                if (i != hit)
                    ASSERT_EQ(offs[k++], pos[i].off);
            ASSERT_EQ(pr.corrupt_chunks + (pr.truncated_bytes > 0), 1);
            ASSERT_TRUE(pr.first_message[0] != '\0');
        }
    }
    free(copy);
    rb_free(&b);
}

static void test_garbage_between_chunks(void)
{
    rb_buf b = {0};
    rb_header(&b, 1, 0);
    size_t a = rb_clock(&b, 1, 2, 3);
    uint8_t junk[40];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (uint8_t)(i * 37 + 1);
    uint32_t magic = AIP_CHUNK_MAGIC; /* a forged magic with a bad CRC inside the junk */
    memcpy(junk + 8, &magic, 4);
    rb_put(&b, junk, sizeof junk);
    size_t c = rb_clock(&b, 4, 5, 6);
    char path[200];
    write_tmp("junk.raw", b.data, b.len, path);
    uint64_t offs[4];
    aip__raw_damage pr;
    aip_status st;
    ASSERT_EQ(read_all(path, offs, 4, &pr, &st), 2);
    ASSERT_EQ(offs[0], a);
    ASSERT_EQ(offs[1], c);
    ASSERT_EQ(pr.corrupt_chunks, 1);
    ASSERT_EQ(pr.truncated_bytes, 0);
    ASSERT_TRUE(strstr(pr.first_message, "corrupt chunk at offset") != NULL);
    rb_free(&b);
}

static void test_corrupt_size_then_valid(void)
{
    /* A size field pointing past the end while a valid chunk follows is a
     * corrupt chunk, not a torn tail. */
    rb_buf b = {0};
    rb_header(&b, 1, 0);
    size_t a = rb_clock(&b, 1, 2, 3);
    size_t c = rb_clock(&b, 4, 5, 6);
    uint32_t big = 1u << 20;
    memcpy(b.data + a + 8, &big, 4);
    char path[200];
    write_tmp("size.raw", b.data, b.len, path);
    uint64_t offs[4];
    aip__raw_damage pr;
    aip_status st;
    ASSERT_EQ(read_all(path, offs, 4, &pr, &st), 1);
    ASSERT_EQ(offs[0], c);
    ASSERT_EQ(pr.corrupt_chunks, 1);
    ASSERT_EQ(pr.truncated_bytes, 0);
    rb_free(&b);
}

static void test_big_chunk(void)
{
    /* Larger than the 1 MiB read window. */
    rb_buf b = {0};
    rb_header(&b, 1, 0);
    size_t size = 3u << 20;
    uint8_t *payload = malloc(size);
    for (size_t i = 0; i < size; i++)
        payload[i] = (uint8_t)(i * 131);
    size_t o1 = rb_chunk(&b, 77, 0, payload, (uint32_t)size);
    size_t o2 = rb_end(&b);
    char path[200];
    write_tmp("big.raw", b.data, b.len, path);
    aip__raw_reader *r;
    ASSERT_EQ(aip__raw_open(path, &r), AIP_OK);
    aip__raw_chunk c;
    ASSERT_EQ(aip__raw_next(r, &c), 1);
    ASSERT_EQ(c.offset, o1);
    ASSERT_EQ(c.type, 77);
    ASSERT_EQ(c.size, size);
    ASSERT_TRUE(memcmp(c.payload, payload, size) == 0);
    ASSERT_EQ(aip__raw_next(r, &c), 1);
    ASSERT_EQ(c.offset, o2);
    ASSERT_EQ(aip__raw_next(r, &c), 0);
    aip__raw_close(r);
    free(payload);
    rb_free(&b);
}

static void test_headers(void)
{
    char path[200];
    aip__raw_reader *r = NULL;
    rb_buf b = {0};
    /* newer major */
    rb_header(&b, 2, 3);
    rb_end(&b);
    write_tmp("v2.raw", b.data, b.len, path);
    ASSERT_EQ(aip__raw_open(path, &r), AIP_ERR_VERSION);
    ASSERT_TRUE(r == NULL);
    ASSERT_TRUE(strstr(aip_last_error(), "raw file format 2.x is newer than this aiprof (1.x); "
                                         "upgrade aiprof") != NULL);
    rb_free(&b);
    /* newer minor is fine */
    rb_header(&b, 1, 7);
    rb_end(&b);
    write_tmp("v17.raw", b.data, b.len, path);
    ASSERT_EQ(aip__raw_open(path, &r), AIP_OK);
    ASSERT_EQ(aip__raw_version_minor(r), 7);
    aip__raw_close(r);
    /* bad header size */
    uint32_t hs = 8;
    memcpy(b.data + 12, &hs, 4);
    write_tmp("hs.raw", b.data, b.len, path);
    ASSERT_EQ(aip__raw_open(path, &r), AIP_ERR_FORMAT);
    rb_free(&b);
    /* not raw data at all */
    const char *text = "{\"traceEvents\": []}\n this is a JSON file, not raw data";
    write_tmp("text.raw", text, strlen(text), path);
    ASSERT_EQ(aip__raw_open(path, &r), AIP_ERR_FORMAT);
    ASSERT_TRUE(strstr(aip_last_error(), "not aiprof raw data") != NULL);
    write_tmp("empty.raw", "", 0, path);
    ASSERT_EQ(aip__raw_open(path, &r), AIP_ERR_FORMAT);
    ASSERT_EQ(aip__raw_open(dir, &r), AIP_ERR_FORMAT); /* a directory */
    snprintf(path, sizeof path, "%s/missing.raw", dir);
    ASSERT_EQ(aip__raw_open(path, &r), AIP_ERR_NOT_FOUND);
}

static void setup(void) { rb_tempdir(dir, sizeof dir, "rawrd"); }
static void teardown(void) { rb_rmtree(dir); }

TEST_MAIN(TEST_CASE(setup), TEST_CASE(test_good_file), TEST_CASE(test_truncated_everywhere),
          TEST_CASE(test_bit_flips), TEST_CASE(test_garbage_between_chunks),
          TEST_CASE(test_corrupt_size_then_valid), TEST_CASE(test_big_chunk),
          TEST_CASE(test_headers), TEST_CASE(teardown))
