/*
 * prog_killed.c — records "tick" annotations until killed; prints its
 * result directory first so the test knows where to look.
 */
#include "aiprof.h"

#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
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
    for (;;) {
        aip_annotation_push("tick");
        usleep(1000);
        aip_annotation_pop();
    }
}
