/*
 * compare.c — `aiprof compare BASE NEW`: each model reduced to named rows
 * (docs/ADVISE.md "compare"): the step-time breakdown of the step trace,
 * ops by name and input shapes, device tasks by kernel name (or copy /
 * fill kind), runtime API calls, communication ops, and the memory peak
 * per device; then the two sets of rows matched by (section, name,
 * shapes).  Times are compared per step, so runs of different lengths
 * compare.  aip_compare() is the public entry.
 */
#include "insight.h"
#include "result.h"
#include "error.h"
#include "fs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define AIP_COMPARE_TOP 5 /* changes shown per rank of two jobs */

static int is_dir_path(const char *p)
{
    struct stat st;
    return !stat(p, &st) && S_ISDIR(st.st_mode);
}

static const char *const sections[] = {"step", "op", "kernel", "api", "comm", "memory"};

static uint64_t row_hash_of(const void *ctx, uint32_t i)
{
    return ((const aip__cmp *)ctx)->hash[i];
}

static int same_text(const char *a, const char *b, size_t bn)
{
    if (!a)
        return !b;
    return b && strlen(a) == bn && !memcmp(a, b, bn);
}

static char *dup_text(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

/* Add (count, total) of one side to the row of (section, name, shapes). */
static aip_status cmp_add(aip__cmp *c, const char *section, const char *name, size_t nlen,
                          const char *shapes, size_t slen, int side, uint64_t count, int64_t total)
{
    uint64_t h = aip__fnv1a_more(aip__fnv1a_str(section), name, nlen);
    if (shapes)
        h = aip__fnv1a_more(h ^ 1, shapes, slen);
    aip__ht_probe pr;
    for (uint32_t i = aip__ht_first(&c->index, h, &pr); i != AIP__HT_NONE;
         i = aip__ht_next(&c->index, &pr)) {
        aip__cmp_row *r = &c->rows[i];
        if (r->section == section && same_text(r->name, name, nlen) &&
            same_text(r->shapes, shapes, slen)) {
            r->count[side] += count;
            r->total[side] = aip__sat_add(r->total[side], total);
            return AIP_OK;
        }
    }
    if (aip__model_grow((void **)&c->rows, &c->cap, c->n + 1, sizeof *c->rows) ||
        aip__model_grow((void **)&c->hash, &c->hash_cap, c->n + 1, sizeof *c->hash))
        return aip__fail(AIP_ERR_NOMEM, "no memory for the comparison");
    aip__cmp_row *r = &c->rows[c->n];
    memset(r, 0, sizeof *r);
    r->section = section;
    r->name = dup_text(name, nlen);
    r->shapes = shapes ? dup_text(shapes, slen) : NULL;
    if (!r->name || (shapes && !r->shapes)) {
        free(r->name);
        free(r->shapes);
        return aip__fail(AIP_ERR_NOMEM, "no memory for the comparison");
    }
    c->hash[c->n] = h;
    if (aip__ht_add(&c->index, &pr, row_hash_of, c)) {
        free(r->name);
        free(r->shapes);
        return aip__fail(AIP_ERR_NOMEM, "no memory for the comparison");
    }
    c->n++;
    r->count[side] = count;
    r->total[side] = total;
    return AIP_OK;
}

static aip_status add_cstr(aip__cmp *c, const char *section, const char *name, int side,
                           uint64_t count, int64_t total)
{
    return cmp_add(c, section, name, strlen(name), NULL, 0, side, count, total);
}

/* The step trace's columns, summed over its rows (device rows when there
 * are any, else host rows); count = rows. */
static aip_status add_steps(aip__cmp *c, const aip__model *m, int side)
{
    int dev = 0;
    for (size_t i = 0; i < m->n_step_rows; i++)
        dev |= m->step_rows[i].device >= 0;
    static const char *const cols[] = {"Step", "Computing", "Free", "Communication",
                                       "Communication(Not Overlapped)", "Bubble", "Preparing"};
    int64_t sum[7] = {0};
    uint64_t rows = 0;
    for (size_t i = 0; i < m->n_step_rows; i++) {
        const aip__step_row *r = &m->step_rows[i];
        if ((r->device >= 0) != dev)
            continue;
        int64_t v[7] = {r->end - r->start, r->computing, r->free, r->communication,
                        r->comm_not_overlapped, r->bubble, r->preparing};
        for (int k = 0; k < 7; k++)
            sum[k] = aip__sat_add(sum[k], v[k]);
        rows++;
    }
    for (int k = 0; k < 7 && rows; k++) {
        aip_status s = add_cstr(c, sections[0], cols[k], side, rows, sum[k]);
        if (s)
            return s;
    }
    return AIP_OK;
}

/* One process's ops grouped by (name id, shapes id) first, cheap integer
 * keys, then folded into the rows by text. */
typedef struct op_acc {
    uint32_t name, shapes;
    uint64_t count;
    int64_t total;
} op_acc;

static uint64_t op_hash_of(const void *ctx, uint32_t i)
{
    const op_acc *a = &((const op_acc *)ctx)[i];
    return aip__hash_u64_pair(a->name, a->shapes);
}

static aip_status add_ops(aip__cmp *c, const aip__process *p, int side)
{
    aip__ht t = {0};
    op_acc *acc = NULL;
    size_t cap = 0;
    aip_status s = AIP_OK;
    for (size_t ti = 0; ti < p->n_threads && !s; ti++) {
        const aip__thread *th = &p->threads[ti];
        for (size_t i = 0; i < th->n_spans && !s; i++) {
            const aip__span *sp = &th->spans[i];
            if (sp->kind != AIP_SPAN_OP || sp->piece)
                continue;
            uint32_t shapes = 0;
            if (sp->aux) {
                aip__op_fields f;
                aip__model_op_fields(th, sp, &f);
                shapes = f.has_shapes ? f.input_shapes : 0;
            }
            aip__ht_probe pr;
            uint32_t k = aip__ht_first(&t, aip__hash_u64_pair(sp->name, shapes), &pr);
            for (; k != AIP__HT_NONE; k = aip__ht_next(&t, &pr))
                if (acc[k].name == sp->name && acc[k].shapes == shapes)
                    break;
            if (k == AIP__HT_NONE) {
                if (aip__model_grow((void **)&acc, &cap, t.n + 1, sizeof *acc) ||
                    aip__ht_add(&t, &pr, op_hash_of, acc)) {
                    s = aip__fail(AIP_ERR_NOMEM, "no memory for the comparison");
                    break;
                }
                k = (uint32_t)(t.n - 1);
                acc[k] = (op_acc){sp->name, shapes, 0, 0};
            }
            acc[k].count++;
            acc[k].total = aip__sat_add(acc[k].total, sp->end - sp->start);
        }
    }
    for (size_t k = 0; k < t.n && !s; k++) {
        size_t nl, sl = 0;
        const char *name = aip__model_str(p, acc[k].name, &nl);
        const char *sh = acc[k].shapes ? aip__model_str(p, acc[k].shapes, &sl) : NULL;
        s = cmp_add(c, sections[1], name, nl, sh, sl, side, acc[k].count, acc[k].total);
    }
    free(acc);
    aip__ht_free(&t);
    return s;
}

static aip_status add_device(aip__cmp *c, const aip__process *p, int side)
{
    aip_status s = AIP_OK;
    for (size_t i = 0; i < p->dev_tasks.n && !s; i++) {
        size_t len;
        const char *type = aip__task_type(p, &p->dev_tasks.v[i], &len);
        s = cmp_add(c, sections[2], type, len, NULL, 0, side, 1,
                    p->dev_tasks.v[i].end - p->dev_tasks.v[i].start);
    }
    for (size_t i = 0; i < p->dev_api.n && !s; i++) {
        size_t len;
        const char *name = aip__model_str(p, p->dev_api.v[i].name, &len);
        s = cmp_add(c, sections[3], name, len, NULL, 0, side, 1,
                    p->dev_api.v[i].end - p->dev_api.v[i].start);
    }
    for (size_t i = 0; i < p->comm_ops.n && !s; i++) {
        size_t len;
        const char *name = aip__model_str(p, p->comm_ops.v[i].name, &len);
        s = cmp_add(c, sections[4], name, len, NULL, 0, side, 1,
                    p->comm_ops.v[i].end - p->comm_ops.v[i].start);
    }
    return s;
}

static aip_status add_model(aip__cmp *c, const aip__model *m, int side)
{
    c->n_steps[side] = m->n_steps ? m->n_steps : 1;
    int64_t span = 0;
    if (m->n_steps)
        for (size_t i = 0; i < m->n_steps; i++)
            span = aip__sat_add(span, m->steps[i].end - m->steps[i].start);
    else
        span = m->last_ns - m->first_ns;
    c->mean_step_ns[side] = (double)span / (double)c->n_steps[side];
    aip_status s = add_steps(c, m, side);
    for (size_t pi = 0; pi < m->n_procs && !s; pi++)
        if (!(s = add_ops(c, &m->procs[pi], side)))
            s = add_device(c, &m->procs[pi], side);
    for (size_t i = 0; i < m->n_mem_peaks && !s; i++) {
        const aip__mem_peak *pk = &m->mem_peaks[i];
        char name[64];
        snprintf(name, sizeof name, "peak allocated, device type %u index %d",
                 pk->device_type, pk->device_index);
        s = add_cstr(c, sections[5], name, side, pk->records, pk->max_allocated);
    }
    return s;
}

static int section_rank(const char *s)
{
    for (int i = 0; i < 6; i++)
        if (s == sections[i])
            return i;
    return 6;
}

static int row_cmp(const void *a, const void *b)
{
    const aip__cmp_row *x = a, *y = b;
    int sx = section_rank(x->section), sy = section_rank(y->section);
    if (sx != sy)
        return sx - sy;
    double dx = x->diff < 0 ? -x->diff : x->diff, dy = y->diff < 0 ? -y->diff : y->diff;
    if (dx != dy)
        return dx > dy ? -1 : 1;
    return strcmp(x->name, y->name);
}

aip_status aip__compare_build(const aip__model *base, const aip__model *cur, aip__cmp *c)
{
    memset(c, 0, sizeof *c);
    aip_status s = add_model(c, base, 0);
    if (!s)
        s = add_model(c, cur, 1);
    if (s) {
        aip__compare_free(c);
        return s;
    }
    for (size_t i = 0; i < c->n; i++) {
        aip__cmp_row *r = &c->rows[i];
        for (int k = 0; k < 2; k++)
            r->per_step[k] = r->section == sections[5] ? (double)r->total[k]
                           : r->section == sections[0]
                               ? (r->count[k] ? (double)r->total[k] / (double)r->count[k] : 0)
                               : (double)r->total[k] / (double)c->n_steps[k];
        r->diff = r->per_step[1] - r->per_step[0];
    }
    /* the index numbers rows in insertion order: drop it before sorting */
    aip__ht_free(&c->index);
    qsort(c->rows, c->n, sizeof *c->rows, row_cmp);
    return AIP_OK;
}

void aip__compare_free(aip__cmp *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->rows[i].name);
        free(c->rows[i].shapes);
    }
    free(c->rows);
    free(c->hash);
    aip__ht_free(&c->index);
    memset(c, 0, sizeof *c);
}

