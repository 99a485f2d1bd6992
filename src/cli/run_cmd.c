/*
 * run_cmd.c — `aiprof run [options] -- COMMAND ARGS...`: profile a program
 * without changing it.
 *
 * The command runs with libaiprof_preload.so injected (LD_PRELOAD), which
 * records the whole run, a time window, or what profiler_config.json asks
 * (dynamic mode).  For Python programs, the aiprof package directory is put
 * first on PYTHONPATH so that its start-up hook can capture PyTorch too.
 * When the program ends, every result directory it produced is analysed
 * and listed with a one-line summary; the program's exit status is passed
 * through (128 + signal when it was killed).  The options and --help are
 * run_options.c's table.
 */
#include "cli.h"
#include "run_options.h"

#include "aiprof.h"
#include "aiprof_integration.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A flight recorder's ring that the program left (killed, or ended
 * without its exit handlers): salvaged into `dir` and listed for the
 * analysis, then removed (docs/FLIGHT_RECORDER.md).  The ring is
 * {parent}/{hostname}_{pid}.ring, in /dev/shm or under `dir`. */
static void salvage_ring(const char *dir, pid_t pid, const char *list)
{
    char host[256] = "", ring[PATH_MAX * 2 + 300], out[PATH_MAX];
    gethostname(host, sizeof host - 1);
    const char *parents[2] = {"/dev/shm/aiprof_flight", NULL};
    char under[PATH_MAX + 32];
    snprintf(under, sizeof under, "%s/.aiprof_flight", dir);
    parents[1] = under;
    for (int i = 0; i < 2; i++) {
        snprintf(ring, sizeof ring, "%s/%s_%ld.ring", parents[i], host, (long)pid);
        struct stat st;
        if (lstat(ring, &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        if (aip_flight_salvage(ring, dir, out, sizeof out) != AIP_OK) {
            fprintf(stderr, "aiprof run: the flight recorder's ring %s could not be salvaged: "
                            "%s\n", ring, aip_last_error());
            continue;
        }
        fprintf(stderr, "aiprof run: the program left its flight recorder's ring: salvaged "
                        "into %s\n", out);
        FILE *f = fopen(list, "a");
        if (f) {
            fprintf(f, "%s\n", out);
            fclose(f);
        }
        DIR *d = opendir(ring);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            char p[sizeof ring + 300];
            snprintf(p, sizeof p, "%s/%s", ring, e->d_name);
            if (!strncmp(e->d_name, "seg_", 4) || !strcmp(e->d_name, "ring.counts"))
                unlink(p);
        }
        if (d)
            closedir(d);
        rmdir(ring);
    }
}

/* <install root> from /proc/self/exe: bin/aiprof → root. */
int cli_install_root(char *out, size_t cap)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = '\0'; /* .../bin */
    slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    return snprintf(out, cap, "%s", exe) < (int)cap ? 0 : -1;
}

static void prepend_env(const char *name, const char *value)
{
    const char *old = getenv(name);
    if (!old || !*old) {
        setenv(name, value, 1);
        return;
    }
    size_t n = strlen(value) + strlen(old) + 2;
    char *v = malloc(n);
    if (!v)
        return;
    snprintf(v, n, "%s:%s", value, old);
    setenv(name, v, 1);
    free(v);
}

/* The directory's profiler_info.json or profiler_info_{rank}.json (the
 * rank MPI or torch.distributed gave the program, which this process may
 * not know). */
static json_t *load_info(const char *dir)
{
    char path[PATH_MAX + 300];
    snprintf(path, sizeof path, "%s/profiler_info.json", dir);
    json_t *info = json_load_file(path, 0, NULL);
    DIR *d = info ? NULL : opendir(dir);
    struct dirent *e;
    while (d && !info && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (!strncmp(e->d_name, "profiler_info_", 14) && n > 19 &&
            !strcmp(e->d_name + n - 5, ".json")) {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            info = json_load_file(path, 0, NULL);
        }
    }
    if (d)
        closedir(d);
    return info;
}

static void summarise(const char *dir, int analyse, int trace_format)
{
    long long events = -1, dropped = 0;
    int saved = 0;
    json_t *info = load_info(dir);
    if (info) {
        json_t *a = json_object_get(info, "aiprof");
        saved = json_object_get(info, "end_info") != NULL;
        events = json_integer_value(json_object_get(a, "recorded_events"));
        dropped = json_integer_value(json_object_get(a, "dropped_events"));
        json_decref(info);
    }
    const char *state = "raw data only";
    if (analyse) {
        aip_analyse_options o;
        aip_analyse_options_init(&o);
        o.quiet = 1;
        o.trace_format = (unsigned)trace_format;
        state = aip_analyse_dir(dir, &o) == AIP_OK ? "analysed" : "analysis failed";
        if (strcmp(state, "analysed"))
            fprintf(stderr, "aiprof run: %s: %s\n", dir, aip_last_error());
    }
    if (saved)
        printf("aiprof: %s: %lld events, %lld dropped, %s\n", dir, events, dropped, state);
    else
        printf("aiprof: %s: the program ended before the trace was saved; raw data %s\n", dir,
               analyse ? (strcmp(state, "analysed") ? "could not be analysed" : "salvaged and analysed")
                       : "kept");
}

