/*
 * host_sampler.c — the host system sampler thread (host_sampler.h,
 * docs/HOST_SYS.md).
 *
 * One thread per process, alive while a trace with host_sys CPU / MEM /
 * DISK / NETWORK or sys_io records.  Every period it reads the process's
 * own counters (/proc/self/stat, task/<tid>/stat, statm, io) and the
 * system's interfaces (/proc/net/dev, /sys/class/net/<if>/speed, and for
 * sys_io /sys/class/infiniband's port counters) and records them as
 * HOST_SAMPLE records; rates and percentages are the analyser's work, so
 * a sample costs a few pread()s and no arithmetic worth the name.
 *
 * Files that are read every period stay open (pread at offset 0 makes the
 * kernel format them anew), so a period costs no open() but the per-thread
 * ones.  A file that cannot be read (a container without /proc/self/io, a
 * kernel without a field) is logged once and left out of later samples;
 * an interface that disappears is logged once; a period the thread missed
 * (the machine was too busy to wake it) is counted, and the counts go into
 * the STATUS record at the end.  Nothing here can stop the program or the
 * rest of the profile.
 */
#include "thread.h"
#include "host_sampler.h"
#include "clock.h"
#include "raw_format.h"
#include "recorder.h"
#include "session_log.h"
#include "error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FILE_MAX 65536 /* /proc/net/dev of a machine with many interfaces */

typedef struct iface {
    char name[32];
    uint32_t name_id;          /* interned */
    uint32_t speed_mbps;       /* UINT32_MAX: unknown */
    int seen;                  /* in the last /proc/net/dev read */
} iface;

typedef struct sampler {
    pthread_t thread;
    int running;               /* a thread exists (joined at stop) */
    int stop;                  /* under lock */
    pthread_mutex_t lock;
    pthread_cond_t wake;
    unsigned host_sys;
    int sys_io;
    uint64_t period_ns;
    char proc[256], sys[256];  /* roots: "/proc", "/sys" unless a test moved them */
    int real_proc;             /* proc is the real /proc: process clocks may be used */
    int fd_stat, fd_statm, fd_io, fd_netdev;
    uint64_t clk_tck_ns;       /* ns per clock tick */
    uint64_t mem_total;
    int delayacct;
    unsigned bad;              /* AIP_HOSTSRC_* */
    unsigned logged;           /* AIP_HOSTSRC_* said in the log */
    iface ifaces[AIP_HOST_MAX_IFACES];
    size_t n_ifaces;
    uint64_t samples, missed, max_lag_ns;
    uint64_t emitted;          /* records made: recorded, or dropped and counted */
    uint64_t stall_ns;         /* tests only: the third sample takes this long */
    char *buf;                 /* FILE_MAX bytes */
} sampler;

static sampler S = {.fd_stat = -1, .fd_statm = -1, .fd_io = -1, .fd_netdev = -1};

/* ---- reading -------------------------------------------------------------- */

/* A path from a format; a path too long for `cap` comes out cut, and then
 * names no file: its read fails like any other. */
static void pathf(char *out, size_t cap, const char *fmt, ...) AIP_PRINTF(3, 4);
static void pathf(char *out, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, cap, fmt, ap);
    va_end(ap);
}

static void log_once(unsigned bit, const char *fmt, const char *what)
{
    if (S.logged & bit)
        return;
    S.logged |= bit;
    aip__log("WARN", fmt, what);
}

/* The contents of an open file (re-read from offset 0); -1 on failure. */
static ssize_t reread(int fd)
{
    if (fd < 0)
        return -1;
    ssize_t n = pread(fd, S.buf, FILE_MAX - 1, 0);
    if (n >= 0)
        S.buf[n] = 0;
    return n;
}

static ssize_t read_path(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, cap - 1);
    close(fd);
    if (n >= 0)
        buf[n] = 0;
    return n;
}

