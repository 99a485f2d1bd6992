/*
 * cluster_mpi.c — aip_cluster_run_mpi(): `mpirun -np K aiprof cluster
 * --mpi DIR`, the cross-rank pass as one MPI job.  Every process finds the
 * same rank directories (the walk is sorted, so the same order); process p
 * analyses and reads those with index i % K == p (cluster.c), packs them
 * (cluster_wire.c) and sends them to process 0, which puts them in its
 * cluster and runs the unchanged cross-rank pass: its outputs are those of a
 * single process, byte for byte.  Process 0 then sends the outcome (status,
 * directories not used, error text) to all, so that every process exits as
 * a single `aiprof cluster` would.
 * MPI itself is in libaiprof_cluster_mpi.so (cluster_mpi.h), loaded here
 * with dlopen: libaiprof never links MPI.
 */
#include "cluster.h"
#include "cluster_mpi.h"
#include "error.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PLUGIN "libaiprof_cluster_mpi.so"

struct aip__cluster_mpi {
    const aip__cluster_mpi_ops *ops;
    int me, size;
};

void aip__cluster_mpi_share(const aip__cluster_mpi *m, int *part, int *parts)
{
    *part = m->me;
    *parts = m->size > 0 ? m->size : 1;
}

/* Process p > 0: its share (or its error) to process 0.  Process 0: every
 * other process's share into `c`, all of them received even after a
 * failure, so that no sender is left blocked.  @return `s` or the first
 * failure. */
aip_status aip__cluster_gather(aip__cluster *c, aip__cluster_mpi *m, aip_status s)
{
    char err[512] = "";
    if (m->me) {
        unsigned char *buf = NULL;
        size_t len = 0;
        aip_status p = aip__cluster_pack_share(c, s, &buf, &len);
        /* no memory even for that: status and count, no text (cluster_wire.c's layout) */
        unsigned char bare[24] = {AIP_ERR_NOMEM};
        for (int i = 0; i < 8; i++)
            bare[8 + i] = (unsigned char)((uint64_t)c->n >> (8 * i));
        int rc = p ? m->ops->send(bare, sizeof bare, err, sizeof err)
                   : m->ops->send(buf, len, err, sizeof err);
        free(buf);
        if (rc && !s)
            s = aip__fail(AIP_ERR_IO, "%s", err);
        return s ? s : p;
    }
    for (int from = 1; from < m->size; from++) {
        void *buf = NULL;
        uint64_t len = 0;
        if (m->ops->recv(from, &buf, &len, err, sizeof err)) {
            if (!s)
                s = aip__fail(AIP_ERR_IO, "process %d: %s", from, err);
        } else if (!s) {
            s = aip__cluster_unpack_share(c, from, buf, (size_t)len);
        }
        free(buf);
    }
    return s;
}

/* The plugin, or an error saying what is missing. */
static aip_status load(const char *path, const aip__cluster_mpi_ops **ops)
{
    const char *env = getenv("AIPROF_CLUSTER_MPI");
    if (env && *env)
        path = env;
    if (!path || !*path)
        path = PLUGIN;
    if (strchr(path, '/') && access(path, R_OK))
        return aip__fail(AIP_ERR_NOT_FOUND,
                         "--mpi needs %s: %s (aiprof built without MPI? install "
                         "libopenmpi-dev and rebuild)",
                         path, strerror(errno));
    /* RTLD_GLOBAL: Open MPI's own components look for libmpi's symbols */
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        const char *why = dlerror();
        return aip__fail(AIP_ERR_UNSUPPORTED,
                         "--mpi: cannot load %s: %s (is Open MPI installed? apt-get install "
                         "openmpi-bin)",
                         path, why ? why : "unknown error");
    }
    *ops = dlsym(h, AIP__CLUSTER_MPI_SYMBOL);
    if (!*ops)
        return aip__fail(AIP_ERR_UNSUPPORTED, "--mpi: %s is not aiprof's cluster MPI plugin (no %s)",
                         path, AIP__CLUSTER_MPI_SYMBOL);
    if ((*ops)->abi != AIP__CLUSTER_MPI_ABI)
        return aip__fail(AIP_ERR_VERSION,
                         "--mpi: %s is from another aiprof build (plugin ABI %d, this aiprof %d)",
                         path, (*ops)->abi, AIP__CLUSTER_MPI_ABI);
    return AIP_OK; /* never closed: MPI stays loaded until the process ends */
}

/* What process 0 tells every process at the end. */
typedef struct outcome {
    int32_t status;
    uint64_t bad, incomplete;
    char error[512];
} outcome;

aip_status aip_cluster_run_mpi(const char *dir, const aip_cluster_options *opt, size_t *bad_dirs,
                               const char *plugin, int *process)
{
    if (bad_dirs)
        *bad_dirs = 0;
    if (process)
        *process = 0;
    aip_cluster_options run;
    aip_status s = aip__cluster_options(opt, &run);
    if (s)
        return s;
    const aip__cluster_mpi_ops *ops = NULL;
    if ((s = load(plugin, &ops)))
        return s;
    char err[512] = "";
    aip__cluster_mpi m = {.ops = ops};
    if (ops->init(&m.me, &m.size, err, sizeof err))
        return aip__fail(AIP_ERR_STATE, "--mpi: %s", err);
    if (process)
        *process = m.me;
    size_t bad = 0, incomplete = 0;
    size_t *want_incomplete = run.incomplete;
    run.incomplete = &incomplete;
    if (m.me) { /* process 0 speaks for the job */
        run.quiet = 1;
        run.report_fd = run.progress_fd = -1;
    }
    s = aip__cluster_run(dir, &run, &bad, &m);
    outcome o;
    memset(&o, 0, sizeof o);
    o.status = (int32_t)s;
    o.bad = bad;
    o.incomplete = incomplete;
    if (s)
        snprintf(o.error, sizeof o.error, "%s", aip_last_error());
    if (ops->bcast(&o, sizeof o, err, sizeof err)) {
        ops->finalize();
        return aip__fail(AIP_ERR_IO, "--mpi: %s", err);
    }
    ops->finalize();
    if (bad_dirs)
        *bad_dirs = (size_t)o.bad;
    if (want_incomplete)
        *want_incomplete = (size_t)o.incomplete;
    if (o.status)
        return aip__fail((aip_status)o.status, "%s", o.error);
    return AIP_OK;
}
