/*
 * test_osrt.c — host_sys OSRT below the end-to-end test (test_osrt.sh):
 * OSRT records from a raw file into the model (fields, failure, order,
 * wall-clock times, a record with inverted times counted and left out, a
 * record too short for its kind making its chunk inconsistent, a newer
 * kind skipped), and a session in a program that holds libaiprof itself
 * (this test links the static library): it says once that the program's
 * own calls cannot be intercepted, and the trace is complete.  Built
 * without -fpie (tests/CMakeLists.txt) and taking the functions' addresses
 * in code, so that its PLT entries are their canonical addresses: the real
 * function found for every wrapper is a definition, never such an entry
 * nor the wrapper (issue 26 §1).
 */
#include "aip_test.h"
#include "raw_builder.h"
#include "session_helpers.h"
#include "tmp_dir.h"

#include "model.h"
#include "osrt_int.h"

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <limits.h>
#include <time.h>

static char tmp[PATH_MAX];

static void ev_osrt(rb_buf *e, uint32_t name, uint64_t s, uint64_t t, int64_t result, int err)
{
    aip__rec_osrt r = {{AIP_REC_OSRT, err ? AIP_OSRTF_FAILED : 0, sizeof r, name}, s, t,
                       result, err, 0};
    rb_put(e, &r, sizeof r);
}

static int load_buf(const rb_buf *b, aip__model *m)
{
    char p[PATH_MAX + 32];
    snprintf(p, sizeof p, "%s/aiprof_7.raw", tmp);
    if (rb_write_file(p, b->data, b->len))
        return -1;
    aip__model_init(m);
    return aip__model_load_raw(m, p) || aip__model_derive(m);
}

static void test_records_into_the_model(void)
{
    static const char *const names[] = {"read", "pthread_mutex_lock", "nanosleep"};
    rb_buf b = {0}, e1 = {0}, e2 = {0};
    rb_header(&b, 1, 5);
    rb_info(&b, 7, "prog", 1e9);
    rb_strings(&b, 1, names, NULL, 3);
    rb_clock(&b, 1000, 1000, 1700000000000001000ull);
    ev_osrt(&e1, 3, 5000, 25005000, 0, 0);     /* a 25 ms nanosleep */
    ev_osrt(&e1, 1, 2000, 2100, -1, 9);       /* a read failing with EBADF, recorded later */
    ev_osrt(&e1, 1, 9000, 8000, 0, 0);        /* inverted: counted, left out */
    uint8_t future[16] = {22, 0, 16, 0};      /* a newer kind: skipped by its size */
    rb_put(&e1, future, sizeof future);
    rb_events(&b, 11, &e1);
    ev_osrt(&e2, 2, 3000, 53000, 0, 0);       /* another thread's lock wait */
    rb_events(&b, 12, &e2);
    rb_clock(&b, 30001000, 30001000, 1700000000030001000ull);
    rb_end(&b);
    aip__model m;
    ASSERT_EQ(load_buf(&b, &m), 0);
    const aip__process *p = &m.procs[0];
    ASSERT_EQ(p->osrt.n, 3);
    ASSERT_EQ(p->osrt_bad_records, 1);
    ASSERT_EQ(p->bad_event_chunks, 0);
    size_t n;
    const aip__osrt_call *c = p->osrt.v;
    ASSERT_STREQ(aip__model_str(p, c[0].name, &n), "read"); /* by start */
    ASSERT_TRUE(c[0].failed);
    ASSERT_EQ(c[0].error, 9);
    ASSERT_EQ(c[0].result, -1);
    ASSERT_EQ(p->threads[c[0].thread].tid, 11);
    ASSERT_EQ(c[0].start, 1700000000000002000ll);
    ASSERT_EQ(c[0].end - c[0].start, 100);
    ASSERT_STREQ(aip__model_str(p, c[1].name, &n), "pthread_mutex_lock");
    ASSERT_EQ(p->threads[c[1].thread].tid, 12);
    ASSERT_TRUE(!c[1].failed);
    ASSERT_EQ(c[1].end - c[1].start, 50000);
    ASSERT_STREQ(aip__model_str(p, c[2].name, &n), "nanosleep");
    ASSERT_EQ(c[2].end - c[2].start, 25000000);
    ASSERT_EQ(c[2].error, 0);
    aip__model_free(&m);
    rb_free(&b);
    rb_free(&e1);
    rb_free(&e2);
}

