/*
 * osrt_every_calls.c — one call of every function the OS runtime collector
 * intercepts (src/collect/osrt/osrt_int.h's list and the hand-written
 * wrappers but dlopen, which is wrapped and not recorded), each made
 * directly, through the caller's own GOT.  Built twice for
 * tests/e2e/test_osrt_every.sh: into prog_osrt_every (a non-PIE program
 * that also takes every function's address, so that its PLT entries are
 * the functions' canonical addresses: issue 26 §1's case) and into
 * libosrt_every.so, which that program dlopens while recording.
 *
 * osrt_every_calls(path) returns the number of calls that did not do what
 * they should (0 when all did); `path` names a scratch file it creates and
 * removes.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

ssize_t __read_chk(int fd, void *buf, size_t n, size_t cap);
__attribute__((visibility("default"))) int osrt_every_calls(const char *path);

static int bad;
#define EXPECT(cond)                                                                           \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "osrt_every_calls:%d: %s\n", __LINE__, #cond);                     \
            bad++;                                                                             \
        }                                                                                      \
    } while (0)

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int flag;
static sem_t held;

/* Takes `mu` once `main` waits on `cv`, flags and signals. */
static void *signaller(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&mu);
    flag = 1;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
    return NULL;
}

/* Holds `mu` for 5 ms, so that the caller's lock has to wait. */
static void *holder(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&mu);
    sem_post(&held);
    struct timespec ts = {0, 5000000};
    while (nanosleep(&ts, &ts))
        ;
    pthread_mutex_unlock(&mu);
    return NULL;
}

static void file_calls(const char *path)
{
    char buf[64] = "osrt";
    int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
    EXPECT(fd >= 0);
    EXPECT(write(fd, buf, sizeof buf) == (ssize_t)sizeof buf);
    EXPECT(pwrite(fd, buf, 8, 0) == 8);
    EXPECT(pwrite64(fd, buf, 8, 8) == 8);
    EXPECT(pread(fd, buf, 8, 0) == 8);
    EXPECT(pread64(fd, buf, 8, 8) == 8);
    struct iovec v = {buf, 8};
    EXPECT(writev(fd, &v, 1) == 8);
    EXPECT(lseek(fd, 0, SEEK_SET) == 0);
    EXPECT(readv(fd, &v, 1) == 8);
    EXPECT(read(fd, buf, 8) == 8);
    EXPECT(__read_chk(fd, buf, 8, sizeof buf) == 8);
    EXPECT(fsync(fd) == 0);
    EXPECT(fdatasync(fd) == 0);
    void *m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
    EXPECT(m != MAP_FAILED);
    EXPECT(m == MAP_FAILED || munmap(m, 4096) == 0);
    m = mmap64(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
    EXPECT(m != MAP_FAILED);
    EXPECT(m == MAP_FAILED || munmap(m, 4096) == 0);
    EXPECT(close(fd) == 0);
    fd = open64(path, O_RDONLY);
    EXPECT(fd >= 0 && close(fd) == 0);
    fd = openat(AT_FDCWD, path, O_RDONLY);
    EXPECT(fd >= 0 && close(fd) == 0);
    fd = openat64(AT_FDCWD, path, O_RDONLY);
    EXPECT(fd >= 0 && close(fd) == 0);
    unlink(path);
}

static void wait_calls(void)
{
    int p[2];
    EXPECT(pipe(p) == 0);
    EXPECT(write(p[1], "x", 1) == 1);
    struct pollfd pf = {p[0], POLLIN, 0};
    EXPECT(poll(&pf, 1, 0) == 1);
    struct timespec zero = {0, 0};
    EXPECT(ppoll(&pf, 1, &zero, NULL) == 1);
    fd_set r;
    FD_ZERO(&r);
    FD_SET(p[0], &r);
    struct timeval tv = {0, 0};
    EXPECT(select(p[0] + 1, &r, NULL, NULL, &tv) == 1);
    FD_SET(p[0], &r);
    EXPECT(pselect(p[0] + 1, &r, NULL, NULL, &zero, NULL) == 1);
    int e = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN}, out;
    EXPECT(epoll_ctl(e, EPOLL_CTL_ADD, p[0], &ev) == 0);
    EXPECT(epoll_wait(e, &out, 1, 0) == 1);
    EXPECT(epoll_pwait(e, &out, 1, 0, NULL) == 1);
    close(e);
    close(p[0]);
    close(p[1]);
    struct timespec ns = {0, 1000};
    EXPECT(nanosleep(&ns, NULL) == 0);
    EXPECT(clock_nanosleep(CLOCK_MONOTONIC, 0, &ns, NULL) == 0);
    EXPECT(usleep(1) == 0);
    EXPECT(sleep(0) == 0);
}

static void thread_calls(void)
{
    pthread_t th;
    pthread_mutex_lock(&mu);
    flag = 0;
    EXPECT(pthread_create(&th, NULL, signaller, NULL) == 0);
    while (!flag) /* the signaller needs `mu`, released by the wait */
        EXPECT(pthread_cond_wait(&cv, &mu) == 0);
    pthread_mutex_unlock(&mu);
    EXPECT(pthread_join(th, NULL) == 0);
    struct timespec soon;
    clock_gettime(CLOCK_REALTIME, &soon);
    pthread_mutex_lock(&mu);
    EXPECT(pthread_cond_timedwait(&cv, &mu, &soon) == ETIMEDOUT);
    pthread_mutex_unlock(&mu);
    EXPECT(sem_init(&held, 0, 0) == 0);
    EXPECT(pthread_create(&th, NULL, holder, NULL) == 0);
    EXPECT(sem_wait(&held) == 0);
    EXPECT(pthread_mutex_lock(&mu) == 0); /* held: it waits, and is recorded */
    pthread_mutex_unlock(&mu);
    pthread_join(th, NULL);
    sem_post(&held);
    EXPECT(sem_timedwait(&held, &soon) == 0);
    sem_destroy(&held);
}

static void socket_calls(void)
{
    int sv[2];
    char buf[8];
    EXPECT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    EXPECT(send(sv[0], "a", 1, 0) == 1);
    EXPECT(recv(sv[1], buf, 1, 0) == 1);
    EXPECT(sendto(sv[0], "b", 1, 0, NULL, 0) == 1);
    EXPECT(recvfrom(sv[1], buf, 1, 0, NULL, NULL) == 1);
    struct iovec v = {buf, 1};
    struct msghdr mh = {.msg_iov = &v, .msg_iovlen = 1};
    EXPECT(sendmsg(sv[0], &mh, 0) == 1);
    EXPECT(recvmsg(sv[1], &mh, 0) == 1);
    close(sv[0]);
    close(sv[1]);
    /* an abstract-namespace listener: nothing left on disk */
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    int n = snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "aiprof_osrt_every_%d", (int)getpid());
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
    int l = socket(AF_UNIX, SOCK_STREAM, 0);
    EXPECT(bind(l, (struct sockaddr *)&a, len) == 0 && listen(l, 4) == 0);
    for (int i = 0; i < 2; i++) {
        int c = socket(AF_UNIX, SOCK_STREAM, 0);
        EXPECT(connect(c, (struct sockaddr *)&a, len) == 0);
        int s = i ? accept4(l, NULL, NULL, SOCK_CLOEXEC) : accept(l, NULL, NULL);
        EXPECT(s >= 0);
        close(s);
        close(c);
    }
    close(l);
}

int osrt_every_calls(const char *path)
{
    bad = 0;
    file_calls(path);
    wait_calls();
    thread_calls();
    socket_calls();
    return bad;
}
