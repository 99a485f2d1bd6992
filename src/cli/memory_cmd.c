/*
 * memory_cmd.c — `aiprof memory DIR --output FILE [--device DEV]`:
 * torch's export_memory_timeline() for a result directory, offline.
 * The format follows FILE's suffix (.html, .json, .json.gz, .raw.json.gz).
 *
 * Uses only the public API (aip_export_memory_timeline()).
 */
#include "cli.h"

#include "aiprof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void memory_usage(FILE *f)
{
    fputs("Usage: aiprof memory DIR --output FILE [--device DEVICE] [-q]\n"
          "\n"
          "Export the memory timeline of a result directory (export_memory_timeline).\n"
          "FILE's suffix chooses the format:\n"
          "  .html          one self-contained page: memory by category over time\n"
          "  .json          [times, [sizes by category]]\n"
          "  .json.gz       the same, gzip-compressed\n"
          "  .raw.json.gz   [(timestamp, action, numbytes, category), ...]\n"
          "\n"
          "Options:\n"
          "  -o, --output FILE      the file to write (parent directories are created)\n"
          "  -d, --device DEVICE    auto (default: the CPU if the framework recorded its\n"
          "                         memory, else the device that has records), cpu,\n"
          "                         npu:N or cuda:N\n"
          "  -q, --quiet            no warnings\n"
          "  -h, --help             show this help\n"
          "\n"
          "Exit status: 0 written, 1 failed, 2 usage error.\n",
          f);
}

int cli_memory(int argc, char **argv)
{
    const char *dir = NULL, *out = NULL, *device = "auto";
    int quiet = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            memory_usage(stdout);
            return AIP_EXIT_OK;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output") || !strcmp(a, "-d") ||
                   !strcmp(a, "--device")) {
            if (i + 1 >= argc)
                return cli_usage_error("memory", "option needs a value: %s", a);
            if (a[1] == 'o' || a[2] == 'o')
                out = argv[++i];
            else
                device = argv[++i];
        } else if (!strncmp(a, "--output=", 9)) {
            out = a + 9;
        } else if (!strncmp(a, "--device=", 9)) {
            device = a + 9;
        } else if (a[0] == '-' && a[1]) {
            return cli_usage_error("memory", "unknown option %s", a);
        } else if (!dir) {
            dir = a;
        } else {
            return cli_usage_error("memory", "more than one DIR: %s", a);
        }
    }
    if (!dir)
        return cli_usage_error("memory", "no result directory given");
    if (!out)
        return cli_usage_error("memory", "no --output FILE given");
    if (quiet)
        setenv("AIPROF_QUIET", "1", 1); /* the library's warnings */
    uint64_t records = 0;
    if (aip_export_memory_timeline(dir, out, device, &records) != AIP_OK) {
        fprintf(stderr, "aiprof memory: %s: %s\n", dir, aip_last_error());
        return AIP_EXIT_FAILED;
    }
    /* No guess at the reason: profile_memory records the framework's memory,
     * a device back end its buffers whatever profile_memory says. */
    if (!records && !quiet)
        fprintf(stderr, "aiprof memory: warning: %s has no memory records for device %s "
                "(the framework's need profile_memory; a device back end records its "
                "buffers)\n", dir, device);
    printf("wrote %s (%llu memory records of %s)\n", out, (unsigned long long)records,
           strcmp(device, "auto") ? device : "the device that has them");
    return AIP_EXIT_OK;
}
