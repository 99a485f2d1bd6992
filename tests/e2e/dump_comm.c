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
#include "dump_raw.h"

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
    return dump_raw_main(argc, argv, "dump_comm", dump);
}