int aip__compare_shown(const aip__cmp *c, const aip__cmp_row *r, double threshold)
{
    double d = r->diff < 0 ? -r->diff : r->diff;
    if (d == 0)
        return 0;
    double ref = r->section == sections[5]
                     ? (r->per_step[0] > 0 ? r->per_step[0] : r->per_step[1])
                     : c->mean_step_ns[0];
    return d >= threshold * ref;
}

/* A result directory itself (raw data in FRAMEWORK/), not a folder of them. */
static int is_result_dir(const char *dir)
{
    char fw[4096];
    struct stat st;
    snprintf(fw, sizeof fw, "%s/FRAMEWORK", dir);
    return !stat(fw, &st) && S_ISDIR(st.st_mode);
}

static aip_status write_outputs(const aip__cmp *c, const aip__cmp_job *j, const char *base,
                                const char *cur, int fd, const char *csv, const char *html,
                                double threshold)
{
    aip__out o;
    aip_status st = AIP_OK;
    if (fd >= 0 && !(st = aip__out_init_fd(&o, fd))) {
        if (j)
            aip__compare_job_text(j, threshold, AIP_COMPARE_TOP, &o);
        else
            aip__compare_text(c, threshold, &o);
        st = aip__out_close(&o);
    }
    if (!st && csv && !(st = aip__out_open(&o, csv))) {
        if (j)
            aip__compare_job_csv(j, threshold, &o);
        else
            aip__compare_csv(c, threshold, &o);
        st = aip__out_close(&o);
    }
    if (!st && html && !(st = aip__out_open(&o, html))) {
        if (j)
            aip__compare_job_html(j, threshold, AIP_COMPARE_TOP, base, cur, &o);
        else
            aip__compare_html(c, threshold, base, cur, &o);
        st = aip__out_close(&o);
    }
    return st;
}