static int open_src(const char *rel, unsigned bit)
{
    char path[512];
    pathf(path, sizeof path, "%s/%s", S.proc, rel);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || pread(fd, S.buf, FILE_MAX - 1, 0) < 0) {
        if (fd >= 0)
            close(fd);
        S.bad |= bit;
        log_once(bit, "host_sys: %s cannot be read; its figures are left out of this "
                      "profile", path);
        return -1;
    }
    return fd;
}

static void emit(aip__tstate *t, uint8_t what, uint8_t flags, uint32_t name, uint32_t index,
                 const uint64_t *v, uint64_t ts)
{
    /* atomic: aip__host_sample_emit() lets other threads emit too */
    __atomic_fetch_add(&S.emitted, 1, __ATOMIC_RELAXED);
    aip__rec_host_sample *r = aip__reserve(t, sizeof *r);
    if (!r)
        return; /* counted as dropped by the recorder */
    memset(r, 0, sizeof *r);
    aip__rec_set_header(&r->h, AIP_REC_HOST_SAMPLE, flags, sizeof *r, name);
    r->ts = ts;
    r->what = what;
    r->index = index;
    memcpy(r->v, v, sizeof r->v);
    aip__commit(t, sizeof *r);
}

void aip__host_sample_emit(uint8_t what, uint8_t flags, uint32_t name, uint32_t index,
                           const uint64_t *v, uint64_t ts)
{
    aip__tstate *t = aip__current();
    if (t)
        emit(t, what, flags, name, index, v, ts);
}

static void sample_threads(aip__tstate *t, uint64_t ts)
{
    char path[512], line[1024];
    pathf(path, sizeof path, "%s/self/task", S.proc);
    DIR *d = opendir(path);
    if (!d) {
        S.bad |= AIP_HOSTSRC_TASK;
        log_once(AIP_HOSTSRC_TASK, "host_sys: %s cannot be read; no per-thread CPU figures",
                 path);
        return;
    }
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        if (n++ >= AIP_HOST_MAX_THREADS) {
            S.bad |= AIP_HOSTSRC_THREADS_CUT;
            break;
        }
        pathf(path, sizeof path, "%s/self/task/%s/stat", S.proc, e->d_name);
        ssize_t k = read_path(path, line, sizeof line);
        aip__proc_stat st;
        if (k <= 0 || aip__parse_proc_stat(line, (size_t)k, &st))
            continue; /* the thread ended between readdir and open */
        uint64_t v[AIP_HOST_VALUES] = {st.utime * S.clk_tck_ns, st.stime * S.clk_tck_ns,
                                       st.processor};
        /* The tick counts have 10 ms steps, half a period: schedstat's run
         * time (ns, CONFIG_SCHED_INFO) makes the per-core shares exact. */
        uint8_t flags = 0;
        pathf(path, sizeof path, "%s/self/task/%s/schedstat", S.proc, e->d_name);
        k = read_path(path, line, sizeof line);
        if (k > 0) {
            char *end;
            v[3] = strtoull(line, &end, 10);
            flags = end != line ? AIP_HOSTF_PRECISE : 0;
        }
        emit(t, AIP_HOST_THREAD_CPU, flags, 0, (uint32_t)strtoul(e->d_name, NULL, 10), v, ts);
    }
    closedir(d);
}

static iface *iface_of(const char *name)
{
    for (size_t i = 0; i < S.n_ifaces; i++)
        if (!strcmp(S.ifaces[i].name, name))
            return &S.ifaces[i];
    if (S.n_ifaces == AIP_HOST_MAX_IFACES)
        return NULL;
    iface *f = &S.ifaces[S.n_ifaces++];
    pathf(f->name, sizeof f->name, "%s", name);
    f->name_id = aip_intern(name);
    f->speed_mbps = UINT32_MAX;
    char path[512], text[64];
    pathf(path, sizeof path, "%s/class/net/%s/speed", S.sys, name);
    ssize_t k = read_path(path, text, sizeof text); /* EINVAL while the link is down */
    long v = k > 0 ? strtol(text, NULL, 10) : -1;
    if (v > 0 && v < (long)UINT32_MAX)
        f->speed_mbps = (uint32_t)v;
    return f;
}

