/*
 * prog_sigwait.c — a program that takes SIGTERM the synchronous way, for
 * tests/e2e/test_run_signals.sh: it blocks SIGTERM (and SIGINT, SIGHUP,
 * SIGUSR1) in its only thread, sends SIGTERM to its own process
 * (process-directed, as kill(1) or a job scheduler does) and takes it with
 * sigwait or, with the argument "signalfd", by reading a signalfd.  It
 * says so and exits 0.  A thread of aiprof's that left SIGTERM unblocked
 * would be where the kernel delivers it, and the default action would end
 * the program instead (issue 27, defect 4).  It does not use aiprof.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int use_fd = argc > 1 && !strcmp(argv[1], "signalfd");
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGUSR1);
    if (sigprocmask(SIG_BLOCK, &set, NULL)) {
        perror("sigprocmask");
        return 2;
    }
    /* some work first, so that aiprof's threads run */
    struct timespec ts = {0, 20000000};
    nanosleep(&ts, NULL);
    int fd = use_fd ? signalfd(-1, &set, 0) : -1;
    if (use_fd && fd < 0) {
        perror("signalfd");
        return 2;
    }
    if (kill(getpid(), SIGTERM)) {
        perror("kill");
        return 2;
    }
    int sig = 0;
    if (use_fd) {
        struct signalfd_siginfo si;
        if (read(fd, &si, sizeof si) != (ssize_t)sizeof si) {
            perror("read signalfd");
            return 2;
        }
        sig = (int)si.ssi_signo;
    } else if (sigwait(&set, &sig)) {
        perror("sigwait");
        return 2;
    }
    printf("prog_sigwait: took signal %d (%s)\n", sig, sig == SIGTERM ? "SIGTERM" : "other");
    return sig == SIGTERM ? 0 : 1;
}
