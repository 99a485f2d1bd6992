/*
 * result_clean.c — leaving a result directory the way the seed describes it
 * after an analysis.
 *
 * ASCEND_PROFILER_OUTPUT holds exactly what this analysis wrote: torch_npu
 * deletes the folder before parsing; aiprof instead writes every file under
 * a temporary name first and removes the leftovers afterwards, so a failed
 * analysis still leaves the previous outputs.  With data_simplification
 * (the default) the directory keeps only what the seed lists: the
 * profiler_*.json files, ASCEND_PROFILER_OUTPUT, FRAMEWORK, logs and PROF_*
 * raw data; anything else at its top level is removed and logged.
 * Removal never follows a symbolic link (a link is removed, not its target).
 */
#include "result.h"
#include "error.h"
#include "fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_DEPTH 32

static int remove_at(int parent, const char *name, int depth)
{
    if (unlinkat(parent, name, 0) == 0)
        return 0; /* a file or a symbolic link */
    if ((errno != EISDIR && errno != EPERM) || depth > MAX_DEPTH)
        return -1;
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return -1;
    }
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            rc |= remove_at(dirfd(d), e->d_name, depth + 1);
    closedir(d);
    return rc ? rc : unlinkat(parent, name, AT_REMOVEDIR);
}

aip_status aip__remove_tree(const char *path)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
        return aip__fail(AIP_ERR_INVALID_ARG, "refusing to remove %s", path);
    if (slash) {
        size_t n = (size_t)(slash - path);
        if (n >= sizeof dir)
            return aip__fail(AIP_ERR_PATH, "path too long: %s", path);
        memcpy(dir, path, n);
        dir[n ? n : 1] = 0;
        if (!n)
            dir[0] = '/';
    } else {
        memcpy(dir, ".", 2);
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return aip__fail(AIP_ERR_IO, "cannot open %s: %s", dir, strerror(errno));
    int rc = remove_at(fd, base, 0);
    int err = errno;
    close(fd);
    if (rc && err != ENOENT)
        return aip__fail(AIP_ERR_IO, "cannot remove %s: %s", path, strerror(err));
    return AIP_OK;
}

typedef int (*keep_fn)(const char *name, const void *ctx);

/* Remove the entries of `dir` that `keep` rejects; each removal is logged. */
static aip_status prune(aip__run_log *r, const char *dir, const char *label, keep_fn keep,
                        const void *ctx)
{
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? AIP_OK : aip__fail(AIP_ERR_IO, "cannot list %s: %s", dir,
                                                     strerror(errno));
    aip_status s = AIP_OK;
    struct dirent *e;
    /* Collect first: removing while readdir() walks is unspecified. */
    char (*names)[256] = NULL;
    size_t n = 0, cap = 0;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || keep(e->d_name, ctx))
            continue;
        if (aip__model_grow((void **)&names, &cap, n + 1, sizeof *names)) {
            s = AIP_ERR_NOMEM;
            break;
        }
        snprintf(names[n++], 256, "%s", e->d_name);
    }
    closedir(d);
    for (size_t i = 0; i < n && !s; i++) {
        char path[PATH_MAX];
        s = aip__join(path, sizeof path, dir, names[i]);
        if (!s)
            s = aip__remove_tree(path);
        if (!s)
            aip__runlog_line(r, "removed %s%s", label, names[i]);
    }
    free(names);
    return s;
}

static int in_list(const char *name, const void *ctx)
{
    for (const char *const *k = ctx; *k; k++)
        if (!strcmp(name, *k))
            return 1;
    return 0;
}

aip_status aip__output_prune(aip__run_log *r, const char *const *keep)
{
    char out[PATH_MAX];
    aip_status s = aip__join(out, sizeof out, r->dir, AIP_OUTPUT_DIR);
    return s ? s : prune(r, out, AIP_OUTPUT_DIR "/", in_list, keep);
}

/* The seed: 仅保留profiler_*.json文件、ASCEND_PROFILER_OUTPUT目录、PROF_XXX目录下的
 * 原始性能数据、FRAMEWORK目录和logs目录. */
static int seed_keeps(const char *name, const void *ctx)
{
    (void)ctx;
    size_t n = strlen(name);
    if (n > 14 && !strncmp(name, "profiler_", 9) && !strcmp(name + n - 5, ".json"))
        return 1;
    return !strcmp(name, AIP_OUTPUT_DIR) || !strcmp(name, "FRAMEWORK") ||
           !strcmp(name, "logs") || !strncmp(name, "PROF_", 5);
}

aip_status aip__simplify(aip__run_log *r)
{
    return prune(r, r->dir, "", seed_keeps, NULL);
}
