/*
 * env.c — process facts (see env.h).
 */
#include "env.h"
#include "aiprof_integration.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char hostname[256];
static char program[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t program_lock = PTHREAD_MUTEX_INITIALIZER;

/* The variables torch_npu records (seed: 采集环境变量信息; reference §2.6). */
static const char *const recorded_vars[] = {
    "ASCEND_GLOBAL_LOG_LEVEL", "HCCL_RDMA_TC", "HCCL_RDMA_SL", "ACLNN_CACHE_LIMIT",
    "HOST_CACHE_CAPACITY", "ASCEND_ENHANCE_ENABLE", "PYTORCH_NPU_ALLOC_CONF",
    "ASCEND_LAUNCH_BLOCKING", "HCCL_ALGO", NULL};

static void init(void)
{
    if (gethostname(hostname, sizeof hostname - 1) != 0 || !hostname[0])
        snprintf(hostname, sizeof hostname, "localhost");
    extern char *program_invocation_short_name;
    const char *p = program_invocation_short_name;
    if (p && !strncmp(p, "python", 6))
        p = "Python";
    pthread_mutex_lock(&program_lock);
    if (!program[0])
        snprintf(program, sizeof program, "%s", p && *p ? p : "program");
    pthread_mutex_unlock(&program_lock);
}

const char *aip__hostname(void)
{
    pthread_once(&once, init);
    return hostname;
}

void aip__localtime(time_t t, struct tm *out)
{
    static __thread time_t last = (time_t)-1;
    static __thread struct tm tm;
    if (t != last) {
        localtime_r(&t, &tm);
        last = t;
    }
    *out = tm;
}

const char *aip__program_name(void)
{
    pthread_once(&once, init);
    return program;
}

void aip_set_process_name(const char *name)
{
    if (!name || !*name)
        return;
    pthread_once(&once, init);
    pthread_mutex_lock(&program_lock);
    snprintf(program, sizeof program, "%s", name);
    pthread_mutex_unlock(&program_lock);
}

/* aip_set_rank(): the communication library's word, over the
 * environment's (a program started without a launcher has no RANK, and
 * mp.spawn's workers only learn theirs from torch.distributed). */
static _Atomic int set_rank = -1;

void aip_set_rank(int rank) { set_rank = rank >= 0 && rank < 1000000 ? rank : -1; }

int aip__rank(void)
{
    int r0 = set_rank;
    if (r0 >= 0)
        return r0;
    static const char *const names[] = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", NULL};
    for (const char *const *n = names; *n; n++) {
        const char *v = getenv(*n);
        if (!v || !*v)
            continue;
        char *end;
        errno = 0;
        long r = strtol(v, &end, 10);
        if (!errno && !*end && r >= 0 && r < 1000000)
            return (int)r;
    }
    return -1;
}

json_t *aip__env_variables(void)
{
    json_t *o = json_object();
    for (const char *const *n = recorded_vars; *n; n++) {
        const char *v = getenv(*n);
        if (v)
            json_object_set_new(o, *n, json_string(v));
    }
    return o;
}
