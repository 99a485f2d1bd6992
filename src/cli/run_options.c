/*
 * run_options.c — `aiprof run`'s command line: one row per option (its
 * names, its value, its help, the field it sets), read by both the parser
 * and --help, so an option added here is parsed and documented at once.
 *
 * An option and its value are two arguments ("--dir DIR"); parsing stops
 * at "--" or at the first argument that is not an option (COMMAND).
 */
#include "run_options.h"
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct run_option {
    const char *name;      /* "--dir" */
    const char *short_name; /* "-h" or NULL; shown in --help */
    const char *alias;     /* accepted, not shown ("--no-analyze") or NULL */
    const char *value;     /* the value's name in --help; NULL: a switch */
    size_t field;          /* offsetof(run_options, ...): a const char * or an int */
    int set;               /* a switch's int field is set to this */
    const char *help;      /* lines, '\n' between them */
} run_option;

#define FIELD(f) offsetof(run_options, f)

static const run_option options[] = {
    {"--dir", NULL, NULL, "DIR", FIELD(dir), 0,
     "where result directories go (default: current directory)"},
    {"--delay", NULL, NULL, "SECONDS", FIELD(delay), 0,
     "start recording SECONDS after the program starts"},
    {"--duration", NULL, NULL, "SECONDS", FIELD(duration), 0,
     "stop recording after SECONDS of recording"},
    {"--config", NULL, NULL, "DIR", FIELD(config), 0,
     "dynamic mode: profiler_config.json in DIR starts and stops\n"
     "collections while the program runs (see dynamic_profile)"},
    {"--max-size", NULL, NULL, "SIZE", FIELD(max_size), 0,
     "stop writing raw data at SIZE bytes (suffix K, M, G or T:\n"
     "512M, 4G; at least 1M; 0 = no cap; default 4G); the program\n"
     "runs on and what is not written is counted as dropped"},
    {"--flight-recorder", NULL, NULL, "SECONDS", FIELD(flight), 0,
     "flight recorder: record always into a bounded ring, write\n"
     "nothing until a trigger (SIGUSR2, a slow step, a hang, a\n"
     "crash), then the last SECONDS (docs/FLIGHT_RECORDER.md)"},
    {"--flight-ring", NULL, NULL, "SIZE", FIELD(flight_ring), 0,
     "the flight recorder's ring bound (default 256M, at least 4M)"},
    {"--flight-slow-step", NULL, NULL, "K", FIELD(flight_slow), 0,
     "dump when a step takes K times the running median (K > 1)"},
    {"--flight-hang", NULL, NULL, "SECONDS", FIELD(flight_hang), 0,
     "dump when no step ends for SECONDS (open ranges included)"},
    {"--host-sys", NULL, NULL, "LIST", FIELD(host_sys), 0,
     "host system data, comma-separated: cpu, mem, disk, network,\n"
     "osrt (osrt: blocking libc/pthread calls, docs/OSRT.md)"},
    {"--profiler-level", NULL, NULL, "LEVEL", FIELD(profiler_level), 0,
     "Level_none, Level0, Level1 or Level2 (torch_npu's levels):\n"
     "Level1+ writes communication.json, communication_matrix.json\n"
     "and api_statistic.csv; default Level1 when MPI calls are\n"
     "recorded or WORLD_SIZE > 1, else Level0 (docs/COMMUNICATION.md)"},
    {"--record-shapes", NULL, NULL, NULL, FIELD(record_shapes), 1,
     "record input shapes of framework ops"},
    {"--with-stack", NULL, NULL, NULL, FIELD(with_stack), 1, "record call stacks"},
    {"--profile-memory", NULL, NULL, NULL, FIELD(profile_memory), 1, "record memory events"},
    {"--with-modules", NULL, NULL, NULL, FIELD(with_modules), 1,
     "record the nn.Module path of framework ops (PyTorch)"},
    {"--with-flops", NULL, NULL, NULL, FIELD(with_flops), 1,
     "estimate FLOPs of matrix products, conv2d, mul, add\n"
     "(PyTorch; implies --record-shapes)"},
    {"--no-mstx", NULL, NULL, NULL, FIELD(no_mstx), 1, "do not record mstx ranges and marks"},
    {"--children", NULL, NULL, NULL, FIELD(children), 1,
     "also profile the programs COMMAND starts"},
    {"--mpi", NULL, NULL, NULL, FIELD(mpi), 1,
     "record MPI calls (libaiprof_mpi.so); the default when\n"
     "started by mpirun / srun / a PMI launcher"},
    {"--no-mpi", NULL, NULL, NULL, FIELD(mpi), -1, "do not record MPI calls, even under mpirun"},
    {"--trace-format", NULL, NULL, "FORM", FIELD(trace_format), 0,
     "trace_view.json as torch_npu writes it (torch_npu, the\n"
     "default) or as torch.profiler / Kineto does (kineto: for\n"
     "HTA, TensorBoard's profiler plugin, speedscope); perfetto:\n"
     "torch_npu's and trace.perfetto-trace (ui.perfetto.dev)"},
    {"--no-analyse", NULL, "--no-analyze", NULL, FIELD(analyse), 0,
     "keep the raw data only (analyse later: aiprof analyse DIR)"},
    {"--help", "-h", NULL, NULL, FIELD(help), 1, "show this help"},
};

