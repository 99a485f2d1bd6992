/*
 * test_aip_disable.c — a program built with AIP_DISABLE and linked without
 * libaiprof (tests/CMakeLists.txt links nothing of aiprof).
 *
 * It uses every AIP_* instrumentation macro of aiprof.h, in both the
 * statement forms a call site may take (braced, and the unbraced branch of
 * an if/else), and with arguments that have side effects.  That it links at
 * all shows the macros reference no libaiprof symbol; running it shows they
 * evaluate none of their arguments and that AIP_RECORDING() is 0.
 */
#define AIP_DISABLE
#include "aiprof.h"

#include <stdio.h>

static int evaluated;

static const char *text(const char *s)
{
    evaluated++;
    return s;
}

int main(int argc, char **argv)
{
    (void)argv;
    const char *unused_otherwise = "only used by a macro"; /* no unused warning */

    AIP_ANNOTATION_PUSH(text("step"));
    AIP_RANGE_PUSH(text("domain"), text("message"));
    AIP_MARK(text("domain"), text("mark"));
    AIP_MARK("domain", unused_otherwise);
    AIP_RANGE_POP();
    AIP_ANNOTATION_POP();

    /* Unbraced if/else: each macro must be exactly one statement. */
    if (argc > 100)
        AIP_ANNOTATION_PUSH("a");
    else
        AIP_ANNOTATION_POP();
    if (argc > 100)
        AIP_RANGE_PUSH("d", "m");
    else
        AIP_RANGE_POP();
    if (argc > 100)
        AIP_MARK("d", "m");
    else
        AIP_MARK("d", "n");

    int recording = AIP_RECORDING(); /* an expression */
    if (AIP_RECORDING())
        recording++;

    if (evaluated != 0 || recording != 0) {
        fprintf(stderr, "FAIL: %d argument(s) evaluated, AIP_RECORDING() gave %d\n", evaluated,
                recording);
        return 1;
    }
    printf("1 passed, 0 failed\n");
    return 0;
}
