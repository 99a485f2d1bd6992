/*
 * fuzz_files.h — for the fuzz targets whose code under test reads a
 * directory (the cluster pass, the result directory's JSON readers): one
 * input becomes several files.  The input is cut at each "\n@@\n" into
 * parts, part i is the file of slot i (the target's table of relative
 * paths); an empty part leaves that file absent, so libFuzzer can try
 * "missing" as well as "empty" (a part of one newline) and anything else.
 * The directory lives under /dev/shm (else /tmp) and is emptied before
 * each input.
 */
#ifndef AIP_FUZZ_FILES_H
#define AIP_FUZZ_FILES_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FUZZ_SEP "\n@@\n"

static char fuzz_root[PATH_MAX];

static inline int fuzz_rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st, (void)flag;
    if (f->level > 0)
        remove(p);
    return 0;
}

static inline void fuzz_clean(void)
{
    if (fuzz_root[0])
        nftw(fuzz_root, fuzz_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static inline void fuzz_remove_root(void)
{
    fuzz_clean();
    if (fuzz_root[0])
        rmdir(fuzz_root);
}

/* The (empty) directory of this process's inputs. */
static inline const char *fuzz_dir(const char *name)
{
    if (!fuzz_root[0]) {
        struct stat st;
        const char *base = !stat("/dev/shm", &st) && S_ISDIR(st.st_mode) && !access("/dev/shm", W_OK)
                               ? "/dev/shm" : "/tmp";
        snprintf(fuzz_root, sizeof fuzz_root, "%s/%s_XXXXXX", base, name);
        if (!mkdtemp(fuzz_root)) {
            perror("mkdtemp");
            abort();
        }
        setenv("AIPROF_QUIET", "1", 1);
        atexit(fuzz_remove_root);
    }
    fuzz_clean();
    return fuzz_root;
}

/* Writes `data` to root/rel, creating the folders of rel. */
static inline void fuzz_write(const char *root, const char *rel, const void *data, size_t n)
{
    char path[2 * PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *s = path + strlen(root) + 1; (s = strchr(s, '/')); s++) {
        *s = 0;
        mkdir(path, 0700);
        *s = '/';
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    for (size_t done = 0; done < n;) {
        ssize_t w = write(fd, (const char *)data + done, n - done);
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    close(fd);
}

/* Cuts the input into the files of `slots` (n of them) under root. */
static inline void fuzz_write_parts(const char *root, const char *const *slots, size_t n,
                             const uint8_t *data, size_t size)
{
    const char *p = (const char *)data, *end = p + size;
    for (size_t i = 0; i < n && p <= end; i++) {
        const char *sep = memmem(p, (size_t)(end - p), FUZZ_SEP, sizeof FUZZ_SEP - 1);
        const char *stop = sep ? sep : end;
        if (stop > p)
            fuzz_write(root, slots[i], p, (size_t)(stop - p));
        if (!sep)
            break;
        p = sep + sizeof FUZZ_SEP - 1;
    }
}

#endif
