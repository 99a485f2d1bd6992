/*
 * dump_raw.h — the main() of the test dump tools (dump_comm, dump_host):
 * every raw file of RESULT_DIR/FRAMEWORK/ loaded and derived as the
 * analyser does, then the tool's dump() of each process.  Exit 0, 1 when a
 * file failed or there was none, 2 for usage.
 */
#ifndef AIP_TEST_DUMP_RAW_H
#define AIP_TEST_DUMP_RAW_H

#include "model.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

static int dump_raw_main(int argc, char **argv, const char *tool,
                         void (*dump)(const aip__process *p))
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s RESULT_DIR\n", tool);
        return 2;
    }
    char fw[PATH_MAX];
    snprintf(fw, sizeof fw, "%s/FRAMEWORK", argv[1]);
    DIR *d = opendir(fw);
    if (!d) {
        fprintf(stderr, "%s: %s: cannot open\n", tool, fw);
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
            fprintf(stderr, "%s: %s: %s\n", tool, path, aip_last_error());
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
        fprintf(stderr, "%s: no raw file in %s\n", tool, fw);
        status = 1;
    }
    return status;
}

#endif
