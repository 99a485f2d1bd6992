/*
 * test_raw_writer.c — the writing side of the raw format (raw_writer.h):
 * what it writes is byte for byte what docs/RAW_FORMAT.md specifies (the
 * test builder's bytes), and EVENTS that do not fit the file (a file-size
 * limit, failing writes the way a full disk does) are cut at record
 * boundaries: the file ends at its last whole chunk, holding a prefix of
 * whole records.  test_disk_full.c covers the same through a session.
 */
#include "aip_test.h"
#include "raw.h"
#include "raw_builder.h"
#include "raw_writer.h"
#include "trace_strings.h"

#include <errno.h>
#include <signal.h>
#include <sys/resource.h>

static char dir[64];

/* The file at `path` as bytes; `len` its length. */
static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    uint8_t *data = malloc(1 << 20);
    *len = data ? fread(data, 1, 1 << 20, f) : 0;
    fclose(f);
    return data;
}

static int open_new(const char *name, char *path)
{
    snprintf(path, 200, "%s/%s", dir, name);
    return open(path, O_WRONLY | O_CREAT | O_TRUNC, 0640);
}

static void test_bytes_as_specified(void)
{
    char path[200];
    aip__raw_file file = {open_new("spec.raw", path), 0};
    ASSERT_TRUE(file.fd >= 0);
    rb_buf ev = {0};
    ev_annotation(&ev, 1, 10, 20);
    ev_op(&ev, 2, 11, 19);
    ASSERT_EQ(aip__raw_count_records(ev.data, (uint32_t)ev.len), 2);
    ASSERT_EQ(aip__raw_put_header(&file, path), AIP_OK);
    ASSERT_EQ(aip__raw_put_chunk(&file, AIP_CHUNK_INFO, 0, "{}", 2), 0);
    int error = -1;
    ASSERT_EQ(aip__raw_put_events(&file, 7, ev.data, (uint32_t)ev.len, &error), ev.len);
    ASSERT_EQ(error, 0);
    ASSERT_EQ(aip__raw_put_chunk(&file, AIP_CHUNK_END, 0, NULL, 0), 0);
    close(file.fd);

    rb_buf want = {0};
    rb_header(&want, AIP_RAW_VERSION_MAJOR, AIP_RAW_VERSION_MINOR);
    rb_chunk(&want, AIP_CHUNK_INFO, 0, "{}", 2);
    rb_events(&want, 7, &ev);
    rb_end(&want);
    size_t len = 0;
    uint8_t *got = slurp(path, &len);
    ASSERT_TRUE(got != NULL);
    ASSERT_EQ(len, want.len);
    ASSERT_EQ(file.bytes, want.len);
    ASSERT_TRUE(memcmp(got, want.data, len) == 0);
    free(got);
    rb_free(&want);
    rb_free(&ev);
}

/* 2000 annotations (48 000 bytes) into a file limited to 20 000 bytes. */
static void test_events_cut_at_records(void)
{
    char path[200];
    aip__raw_file file = {open_new("full.raw", path), 0};
    ASSERT_TRUE(file.fd >= 0);
    ASSERT_EQ(aip__raw_put_header(&file, path), AIP_OK);
    rb_buf ev = {0};
    for (uint32_t i = 0; i < 2000; i++)
        ev_annotation(&ev, 1 + i % 5, i, i + 1);

    struct rlimit old, small;
    ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
    small = old;
    small.rlim_cur = 20000;
    void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN); /* EFBIG instead of a signal */
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
    int error = 0;
    uint32_t done = aip__raw_put_events(&file, 3, ev.data, (uint32_t)ev.len, &error);
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, old_handler);
    ASSERT_EQ(aip__raw_put_chunk(&file, AIP_CHUNK_END, 0, NULL, 0), 0);
    close(file.fd);

    ASSERT_EQ(error, EFBIG);
    ASSERT_TRUE(done > 0 && done < ev.len);
    ASSERT_EQ(done % 24, 0); /* whole annotations only */
    ASSERT_TRUE(done > 20000 / 2);

    aip__raw_reader *r;
    ASSERT_EQ(aip__raw_open(path, &r), AIP_OK);
    aip__raw_chunk c;
    uint64_t events = 0;
    int rc;
    while ((rc = aip__raw_next(r, &c)) == 1)
        if (c.type == AIP_CHUNK_EVENTS) {
            ASSERT_TRUE(memcmp(c.payload, ev.data + events, c.size) == 0);
            events += c.size;
        }
    ASSERT_EQ(rc, 0);
    ASSERT_EQ(events, done);
    const aip__raw_damage *p = aip__raw_problems(r);
    ASSERT_EQ(p->corrupt_chunks, 0);
    ASSERT_EQ(p->truncated_bytes, 0); /* the file ends at a whole chunk */
    ASSERT_EQ(p->clean_end, 1);
    aip__raw_close(r);
    rb_free(&ev);
}

/* The writer counts an EVENTS payload's records with the pass that notes
 * its string ids (writer.c): the scan's count is aip__raw_count_records'
 * for whole records, and a partial last record is neither counted nor
 * read. */
static void test_strings_scan_counts_records(void)
{
    rb_buf ev = {0};
    ev_annotation(&ev, 3, 10, 20);
    ev_op(&ev, 5, 11, 19);
    ev_memory(&ev, 12, 0x1000, 64, 64, 64, 0, -1);
    ev_op(&ev, 4, 13, 18);
    uint32_t whole = (uint32_t)ev.len;
    aip__trace_strings u = {0};
    ASSERT_EQ(aip__trace_strings_scan(&u, ev.data, whole), 4);
    ASSERT_EQ(aip__raw_count_records(ev.data, whole), 4);
    ASSERT_EQ(u.n_need, 3); /* names 3, 5 and 4; the memory record has none */
    ev_op(&ev, 9, 14, 15);
    aip__trace_strings v = {0};
    ASSERT_EQ(aip__trace_strings_scan(&v, ev.data, (uint32_t)ev.len - 1), 4); /* cut: 4 whole */
    ASSERT_EQ(v.n_need, 3);                                                   /* 9 unread */
    ASSERT_EQ(aip__trace_strings_scan(&v, ev.data, 0), 0);
    aip__trace_strings_free(&u);
    aip__trace_strings_free(&v);
    rb_free(&ev);
}

static void setup(void) { rb_tempdir(dir, sizeof dir, "rawwriter"); }
static void teardown(void) { rb_rmtree(dir); }

TEST_MAIN(TEST_CASE(setup), TEST_CASE(test_bytes_as_specified),
          TEST_CASE(test_events_cut_at_records), TEST_CASE(test_strings_scan_counts_records),
          TEST_CASE(teardown))
