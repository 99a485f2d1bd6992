/*
 * prog_osrt.c — a program whose blocking calls are known, for the OS
 * runtime test (tests/e2e/test_osrt.sh): a 20 ms nanosleep, a file read,
 * a mutex held 50 ms by one thread while another waits for it, and 4
 * threads making N preads each; it checks on the way that errno is what
 * the real calls left (a failing read keeps EBADF, a successful call keeps
 * the caller's errno).  It prints, as JSON on stdout, what it measured
 * itself (CLOCK_MONOTONIC around each call) and its thread ids, for the
 * checker to compare with the recorded calls.
 *
 * Usage: prog_osrt DIR N   (profiles itself with host_sys OSRT into DIR)
 *        prog_osrt - N     (no session: under `aiprof run --host-sys osrt`)
 */
#include "aiprof.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define THREADS 4

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t ready_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready_cv = PTHREAD_COND_INITIALIZER;
static int held;
static int64_t unlock_ns;
static char file_path[256];
static long n_calls;
static int failures;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static long gettid_(void) { return (long)syscall(SYS_gettid); }

static void fail(const char *what)
{
    fprintf(stderr, "prog_osrt: %s\n", what);
    failures++;
}

static void *holder(void *arg)
{
    long *tid = arg;
    *tid = gettid_();
    pthread_mutex_lock(&mu);
    pthread_mutex_lock(&ready_mu);
    held = 1;
    pthread_cond_signal(&ready_cv);
    pthread_mutex_unlock(&ready_mu);
    struct timespec ts = {0, 50 * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
    unlock_ns = now_ns();
    pthread_mutex_unlock(&mu);
    return NULL;
}

static void *reader(void *arg)
{
    long *tid = arg;
    *tid = gettid_();
    int fd = open(file_path, O_RDONLY);
    if (fd < 0) {
        fail("cannot open the test file");
        return NULL;
    }
    char buf[64];
    for (long i = 0; i < n_calls; i++)
        if (pread(fd, buf, sizeof buf, 0) != (ssize_t)sizeof buf)
            fail("pread came back short");
    close(fd);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: prog_osrt DIR|- N\n");
        return 2;
    }
    n_calls = atol(argv[2]);
    aip_session *s = NULL;
    if (strcmp(argv[1], "-")) {
        aip_config c;
        aip_config_init(&c);
        c.dir_name = argv[1];
        c.host_sys = AIP_HOST_SYS_OSRT;
        if (aip_session_create(&c, &s) != AIP_OK || aip_session_start(s) != AIP_OK) {
            fprintf(stderr, "prog_osrt: %s\n", aip_last_error());
            return 1;
        }
    }
    snprintf(file_path, sizeof file_path, "/tmp/prog_osrt_%d.dat", (int)getpid());
    int fd = open(file_path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
    static char block[1 << 16];
    memset(block, 'x', sizeof block);
    if (fd < 0 || write(fd, block, sizeof block) != (ssize_t)sizeof block || close(fd))
        fail("cannot write the test file");

    /* 1. a 20 ms nanosleep */
    struct timespec ts = {0, 20 * 1000000L};
    int64_t t0 = now_ns();
    if (nanosleep(&ts, NULL))
        fail("nanosleep was interrupted");
    int64_t sleep_outer = now_ns() - t0;

    /* 2. a file read */
    fd = open(file_path, O_RDONLY);
    char buf[4096];
    if (fd < 0 || read(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
        fail("cannot read the test file");
    close(fd);

    /* 3. errno: a failing read keeps its errno, a successful call keeps ours */
    errno = 0;
    if (read(-1, buf, 1) != -1 || errno != EBADF)
        fail("read(-1) did not fail with EBADF as seen by the program");
    errno = 4242;
    fd = open(file_path, O_RDONLY);
    if (fd < 0 || errno != 4242)
        fail("a successful open changed errno");
    close(fd);
    errno = 4343;
    if (pthread_mutex_lock(&ready_mu) || errno != 4343)
        fail("pthread_mutex_lock changed errno");
    pthread_mutex_unlock(&ready_mu);

    /* 4. a mutex held 50 ms by another thread */
    pthread_t th;
    long holder_tid = 0;
    pthread_create(&th, NULL, holder, &holder_tid);
    pthread_mutex_lock(&ready_mu);
    while (!held)
        pthread_cond_wait(&ready_cv, &ready_mu);
    pthread_mutex_unlock(&ready_mu);
    int64_t l0 = now_ns();
    pthread_mutex_lock(&mu);
    int64_t l1 = now_ns();
    pthread_mutex_unlock(&mu);
    pthread_join(th, NULL);

    /* 5. 4 threads, N preads each */
    pthread_t rt[THREADS];
    long rtid[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&rt[i], NULL, reader, &rtid[i]);
    for (int i = 0; i < THREADS; i++)
        pthread_join(rt[i], NULL);
    unlink(file_path);

    if (s) {
        if (aip_session_stop(s) != AIP_OK)
            fail(aip_last_error());
    }
    printf("{\"dir\": \"%s\", \"pid\": %d, \"main_tid\": %ld, \"sleep_outer_ns\": %lld, "
           "\"lock_outer_ns\": %lld, \"lock_min_ns\": %lld, \"holder_tid\": %ld, "
           "\"calls\": %ld, \"readers\": [%ld, %ld, %ld, %ld]}\n",
           s ? aip_session_result_dir(s) : "", (int)getpid(), gettid_(), (long long)sleep_outer,
           (long long)(l1 - l0), (long long)(unlock_ns - l0), holder_tid, n_calls, rtid[0],
           rtid[1], rtid[2], rtid[3]);
    aip_session_destroy(s);
    return failures ? 1 : 0;
}
