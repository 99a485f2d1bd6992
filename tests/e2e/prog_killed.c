/*
 * prog_killed.c — records "tick" annotations until killed; prints its
 * result directory first so the test knows where to look.  With "deep",
 * each tick nests 200 annotations, 72 beyond the recorder's stack depth,
 * which are dropped and counted: a run with a known share of drops.
 * Usage: prog_killed DIR [deep]
 */
#include "aiprof.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 2 && !(argc == 3 && !strcmp(argv[2], "deep")))
        return 2;
    int depth = argc == 3 ? 200 : 1;
    aip_config cfg;
    aip_config_init(&cfg);
    cfg.dir_name = argv[1];
    cfg.activities = AIP_ACTIVITY_CPU;
    aip_session *s;
    if (aip_session_create(&cfg, &s) || aip_session_start(s)) {
        fprintf(stderr, "prog_killed: %s\n", aip_last_error());
        return 1;
    }
    const char *dir = aip_session_result_dir(s);
    printf("%s\n", dir ? dir : "(no result directory)");
    fflush(stdout);
    aip_string_id tick = aip_intern("tick");
    for (;;) {
        for (int i = 0; i < depth; i++)
            aip_annotation_push_id(tick);
        usleep(1000);
        for (int i = 0; i < depth; i++)
            aip_annotation_pop();
    }
}