/* Started by an MPI launcher (Open MPI's mpirun, a PMI/PMIx one: MPICH's
 * hydra, Slurm's srun)? */
static int under_mpi_launcher(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK",
                                       "PMI_SIZE", "MV2_COMM_WORLD_SIZE", NULL};
    for (const char *const *v = vars; *v; v++)
        if (getenv(*v))
            return 1;
    return 0;
}

/* libaiprof_mpi.so beside libaiprof_preload.so, preloaded before it so that
 * its MPI_* come before the MPI library's; `out` empty when not wanted or
 * not there (said once per job: by rank 0, or by a process with no rank). */
static void mpi_preload(const run_options *o, const char *preload, char *out, size_t cap)
{
    out[0] = '\0';
    if (o->mpi < 0 || (o->mpi == 0 && !under_mpi_launcher()))
        return;
    const char *env = getenv("AIPROF_MPI_PRELOAD");
    const char *slash = strrchr(preload, '/');
    if (env && *env)
        snprintf(out, cap, "%s", env);
    else
        snprintf(out, cap, "%.*slibaiprof_mpi.so", slash ? (int)(slash - preload + 1) : 0,
                 preload);
    if (access(out, R_OK) == 0)
        return;
    const char *rank = getenv("OMPI_COMM_WORLD_RANK");
    if (!rank)
        rank = getenv("PMI_RANK");
    if (!rank || !strcmp(rank, "0"))
        fprintf(stderr, "aiprof run: MPI calls are not recorded: %s: %s (aiprof was built "
                "without MPI? install libopenmpi-dev and rebuild)\n", out, strerror(errno));
    out[0] = '\0';
}

/* The profiler_level of the run: --profiler-level, else Level1 for a
 * distributed program (MPI calls recorded, or WORLD_SIZE > 1 as torchrun
 * sets it), else Level0, torch_npu's default.  The seed's default is Level0
 * because its Level1 collects more (AscendCL, AI Core metrics, HCCL
 * tasks) at a cost; aiprof's levels only choose outputs (Level1 adds
 * communication.json, communication_matrix.json and api_statistic.csv),
 * and communication is what a distributed profile is read for
 * (docs/COMMUNICATION.md, "Levels"). */
static const char *run_level(const run_options *o, int mpi_recorded)
{
    if (o->profiler_level)
        return aip_profiler_level_name((aip_profiler_level)o->level);
    const char *ws = getenv("WORLD_SIZE");
    if (mpi_recorded || (ws && atol(ws) > 1))
        return aip_profiler_level_name(AIP_LEVEL1);
    return aip_profiler_level_name(AIP_LEVEL0);
}