#define N_OPTIONS (sizeof options / sizeof options[0])

/* Where the option names end and their help begins in --help. */
#define HELP_COLUMN 22

void run_options_help(FILE *f)
{
    fputs("Usage: aiprof run [options] -- COMMAND [ARGS...]\n"
          "\n"
          "Profile COMMAND (a C/C++ or Python program) without changing it.  By default\n"
          "the whole run is one trace; the program's own step calls (aip_session_step,\n"
          "or optimizer.step() in PyTorch programs) become ProfilerStep# ranges.\n"
          "\n"
          "Options:\n",
          f);
    for (size_t i = 0; i < N_OPTIONS; i++) {
        const run_option *o = &options[i];
        int n = fprintf(f, "  %s%s%s%s%s", o->short_name ? o->short_name : "",
                        o->short_name ? ", " : "", o->name, o->value ? " " : "",
                        o->value ? o->value : "");
        const char *line = o->help;
        for (;;) {
            size_t len = strcspn(line, "\n");
            fprintf(f, "%*s%.*s\n", n < HELP_COLUMN ? HELP_COLUMN - n : 1, "", (int)len, line);
            if (!line[len])
                break;
            line += len + 1;
            n = 0;
        }
    }
    fputs("\n"
          "Exit status: the program's (128 + N when it was killed by signal N);\n"
          "2 for a usage error, 127 when COMMAND cannot be started.\n",
          f);
}

/* A number of seconds: >= 0, or > 0 when zero would mean nothing (a
 * recording that lasts no time). */
static int is_seconds(const char *s, int allow_zero)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    return !errno && end != s && !*end && (allow_zero ? v >= 0 : v > 0) && v < 1e9;
}

/* A size: digits and an optional binary suffix K, M, G or T (either case,
 * "B" or "iB" may follow: 4G, 4GiB, 512mb); 0, or at least 1 MiB (what the
 * library accepts).  0 on success. */
static int parse_size(const char *s, unsigned long long *out)
{
    if (*s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return -1;
    int shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; break;
    case 'm': case 'M': shift = 20; break;
    case 'g': case 'G': shift = 30; break;
    case 't': case 'T': shift = 40; break;
    default: break;
    }
    if (shift) {
        end++;
        if (*end == 'i')
            end++;
        if (*end == 'B' || *end == 'b')
            end++;
    }
    if (*end || (shift && v > (~0ull >> shift)))
        return -1;
    v <<= shift;
    if (v && v < (1ull << 20))
        return -1;
    *out = v;
    return 0;
}

/* A usage error: `format` has at most one %s, for `arg`. */
static int usage(run_options *o, const char *format, const char *arg)
{
    o->error = format;
    o->error_arg = arg;
    return AIP_EXIT_USAGE;
}

static const run_option *find(const char *arg)
{
    for (size_t i = 0; i < N_OPTIONS; i++) {
        const run_option *o = &options[i];
        if (!strcmp(arg, o->name) || (o->short_name && !strcmp(arg, o->short_name)) ||
            (o->alias && !strcmp(arg, o->alias)))
            return o;
    }
    return NULL;
}

/* A comma-separated list of torch_npu's HostSystem names, any case. */
static int host_sys_ok(const char *s)
{
    static const char *const names[] = {"cpu", "mem", "disk", "network", "osrt"};
    do {
        size_t n = strcspn(s, ",");
        int known = 0;
        for (size_t i = 0; i < sizeof names / sizeof *names && !known; i++)
            known = n == strlen(names[i]) && !strncasecmp(s, names[i], n);
        if (!known)
            return 0;
        s += n;
    } while (*s++ == ',');
    return 1;
}

