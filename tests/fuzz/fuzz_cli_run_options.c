/*
 * fuzz_cli_run_options.c — libFuzzer target for `aiprof run`'s option
 * parsing (src/cli/run_options.c).  The input is the command line after
 * "aiprof run": arguments separated by NUL bytes.  Parsing runs nothing;
 * what it returns is checked: a usage error has a message whose one %s
 * (if any) has its argument, and an accepted command line names a
 * COMMAND and only values that the run can use.
 *
 * Build with libFuzzer:  tests/fuzz/run_libfuzzer.sh fuzz_cli_run_options
 * Without libFuzzer, replay_main.c replays the corpus (a ctest).
 */
#include "cli.h"
#include "run_options.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ARGS 256

#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "fuzz_cli_run_options: %s failed\n", #cond);               \
            abort();                                                                   \
        }                                                                              \
    } while (0)

/* Whether `p` is one of argv's strings (values point into argv, never copies). */
static int in_argv(const char *p, int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (p == argv[i])
            return 1;
    return 0;
}

static void check_help(void)
{
    static int done;
    if (done++)
        return;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CHECK(f);
    run_options_help(f);
    fclose(f);
    CHECK(strstr(text, "  -h, --help          show this help\n"));
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_help();
    char *buf = malloc(size + 1); /* a copy: argv strings are NUL-terminated */
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = "run";
    for (size_t at = 0; at < size && argc < MAX_ARGS; at += strlen(buf + at) + 1)
        argv[argc++] = buf + at;
    argv[argc] = NULL;

    run_options o;
    int rc = run_options_parse(argc, argv, &o);
    CHECK(rc == AIP_EXIT_OK || rc == AIP_EXIT_USAGE);
    if (rc == AIP_EXIT_USAGE) {
        const char *s = strstr(o.error, "%s");
        CHECK(o.error && (s != NULL) == (o.error_arg != NULL));
        CHECK(!s || !strstr(s + 2, "%")); /* one conversion, the %s */
        CHECK(!o.error_arg || in_argv(o.error_arg, argc, argv));
        char message[256];
        snprintf(message, sizeof message, o.error, o.error_arg);
    } else if (!o.help) {
        CHECK(o.command >= 1 && o.command < argc);
        CHECK(!(o.config && (o.delay || o.duration)));
        CHECK(!o.dir || in_argv(o.dir, argc, argv));
        CHECK(!o.config || in_argv(o.config, argc, argv));
        if (o.delay)
            CHECK(in_argv(o.delay, argc, argv) && atof(o.delay) >= 0);
        if (o.duration)
            CHECK(in_argv(o.duration, argc, argv) && atof(o.duration) > 0);
        /* COMMAND is not an option unless "--" came before it */
        CHECK(argv[o.command][0] != '-' || !strcmp(argv[o.command - 1], "--"));
    }
    free(buf);
    return 0;
}
