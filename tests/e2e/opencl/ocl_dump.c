/*
 * ocl_dump.c — what the analyser's model holds of a result directory's
 * device activity, as lines test_opencl.sh / check_opencl.py compare with
 * what the OpenCL program saw itself.
 *
 * Usage: ocl_dump RESULT_DIR
 * Output (one record per line, fields separated by tabs):
 *   device  ID NAME KIND SYNC_METHOD SAMPLES ERROR_NS TASKS
 *   call    API START_NS END_NS CORRELATION PARENT  (API calls by start time;
 *           PARENT the span open around it, "-" none)
 *   task    API NAME KIND DIR QUEUE_LABEL DURATION_NS BYTES G0 G1 G2 L0 L1 L2 FLAGS
 *           (tasks by their launching call's start time; API "-" = none;
 *           FLAGS the AIP_TASKF_* bits)
 *   memory  DEVICE BYTES KIND
 *   align   EARLY LATE CHECKED   (tasks starting before their launching
 *           call began; tasks ending after the first later wait on that
 *           thread returned; beyond the device's error bound)
 *   stats   TASKS CALLS_WITH_TASK UNALIGNED BAD_RECORDS DROPPED
 */
#include "model.h"
#include "raw_count.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *S(const aip__process *p, uint32_t id)
{
    size_t len;
    return aip__model_str(p, id, &len);
}

static int cmp_task_by_call(const void *a, const void *b, void *ctx)
{
    const aip__process *p = ctx;
    const aip__device_task *x = a, *y = b;
    int64_t xs = x->api >= 0 ? p->dev_api.v[x->api].start : INT64_MAX;
    int64_t ys = y->api >= 0 ? p->dev_api.v[y->api].start : INT64_MAX;
    return xs < ys ? -1 : xs > ys;
}

static int is_wait(const aip__process *p, const aip__device_call *c)
{
    const char *n = S(p, c->name);
    return !strcmp(n, "clFinish") || !strcmp(n, "clWaitForEvents");
}

int main(int argc, char **argv)
{
    char path[PATH_MAX];
    if (argc != 2 || !raw_find(argv[1], path, sizeof path)) {
        fprintf(stderr, "ocl_dump: no raw file under %s/FRAMEWORK\n", argc > 1 ? argv[1] : "?");
        return 2;
    }
    aip__model m;
    aip__model_init(&m);
    if (aip__model_load_raw(&m, path) || aip__model_derive(&m) || m.n_procs != 1) {
        fprintf(stderr, "ocl_dump: %s: %s\n", path, aip_last_error());
        return 1;
    }
    aip__process *p = &m.procs[0];
    for (uint32_t i = 0; i < p->devices.n; i++) {
        const aip__device *d = aip__model_device(p, i);
        if (d)
            printf("device\t%u\t%s\t%u\t%u\t%llu\t%lld\t%llu\n", i, S(p, d->name), d->kind,
                   d->sync_method, (unsigned long long)d->n_samples, (long long)d->error_ns,
                   (unsigned long long)d->tasks);
    }
    uint64_t with_task = 0;
    for (size_t i = 0; i < p->dev_api.n; i++) {
        const aip__device_call *c = &p->dev_api.v[i];
        const char *parent = "-";
        if (c->parent_span >= 0 && c->parent_thread < p->n_threads)
            parent = S(p, p->threads[c->parent_thread].spans[c->parent_span].name);
        printf("call\t%s\t%lld\t%lld\t%llu\t%s\n", S(p, c->name), (long long)c->start,
               (long long)c->end, (unsigned long long)c->correlation, parent);
    }
    qsort_r(p->dev_tasks.v, p->dev_tasks.n, sizeof *p->dev_tasks.v, cmp_task_by_call, p);
    uint64_t early = 0, late = 0, checked = 0;
    for (size_t i = 0; i < p->dev_tasks.n; i++) {
        const aip__device_task *t = &p->dev_tasks.v[i];
        const aip__device_call *c = t->api >= 0 ? &p->dev_api.v[t->api] : NULL;
        const aip__queue *q = aip__model_queue(p, t->queue);
        with_task += c != NULL;
        printf("task\t%s\t%s\t%u\t%u\t%s\t%lld\t%llu\t%u\t%u\t%u\t%u\t%u\t%u\t%u\n",
               c ? S(p, c->name) : "-", S(p, t->name), t->kind, t->direction,
               q ? S(p, q->label) : "-", (long long)(t->end - t->start),
               (unsigned long long)t->bytes, t->global[0], t->global[1], t->global[2],
               t->local[0], t->local[1], t->local[2], t->flags);
        /* Alignment: the command cannot start before its enqueue began, nor
         * end after the first later wait on the enqueuing thread returned
         * (every command of the accuracy program is waited for). */
        const aip__device *d = aip__model_device(p, t->device);
        if (!c || !d || d->error_ns < 0)
            continue;
        int64_t bound = d->error_ns + 1;
        checked++;
        if (t->start < c->start - bound) {
            early++;
            fprintf(stderr, "ocl_dump: %s starts %lld ns before its enqueue (bound %lld)\n",
                    S(p, t->name), (long long)(c->start - t->start), (long long)bound);
        }
        const aip__device_call *w = NULL;
        if (c->end >= t->end)
            w = c; /* a blocking command: done within its own call */
        for (size_t j = (size_t)t->api + 1; !w && j < p->dev_api.n; j++)
            if (p->dev_api.v[j].thread == c->thread && is_wait(p, &p->dev_api.v[j]))
                w = &p->dev_api.v[j];
        if (w && t->end > w->end + bound) {
            late++;
            fprintf(stderr, "ocl_dump: %s ends %lld ns after the next wait returned (bound %lld)\n",
                    S(p, t->name), (long long)(t->end - w->end), (long long)bound);
        }
    }
    for (size_t i = 0; i < p->dev_memory.n; i++) {
        const aip__device_mem *mm = &p->dev_memory.v[i];
        printf("memory\t%u\t%lld\t%u\n", mm->device, (long long)mm->bytes, mm->mem_kind);
    }
    printf("align\t%llu\t%llu\t%llu\n", (unsigned long long)early, (unsigned long long)late,
           (unsigned long long)checked);
    printf("stats\t%zu\t%llu\t%llu\t%llu\t%llu\n", p->dev_tasks.n, (unsigned long long)with_task,
           (unsigned long long)p->dev_unaligned_tasks, (unsigned long long)p->dev_bad_records,
           (unsigned long long)p->dropped);
    aip__model_free(&m);
    return 0;
}
