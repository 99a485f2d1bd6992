/*
 * usage.c — the one way every subcommand reports a bad command line.
 */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>

int cli_usage_error(const char *command, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "aiprof %s: ", command);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'aiprof %s --help'.\n", command);
    return AIP_EXIT_USAGE;
}
