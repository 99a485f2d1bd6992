/*
 * elf_static.c — whether a command is a statically linked ELF program:
 * LD_PRELOAD, through which `aiprof run` loads libaiprof, is honoured by
 * the dynamic loader only, so such a program runs unprofiled and `aiprof
 * run` can only say why (run_cmd.c).  A program with no PT_INTERP program
 * header has no dynamic loader.
 */
#include "cli.h"

#include <elf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The file execvp() would run: `cmd` itself when it has a '/', else the
 * first executable of that name on PATH. */
static int resolve(const char *cmd, char *out, size_t cap)
{
    if (strchr(cmd, '/'))
        return snprintf(out, cap, "%s", cmd) < (int)cap ? 0 : -1;
    const char *path = getenv("PATH");
    for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
        size_t n = strcspn(p, ":");
        if (snprintf(out, cap, "%.*s/%s", (int)n, n ? p : ".", cmd) < (int)cap &&
            access(out, X_OK) == 0)
            return 0;
        p += n + (p[n] == ':');
    }
    return -1;
}

int cli_is_static_program(const char *cmd)
{
    char path[PATH_MAX];
    if (!cmd || resolve(cmd, path, sizeof path))
        return 0;
    struct stat st;
    if (stat(path, &st) || !S_ISREG(st.st_mode)) /* a FIFO would block the read */
        return 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    Elf64_Ehdr eh; /* 32-bit programs: not recognised (0), the generic message */
    int is_static = 0;
    if (fread(&eh, 1, sizeof eh, f) >= EI_NIDENT && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
        eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof(Elf64_Phdr) &&
        eh.e_phnum > 0 && eh.e_phnum < 4096 && fseek(f, (long)eh.e_phoff, SEEK_SET) == 0) {
        is_static = 1;
        Elf64_Phdr ph;
        for (unsigned i = 0; i < eh.e_phnum; i++) {
            if (fread(&ph, sizeof ph, 1, f) != 1) {
                is_static = 0; /* truncated: not known to be static */
                break;
            }
            if (ph.p_type == PT_INTERP) {
                is_static = 0;
                break;
            }
        }
    }
    fclose(f);
    return is_static;
}
