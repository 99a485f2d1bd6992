/*
 * cluster_cmd.c — `aiprof cluster DIR [-j N] [--html] [-q]`: the cross-rank analysis of a
 * distributed job's rank result directories (msprof-analyze's `cluster`),
 * done by libaiprof's aip_cluster_run() (src/cluster/cluster.c).  The
 * verdict goes to stdout; a directory that could not be used is named
 * there too and makes the exit status 1, like a failed directory in
 * `aiprof analyse`, while the others are still analysed.
 */
#include "cli.h"

#include "aiprof.h"

#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void cluster_usage(FILE *f)
{
    fputs("Usage: aiprof cluster DIR [-j N] [--html] [-q]\n"
          "       mpirun -np K aiprof cluster --mpi DIR [-j N] [--html] [-q]\n"
          "\n"
          "Cross-rank analysis of a distributed job, as msprof-analyze's\n"
          "`cluster -m all` does it.  DIR holds the ranks' result directories at any\n"
          "depth (up to 10): *ascend_pt directories with profiler_info_{rank}.json.\n"
          "Those not analysed yet are analysed first (like `aiprof analyse`); then\n"
          "only each rank's summaries are read (ASCEND_PROFILER_OUTPUT/\n"
          "step_trace_time.csv, communication.json, communication_matrix.json,\n"
          "profiler_metadata.json, the host and devices of ascend_pytorch_profiler_N.db;\n"
          "a rank exported as databases only: its analysis.db's tables instead).\n"
          "Writes DIR/cluster_analysis_output/:\n"
          "  cluster_step_trace_time.csv  one row per rank and step: Step, Type, Index,\n"
          "                               then the ranks' step_trace_time columns (us);\n"
          "                               DP/PP/TP Index with distributed_args, \"stage\"\n"
          "                               rows for pipeline-parallel (pp*) groups\n"
          "  communication_group.json     the collective and p2p groups' ranks, with\n"
          "                               group_id/pg_name from parallel_group_info\n"
          "  cluster_communication.json   per group, step and op, each rank's time and\n"
          "                               bandwidth; a collective's elapse split into\n"
          "                               wait (for the last rank to arrive), transit\n"
          "                               and idle, the ranks' clocks aligned\n"
          "  cluster_communication_matrix.json  per op, the links between global ranks\n"
          "  cluster_analysis.db          ClusterStepTraceTime, ClusterCommunicationTime,\n"
          "                               ClusterCommunicationBandwidth,\n"
          "                               ClusterCommunicationMatrix,\n"
          "                               CommunicationGroupMapping, HostInfo,\n"
          "                               RankDeviceMap, ClusterBaseInfo\n"
          "                               (msprof-analyze's schemas)\n"
          "  cluster_report.html          with --html\n"
          "and prints the verdict: per rank its Computing, Free, Communication(Not\n"
          "Overlapped), its Computing + Free against the ranks' median, and at how\n"
          "many collectives it had the shortest elapse time (it arrived last); a\n"
          "rank more than 5% of the step above the median that also arrived last\n"
          "at its share of the collectives is named slow.  Then the link matrix\n"
          "between global ranks: per transport, when max - min of the links'\n"
          "bandwidths exceeds 5% of their mean, a link more than 5% below their\n"
          "median is named slow.  The clock offset of each host not aligned by\n"
          "sharing rank 0's clock is printed with how it was measured.\n"
          "A directory that cannot be used (no rank, analysis failed, truncated CSV\n"
          "or JSON, a rank found twice, a run not overlapping the others in time) is\n"
          "named with the reason and the rest is analysed.\n"
          "\n"
          "Options:\n"
          "  -j, --jobs N  rank directories analysed in parallel processes, as in\n"
          "                `aiprof analyse` (default: half the CPUs; above the CPU\n"
          "                count: the CPU count; invalid: the default)\n"
          "  --mpi         one process of an MPI job: the rank directories are split\n"
          "                across the job's processes (each analyses and reads its\n"
          "                share), process 0 writes the same outputs as one process\n"
          "                and prints the verdict; -j then defaults to 1 per process.\n"
          "                Needs lib/libaiprof_cluster_mpi.so (built where MPI was\n"
          "                found; $AIPROF_CLUSTER_MPI names another) and Open MPI\n"
          "      --html    also write cluster_analysis_output/cluster_report.html: the\n"
          "                per-rank step breakdown as stacked bars and the link matrix\n"
          "                as a heat map, slow ranks and links in red (no network needed)\n"
          "  -q, --quiet   no progress (on a terminal a one-line bar on stderr, else a\n"
          "                line per directory analysed)\n"
          "  -h, --help    show this help\n"
          "\n"
          "The job's ranks are 0..N-1 (N: distributed_args' world_size, the\n"
          "communication groups' members, the largest rank found + 1): a rank\n"
          "without a directory is named missing, one whose steps or collectives\n"
          "end before the others' truncated (with how early), a folder or rank\n"
          "directory that cannot be read unreadable (with the reason).\n"
          "\n"
          "Exit status: 0 all directories used and the job complete, 1 some not\n"
          "used or nothing written, 2 usage error, 3 ranks missing, truncated or\n"
          "unreadable (the outputs hold the others).\n",
          f);
}