static void sample_net(aip__tstate *t, uint64_t ts)
{
    /* Opened anew each time, unlike the process's own files: a file that
     * is replaced (a network namespace change, a test's fake /proc) is
     * then read as it is now. */
    if (S.fd_netdev < 0)
        return; /* unreadable from the start: said once already */
    char path[512];
    pathf(path, sizeof path, "%s/net/dev", S.proc);
    ssize_t n = read_path(path, S.buf, FILE_MAX);
    if (n < 0) {
        S.bad |= AIP_HOSTSRC_NETDEV;
        log_once(AIP_HOSTSRC_NETDEV, "host_sys: %s stopped being readable; network figures "
                                     "end here", path);
        return;
    }
    aip__netdev dev[AIP_HOST_MAX_IFACES];
    size_t k = aip__parse_net_dev(S.buf, (size_t)n, dev, AIP_HOST_MAX_IFACES);
    for (size_t i = 0; i < S.n_ifaces; i++)
        S.ifaces[i].seen = 0;
    uint8_t flags = (S.host_sys & AIP_HOST_SYS_NETWORK ? AIP_HOSTF_NETWORK : 0) |
                    (S.sys_io ? AIP_HOSTF_NIC : 0);
    for (size_t i = 0; i < k; i++) {
        iface *f = iface_of(dev[i].name);
        if (!f)
            continue;
        f->seen = 2;
        uint64_t v[AIP_HOST_VALUES] = {dev[i].rx_bytes, dev[i].rx_packets, dev[i].rx_errs,
                                       dev[i].rx_drop,  dev[i].tx_bytes,   dev[i].tx_packets,
                                       dev[i].tx_errs,  dev[i].tx_drop};
        emit(t, AIP_HOST_NET, flags, f->name_id, f->speed_mbps, v, ts);
    }
    for (size_t i = 0; i < S.n_ifaces; i++)
        if (!S.ifaces[i].seen && S.samples) {
            S.bad |= AIP_HOSTSRC_IFACE_GONE;
            log_once(AIP_HOSTSRC_IFACE_GONE, "host_sys: network interface %s disappeared "
                                             "while sampling (figures end there)",
                     S.ifaces[i].name);
        }
}

/* An InfiniBand counter of a port directory; 0 if absent. */
static uint64_t ib_counter(const char *port_dir, const char *name)
{
    char path[768], text[64];
    pathf(path, sizeof path, "%s/counters/%s", port_dir, name);
    ssize_t k = read_path(path, text, sizeof text);
    return k > 0 ? strtoull(text, NULL, 10) : 0;
}

