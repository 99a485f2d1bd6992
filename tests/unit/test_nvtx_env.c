/*
 * test_nvtx_env.c — loading libaiprof changes no environment; the NVTX
 * collector (src/collect/nvtx/nvtx_inject.c, docs/NVTX.md) points
 * NVTX_INJECTION64_PATH at libaiprof only when the first session that
 * records mstx starts, keeps a value the user set, and leaves it unset with
 * AIPROF_NVTX=0 or while no session records mstx.  The program does not
 * link libaiprof: it dlopen()s the shared library of this build
 * ($AIP_BUILD_DIR/lib), so that the environment can be compared from
 * before the load to after it.
 */
#include "aip_test.h"
#include "aiprof.h"

#include <dlfcn.h>
#include <limits.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static char lib_path[PATH_MAX];
static void *lib;
static void (*p_config_init)(aip_config *);
static aip_status (*p_create)(const aip_config *, aip_session **);
static aip_status (*p_start)(aip_session *);
static aip_status (*p_stop)(aip_session *);
static void (*p_destroy)(aip_session *);
static char tmp[] = "/tmp/aip_nvtx_env_XXXXXX";

/* The environment as text, one entry a line, in order (malloc'd). */
static char *env_text(void)
{
    size_t n = 1;
    for (char **e = environ; *e; e++)
        n += strlen(*e) + 1;
    char *t = malloc(n), *at = t;
    for (char **e = environ; *e; e++)
        at += sprintf(at, "%s\n", *e);
    *at = 0;
    return t;
}

/* One trace with mstx on or off: start and stop. */
static int one_trace(int mstx)
{
    aip_config cfg;
    p_config_init(&cfg);
    cfg.dir_name = tmp;
    cfg.mstx = mstx;
    aip_session *s = NULL;
    if (p_create(&cfg, &s) || p_start(s) || p_stop(s))
        return -1;
    p_destroy(s);
    return 0;
}

static void test_load_leaves_environment(void)
{
    unsetenv("NVTX_INJECTION64_PATH");
    unsetenv("AIPROF_NVTX");
    char *before = env_text();
    const char *build = getenv("AIP_BUILD_DIR");
    ASSERT_TRUE(build != NULL);
    snprintf(lib_path, sizeof lib_path, "%s/lib/libaiprof.so.0", build);
    lib = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        fprintf(stderr, "dlopen: %s\n", dlerror());
    ASSERT_TRUE(lib != NULL);
    char *after = env_text();
    /* The first line that differs, not the whole environment, on failure. */
    size_t at = 0;
    while (before[at] && before[at] == after[at])
        at++;
    while (at > 0 && before[at - 1] != '\n')
        at--;
    ASSERT_STREQ(after + at, before + at);
    free(before);
    free(after);
    p_config_init = (void (*)(aip_config *))dlsym(lib, "aip_config_init");
    p_create = (aip_status(*)(const aip_config *, aip_session **))dlsym(lib, "aip_session_create");
    p_start = (aip_status(*)(aip_session *))dlsym(lib, "aip_session_start");
    p_stop = (aip_status(*)(aip_session *))dlsym(lib, "aip_session_stop");
    p_destroy = (void (*)(aip_session *))dlsym(lib, "aip_session_destroy");
    ASSERT_TRUE(p_config_init && p_create && p_start && p_stop && p_destroy);
    ASSERT_TRUE(mkdtemp(tmp) != NULL);
}

static void test_trace_without_mstx_leaves_it(void)
{
    ASSERT_TRUE(lib != NULL);
    ASSERT_EQ(one_trace(0), 0);
    ASSERT_TRUE(getenv("NVTX_INJECTION64_PATH") == NULL);
}

/* In a child, with `name`=`value` set first: the variable after an mstx
 * trace, written to the pipe; the parent's once-only arming stays unused. */
static void child_value(const char *name, const char *value, char *out, size_t cap)
{
    int fd[2];
    out[0] = 0;
    if (pipe(fd))
        return;
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        setenv(name, value, 1);
        const char *v = one_trace(1) ? "(trace failed)" : getenv("NVTX_INJECTION64_PATH");
        v = v ? v : "(unset)";
        ssize_t w = write(fd[1], v, strlen(v));
        _exit(w < 0);
    }
    close(fd[1]);
    ssize_t n = pid > 0 ? read(fd[0], out, cap - 1) : -1;
    out[n > 0 ? n : 0] = 0;
    close(fd[0]);
    if (pid > 0)
        waitpid(pid, NULL, 0);
}

static void test_user_value_and_opt_out_kept(void)
{
    ASSERT_TRUE(lib != NULL);
    char v[PATH_MAX];
    child_value("NVTX_INJECTION64_PATH", "/mine.so", v, sizeof v);
    ASSERT_STREQ(v, "/mine.so");
    child_value("AIPROF_NVTX", "0", v, sizeof v);
    ASSERT_STREQ(v, "(unset)");
}

static void test_mstx_trace_points_nvtx_here(void)
{
    ASSERT_TRUE(lib != NULL);
    ASSERT_EQ(one_trace(1), 0);
    char want[PATH_MAX];
    ASSERT_TRUE(realpath(lib_path, want) != NULL);
    ASSERT_STREQ(getenv("NVTX_INJECTION64_PATH"), want);
}

/* Last: the traces' results go with the temporary directory. */
static void test_remove_results(void)
{
    char cmd[sizeof tmp + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    ASSERT_EQ(system(cmd), 0);
}

TEST_MAIN(TEST_CASE(test_load_leaves_environment), TEST_CASE(test_trace_without_mstx_leaves_it),
          TEST_CASE(test_user_value_and_opt_out_kept), TEST_CASE(test_mstx_trace_points_nvtx_here),
          TEST_CASE(test_remove_results))
