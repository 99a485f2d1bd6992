/*
 * analyse_dirs_procs.c — aip_analyse_dirs() with each directory in its own
 * forked process (options.processes), as `aiprof analyse` and the cluster
 * pass run them: like the seed's ProcessPoolExecutor with fork, a crash or
 * a memory blow-up in one directory cannot take the others or the caller
 * down, and each child's memory is returned when it ends.
 *
 * A child analyses its directory and writes its outcome (status, message:
 * fewer than PIPE_BUF bytes, so one write that never blocks) into a pipe;
 * the calling process polls the pipes of the children running, and a
 * pipe's end (EOF) means its child is done: it is reaped then, and one
 * killed by a signal is AIP_ERR_CRASHED.  When no pipe or process can be
 * had, the directory is analysed here instead.
 */
#include "analyse_dirs.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct child {
    pid_t pid;
    int fd;                   /* the pipe's read end */
    size_t index;             /* its directory */
    size_t got;
    char buf[sizeof(int32_t) + sizeof(((aip_dir_result *)0)->message)];
} child;

static void child_main(const aip__dirs_run *r, size_t i, int fd)
{
    aip_dir_result res;
    aip__dirs_analyse_one(r, i, &res);
    char out[sizeof(int32_t) + sizeof res.message];
    int32_t st = (int32_t)res.status;
    memcpy(out, &st, sizeof st);
    size_t len = strnlen(res.message, sizeof res.message - 1);
    memcpy(out + sizeof st, res.message, len);
    ssize_t w = write(fd, out, sizeof st + len);
    _exit(w == (ssize_t)(sizeof st + len) ? 0 : 1);
}

/* Fork a child for dirs[i] into *c; 0, or -1 when none could be had. */
static int spawn(const aip__dirs_run *r, size_t i, child *c)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC))
        return -1;
    fflush(NULL); /* nothing buffered is written twice */
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        child_main(r, i, p[1]);
    }
    close(p[1]); /* so that the read end sees EOF when the child ends */
    if (pid < 0) {
        close(p[0]);
        return -1;
    }
    *c = (child){.pid = pid, .fd = p[0], .index = i};
    return 0;
}

/* The child's pipe has ended: reap it, fill its result. */
static void reap(aip__dirs_run *r, child *c)
{
    close(c->fd);
    int status = 0;
    while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
        ;
    aip_dir_result *res = &r->results[c->index];
    memset(res, 0, sizeof *res);
    int32_t st;
    if (WIFSIGNALED(status)) {
        res->status = AIP_ERR_CRASHED;
        res->signal = WTERMSIG(status);
        snprintf(res->message, sizeof res->message, "the analysis crashed (signal %d)",
                 res->signal);
    } else if (c->got >= sizeof st && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        memcpy(&st, c->buf, sizeof st);
        res->status = (aip_status)st;
        size_t len = c->got - sizeof st;
        memcpy(res->message, c->buf + sizeof st, len);
        res->message[len] = 0;
    } else {
        res->status = AIP_ERR_CRASHED;
        snprintf(res->message, sizeof res->message, "the analysis process exited with status %d "
                 "without a result", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
}

/* Read what child c has sent; 1 when its pipe has ended. */
static int drain(child *c)
{
    char tmp[256];
    ssize_t k = read(c->fd, tmp, sizeof tmp);
    if (k < 0)
        return errno != EINTR && errno != EAGAIN;
    if (k == 0)
        return 1;
    size_t room = sizeof c->buf - c->got;
    size_t take = (size_t)k < room ? (size_t)k : room;
    memcpy(c->buf + c->got, tmp, take);
    c->got += take;
    return 0;
}

/* Wait for news from the children; @return non-zero once cancelled. */
static int wait_children(aip__dirs_run *r, child *kids, struct pollfd *pfd, size_t *running)
{
    for (size_t k = 0; k < *running; k++)
        pfd[k] = (struct pollfd){.fd = kids[k].fd, .events = POLLIN};
    int got = poll(pfd, (nfds_t)*running, r->o.progress ? AIP__DIRS_TICK_MS : -1);
    if (got <= 0) /* the tick, or a signal (Ctrl-C in a Python caller) */
        return got == 0 || errno == EINTR ? aip__dirs_waiting(r) : r->cancelled;
    for (size_t k = *running; k-- > 0;) {
        if (!pfd[k].revents || !drain(&kids[k]))
            continue;
        reap(r, &kids[k]);
        size_t i = kids[k].index;
        kids[k] = kids[--*running];
        aip__dirs_finished(r, i);
    }
    return r->cancelled;
}

void aip__dirs_by_processes(aip__dirs_run *r)
{
    child *kids = calloc(r->workers, sizeof *kids);
    struct pollfd *pfd = calloc(r->workers, sizeof *pfd);
    if (!kids || !pfd) { /* no memory to track children: one at a time, here */
        free(kids);
        free(pfd);
        aip__dirs_in_line(r, 0);
        return;
    }
    size_t next = 0, running = 0;
    while (next < r->n || running) {
        while (!r->cancelled && next < r->n && running < r->workers) {
            if (aip__dirs_started(r, next))
                break;
            if (spawn(r, next, &kids[running]) == 0) {
                running++;
            } else { /* no process to spare: do it here */
                aip__dirs_analyse_one(r, next, &r->results[next]);
                aip__dirs_finished(r, next);
            }
            next++;
        }
        if (r->cancelled && !running)
            break;
        if (running)
            wait_children(r, kids, pfd, &running);
    }
    free(kids);
    free(pfd);
}