/* sys_io's RoCE: every port of every RDMA device, where the kernel has any. */
static void sample_rdma(aip__tstate *t, uint64_t ts)
{
    char root[512];
    pathf(root, sizeof root, "%s/class/infiniband", S.sys);
    DIR *d = opendir(root);
    if (!d) {
        if (!(S.logged & AIP_HOSTSRC_NO_RDMA)) {
            S.logged |= AIP_HOSTSRC_NO_RDMA;
            aip__log("INFO", "sys_io: no RDMA device here (%s absent): no RoCE figures", root);
        }
        S.bad |= AIP_HOSTSRC_NO_RDMA;
        return;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char ports[640];
        pathf(ports, sizeof ports, "%s/%s/ports", root, e->d_name);
        DIR *pd = opendir(ports);
        if (!pd)
            continue;
        struct dirent *pe;
        while ((pe = readdir(pd))) {
            if (pe->d_name[0] == '.')
                continue;
            char port[768], text[64], label[96];
            pathf(port, sizeof port, "%s/%s", ports, pe->d_name);
            pathf(label, sizeof label, "%.40s/%.40s", e->d_name, pe->d_name);
            char ratep[800];
            pathf(ratep, sizeof ratep, "%s/rate", port);
            ssize_t k = read_path(ratep, text, sizeof text);
            uint32_t rate = k > 0 ? aip__parse_link_rate(text, (size_t)k) : 0;
            /* port_*_data counts 4-octet words (IB spec, Linux sysfs ABI). */
            uint64_t v[AIP_HOST_VALUES] = {
                ib_counter(port, "port_rcv_data") * 4, ib_counter(port, "port_rcv_packets"),
                ib_counter(port, "port_rcv_errors"), ib_counter(port, "port_rcv_discards"),
                ib_counter(port, "port_xmit_data") * 4, ib_counter(port, "port_xmit_packets"),
                0, ib_counter(port, "port_xmit_discards")};
            emit(t, AIP_HOST_ROCE, AIP_HOSTF_NIC, aip_intern(label), rate ? rate : UINT32_MAX,
                 v, ts);
        }
        closedir(pd);
    }
    closedir(d);
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sample(aip__tstate *t)
{
    uint64_t ts = aip__ticks();
    unsigned hs = S.host_sys;
    aip__proc_stat st = {0};
    int have_stat = 0;
    if (hs & (AIP_HOST_SYS_CPU | AIP_HOST_SYS_MEM | AIP_HOST_SYS_DISK)) {
        ssize_t n = reread(S.fd_stat);
        have_stat = n > 0 && !aip__parse_proc_stat(S.buf, (size_t)n, &st);
        if (!have_stat && S.fd_stat >= 0) {
            S.bad |= AIP_HOSTSRC_STAT;
            log_once(AIP_HOSTSRC_STAT, "host_sys: %s/self/stat stopped parsing; CPU figures "
                                       "end here", S.proc);
        }
    }
    if ((hs & AIP_HOST_SYS_CPU) && have_stat) {
        struct timespec cpu;
        uint64_t precise = 0;
        uint8_t flags = 0;
        if (S.real_proc && !clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu)) {
            precise = (uint64_t)cpu.tv_sec * 1000000000ull + (uint64_t)cpu.tv_nsec;
            flags = AIP_HOSTF_PRECISE;
        }
        uint64_t v[AIP_HOST_VALUES] = {st.utime * S.clk_tck_ns, st.stime * S.clk_tck_ns,
                                       precise, st.num_threads,
                                       (uint64_t)sysconf(_SC_NPROCESSORS_ONLN)};
        emit(t, AIP_HOST_PROC_CPU, flags, 0, 0, v, ts);
        sample_threads(t, ts);
    }
    if (hs & AIP_HOST_SYS_MEM) {
        ssize_t n = reread(S.fd_statm);
        uint64_t pages[3];
        if (n > 0 && !aip__parse_statm(S.buf, (size_t)n, pages)) {
            uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
            uint64_t v[AIP_HOST_VALUES] = {pages[1] * pg, pages[0] * pg, pages[2] * pg,
                                           st.minflt, st.majflt, S.mem_total};
            emit(t, AIP_HOST_MEM, 0, 0, 0, v, ts);
        } else if (S.fd_statm >= 0) {
            S.bad |= AIP_HOSTSRC_STATM;
            log_once(AIP_HOSTSRC_STATM, "host_sys: %s/self/statm stopped parsing; memory "
                                        "figures end here", S.proc);
        }
    }
    if (hs & AIP_HOST_SYS_DISK) {
        ssize_t n = reread(S.fd_io);
        uint64_t io[7];
        if (n > 0 && aip__parse_proc_io(S.buf, (size_t)n, io) > 0) {
            uint64_t v[AIP_HOST_VALUES] = {io[4], io[5], io[0], io[1], io[2], io[3], io[6],
                                           st.blkio_ticks * S.clk_tck_ns};
            emit(t, AIP_HOST_DISK, S.delayacct && have_stat ? AIP_HOSTF_DELAYACCT : 0, 0, 0, v,
                 ts);
        } else if (S.fd_io >= 0) {
            S.bad |= AIP_HOSTSRC_IO;
            log_once(AIP_HOSTSRC_IO, "host_sys: %s/self/io stopped parsing; disk figures end "
                                     "here", S.proc);
        }
    }
    if ((hs & AIP_HOST_SYS_NETWORK) || S.sys_io)
        sample_net(t, ts);
    if (S.sys_io)
        sample_rdma(t, ts);
    if (S.stall_ns && S.samples == 2) { /* a sampler that falls behind, on demand */
        struct timespec z = {(time_t)(S.stall_ns / 1000000000ull), (long)(S.stall_ns % 1000000000ull)};
        while (nanosleep(&z, &z))
            ;
    }
    S.samples++;
}

