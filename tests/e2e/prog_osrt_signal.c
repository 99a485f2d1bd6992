/*
 * prog_osrt_signal.c — a program whose SIGALRM handler writes, recorded
 * with host_sys OSRT at threshold 0, for tests/e2e/test_osrt_signal.sh
 * (issue 27, defect 5: the wrapper re-entered the recorder inside the
 * handler, and blocked on the buffer pool's lock the interrupted code held,
 * or wrote its record over one the interrupted code was writing).
 *
 * An interval timer asks for SIGALRM every 50 us (ITIMER_REAL; the
 * kernel may space them more) while the main thread writes to /dev/null
 * and pushes and pops annotations (CPU records, several buffers' worth),
 * until the handler has written HANDLER_CALLS times.  It prints, as JSON,
 * the result directory, how many write() calls it made (main and
 * handler) and the events the session says it dropped: every call is
 * either recorded or counted as dropped.
 *
 * Usage: prog_osrt_signal DIR
 */
#include "aiprof.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#define HANDLER_CALLS 1000

static int devnull = -1;
static volatile sig_atomic_t handler_writes;

static void on_alarm(int sig)
{
    (void)sig;
    if (write(devnull, "h", 1) == 1)
        handler_writes++;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: prog_osrt_signal DIR\n");
        return 2;
    }
    devnull = open("/dev/null", O_WRONLY);
    aip_config c;
    aip_config_init(&c);
    c.dir_name = argv[1];
    c.host_sys = AIP_HOST_SYS_OSRT;
    aip_session *s = NULL;
    if (devnull < 0 || aip_session_create(&c, &s) != AIP_OK || aip_session_start(s) != AIP_OK) {
        fprintf(stderr, "prog_osrt_signal: %s\n", aip_last_error());
        return 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 50}, {0, 50}};
    setitimer(ITIMER_REAL, &it, NULL);
    aip_string_id work = aip_intern("work");
    long main_writes = 0;
    while (handler_writes < HANDLER_CALLS) {
        for (int i = 0; i < 4; i++) {
            aip_annotation_push_id(work);
            aip_annotation_pop();
        }
        if (write(devnull, "m", 1) == 1)
            main_writes++;
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    long handler = handler_writes;
    if (aip_session_stop(s) != AIP_OK) {
        fprintf(stderr, "prog_osrt_signal: %s\n", aip_last_error());
        return 1;
    }
    printf("{\"dir\": \"%s\", \"writes\": %ld, \"handler_writes\": %ld, \"dropped\": %llu}\n",
           aip_session_result_dir(s), main_writes + handler, handler,
           (unsigned long long)aip_session_dropped_events(s));
    aip_session_destroy(s);
    return 0;
}
