/*
 * cli.h — the `aiprof` command's subcommands (one file each: analyse_cmd.c,
 * cluster_cmd.c, run_cmd.c, memory_cmd.c, summary_cmd.c, advise_cmd.c,
 * compare_cmd.c; main.c dispatches, usage.c
 * reports bad command lines).  The command is a client of libaiprof: it
 * includes the public header, aiprof.h, and the src/common helpers (fs.h's
 * path checks); CMake gives it no other include directory.
 */
#ifndef AIP_CLI_H
#define AIP_CLI_H

#include <stddef.h>

/* Exit codes of every subcommand. */
#define AIP_EXIT_OK 0
#define AIP_EXIT_FAILED 1   /* something could not be done */
#define AIP_EXIT_USAGE 2    /* bad command line */
#define AIP_EXIT_INCOMPLETE 3 /* `aiprof cluster`: ranks of the job missing, truncated or
                                 unreadable (outputs written from the others) */

/* cli_usage_error() (usage.c) : print "aiprof COMMAND: <message>" and a
 * --help hint on stderr; @return AIP_EXIT_USAGE. */
int cli_usage_error(const char *command, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* cli_install_root() (run_cmd.c) : the directory above bin/aiprof, where
 * lib/ holds the libraries aiprof loads (libaiprof_preload.so,
 * libaiprof_mpi.so, libaiprof_cluster_mpi.so); -1 if unknown. */
int cli_install_root(char *out, size_t cap);

/* cli_is_static_program() (elf_static.c) : 1 when `cmd` (a path, or a name
 * looked up on PATH as execvp does) is a 64-bit ELF program without a
 * dynamic loader, which LD_PRELOAD cannot reach; 0 otherwise or unknown. */
int cli_is_static_program(const char *cmd);

/* cli_analyse() : `aiprof analyse ...` (analyse_cmd.c); argv[0] is "analyse". */
int cli_analyse(int argc, char **argv);

/* cli_cluster() : `aiprof cluster DIR` (cluster_cmd.c); argv[0] is "cluster". */
int cli_cluster(int argc, char **argv);

/* cli_run() : `aiprof run [options] -- COMMAND ...` (run_cmd.c); argv[0] is "run". */
int cli_run(int argc, char **argv);

/* cli_memory() : `aiprof memory DIR --output FILE [--device D]` (memory_cmd.c). */
int cli_memory(int argc, char **argv);

/* cli_summary() : `aiprof summary DIR [--html FILE]` (summary_cmd.c). */
int cli_summary(int argc, char **argv);

/* cli_advise() : `aiprof advise DIR...` (advise_cmd.c). */
int cli_advise(int argc, char **argv);

/* cli_compare() : `aiprof compare BASE NEW` (compare_cmd.c). */
int cli_compare(int argc, char **argv);

#endif
