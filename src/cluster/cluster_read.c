/*
 * cluster_read.c — one rank's text summaries, as `aiprof cluster` reads
 * them (cluster.c decides which ranks and when): step_trace_time.csv (RFC
 * 4180: a quoted Step may hold commas, quotes and line breaks),
 * communication.json and communication_matrix.json, each in one read,
 * never through a symbolic link, with a size limit; what is damaged gives
 * the rank a problem naming the file, and the rank is left out.
 */
#include "cluster.h"
#include "error.h"
#include "fs.h"
#include "text_escape.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CSV_MAX (256u << 20)
#define COMM_JSON_MAX (1024u << 20)

/* `s` cleaned for a terminal (aip__term_clean) and cut to fit `cap`. */
static void term_copy(char *out, size_t cap, const char *s)
{
    size_t n = strnlen(s, cap - 1);
    out[aip__term_clean(s, n, out)] = 0;
}

/* Split the CSV record at *pos in place (RFC 4180: a quoted cell may hold
 * commas, "" and line breaks; aiprof quotes a step name that needs it)
 * and move *pos past its line break; a record ending at a line break
 * inside quotes is the end of the text.  @return the number of cells. */
static size_t split(char **pos, char **cells, size_t cap)
{
    char *p = *pos, *d = p;
    size_t n = 0;
    for (;;) {
        char *start = d;
        if (n < cap)
            cells[n] = start;
        n++;
        if (*p == '"') {
            for (p++; *p && !(*p == '"' && p[1] != '"'); p++)
                *d++ = *p == '"' ? *++p : *p;
            if (*p == '"')
                p++;
        }
        while (*p && *p != ',' && *p != '\n')
            *d++ = *p++;
        char end = *p;
        if (end != ',' && d > start && d[-1] == '\r')
            d--; /* CRLF */
        *d = 0;
        if (end != ',') {
            *pos = end ? p + 1 : p;
            return n;
        }
        p++;
        d++;
    }
}

static int read_step_trace(const aip__cluster *c, aip__rank_dir *r, const char *csv)
{
    char *text = NULL;
    size_t size = 0;
    aip_status s = aip__read_file_nofollow(csv, CSV_MAX, &text, &size);
    if (s) {
        aip__cluster_problem(r, "%s", aip_last_error());
        return s == AIP_ERR_NOMEM ? -1 : 0;
    }
    if (!size || text[size - 1] != '\n') {
        aip__cluster_problem(r, "ASCEND_PROFILER_OUTPUT/step_trace_time.csv is truncated (%s)",
                             size ? "its last line has no end" : "empty");
        free(text);
        return 0;
    }
    enum { MAXC = 64 };
    char *cells[MAXC];
    int step_at = -1, dev_at = -1, ok = 1, nomem = 0;
    size_t n_head = 0, line_no = 0;
    int keep[MAXC];
    for (char *line = text; ok && *line;) {
        int blank = *line == '\n' || (line[0] == '\r' && line[1] == '\n');
        line_no++;
        size_t n = split(&line, cells, MAXC);
        if (n > MAXC) {
            aip__cluster_problem(r, "step_trace_time.csv: %zu columns (at most %d)", n, MAXC);
            ok = 0;
        } else if (line_no == 1) {
            n_head = n;
            if (!(r->cols = calloc(n, sizeof *r->cols))) {
                nomem = 1;
                break;
            }
            for (size_t i = 0; i < n; i++) {
                keep[i] = 0;
                if (!strcmp(cells[i], "Step"))
                    step_at = (int)i;
                else if (!strcmp(cells[i], "Device_id"))
                    dev_at = (int)i; /* msprof-analyze drops it */
                else if (!(r->cols[r->n_cols++] = strdup(cells[i])))
                    nomem = 1;
                else
                    keep[i] = 1;
            }
            if (step_at < 0) {
                aip__cluster_problem(r, "step_trace_time.csv has no Step column");
                ok = 0;
            }
        } else if (blank) {
            continue;
        } else if (n != n_head) {
            aip__cluster_problem(r,
                                 "step_trace_time.csv line %zu has %zu cells, the header %zu "
                                 "(truncated or damaged)",
                                 line_no, n, n_head);
            ok = 0;
        } else {
            aip__step_trace_row *rows = realloc(r->rows, (r->n_rows + 1) * sizeof *rows);
            if (!rows) {
                nomem = 1;
                break;
            }
            r->rows = rows;
            aip__step_trace_row *row = &rows[r->n_rows];
            row->step = strdup(cells[step_at]);
            row->v = calloc(r->n_cols ? r->n_cols : 1, sizeof *row->v);
            r->n_rows++;
            if (!row->step || !row->v) {
                nomem = 1;
                break;
            }
            for (size_t i = 0, k = 0; i < n; i++) {
                if (!keep[i])
                    continue;
                char *end;
                double v = strtod(cells[i], &end);
                if (end == cells[i] || *end) {
                    /* msprof-analyze: a cell that is not a number is 0, with a warning */
                    if (!c->quiet) {
                        char cell[64], col[64];
                        term_copy(cell, sizeof cell, cells[i]);
                        term_copy(col, sizeof col, r->cols[k]);
                        aip__warn("%s: step_trace_time.csv line %zu: '%s' in %s is not a "
                                  "number; 0 used",
                                  r->path, line_no, cell, col);
                    }
                    v = 0;
                }
                row->v[k++] = v;
            }
        }
    }
    (void)dev_at;
    free(text);
    if (nomem)
        return -1;
    if (ok && !r->n_rows)
        aip__cluster_problem(r, "step_trace_time.csv has no step rows");
    return 0;
}