int run_options_parse(int argc, char **argv, run_options *o)
{
    memset(o, 0, sizeof *o);
    o->analyse = 1;
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        const run_option *opt = find(a);
        if (!opt) {
            if (a[0] == '-')
                return usage(o, "unknown option '%s'", a);
            break; /* the command, without "--" */
        }
        char *field = (char *)o + opt->field;
        if (opt->value) {
            if (i + 1 >= argc)
                return usage(o, "%s needs a value", a);
            *(const char **)field = argv[++i];
        } else {
            *(int *)field = opt->set;
        }
        if (o->help)
            return AIP_EXIT_OK; /* at once, as the options after it may be wrong */
    }
    o->command = i;
    if (i >= argc)
        return usage(o, "no COMMAND given (aiprof run [options] -- COMMAND ARGS...)", NULL);
    if (o->delay && !is_seconds(o->delay, 1))
        return usage(o, "--delay needs a number of seconds >= 0, not '%s'", o->delay);
    if (o->duration && !is_seconds(o->duration, 0))
        return usage(o, "--duration needs a number of seconds > 0, not '%s'", o->duration);
    o->max_bytes = RUN_DEFAULT_MAX_BYTES;
    if (o->max_size && parse_size(o->max_size, &o->max_bytes))
        return usage(o, "--max-size needs a size in bytes, with K, M, G or T (512M, 4G), at "
                     "least 1M, or 0 for no cap; not '%s'", o->max_size);
    if (o->flight && !is_seconds(o->flight, 0))
        return usage(o, "--flight-recorder needs a number of seconds > 0, not '%s'", o->flight);
    if ((o->flight_ring || o->flight_slow || o->flight_hang) && !o->flight)
        return usage(o, "--flight-ring, --flight-slow-step and --flight-hang need "
                     "--flight-recorder SECONDS", NULL);
    if (o->flight && (o->delay || o->duration || o->config))
        return usage(o, "--flight-recorder records the whole run: it does not go with --delay, "
                     "--duration or --config", NULL);
    if (o->flight_ring && (parse_size(o->flight_ring, &o->flight_ring_bytes) ||
                           o->flight_ring_bytes < (4ull << 20)))
        return usage(o, "--flight-ring needs a size of at least 4M (K, M, G or T), not '%s'",
                     o->flight_ring);
    if (o->flight_slow) {
        char *end;
        double k = strtod(o->flight_slow, &end);
        if (end == o->flight_slow || *end || !(k > 1) || k > 1e9)
            return usage(o, "--flight-slow-step needs a factor > 1, not '%s'", o->flight_slow);
    }
    if (o->flight_hang && !is_seconds(o->flight_hang, 0))
        return usage(o, "--flight-hang needs a number of seconds > 0, not '%s'", o->flight_hang);
    if (o->host_sys && !host_sys_ok(o->host_sys))
        return usage(o, "--host-sys needs a comma-separated list of cpu, mem, disk, network "
                     "and osrt, not '%s'", o->host_sys);
    if (o->trace_format) {
        static const char *const forms[] = {"torch_npu", "kineto", "perfetto"};
        o->trace_form = -1;
        for (int k = 0; k < 3; k++)
            if (!strcmp(o->trace_format, forms[k]))
                o->trace_form = k; /* aip_trace_format's numbering */
        if (o->trace_form < 0)
            return usage(o, "--trace-format needs torch_npu, kineto or perfetto, not '%s'",
                         o->trace_format);
    }
    if (o->profiler_level) {
        static const char *const levels[] = {"Level_none", "Level0", "Level1", "Level2"};
        o->level = -1;
        for (int k = 0; k < 4; k++)
            if (!strcasecmp(o->profiler_level, levels[k]))
                o->level = k; /* aip_profiler_level's numbering */
        if (o->level < 0)
            return usage(o, "--profiler-level needs Level_none, Level0, Level1 or Level2, "
                         "not '%s'", o->profiler_level);
        if (o->config)
            return usage(o, "--profiler-level does not go with --config (dynamic mode): "
                         "profiler_config.json's experimental_config says the level", NULL);
    }
    if (o->config && (o->delay || o->duration))
        return usage(o, "--config (dynamic mode) cannot be combined with --delay/--duration",
                     NULL);
    return AIP_EXIT_OK;
}
