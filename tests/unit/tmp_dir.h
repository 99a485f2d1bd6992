/*
 * tmp_dir.h — test helper: a fresh temporary directory under /tmp for a
 * test's results, and its removal.  Plain libc: public-API tests use it.
 */
#ifndef AIP_TMP_DIR_H
#define AIP_TMP_DIR_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A fresh, empty temporary directory (the caller removes it with rm_rf). */
static inline void make_tmpdir(char *out, size_t cap, const char *tag)
{
    snprintf(out, cap, "/tmp/aiprof_test_%s_XXXXXX", tag);
    if (!mkdtemp(out))
        out[0] = '\0';
}

static inline void rm_rf(const char *dir)
{
    char cmd[PATH_MAX + 16];
    if (dir && *dir && strncmp(dir, "/tmp/", 5) == 0) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", dir);
    }
}

#endif