static void test_short_record_spoils_its_chunk(void)
{
    static const char *const names[] = {"read"};
    rb_buf b = {0}, e = {0}, good = {0};
    rb_header(&b, 1, 5);
    rb_strings(&b, 1, names, NULL, 1);
    rb_clock(&b, 0, 0, 1);
    aip__rec_osrt r = {{AIP_REC_OSRT, 0, 32, 1}, 1, 2, 0, 0, 0}; /* size below 40 */
    rb_put(&e, &r, 32);
    rb_events(&b, 5, &e);
    ev_osrt(&good, 1, 3, 4, 0, 0);
    rb_events(&b, 5, &good);
    rb_end(&b);
    aip__model m;
    ASSERT_EQ(load_buf(&b, &m), 0);
    ASSERT_EQ(m.procs[0].bad_event_chunks, 1);
    ASSERT_EQ(m.procs[0].osrt.n, 1); /* the rest of the file loads */
    aip__model_free(&m);
    rb_free(&b);
    rb_free(&e);
    rb_free(&good);
}

/* How many times the trace log of `dir`'s result directory says `what`. */
static int log_count(const char *dir, const char *what)
{
    char cmd[PATH_MAX * 2];
    snprintf(cmd, sizeof cmd, "cat %s/*/logs/aiprof_*.log 2>/dev/null | grep -c '%s'", dir, what);
    FILE *f = popen(cmd, "r");
    int n = -1;
    if (f) {
        if (fscanf(f, "%d", &n) != 1)
            n = -1;
        pclose(f);
    }
    return n;
}

static void test_libaiprof_inside_the_program(void)
{
    char dir[PATH_MAX + 8];
    snprintf(dir, sizeof dir, "%s/s", tmp);
    for (int round = 0; round < 2; round++) {
        aip_config c;
        base_config(&c, dir);
        c.host_sys = AIP_HOST_SYS_OSRT;
        aip_session *s = start_new(&c);
        ASSERT_TRUE(s != NULL);
        aip_range_push(NULL, "work");
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
        aip_range_pop();
        ASSERT_EQ(aip_session_stop(s), AIP_OK);
        aip_session_destroy(s);
    }
    /* said once for the process, not once per trace */
    ASSERT_EQ(log_count(dir, "linked statically into the program"), 1);
    ASSERT_EQ(log_count(dir, "trace stopped"), 2);
}

/* Addresses taken in code (see the file comment); volatile: kept. */
static void *volatile taken[4];

/* p is a PLT entry: an undefined symbol of its object has it as value. */
static int plt_entry(void *p)
{
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    return dladdr1(p, &info, (void **)&sym, RTLD_DL_SYMENT) && sym &&
           sym->st_shndx == SHN_UNDEF && info.dli_saddr == p;
}

static void test_real_functions_are_definitions(void)
{
    taken[0] = (void *)fsync;
    taken[1] = (void *)fdatasync;
    taken[2] = (void *)write;
    taken[3] = (void *)pthread_mutex_lock;
    ASSERT_TRUE(plt_entry(taken[0])); /* the case under test is there */
    aip__osrt_table_init();
    Dl_info self;
    ASSERT_TRUE(dladdr((void *)plt_entry, &self));
    for (int i = 0; i < AIP_OSRT_N; i++) {
        const aip__osrt_func *f = &aip__osrt_funcs[i];
        ASSERT_TRUE(f->real != NULL);
        ASSERT_TRUE(f->real != f->wrapper);
        ASSERT_TRUE(!plt_entry(f->real));
        /* defined elsewhere: the C library (or a sanitizer's interceptor) */
        Dl_info info;
        ASSERT_TRUE(dladdr(f->real, &info) && info.dli_fbase != self.dli_fbase);
    }
    ASSERT_TRUE(aip__osrt_funcs[AIP_OSRT_F_fsync].canonical == taken[0]);
    ASSERT_TRUE(aip__osrt_funcs[AIP_OSRT_F_fdatasync].canonical == taken[1]);
    ASSERT_TRUE(aip__osrt_funcs[AIP_OSRT_F_write].canonical == taken[2]);
    ASSERT_TRUE(aip__osrt_funcs[AIP_OSRT_F_pthread_mutex_lock].canonical == taken[3]);
    ASSERT_TRUE(aip__osrt_funcs[AIP_OSRT_F_read].canonical == NULL); /* address not taken */
}

int main(void)
{
    make_tmpdir(tmp, sizeof tmp, "osrt");
    static const aip_test_case cases[] = {
        TEST_CASE(test_records_into_the_model),
        TEST_CASE(test_short_record_spoils_its_chunk),
        TEST_CASE(test_libaiprof_inside_the_program),
        TEST_CASE(test_real_functions_are_definitions),
    };
    int rc = aip_test_run(cases, sizeof cases / sizeof cases[0]);
    rm_rf(tmp);
    return rc;
}