aip_status aip_compare(const char *base_dir, const char *new_dir, int fd,
                       const char *csv_path, const char *html_path, double threshold)
{
    if (!base_dir || !new_dir)
        return aip__fail(AIP_ERR_INVALID_ARG, "two result directories are required");
    if (!(threshold >= 0) || threshold > 1e6)
        return aip__fail(AIP_ERR_INVALID_ARG, "threshold must be a share >= 0, not %g", threshold);
    aip_status st = csv_path ? aip__path_usable(csv_path, "CSV path") : AIP_OK;
    if (!st && html_path)
        st = aip__path_usable(html_path, "HTML path");
    if (st)
        return st;
    int quiet = getenv("AIPROF_QUIET") && *getenv("AIPROF_QUIET") == '1';
    int job[2] = {!is_result_dir(base_dir), !is_result_dir(new_dir)};
    if (job[0] && job[1]) { /* two jobs: rank by rank */
        struct stat sb, sn;
        if (stat(base_dir, &sb) || stat(new_dir, &sn) || !S_ISDIR(sb.st_mode) ||
            !S_ISDIR(sn.st_mode))
            return aip__fail(AIP_ERR_NOT_FOUND, "%s: not a directory",
                             stat(base_dir, &sb) || !S_ISDIR(sb.st_mode) ? base_dir : new_dir);
        aip__cmp_job j;
        if ((st = aip__compare_job_build(base_dir, new_dir, quiet, &j)))
            return st;
        st = write_outputs(NULL, &j, base_dir, new_dir, fd, csv_path, html_path, threshold);
        aip__compare_job_free(&j);
        return st;
    }
    if (job[0] != job[1] && is_dir_path(job[0] ? base_dir : new_dir))
        return aip__fail(AIP_ERR_INVALID_ARG, "%s holds result directories and %s is one: "
                         "compare two result directories or two jobs",
                         job[0] ? base_dir : new_dir, job[0] ? new_dir : base_dir);
    aip__run_log r[2];
    aip__model m[2];
    aip__model_init(&m[1]);
    aip__runlog_init(&r[1], new_dir, quiet);
    st = aip__result_open(base_dir, quiet, &r[0], &m[0]);
    if (!st) {
        aip__runlog_free(&r[1]);
        st = aip__result_open(new_dir, quiet, &r[1], &m[1]);
    }
    aip__cmp c;
    if (!st)
        st = aip__compare_build(&m[0], &m[1], &c);
    if (!st) {
        st = write_outputs(&c, NULL, base_dir, new_dir, fd, csv_path, html_path, threshold);
        aip__compare_free(&c);
    }
    for (int k = 0; k < 2; k++) {
        aip__model_free(&m[k]);
        aip__runlog_free(&r[k]);
    }
    return st;
}