/* One of the rank's JSON summaries, or NULL (absent: Level0 or no
 * communication; unreadable: the rank gets a problem naming the file). */
static json_t *read_summary_json(aip__rank_dir *r, const char *path, const char *name)
{
    struct stat st;
    if (lstat(path, &st))
        return NULL;
    if ((unsigned long long)st.st_size > COMM_JSON_MAX) { /* msprof-analyze has such limits too */
        aip__cluster_problem(r, "ASCEND_PROFILER_OUTPUT/%s is %lld bytes, more than %u MiB", name,
                             (long long)st.st_size, COMM_JSON_MAX >> 20);
        return NULL;
    }
    /* One read and json_loadb: json_load_file reads a character at a time,
     * the larger part of the cross-rank pass at 1,000 ranks. */
    char *text = NULL;
    size_t size = 0;
    json_error_t err = {.line = 0, .text = ""};
    json_t *j = NULL;
    if (aip__read_file_nofollow(path, COMM_JSON_MAX, &text, &size) == AIP_OK)
        j = json_loadb(text, size, 0, &err);
    else
        snprintf(err.text, sizeof err.text, "%s", aip_last_error());
    free(text);
    if (!j || !json_is_object(j)) {
        aip__cluster_problem(r,
                             "ASCEND_PROFILER_OUTPUT/%s is truncated or not JSON (line %d: %s)",
                             name, err.line, err.text);
        json_decref(j);
        return NULL;
    }
    return j;
}

/* communication.json and communication_matrix.json, and the span of the
 * collectives' start times (what tells a run that is not this job's). */
static void read_comm(aip__rank_dir *r, const char *path)
{
    r->comm = read_summary_json(r, path, "communication.json");
    if (!r->comm)
        return;
    char mpath[PATH_MAX], dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash && (*slash = 0, !aip__join(mpath, PATH_MAX, dir, "communication_matrix.json")))
        r->matrix = read_summary_json(r, mpath, "communication_matrix.json");
    aip__cluster_comm_span(r);
}

/* r->first_us / last_us: the span of its collectives' start times. */
void aip__cluster_comm_span(aip__rank_dir *r)
{
    const char *step, *op;
    json_t *sv, *ov;
    json_object_foreach(r->comm, step, sv) {
        json_t *coll = json_object_get(sv, "collective");
        json_object_foreach(coll, op, ov) {
            json_t *ts = json_object_get(json_object_get(ov, "Communication Time Info"),
                                         "Start Timestamp(us)");
            if (!json_is_number(ts))
                continue;
            double t = json_number_value(ts);
            if (isnan(r->first_us) || t < r->first_us)
                r->first_us = t;
            if (isnan(r->last_us) || t > r->last_us)
                r->last_us = t;
        }
    }
}

int aip__cluster_read_text(const aip__cluster *c, aip__rank_dir *r, const char *csv,
                           const char *comm)
{
    if (read_step_trace(c, r, csv))
        return -1;
    if (!r->problem[0])
        read_comm(r, comm);
    return 0;
}
