/*
 * dyn_watch.c — the shared profiler_config.json watcher (see dyn_watch.h).
 *
 * The segment is another process's word to ours, so it is trusted only as
 * far as it must be (issue 27, defect 3).  It is created exclusively, mode
 * 0600; one that already exists is used only if it belongs to this user,
 * gives no access to group or others and has the size of ours (or is still
 * empty: a peer creating it), and refused with a message naming what is
 * wrong otherwise.  A process maps it only while attaching, under the
 * segment's lock; afterwards it reads and writes it through the descriptor
 * (pread, pwrite), so that a segment truncated meanwhile makes reads come
 * back short, said once in the log, and never raises SIGBUS.
 */
#include "dyn_watch.h"
#include "dyn_config.h"
#include "env.h"
#include "error.h"
#include "hash_table.h"
#include "fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DYN_MAGIC 0x44504941u /* "AIPD" */
#define DYN_VERSION 1u
#define DYN_MAX_CLIENTS 256
#define DYN_STALE_NS (15ull * 1000000000ull) /* heartbeat older than this + poll: dead */

struct aip__dyn_shared {
    uint32_t magic, version;
    uint32_t watcher_pid;
    uint32_t poll_ms;
    uint64_t heartbeat_ns;        /* CLOCK_MONOTONIC, system-wide */
    uint64_t generation;
    uint32_t seq;                 /* seqlock over valid/len/error/payload */
    int32_t valid;
    uint32_t len;
    uint32_t ever_had_client;
    uint32_t clients[DYN_MAX_CLIENTS];
    char error[512];
    char payload[AIP_DYN_CONFIG_MAX_BYTES + 1];
};

#define LOAD(p) __atomic_load_n(p, __ATOMIC_ACQUIRE)
#define STORE(p, v) __atomic_store_n(p, v, __ATOMIC_RELEASE)

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint32_t aip__dyn_default_poll_ms(void)
{
    const char *e = getenv("AIPROF_DP_POLL_MS");
    if (e && *e) {
        char *end;
        errno = 0;
        long v = strtol(e, &end, 10);
        if (!errno && !*end && v >= 10 && v <= 50000)
            return (uint32_t)v;
        /* Read at every look of the config thread: said once a process. */
        static int said;
        if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
            aip__warn("AIPROF_DP_POLL_MS=\"%s\" is not a number of milliseconds from 10 to "
                      "50000; ignored, the default poll period (2000 ms) is used", e);
    }
    return 2000;
}

void aip__dyn_watch_name(const char *config_dir, char *out, size_t cap)
{
    char real[PATH_MAX];
    if (!realpath(config_dir, real))
        snprintf(real, sizeof real, "%s", config_dir);
    /* FNV-1a from a seed that is not FNV's offset basis (a digit short
     * since the first release): kept, so the name stays the one that
     * running daemons and watchers use. */
    uint64_t h = aip__fnv1a_more(1469598103934665603ull, real, strlen(real));
    snprintf(out, cap, "/aiprof_dp_%u_%016llx", (unsigned)getuid(), (unsigned long long)h);
}

/* Alive and not a zombie: a killed daemon whose parent (init in a
 * container may not reap) has not collected it still answers kill(0). */