/* ---- the thread --------------------------------------------------------- */

static void *run(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "aiprof-hostsys");
    aip_thread_name("aiprof host sampler");
    uint64_t next = aip__mono_ns();
    pthread_mutex_lock(&S.lock);
    while (!S.stop) {
        pthread_mutex_unlock(&S.lock);
        uint64_t now = aip__mono_ns();
        if (now > next && now - next > S.max_lag_ns)
            S.max_lag_ns = now - next;
        aip__tstate *t = aip__current();
        if (t)
            sample(t);
        next += S.period_ns;
        now = aip__mono_ns();
        if (now >= next) { /* fell behind: skip the periods already gone */
            uint64_t gone = (now - next) / S.period_ns + 1;
            S.missed += gone;
            next += gone * S.period_ns;
        }
        struct timespec until = {(time_t)(next / 1000000000ull), (long)(next % 1000000000ull)};
        pthread_mutex_lock(&S.lock);
        while (!S.stop && pthread_cond_timedwait(&S.wake, &S.lock, &until) != ETIMEDOUT)
            ;
    }
    pthread_mutex_unlock(&S.lock);
    aip__tstate *t = aip__current();
    if (t) {
        sample(t); /* the last interval, up to the stop */
        uint64_t v[AIP_HOST_VALUES] = {S.samples, S.missed, S.max_lag_ns, thread_cpu_ns(),
                                       S.bad, S.period_ns};
        emit(t, AIP_HOST_STATUS, 0, 0, 0, v, aip__ticks());
    }
    if (S.missed)
        aip__log("WARN", "host_sys: the sampler fell behind and missed %llu of its %llu ms "
                         "periods (largest lag %.1f ms); the rates span the longer intervals",
                 (unsigned long long)S.missed, (unsigned long long)(S.period_ns / 1000000),
                 S.max_lag_ns / 1e6);
    return NULL;
}

static void close_fds(void)
{
    int *fds[] = {&S.fd_stat, &S.fd_statm, &S.fd_io, &S.fd_netdev};
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++) {
        if (*fds[i] >= 0)
            close(*fds[i]);
        *fds[i] = -1;
    }
}

/* The child of a fork has no sampler thread, and the open files are its
 * parent's /proc/<pid> entries: let go of both (the child's trace is
 * stopped by the recorder's own fork handler). */
void aip__host_sampler_fork_child(void)
{
    S.running = 0;
    S.stop = 0;
    pthread_mutex_init(&S.lock, NULL);
    close_fds();
}

static uint64_t period_from_env(void)
{
    const char *e = getenv("AIPROF_HOST_SYS_PERIOD_MS");
    long ms = AIP_HOST_PERIOD_DEFAULT_MS;
    if (e && *e) {
        char *end;
        long v = strtol(e, &end, 10);
        if (*end || v < AIP_HOST_PERIOD_MIN_MS || v > AIP_HOST_PERIOD_MAX_MS)
            aip__log("WARN", "AIPROF_HOST_SYS_PERIOD_MS=%s is not a whole number of ms in "
                             "[%d, %d]; sampling every %d ms", e, AIP_HOST_PERIOD_MIN_MS,
                     AIP_HOST_PERIOD_MAX_MS, AIP_HOST_PERIOD_DEFAULT_MS);
        else
            ms = v;
    }
    return (uint64_t)ms * 1000000ull;
}

