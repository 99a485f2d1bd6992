/*
 * preload_exec.c — the exec family, wrapped in libaiprof_preload.so, so
 * that the image `aiprof run` profiles hands over to the image it execs
 * (preload.h).  Each wrapper checks first that the exec will find an
 * executable file (a shell tries every PATH entry in turn, and a failed
 * exec leaves the image running: it must keep its trace), then calls
 * aip__preload_exec() and the real function.  glibc's execvp and execl*
 * call execve inside libc, past the PLT: each is wrapped itself.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_NEXT */
#endif
#include "preload.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define AIP_EXPORT __attribute__((visibility("default")))

static int runnable(const char *path)
{
    struct stat st;
    return !stat(path, &st) && S_ISREG(st.st_mode) && !access(path, X_OK);
}

/* Whether exec of `file` can succeed; `search`: looked up in PATH as
 * execvp does (a name without '/'). */
static int will_exec(const char *file, int search)
{
    if (!file || !*file)
        return 0;
    if (!search || strchr(file, '/'))
        return runnable(file);
    const char *path = getenv("PATH");
    if (!path)
        path = "/bin:/usr/bin"; /* execvp's default */
    for (const char *p = path;; p++) {
        size_t n = strcspn(p, ":");
        char full[PATH_MAX];
        if (snprintf(full, sizeof full, "%.*s%s%s", (int)n, n ? p : ".", "/", file) <
                (int)sizeof full &&
            runnable(full))
            return 1;
        p += n;
        if (!*p)
            return 0;
    }
}

static void *real(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);

AIP_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    execve_fn f = (execve_fn)real("execve");
    if (!f) {
        errno = ENOSYS;
        return -1;
    }
    if (will_exec(path, 0))
        aip__preload_exec();
    return f(path, argv, envp);
}

AIP_EXPORT int execv(const char *path, char *const argv[])
{
    execv_fn f = (execv_fn)real("execv");
    if (!f) {
        errno = ENOSYS;
        return -1;
    }
    if (will_exec(path, 0))
        aip__preload_exec();
    return f(path, argv);
}

AIP_EXPORT int execvp(const char *file, char *const argv[])
{
    execv_fn f = (execv_fn)real("execvp");
    if (!f) {
        errno = ENOSYS;
        return -1;
    }
    if (will_exec(file, 1))
        aip__preload_exec();
    return f(file, argv);
}

AIP_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    execve_fn f = (execve_fn)real("execvpe");
    if (!f) {
        errno = ENOSYS;
        return -1;
    }
    if (will_exec(file, 1))
        aip__preload_exec();
    return f(file, argv, envp);
}

/* execl, execlp, execle: the arguments into an array, then the v form
 * (which is wrapped above, but called here directly: one hand-over). */
static char **collect(const char *arg0, va_list ap, char ***envp)
{
    size_t n = 1, cap = 16;
    char **v = malloc(cap * sizeof *v);
    if (!v)
        return NULL;
    v[0] = (char *)arg0;
    for (char *a = arg0 ? va_arg(ap, char *) : NULL;; a = va_arg(ap, char *)) {
        if (n + 1 >= cap) {
            char **w = realloc(v, (cap *= 2) * sizeof *v);
            if (!w) {
                free(v);
                return NULL;
            }
            v = w;
        }
        v[n++] = a;
        if (!a)
            break;
    }
    if (envp)
        *envp = va_arg(ap, char **);
    return v;
}

static int exec_list(const char *file, int search, char **argv, char **envp)
{
    if (!argv) {
        errno = ENOMEM;
        return -1;
    }
    int r = envp ? (search ? execvpe(file, argv, envp) : execve(file, argv, envp))
                 : (search ? execvp(file, argv) : execv(file, argv));
    int e = errno;
    free(argv);
    errno = e;
    return r;
}

AIP_EXPORT int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    char **argv = collect(arg, ap, NULL);
    va_end(ap);
    return exec_list(path, 0, argv, NULL);
}

AIP_EXPORT int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    char **argv = collect(arg, ap, NULL);
    va_end(ap);
    return exec_list(file, 1, argv, NULL);
}

AIP_EXPORT int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    char **envp = NULL;
    char **argv = collect(arg, ap, &envp);
    va_end(ap);
    return exec_list(path, 0, argv, envp);
}
