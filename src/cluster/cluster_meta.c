/*
 * cluster_meta.c — the small per-rank facts `aiprof cluster` needs beside
 * the step and communication summaries: profiler_metadata.json
 * (distributed_args, parallel_group_info; cluster_parallel.c uses them)
 * and where the rank ran — its host (uid and name) and devices — for
 * cluster_analysis.db's HostInfo and RankDeviceMap and for telling
 * same-host links from cross-host ones (cluster_links.c).
 *
 * Host and devices come from ascend_pytorch_profiler_{rank}.db's HOST_INFO
 * (first row) and RANK_DEVICE_MAP, as msprof-analyze reads them (opened
 * read-only, never through a symbolic link); a rank written without the
 * db (export type text) still has its host name in
 * profiler_info_{rank}.json ("aiprof": {"hostname"}), and no device list.
 * What cannot be read is left out (NULL / none): these tables are extras,
 * a rank is not refused for lacking them.
 */
#include "cluster.h"
#include "error.h"
#include "fs.h"

#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define META_MAX (64u << 20)

static char *dup_text(const unsigned char *s)
{
    return s ? strdup((const char *)s) : NULL;
}

/* HOST_INFO and RANK_DEVICE_MAP of the rank's db; 0 also when absent. */
static int read_db(aip__rank_dir *r, const char *db_path)
{
    struct stat st;
    if (lstat(db_path, &st) || !S_ISREG(st.st_mode))
        return 0;
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOFOLLOW, NULL) !=
        SQLITE_OK) {
        sqlite3_close(db);
        return 0;
    }
    int nomem = 0;
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db, "SELECT hostUid, hostName FROM HOST_INFO LIMIT 1", -1, &q,
                           NULL) == SQLITE_OK &&
        sqlite3_step(q) == SQLITE_ROW) {
        const unsigned char *uid = sqlite3_column_text(q, 0), *name = sqlite3_column_text(q, 1);
        r->host_uid = dup_text(uid);
        if (name) {
            free(r->host_name);
            r->host_name = dup_text(name);
        }
        nomem = (uid && !r->host_uid) || (name && !r->host_name);
    }
    sqlite3_finalize(q);
    q = NULL;
    if (!nomem &&
        sqlite3_prepare_v2(db, "SELECT rankId, deviceId FROM RANK_DEVICE_MAP", -1, &q, NULL) ==
            SQLITE_OK) {
        while (sqlite3_step(q) == SQLITE_ROW) {
            long long *d = realloc(r->devices, (r->n_devices + 1) * sizeof *d);
            if (!d) {
                nomem = 1;
                break;
            }
            r->devices = d;
            d[r->n_devices++] = sqlite3_column_type(q, 1) == SQLITE_NULL
                                    ? -1
                                    : (long long)sqlite3_column_int64(q, 1);
        }
    }
    sqlite3_finalize(q);
    sqlite3_close(db);
    return nomem ? -1 : 0;
}

/* A JSON object file; NULL when absent, and when unreadable or not an
 * object with a warning naming it (unless quiet): what it would have
 * given is missing from the outputs, and the user should know why. */
static json_t *load_json(const aip__cluster *c, const char *path, const char *lost)
{
    char *text = NULL;
    size_t size = 0;
    struct stat st;
    if (lstat(path, &st))
        return NULL;
    if (aip__read_file_nofollow(path, META_MAX, &text, &size)) {
        if (!c->quiet)
            aip__warn("%s not read (%s): %s", path, lost, aip_last_error());
        return NULL;
    }
    json_error_t err;
    json_t *j = json_loadb(text, size, 0, &err);
    free(text);
    if (!j || !json_is_object(j)) {
        if (!c->quiet)
            aip__warn("%s is not a JSON object (line %d: %s): %s", path, j ? 1 : err.line,
                      j ? "another JSON value" : err.text, lost);
        json_decref(j);
        j = NULL;
    }
    return j;
}

/* r->host, the key of the rank's clock for the communication pass
 * (cluster_comm.c): "hostname/host_uid" of profiler_info's "aiprof" block,
 * both because two machines may share a name, or clone a MAC; NULL when it
 * names neither (the rank is then its own clock).  -1: no memory. */
static int clock_host(aip__rank_dir *r, const char *host, const char *uid)
{
    if (!host && !uid)
        return 0;
    size_t n = strlen(uid ? uid : "") + strlen(host ? host : "") + 2;
    if (!(r->host = malloc(n)))
        return -1;
    snprintf(r->host, n, "%s/%s", host ? host : "", uid ? uid : "");
    return 0;
}

int aip__cluster_read_meta(const aip__cluster *c, aip__rank_dir *r)
{
    char path[PATH_MAX], name[64], out[PATH_MAX];
    if (!aip__join(path, sizeof path, r->path, "profiler_metadata.json"))
        r->meta = load_json(c, path, "its distributed_args and parallel_group_info are not used");
    snprintf(name, sizeof name, "profiler_info_%ld.json", r->rank);
    if (!aip__join(path, sizeof path, r->path, name)) {
        json_t *info = load_json(c, path, "the rank's host name is unknown");
        json_t *a = json_object_get(info, "aiprof");
        const char *host = json_string_value(json_object_get(a, "hostname"));
        const char *uid = json_string_value(json_object_get(a, "host_uid"));
        int nomem = (host && !(r->host_name = strdup(host))) || clock_host(r, host, uid);
        json_decref(info);
        if (nomem)
            return -1;
    }
    snprintf(name, sizeof name, "ascend_pytorch_profiler_%ld.db", r->rank);
    if (aip__join(out, sizeof out, r->path, "ASCEND_PROFILER_OUTPUT") ||
        aip__join(path, sizeof path, out, name))
        return 0;
    return read_db(r, path);
}

void aip__cluster_free_meta(aip__rank_dir *r)
{
    json_decref(r->meta);
    free(r->host_uid);
    free(r->host_name);
    free(r->devices);
    r->meta = NULL;
    r->host_uid = r->host_name = NULL;
    r->devices = NULL;
    r->n_devices = 0;
}
