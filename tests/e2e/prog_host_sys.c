/*
 * prog_host_sys.c — a program whose host system figures are known, for
 * tests/e2e/test_host_sys.sh: with host_sys CPU, MEM, DISK, NETWORK and
 * sys_io on, it sleeps, burns BURN_MS of CPU on its main thread (measured
 * with CLOCK_THREAD_CPUTIME_ID), allocates and touches MEM_MB of memory
 * (kept until the end), writes IO_MB to a file with write(2) and reads it
 * back with read(2), and sleeps again.  It prints the result directory,
 * then one JSON line of what it did, so that the test compares the
 * profile with what happened rather than with what was asked.
 *
 * With NETDEV_NEXT=FILE in the environment (a test pointing the sampler
 * at a fake /proc, AIPROF_HOST_PROC_ROOT), it renames FILE over
 * $AIPROF_HOST_PROC_ROOT/net/dev after the first sleep: an interface
 * disappears while sampling.
 *
 *   prog_host_sys DIR [BURN_MS MEM_MB IO_MB]
 */
#include "aiprof.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&t, &t))
        ;
}

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 5) {
        fprintf(stderr, "usage: prog_host_sys DIR [BURN_MS MEM_MB IO_MB]\n");
        return 2;
    }
    long burn_ms = argc == 5 ? atol(argv[2]) : 400, mem_mb = argc == 5 ? atol(argv[3]) : 96,
         io_mb = argc == 5 ? atol(argv[4]) : 8;
    aip_config cfg;
    aip_config_init(&cfg);
    cfg.dir_name = argv[1];
    cfg.worker_name = "hostsys";
    cfg.host_sys = AIP_HOST_SYS_CPU | AIP_HOST_SYS_MEM | AIP_HOST_SYS_DISK |
                   AIP_HOST_SYS_NETWORK;
    cfg.sys_io = 1;
    aip_session *s;
    if (aip_session_create(&cfg, &s) || aip_session_start(s)) {
        fprintf(stderr, "prog_host_sys: %s\n", aip_last_error());
        return 1;
    }
    sleep_ms(150);
    const char *next = getenv("NETDEV_NEXT"), *root = getenv("AIPROF_HOST_PROC_ROOT");
    if (next && root) {
        char to[4096];
        snprintf(to, sizeof to, "%s/net/dev", root);
        if (rename(next, to))
            perror("prog_host_sys: rename");
    }

    /* CPU: BURN_MS of this thread's own CPU time. */
    uint64_t t0 = ns(CLOCK_THREAD_CPUTIME_ID), w0 = ns(CLOCK_REALTIME);
    volatile uint64_t x = 1;
    while (ns(CLOCK_THREAD_CPUTIME_ID) - t0 < (uint64_t)burn_ms * 1000000ull)
        for (int i = 0; i < 100000; i++)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
    uint64_t burned = ns(CLOCK_THREAD_CPUTIME_ID) - t0, w1 = ns(CLOCK_REALTIME);

    /* Memory: MEM_MB, every page touched, kept to the end. */
    size_t mem = (size_t)mem_mb << 20;
    char *block = malloc(mem);
    if (!block)
        return 1;
    memset(block, 0x5a, mem);
    uint64_t w2 = ns(CLOCK_REALTIME);
    sleep_ms(100);

    /* Disk: IO_MB written with write(2), then read back with read(2). */
    char path[4096];
    snprintf(path, sizeof path, "%s/io_test.bin", argv[1]);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return 1;
    static char chunk[1 << 16];
    memset(chunk, 7, sizeof chunk);
    size_t total = (size_t)io_mb << 20, done = 0;
    long wcalls = 0, rcalls = 0;
    while (done < total) {
        ssize_t k = write(fd, chunk, sizeof chunk);
        if (k <= 0)
            return 1;
        done += (size_t)k;
        wcalls++;
    }
    fsync(fd);
    lseek(fd, 0, SEEK_SET);
    size_t got = 0;
    for (;;) {
        ssize_t k = read(fd, chunk, sizeof chunk);
        rcalls++;
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    close(fd);
    unlink(path);
    sleep_ms(150);
    aip_session_stop(s);
    printf("%s\n", aip_session_result_dir(s));
    printf("{\"burn_ns\":%llu,\"burn_start\":%llu,\"burn_end\":%llu,\"mem_bytes\":%zu,"
           "\"mem_touched\":%llu,\"written\":%zu,\"read\":%zu,\"wcalls\":%ld,\"rcalls\":%ld,"
           "\"x\":%llu}\n",
           (unsigned long long)burned, (unsigned long long)w0, (unsigned long long)w1, mem,
           (unsigned long long)w2, done, got, wcalls, rcalls, (unsigned long long)(x & 1));
    aip_session_destroy(s);
    free(block);
    return 0;
}