/* -j as `aiprof analyse` takes it (max_process_number's rules). */
static long parse_jobs(const char *s)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN), def;
    cpus = cpus > 0 ? cpus : 1;
    def = cpus / 2 > 1 ? cpus / 2 : 1;
    if (!s) /* the default */
        return def;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v <= 0) {
        fprintf(stderr, "aiprof cluster: warning: invalid -j value '%s'; using %ld\n", s, def);
        return def;
    }
    return v > cpus ? cpus : v;
}

int cli_cluster(int argc, char **argv)
{
    long jobs = 0;
    const char *dir = NULL;
    int quiet = 0, only_paths = 0, mpi = 0, html = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_paths || a[0] != '-' || !a[1]) {
            if (dir)
                return cli_usage_error("cluster", "one DIR only ('%s' and '%s' given)", dir, a);
            dir = a;
        } else if (!strcmp(a, "--")) {
            only_paths = 1;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            cluster_usage(stdout);
            return AIP_EXIT_OK;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (!strcmp(a, "--mpi")) {
            mpi = 1;
        } else if (!strcmp(a, "--html")) {
            html = 1;
        } else if (!strcmp(a, "-j") || !strcmp(a, "--jobs") || !strncmp(a, "--jobs=", 7) ||
                   (a[1] == 'j' && a[2])) {
            const char *val = !strncmp(a, "--jobs=", 7) ? a + 7
                              : (a[1] == 'j' && a[2])   ? a + 2
                              : i + 1 < argc            ? argv[++i]
                                                        : NULL;
            if (!val)
                return cli_usage_error("cluster", "option '%s' needs a number", a);
            jobs = parse_jobs(val);
        } else {
            return cli_usage_error("cluster", "unknown option '%s'", a);
        }
    }
    if (!dir)
        return cli_usage_error("cluster", "no DIR given");
    fflush(stdout);
    size_t bad = 0, incomplete = 0;
#ifdef M_MXFAST
    /* The pass holds every rank's summaries as millions of small JSON nodes
     * and frees them at the end; glibc's fastbins would put off merging
     * those free chunks until the next large malloc (MPI_Finalize's under
     * --mpi: about 1 s at 1,000 ranks).  Merged as they are freed instead. */
    mallopt(M_MXFAST, 0);
#endif
    if (!jobs) /* --mpi: the job's processes already share the CPUs */
        jobs = mpi ? 1 : parse_jobs(NULL);
    aip_cluster_options o;
    aip_cluster_options_init(&o);
    o.jobs = jobs;
    o.quiet = quiet;
    o.report_fd = STDOUT_FILENO;
    o.progress_fd = !quiet && isatty(STDERR_FILENO) ? STDERR_FILENO : -1;
    o.html = html;
    o.incomplete = &incomplete;
    aip_status s;
    int process = 0;
    if (mpi) {
        char root[PATH_MAX], plugin[PATH_MAX + 64] = "";
        if (cli_install_root(root, sizeof root) == 0)
            snprintf(plugin, sizeof plugin, "%s/lib/libaiprof_cluster_mpi.so", root);
        s = aip_cluster_run_mpi(dir, &o, &bad, plugin[0] ? plugin : NULL, &process);
    } else {
        s = aip_cluster_run(dir, &o, &bad);
    }
    if (s) {
        if (process == 0) /* one message for the job */
            fprintf(stderr, "aiprof cluster: %s\n", aip_last_error());
        return AIP_EXIT_FAILED;
    }
    if (incomplete) /* before 1: a smaller job must not pass for a whole one */
        return AIP_EXIT_INCOMPLETE;
    return bad ? AIP_EXIT_FAILED : AIP_EXIT_OK;
}
