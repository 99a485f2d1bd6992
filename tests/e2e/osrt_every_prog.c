/*
 * osrt_every_prog.c — prog_osrt_every, for tests/e2e/test_osrt_every.sh:
 * every intercepted function called from a non-PIE program that takes
 * their addresses (the program's PLT entries are then the functions'
 * canonical addresses, which a wrapper must never take for the real
 * function: issue 26 §1), then from a library it dlopens (through a
 * pointer to dlopen, itself canonical) while recording, which is patched
 * as it arrives.  Prints the result directory.
 *
 * Usage: prog_osrt_every DIR LIB   (profiles itself with host_sys OSRT)
 *        prog_osrt_every - LIB     (no session: under `aiprof run --host-sys osrt`)
 */
#include "aiprof.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

ssize_t __read_chk(int fd, void *buf, size_t n, size_t cap);
int osrt_every_calls(const char *path);

/* Every function's address, taken in code as CPython's posixmodule does
 * (a pointer in initialised data would be a dynamic relocation to the C
 * library instead): compiled without -fpie, each is an absolute address
 * the static linker must know, which makes the program's PLT entry the
 * function's canonical address, what dlsym(RTLD_DEFAULT) then returns. */
static void *volatile taken[46];

static void take_addresses(void)
{
    void *const a[] = {
        (void *)read, (void *)write, (void *)pread, (void *)pread64, (void *)pwrite,
        (void *)pwrite64, (void *)readv, (void *)writev, (void *)__read_chk, (void *)close,
        (void *)poll, (void *)ppoll, (void *)epoll_wait, (void *)epoll_pwait, (void *)select,
        (void *)pselect, (void *)nanosleep, (void *)clock_nanosleep, (void *)usleep,
        (void *)sleep, (void *)pthread_cond_wait, (void *)pthread_cond_timedwait,
        (void *)pthread_join, (void *)sem_wait, (void *)sem_timedwait, (void *)recv,
        (void *)recvfrom, (void *)recvmsg, (void *)send, (void *)sendto, (void *)sendmsg,
        (void *)accept, (void *)accept4, (void *)connect, (void *)mmap, (void *)mmap64,
        (void *)munmap, (void *)fsync, (void *)fdatasync, (void *)pthread_mutex_lock,
        (void *)pthread_mutex_trylock, (void *)open, (void *)open64, (void *)openat,
        (void *)openat64, (void *)dlopen};
    for (size_t i = 0; i < sizeof a / sizeof *a; i++)
        taken[i] = a[i];
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: prog_osrt_every DIR|- LIB\n");
        return 2;
    }
    aip_session *s = NULL;
    if (strcmp(argv[1], "-")) {
        aip_config c;
        aip_config_init(&c);
        c.dir_name = argv[1];
        c.host_sys = AIP_HOST_SYS_OSRT;
        if (aip_session_create(&c, &s) != AIP_OK || aip_session_start(s) != AIP_OK) {
            fprintf(stderr, "prog_osrt_every: %s\n", aip_last_error());
            return 1;
        }
    }
    char path[64];
    snprintf(path, sizeof path, "/tmp/prog_osrt_every_%d.dat", (int)getpid());
    take_addresses();
    int bad = osrt_every_calls(path);
    void *(*open_lib)(const char *, int) = taken[45];
    void *lib = open_lib(argv[2], RTLD_NOW | RTLD_LOCAL);
    int (*lib_calls)(const char *) = lib ? (int (*)(const char *))dlsym(lib, "osrt_every_calls") : NULL;
    if (!lib_calls) {
        fprintf(stderr, "prog_osrt_every: %s\n", dlerror());
        return 1;
    }
    bad += lib_calls(path);
    if (s && aip_session_stop(s) != AIP_OK) {
        fprintf(stderr, "prog_osrt_every: %s\n", aip_last_error());
        bad++;
    }
    printf("%s\n", s ? aip_session_result_dir(s) : "");
    aip_session_destroy(s);
    return bad ? 1 : 0;
}
