/*
 * prog_osrt_load.c — OSRT under load, for tests/e2e/test_osrt_load.sh: 8
 * threads each write N times to /dev/null, recorded with host_sys OSRT at
 * threshold 0 into a 1 MiB buffer cap, so that most calls are dropped.
 * Prints, as JSON, the result directory, the write() calls made and the
 * events the session says it dropped: recorded + dropped must be the calls.
 *
 * Usage: prog_osrt_load DIR N
 */
#include "aiprof.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define THREADS 8

static int devnull;
static long n_calls;
static _Atomic long written;

static void *writer(void *arg)
{
    (void)arg;
    for (long i = 0; i < n_calls; i++)
        if (write(devnull, "w", 1) == 1)
            written++;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: prog_osrt_load DIR N\n");
        return 2;
    }
    n_calls = atol(argv[2]);
    devnull = open("/dev/null", O_WRONLY);
    aip_config c;
    aip_config_init(&c);
    c.dir_name = argv[1];
    c.host_sys = AIP_HOST_SYS_OSRT;
    c.buffer_cap_bytes = 1u << 20;
    aip_session *s = NULL;
    if (devnull < 0 || aip_session_create(&c, &s) || aip_session_start(s)) {
        fprintf(stderr, "prog_osrt_load: %s\n", aip_last_error());
        return 1;
    }
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&th[i], NULL, writer, NULL);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    if (aip_session_stop(s)) {
        fprintf(stderr, "prog_osrt_load: %s\n", aip_last_error());
        return 1;
    }
    printf("{\"dir\": \"%s\", \"writes\": %ld, \"dropped\": %llu}\n", aip_session_result_dir(s),
           (long)written, (unsigned long long)aip_session_dropped_events(s));
    aip_session_destroy(s);
    return 0;
}