static int pid_alive(uint32_t pid)
{
    if (!pid || (kill((pid_t)pid, 0) != 0 && errno != EPERM))
        return 0;
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%u/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 1;
    buf[n] = '\0';
    const char *rp = strrchr(buf, ')'); /* the state follows "(comm) " */
    return !(rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X'));
}

static int watcher_alive(const aip__dyn_shared *s)
{
    uint32_t pid = LOAD(&s->watcher_pid);
    if (!pid_alive(pid))
        return 0;
    uint64_t hb = LOAD(&s->heartbeat_ns), now = mono_ns();
    uint64_t limit = DYN_STALE_NS + 3ull * LOAD(&s->poll_ms) * 1000000ull;
    return !(now > hb && now - hb > limit);
}

/* Clear slots of dead processes; returns the number of live clients. */
static int purge_clients(aip__dyn_shared *s)
{
    int live = 0;
    for (int i = 0; i < DYN_MAX_CLIENTS; i++) {
        uint32_t pid = LOAD(&s->clients[i]);
        if (!pid)
            continue;
        if (pid_alive(pid))
            live++;
        else
            __atomic_compare_exchange_n(&s->clients[i], &pid, 0, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE);
    }
    return live;
}

static void publish(aip__dyn_shared *s, const char *text, size_t len, int valid, const char *msg)
{
    /* The seqlock's order without standalone fences (TSan does not model
     * them: GCC warns under -fsanitize=thread): the odd count is an acquire
     * read-modify-write, so no payload store moves above it; the even one a
     * release store, so none moves below it.  The watcher is the only
     * writer. */
    uint32_t seq = __atomic_fetch_add(&s->seq, 1, __ATOMIC_ACQ_REL); /* odd: writing */
    if (len > AIP_DYN_CONFIG_MAX_BYTES)
        len = 0;
    memcpy(s->payload, text, len);
    s->payload[len] = '\0';
    s->len = (uint32_t)len;
    s->valid = valid;
    snprintf(s->error, sizeof s->error, "%s", msg);
    STORE(&s->seq, seq + 2);
    __atomic_add_fetch(&s->generation, 1, __ATOMIC_ACQ_REL);
}

/* ---- the watcher daemon --------------------------------------------- */

static void close_inherited_fds(int keep1, int keep2)
{
    int devnull = open("/dev/null", O_RDWR);
    if (devnull >= 0) {
        dup2(devnull, 0);
        dup2(devnull, 1);
        dup2(devnull, 2);
        if (devnull > 2)
            close(devnull);
    }
    /* Pipes the program holds (a test harness reading its stdout, say)
     * must not stay open in a long-lived daemon. */
    DIR *d = opendir("/proc/self/fd");
    if (d) {
        int dfd = dirfd(d);
        struct dirent *e;
        int fds[1024], n = 0;
        while ((e = readdir(d)) && n < 1024) {
            int fd = atoi(e->d_name);
            if (fd > 2 && fd != keep1 && fd != keep2 && fd != dfd)
                fds[n++] = fd;
        }
        closedir(d);
        for (int i = 0; i < n; i++)
            close(fds[i]);
    } else {
        struct rlimit rl;
        int max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 ? (int)rl.rlim_cur : 1024;
        for (int fd = 3; fd < max; fd++)
            if (fd != keep1 && fd != keep2)
                close(fd);
    }
}

static void watcher_check_file(aip__dyn_shared *s, const char *path, struct timespec *last,
                               off_t *last_size, aip__dyn_log *log, int *dir_missing,
                               const char *dir)
{
    struct stat st;
    if (stat(dir, &st) != 0) {
        if (!*dir_missing)
            aip__dyn_log_write(log, "ERROR", "config directory %s is gone (%s); waiting for it",
                              dir, strerror(errno));
        *dir_missing = 1;
        return;
    }
    if (*dir_missing)
        aip__dyn_log_write(log, "INFO", "config directory %s is back", dir);
    *dir_missing = 0;
    if (lstat(path, &st) != 0)
        return;
    if (st.st_mtim.tv_sec == last->tv_sec && st.st_mtim.tv_nsec == last->tv_nsec &&
        st.st_size == *last_size)
        return;
    *last = st.st_mtim;
    *last_size = st.st_size;
    if (S_ISLNK(st.st_mode)) {
        publish(s, "", 0, 0, "profiler_config.json is a symbolic link; refused");
        aip__dyn_log_write(log, "ERROR", "%s is a symbolic link; edit refused", path);
        return;
    }
    char err[512] = "", warn[512] = "";
    if (!S_ISREG(st.st_mode)) {
        /* Never opened: a FIFO would block the watcher until a writer
         * came, and then the program's exit would go unnoticed. */
        snprintf(err, sizeof err, "profiler_config.json is %s, not a regular file; refused",
                 aip__file_kind(st.st_mode));
        publish(s, "", 0, 0, err);
        aip__dyn_log_write(log, "ERROR", "%s is %s, not a regular file; refused (a regular file "
                           "written there later is read)", path, aip__file_kind(st.st_mode));
        return;
    }
    char *text = NULL;
    size_t len = 0;
    if (aip__read_file_nofollow(path, AIP_DYN_CONFIG_MAX_BYTES, &text, &len) != AIP_OK) {
        snprintf(err, sizeof err, "%s", aip_last_error());
        publish(s, "", 0, 0, err);
        aip__dyn_log_write(log, "ERROR", "Dynamic profiler process load json failed: %s", err);
        return;
    }
    aip__dyn_config cfg;
    aip_status st2 = aip__dyn_config_parse(text, len, &cfg, err, sizeof err, warn, sizeof warn);
    if (!st2)
        aip__dyn_config_free(&cfg);
    publish(s, text, len, st2 == AIP_OK, st2 ? err : warn);
    if (st2)
        aip__dyn_log_write(log, "ERROR", "Dynamic profiler process load json failed: %s", err);
    else
        aip__dyn_log_write(log, "INFO", "Dynamic profiler process load json success%s%s",
                          warn[0] ? "; " : "", warn);
    free(text);
}

static void watcher_main(aip__dyn_shared *s, const char *config_dir)
{
    /* flock() belongs to the open file description, which fork() shares
     * with the process that spawned us: lock through a description of our
     * own, or we would "hold" the spawner's lock. */
    char name[96];
    aip__dyn_watch_name(config_dir, name, sizeof name);
    int fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
    if (fd < 0)
        return;
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    aip__dyn_log log;
    /* "monitor_dp" and "dp_watch.c" are what users see in log/ (file names and
     * the source column): kept as they were when this file was dp_watch.c. */
    aip__dyn_log_open(&log, config_dir, "monitor_dp", "dp_watch.c");
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/profiler_config.json", config_dir);
    struct stat st;
    struct timespec last = {0, 0};
    off_t last_size = -1;
    if (stat(path, &st) == 0) { /* only edits after start count */
        last = st.st_mtim;
        last_size = st.st_size;
    }
    aip__dyn_log_write(&log, "INFO", "Dynamic profiler process started, watching %s", path);
    int dir_missing = 0;
    uint64_t next_poll = 0;
    for (;;) {
        uint64_t now = mono_ns();
        STORE(&s->heartbeat_ns, now);
        if (now >= next_poll) {
            watcher_check_file(s, path, &last, &last_size, &log, &dir_missing, config_dir);
            next_poll = now + (uint64_t)LOAD(&s->poll_ms) * 1000000ull;
        }
        if (purge_clients(s) == 0 && LOAD(&s->ever_had_client)) {
            flock(fd, LOCK_EX);
            if (purge_clients(s) == 0) {
                STORE(&s->watcher_pid, 0);
                shm_unlink(name);
                flock(fd, LOCK_UN);
                aip__dyn_log_write(&log, "INFO", "Dynamic profiler process done");
                return;
            }
            flock(fd, LOCK_UN);
        }
        struct timespec nap = {0, 100 * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
}

/* Fork the daemon; returns its pid (0 on failure).  Called with the
 * segment locked, so no other process can start a second watcher. */
static pid_t spawn_watcher(int fd, aip__dyn_shared *s, const char *config_dir)
{
    int p[2];
    if (pipe(p) != 0)
        return 0;
    pid_t child = fork();
    if (child < 0) {
        close(p[0]);
        close(p[1]);
        return 0;
    }
    if (child == 0) {
        setsid();
        pid_t grand = fork();
        if (grand != 0) {
            _exit(grand > 0 ? 0 : 1);
        }
        pid_t me = getpid();
        ssize_t w = write(p[1], &me, sizeof me);
        (void)w;
        close(p[0]);
        close(p[1]);
        close_inherited_fds(-1, -1); /* the mapping stays valid without the fd */
        watcher_main(s, config_dir);
        _exit(0);
    }
    close(p[1]);
    pid_t watcher = 0;
    ssize_t r;
    do
        r = read(p[0], &watcher, sizeof watcher);
    while (r < 0 && errno == EINTR);
    close(p[0]);
    int status;
    waitpid(child, &status, 0);
    return r == (ssize_t)sizeof watcher ? watcher : 0;
}

/* ---- the process side ----------------------------------------------- */

/* Open the segment, created exclusively when it does not exist yet
 * (*created then).  -1 with errno; ENOENT: removed meanwhile, try again. */
static int open_segment(const char *name, int *created)
{
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    *created = fd >= 0;
    if (fd < 0 && errno == EEXIST)
        fd = shm_open(name, O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0);
    return fd;
}

/* An existing segment is ours to use: this user's, closed to others, of
 * our size (0: its creator has not sized it yet).  Else the reason. */
static aip_status check_segment(const char *name, const struct stat *st)
{
    if (st->st_uid != geteuid())
        return aip__fail(AIP_ERR_IO, "shared memory /dev/shm%s belongs to uid %u, not to this "
                         "user (uid %u): refused (another user may have created it to steer "
                         "or stop this program); dynamic profiling is off", name,
                         (unsigned)st->st_uid, (unsigned)geteuid());
    if (st->st_mode & 077)
        return aip__fail(AIP_ERR_IO, "shared memory /dev/shm%s is open to other users (mode "
                         "%04o, expected 0600): refused; remove it if it is a leftover; "
                         "dynamic profiling is off", name, (unsigned)(st->st_mode & 07777));
    if (st->st_size != 0 && (size_t)st->st_size != sizeof(aip__dyn_shared))
        return aip__fail(AIP_ERR_IO, "shared memory /dev/shm%s has %lld bytes, not the %zu of "
                         "this aiprof's segment (another program's, or another version's): "
                         "refused; dynamic profiling is off", name, (long long)st->st_size,
                         sizeof(aip__dyn_shared));
    return AIP_OK;
}

/* Under the segment's lock, mapped: make it current, start a watcher if
 * none lives, register this process.  AIP_ERR_LIMIT when it is full. */
static aip_status join_segment(aip__dyn_shared *s, int fd, const char *name,
                               const char *config_dir, aip__dyn_log *log, uint64_t *generation)
{
    if (s->magic != DYN_MAGIC || s->version != DYN_VERSION) {
        memset(s, 0, offsetof(aip__dyn_shared, payload));
        s->magic = DYN_MAGIC;
        s->version = DYN_VERSION;
        s->poll_ms = aip__dyn_default_poll_ms();
    }
    if (!watcher_alive(s)) {
        uint32_t old = LOAD(&s->watcher_pid);
        if (old)
            aip__dyn_log_write(log, "WARNING", "stale watcher (pid %u) from a killed run "
                              "found in %s; cleaned up and replaced", old, name);
        purge_clients(s);
        STORE(&s->heartbeat_ns, mono_ns());
        pid_t pid = spawn_watcher(fd, s, config_dir);
        if (!pid)
            return aip__fail(AIP_ERR_IO, "cannot start the config watcher: %s", strerror(errno));
        STORE(&s->watcher_pid, (uint32_t)pid);
        aip__dyn_log_write(log, "INFO", "started config watcher pid %d for %s", (int)pid,
                          config_dir);
    }
    int slot = -1;
    purge_clients(s);
    for (int i = 0; i < DYN_MAX_CLIENTS && slot < 0; i++) {
        uint32_t zero = 0;
        if (__atomic_compare_exchange_n(&s->clients[i], &zero, (uint32_t)getpid(), 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            slot = i;
    }
    STORE(&s->ever_had_client, 1);
    *generation = LOAD(&s->generation); /* only later edits count */
    if (slot < 0)
        return aip__fail(AIP_ERR_LIMIT, "more than %d processes share %s", DYN_MAX_CLIENTS,
                         config_dir);
    return AIP_OK;
}

aip_status aip__dyn_watch_attach(aip__dyn_watch *w, const char *config_dir, aip__dyn_log *log)
{
    memset(w, 0, sizeof *w);
    w->fd = -1;
    w->log = log;
    snprintf(w->config_dir, sizeof w->config_dir, "%s", config_dir);
    aip__dyn_watch_name(config_dir, w->name, sizeof w->name);
    for (int attempt = 0; attempt < 5; attempt++) {
        int created;
        int fd = open_segment(w->name, &created);
        if (fd < 0 && errno == ENOENT)
            continue; /* removed by an exiting watcher between the two opens */
        if (fd < 0)
            return aip__fail(AIP_ERR_IO, "cannot open shared memory %s: %s", w->name,
                             strerror(errno));
        flock(fd, LOCK_EX);
        struct stat st;
        if (fstat(fd, &st) != 0 || st.st_nlink == 0) { /* removed by an exiting watcher */
            flock(fd, LOCK_UN);
            close(fd);
            continue;
        }
        aip_status bad = created ? AIP_OK : check_segment(w->name, &st);
        if (!bad && st.st_size == 0 && ftruncate(fd, sizeof(aip__dyn_shared)) != 0)
            bad = aip__fail(AIP_ERR_IO, "cannot size shared memory %s: %s", w->name,
                            strerror(errno));
        aip__dyn_shared *s = MAP_FAILED;
        if (!bad) {
            s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (s == MAP_FAILED)
                bad = aip__fail(AIP_ERR_IO, "cannot map shared memory %s: %s", w->name,
                                strerror(errno));
        }
        if (!bad)
            bad = join_segment(s, fd, w->name, config_dir, log, &w->seen_generation);
        if (s != MAP_FAILED)
            munmap(s, sizeof *s); /* from here on through fd: see the file comment */
        flock(fd, LOCK_UN);
        if (bad) { /* the caller logs the reason */
            close(fd);
            return bad;
        }
        w->fd = fd;
        w->attached = 1;
        return AIP_OK;
    }
    return aip__fail(AIP_ERR_IO, "shared memory %s kept disappearing", w->name);
}

/* Read `n` bytes of the segment at `off`; -1 when it came back short (the
 * segment was truncated: said once). */
static int seg_read(aip__dyn_watch *w, size_t off, void *out, size_t n)
{
    ssize_t r = pread(w->fd, out, n, (off_t)off);
    if (r == (ssize_t)n)
        return 0;
    if (!__atomic_exchange_n(&w->broken, 1, __ATOMIC_RELAXED))
        aip__dyn_log_write(w->log, "ERROR", "shared memory %s was truncated or cannot be read "
                           "(%s): edits of profiler_config.json no longer reach this process",
                           w->name, r < 0 ? strerror(errno) : "short read");
    return -1;
}

#define OFF(field) offsetof(aip__dyn_shared, field)

void aip__dyn_watch_detach(aip__dyn_watch *w)
{
    if (!w->attached)
        return;
    uint32_t clients[DYN_MAX_CLIENTS], me = (uint32_t)getpid(), zero = 0;
    if (seg_read(w, OFF(clients), clients, sizeof clients) == 0)
        for (int i = 0; i < DYN_MAX_CLIENTS; i++)
            if (clients[i] == me) /* our slot: no one else writes it while we live */
                (void)!pwrite(w->fd, &zero, sizeof zero,
                              (off_t)(OFF(clients) + i * sizeof zero));
    close(w->fd);
    w->attached = 0;
    w->fd = -1;
}

uint64_t aip__dyn_watch_generation(aip__dyn_watch *w)
{
    if (!w->attached)
        return 0;
    /* Two reads that agree: a pread is not one atomic load. */
    uint64_t a, b = w->seen_generation;
    for (int i = 0; i < 8; i++) {
        if (seg_read(w, OFF(generation), &a, sizeof a) ||
            seg_read(w, OFF(generation), &b, sizeof b))
            return w->last_generation;
        if (a == b)
            break;
    }
    if (a == b)
        w->last_generation = a;
    return w->last_generation;
}

int aip__dyn_watch_read(aip__dyn_watch *w, char **text, size_t *len, int *valid, char *message,
                       size_t message_cap)
{
    *text = NULL;
    if (!w->attached)
        return -1;
    /* The seqlock's protocol over pread: the sequence before and after the
     * copy, equal and even. */
    struct {
        uint32_t seq;
        int32_t valid;
        uint32_t len;
    } h;
    _Static_assert(OFF(valid) == OFF(seq) + 4 && OFF(len) == OFF(seq) + 8, "seqlock fields");
    char error[sizeof ((aip__dyn_shared *)0)->error];
    for (int tries = 0; tries < 1000; tries++) {
        uint32_t seq2;
        if (seg_read(w, OFF(seq), &h, sizeof h))
            return -1;
        if (h.seq & 1) {
            struct timespec nap = {0, 100000};
            nanosleep(&nap, NULL);
            continue;
        }
        uint32_t n = h.len <= AIP_DYN_CONFIG_MAX_BYTES ? h.len : 0;
        char *buf = malloc((size_t)n + 1);
        if (!buf)
            return -1;
        if (seg_read(w, OFF(payload), buf, n) || seg_read(w, OFF(error), error, sizeof error) ||
            seg_read(w, OFF(seq), &seq2, sizeof seq2)) {
            free(buf);
            return -1;
        }
        if (seq2 == h.seq) {
            buf[n] = '\0';
            error[sizeof error - 1] = '\0';
            snprintf(message, message_cap, "%s", error);
            *text = buf;
            *len = n;
            *valid = h.valid;
            return 0;
        }
        free(buf);
    }
    return -1;
}

void aip__dyn_watch_set_poll_ms(aip__dyn_watch *w, uint32_t ms)
{
    if (w->attached)
        (void)!pwrite(w->fd, &ms, sizeof ms, (off_t)OFF(poll_ms));
}
