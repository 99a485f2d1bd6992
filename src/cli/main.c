/*
 * main.c — `aiprof`: dispatch to a subcommand, --help, --version.
 */
#include "cli.h"

#include "aiprof.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *f)
{
    fputs("Usage: aiprof <command> [options]\n"
          "\n"
          "aiprof records what AI programs do (libaiprof) and turns the raw data into\n"
          "trace_view.json, CSV summaries and databases, like torch_npu.profiler.\n"
          "\n"
          "Commands:\n"
          "  analyse PATH...     analyse result directories (*_ascend_pt) into\n"
          "                      ASCEND_PROFILER_OUTPUT/\n"
          "  cluster DIR         cross-rank analysis of a job's rank directories: slow\n"
          "                      ranks, DIR/cluster_analysis_output/\n"
          "  run -- COMMAND...   profile a program without changing it\n"
          "  memory DIR -o FILE  memory timeline (.html, .json, .json.gz, .raw.json.gz)\n"
          "  summary DIR         top ops, step times, memory peak, what was not collected\n"
          "                      (--html FILE: the same as one self-contained page)\n"
          "\n"
          "Options:\n"
          "  -h, --help          show this help\n"
          "  -V, --version       show the version\n"
          "\n"
          "Run 'aiprof analyse --help' for the options of a command.\n",
          f);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return AIP_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        usage(stdout);
        return AIP_EXIT_OK;
    }
    if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        printf("aiprof %s\n", aip_version());
        return AIP_EXIT_OK;
    }
    if (!strcmp(cmd, "analyse") || !strcmp(cmd, "analyze"))
        return cli_analyse(argc - 1, argv + 1);
    if (!strcmp(cmd, "cluster"))
        return cli_cluster(argc - 1, argv + 1);
    if (!strcmp(cmd, "run"))
        return cli_run(argc - 1, argv + 1);
    if (!strcmp(cmd, "memory"))
        return cli_memory(argc - 1, argv + 1);
    if (!strcmp(cmd, "summary"))
        return cli_summary(argc - 1, argv + 1);
    if (!strcmp(cmd, "advise"))
        return cli_advise(argc - 1, argv + 1);
    if (!strcmp(cmd, "compare"))
        return cli_compare(argc - 1, argv + 1);
    if (cmd[0] == '-')
        fprintf(stderr, "aiprof: unknown option '%s'\n", cmd);
    else
        fprintf(stderr, "aiprof: unknown command '%s'\n", cmd);
    fprintf(stderr, "Try 'aiprof --help'.\n");
    return AIP_EXIT_USAGE;
}
