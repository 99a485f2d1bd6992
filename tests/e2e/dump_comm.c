/*
 * dump_comm.c — prints the communication a result directory recorded,
 * as loaded by the analyser (each raw file of FRAMEWORK/, through
 * aip__model_load_raw and aip__model_derive): one line per group and one
 * per operation, `key=value` fields separated by tabs, for
 * tests/e2e/check_mpi.py and tests/python/test_distributed.py to compare with what
 * the program sent.
 *
 *   dump_comm RESULT_DIR
 */
#include "model.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

static const char *S(const aip__process *p, uint32_t id)
{
    size_t len;
    return id ? aip__model_str(p, id, &len) : "";
}

static long long rank_or_none(uint32_t r) { return r == AIP_RAW_NO_RANK ? -1 : (long long)r; }

static void dump(const aip__process *p)
{
    printf("process\tbad=%llu\n", (unsigned long long)p->comm_bad_records);
    for (size_t g = 0; g < p->comm_groups.n; g++) {
        const aip__comm_group_info *cg = &p->comm_groups.v[g];
        if (!cg->present)
            continue;
        printf("group\tid=%zu\tname=%s\tmy_rank=%u\tn_ranks=%u\tranks=", g, S(p, cg->name),
               cg->my_rank, cg->n_ranks);
        for (uint32_t i = 0; i < cg->listed; i++)
            printf("%s%lld", i ? "," : "", rank_or_none(cg->ranks[i]));
        printf("\n");
    }
    for (size_t i = 0; i < p->comm_ops.n; i++) {
        const aip__comm_event *o = &p->comm_ops.v[i];
        printf("op\tname=%s\tkind=%u\tlib=%u\tgroup=%lld\tseq=%llu\tbytes=%llu\tcount=%llu\t"
               "dtype=%s\tpeer=%lld\troot=%lld\ttag=%d\tnb=%d\tstart=%lld\tend=%lld\n",
               S(p, o->name), o->kind, o->lib, rank_or_none(o->group),
               (unsigned long long)o->seq, (unsigned long long)o->bytes,
               (unsigned long long)o->count, S(p, o->dtype), rank_or_none(o->peer),
               rank_or_none(o->root), o->tag, (o->flags & AIP_COMMF_NONBLOCKING) ? 1 : 0,
               (long long)o->start, (long long)o->end);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: dump_comm RESULT_DIR\n");
        return 2;
    }
    char fw[PATH_MAX];
    snprintf(fw, sizeof fw, "%s/FRAMEWORK", argv[1]);
    DIR *d = opendir(fw);
    if (!d) {
        fprintf(stderr, "dump_comm: %s: cannot open\n", fw);
        return 1;
    }
    int status = 0, files = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 4, ".raw"))
            continue;
        char path[PATH_MAX + 300];
        snprintf(path, sizeof path, "%s/%s", fw, e->d_name);
        aip__model m;
        aip__model_init(&m);
        if (aip__model_load_raw(&m, path) || aip__model_derive(&m)) {
            fprintf(stderr, "dump_comm: %s: %s\n", path, aip_last_error());
            status = 1;
        } else {
            for (size_t i = 0; i < m.n_procs; i++)
                dump(&m.procs[i]);
            files++;
        }
        aip__model_free(&m);
    }
    closedir(d);
    if (!files && !status) {
        fprintf(stderr, "dump_comm: no raw file in %s\n", fw);
        status = 1;
    }
    return status;
}