int cli_run(int argc, char **argv)
{
    run_options o;
    if (run_options_parse(argc, argv, &o) != AIP_EXIT_OK)
        return cli_usage_error("run", o.error, o.error_arg);
    if (o.help) {
        run_options_help(stdout);
        return AIP_EXIT_OK;
    }
    const char *dir = o.dir;
    char **command = argv + o.command;

    char root[PATH_MAX], preload[PATH_MAX + 64], pypath[PATH_MAX + 64];
    const char *pre = getenv("AIPROF_PRELOAD");
    if (pre && *pre) {
        snprintf(preload, sizeof preload, "%s", pre);
    } else if (cli_install_root(root, sizeof root) == 0) {
        snprintf(preload, sizeof preload, "%s/lib/libaiprof_preload.so", root);
        snprintf(pypath, sizeof pypath, "%s/python", root);
    } else {
        fprintf(stderr, "aiprof run: cannot locate libaiprof_preload.so; set AIPROF_PRELOAD\n");
        return AIP_EXIT_FAILED;
    }
    if (access(preload, R_OK) != 0) {
        fprintf(stderr, "aiprof run: %s: %s\n", preload, strerror(errno));
        return AIP_EXIT_FAILED;
    }
    char cwd[PATH_MAX];
    if (!dir)
        dir = getcwd(cwd, sizeof cwd) ? cwd : ".";
    char list[] = "/tmp/aiprof_run_XXXXXX";
    int lfd = mkstemp(list);
    if (lfd < 0) {
        fprintf(stderr, "aiprof run: cannot create a temporary file: %s\n", strerror(errno));
        return AIP_EXIT_FAILED;
    }
    close(lfd);

    char mpi[PATH_MAX + 64];
    mpi_preload(&o, preload, mpi, sizeof mpi);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "aiprof run: fork failed: %s\n", strerror(errno));
        unlink(list);
        return AIP_EXIT_FAILED;
    }
    if (pid == 0) {
        prepend_env("LD_PRELOAD", preload);
        /* libaiprof itself first: preloaded, it comes before the program's
         * own libraries in the symbol search order, so its OpenCL wrappers
         * see the program's OpenCL calls (as a dependency of the preload
         * library it would come after libOpenCL).  docs/OPENCL.md */
        char lib[PATH_MAX + 64];
        const char *slash = strrchr(preload, '/');
        snprintf(lib, sizeof lib, "%.*slibaiprof.so.0", slash ? (int)(slash - preload + 1) : 0,
                 preload);
        if (access(lib, R_OK) == 0)
            prepend_env("LD_PRELOAD", lib);
        /* Runtimes that load their tool from a variable load it too: the
         * CUDA driver calls its InitializeInjection at cuInit, so that
         * CUPTI starts in programs that load CUDA only later (nvcc's static
         * cudart, torch's lazy init; docs/CUDA.md); NVTX at its first call
         * hands it the program's ranges and marks (docs/NVTX.md).  A tool
         * the user named keeps its place; AIPROF_NVTX=0 leaves NVTX alone. */
        char abs[PATH_MAX];
        const char *var, *off;
        for (size_t i = 0; (var = aip_injection_var(i, &off)); i++) {
            const char *off_value = off ? getenv(off) : NULL;
            if (!(off_value && strcmp(off_value, "0") == 0) && !getenv(var) &&
                realpath(lib, abs))
                setenv(var, abs, 1);
        }
        if (mpi[0])
            prepend_env("LD_PRELOAD", mpi);
        if (!pre && access(pypath, R_OK) == 0)
            prepend_env("PYTHONPATH", pypath);
        setenv("AIPROF_RUN_MODE", o.config ? "dynamic" : "whole", 1);
        /* The process profiled, through its execs (a #!/usr/bin/env
         * script, a shim): the preload leaves the others alone unless
         * --children (README.md, "`aiprof run` and exec"). */
        char pid_text[24];
        snprintf(pid_text, sizeof pid_text, "%ld", (long)getpid());
        setenv("AIPROF_RUN_PID", pid_text, 1);
        setenv("AIPROF_RUN_DIR", dir, 1);
        setenv("AIPROF_RUN_RESULT_LIST", list, 1);
        if (o.config)
            setenv("AIPROF_RUN_CONFIG", o.config, 1);
        if (o.delay)
            setenv("AIPROF_RUN_DELAY", o.delay, 1);
        if (o.duration)
            setenv("AIPROF_RUN_DURATION", o.duration, 1);
        setenv("AIPROF_RUN_RECORD_SHAPES", o.record_shapes ? "1" : "0", 1);
        setenv("AIPROF_RUN_WITH_STACK", o.with_stack ? "1" : "0", 1);
        setenv("AIPROF_RUN_PROFILE_MEMORY", o.profile_memory ? "1" : "0", 1);
        setenv("AIPROF_RUN_WITH_MODULES", o.with_modules ? "1" : "0", 1);
        setenv("AIPROF_RUN_WITH_FLOPS", o.with_flops ? "1" : "0", 1);
        setenv("AIPROF_RUN_MSTX", o.no_mstx ? "0" : "1", 1);
        setenv("AIPROF_RUN_PROFILER_LEVEL", run_level(&o, mpi[0] != 0), 1);
        if (o.host_sys)
            setenv("AIPROF_RUN_HOST_SYS", o.host_sys, 1);
        if (o.children)
            setenv("AIPROF_RUN_CHILDREN", "1", 1);
        char max_bytes[32];
        snprintf(max_bytes, sizeof max_bytes, "%llu", o.max_bytes);
        setenv("AIPROF_RUN_MAX_SIZE", max_bytes, 1);
        if (o.flight) {
            setenv("AIPROF_RUN_FLIGHT", o.flight, 1);
            snprintf(max_bytes, sizeof max_bytes, "%llu", o.flight_ring_bytes);
            setenv("AIPROF_RUN_FLIGHT_RING", max_bytes, 1);
            if (o.flight_slow)
                setenv("AIPROF_RUN_FLIGHT_SLOW", o.flight_slow, 1);
            if (o.flight_hang)
                setenv("AIPROF_RUN_FLIGHT_HANG", o.flight_hang, 1);
        }
        execvp(command[0], command);
        fprintf(stderr, "aiprof run: cannot run %s: %s\n", command[0], strerror(errno));
        _exit(127);
    }
    /* Ctrl-C goes to the program; we stay to analyse what it left. */
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);

    if (o.flight)
        salvage_ring(dir, pid, list);
    FILE *f = fopen(list, "r");
    int n = 0;
    if (f) {
        char line[PATH_MAX + 2];
        while (fgets(line, sizeof line, f)) {
            line[strcspn(line, "\n")] = '\0';
            if (line[0]) {
                summarise(line, o.analyse, o.trace_form);
                n++;
            }
        }
        fclose(f);
    }
    unlink(list);
    if (!n && code != 127) {
        if (cli_is_static_program(command[0]))
            fprintf(stderr, "aiprof run: the program produced no profile: %s is statically "
                            "linked, and LD_PRELOAD (how aiprof run loads libaiprof) works "
                            "for dynamically linked programs only; link it dynamically, or "
                            "link libaiprof in and use its API\n", command[0]);
        else
            fprintf(stderr, "aiprof run: the program produced no profile%s\n",
                    o.config ? " (no collection was triggered by profiler_config.json)" : "");
    }
    return code;
}
