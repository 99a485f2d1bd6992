/*
 * cli.h — the `aiprof` command's subcommands.  The command is a client of
 * libaiprof: it includes the public header, aiprof.h, and for `memory` and
 * `summary` the export entry points that are meant to join it.
 */
#ifndef AIP_CLI_H
#define AIP_CLI_H

/* Exit codes of every subcommand. */
#define AIP_EXIT_OK 0
#define AIP_EXIT_FAILED 1   /* something could not be done */
#define AIP_EXIT_USAGE 2    /* bad command line */

/* cli_usage_error() : print "aiprof COMMAND: <message>" and a --help hint on
 * stderr; @return AIP_EXIT_USAGE. */
int cli_usage_error(const char *command, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* cli_analyse() : `aiprof analyse ...`; argv[0] is "analyse". */
int cli_analyse(int argc, char **argv);

/* cli_run() : `aiprof run [options] -- COMMAND ...`; argv[0] is "run". */
int cli_run(int argc, char **argv);

/* cli_memory() : `aiprof memory DIR --output FILE [--device D]` (memory_cmd.c). */
int cli_memory(int argc, char **argv);

/* cli_summary() : `aiprof summary DIR [--html FILE]` (summary_cmd.c). */
int cli_summary(int argc, char **argv);

#endif