void aip__host_sampler_start(unsigned host_sys, int sys_io)
{
    host_sys &= AIP_HOST_SYS_CPU | AIP_HOST_SYS_MEM | AIP_HOST_SYS_DISK | AIP_HOST_SYS_NETWORK;
    if ((!host_sys && !sys_io) || S.running)
        return;
    if (!S.buf && !(S.buf = malloc(FILE_MAX))) {
        aip__log("WARN", "host_sys: no memory for the sampler; no host figures");
        return;
    }
    const char *proc = getenv("AIPROF_HOST_PROC_ROOT"), *sys = getenv("AIPROF_HOST_SYS_ROOT");
    snprintf(S.proc, sizeof S.proc, "%s", proc && *proc ? proc : "/proc");
    snprintf(S.sys, sizeof S.sys, "%s", sys && *sys ? sys : "/sys");
    S.real_proc = !strcmp(S.proc, "/proc");
    S.host_sys = host_sys;
    S.sys_io = sys_io;
    S.period_ns = period_from_env();
    __atomic_store_n(&S.emitted, 0, __ATOMIC_RELAXED);
    const char *stall = getenv("AIPROF_HOST_SYS_TEST_STALL_MS"); /* tests only */
    S.stall_ns = stall ? (uint64_t)strtoul(stall, NULL, 10) * 1000000ull : 0;
    S.bad = S.logged = 0;
    S.n_ifaces = 0;
    S.samples = S.missed = S.max_lag_ns = 0;
    long tck = sysconf(_SC_CLK_TCK);
    S.clk_tck_ns = tck > 0 ? 1000000000ull / (uint64_t)tck : 10000000ull;
    close_fds();
    if (host_sys & (AIP_HOST_SYS_CPU | AIP_HOST_SYS_MEM | AIP_HOST_SYS_DISK))
        S.fd_stat = open_src("self/stat", AIP_HOSTSRC_STAT);
    if (host_sys & AIP_HOST_SYS_MEM) {
        S.fd_statm = open_src("self/statm", AIP_HOSTSRC_STATM);
        char path[512];
        pathf(path, sizeof path, "%s/meminfo", S.proc);
        ssize_t n = read_path(path, S.buf, FILE_MAX);
        S.mem_total = n > 0 ? aip__parse_meminfo_total(S.buf, (size_t)n) : 0;
        if (!S.mem_total) {
            S.bad |= AIP_HOSTSRC_MEMINFO;
            log_once(AIP_HOSTSRC_MEMINFO, "host_sys: no MemTotal in %s; memory usage %% is "
                                          "left out (bytes are kept)", path);
        }
    }
    if (host_sys & AIP_HOST_SYS_DISK) {
        S.fd_io = open_src("self/io", AIP_HOSTSRC_IO);
        char path[512], text[16];
        pathf(path, sizeof path, "%s/sys/kernel/task_delayacct", S.proc);
        S.delayacct = read_path(path, text, sizeof text) > 0 && text[0] == '1';
    }
    if ((host_sys & AIP_HOST_SYS_NETWORK) || sys_io)
        S.fd_netdev = open_src("net/dev", AIP_HOSTSRC_NETDEV); /* kept to say it is readable */
    S.stop = 0;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&S.wake, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&S.lock, NULL);
    /* The program's signals are not the sampler's business: it starts with
     * all of them blocked, so none is handled on it. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int err = aip__thread_create(&S.thread, NULL, run, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (err) {
        aip__log("WARN", "host_sys: the sampler thread did not start (%s); no host figures",
                 strerror(err));
        close_fds();
        return;
    }
    S.running = 1;
    aip__log("INFO", "host_sys: sampling every %llu ms",
             (unsigned long long)(S.period_ns / 1000000));
}

void aip__host_sampler_stop(void)
{
    if (!S.running)
        return;
    pthread_mutex_lock(&S.lock);
    S.stop = 1;
    pthread_cond_signal(&S.wake);
    pthread_mutex_unlock(&S.lock);
    pthread_join(S.thread, NULL);
    S.running = 0;
    close_fds();
    pthread_cond_destroy(&S.wake);
    aip__log("INFO", "host_sys: %llu sample records made (those the buffer cap refused are "
             "counted as dropped events)", (unsigned long long)S.emitted);
}

uint64_t aip__host_sampler_emitted(void)
{
    return __atomic_load_n(&S.emitted, __ATOMIC_RELAXED);
}
