/*
 * toy_prog.c — the toy back end's program: a session with device activity
 * in which op "aten::toy_mm" launches kernel "toy_gemm" on the toy
 * device, analysed at once (aip_analyse_dir); then a fork, whose child
 * reports whether the collector's fork_child hook ran.  It prints what
 * the checks of test_collect_toy.sh read:
 *   dir <result directory>
 *   status <aip_device_status()>
 *   inject <variable> <off variable>      (one line each, aip_injection_var)
 *   child_forks <n>                        (fork_child calls the child saw)
 */
#include "aiprof.h"
#include "aiprof_integration.h"
#include "toy.h"

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: toy_prog DIR\n");
        return 2;
    }
    aip_config c;
    aip_config_init(&c);
    c.dir_name = argv[1];
    c.activities = AIP_ACTIVITY_CPU | AIP_ACTIVITY_NPU;
    aip_session *s;
    if (aip_session_create(&c, &s) || aip_session_start(s)) {
        fprintf(stderr, "toy_prog: %s\n", aip_last_error());
        return 1;
    }
    aip_op_info mm = {.name = "aten::toy_mm", .sequence_number = -1};
    aip_op_begin(&mm);
    toy_launch("toy_gemm", 200);
    aip_op_end();
    if (aip_session_stop(s)) {
        fprintf(stderr, "toy_prog: %s\n", aip_last_error());
        return 1;
    }
    aip_analyse_options o;
    aip_analyse_options_init(&o);
    if (aip_analyse_dir(aip_session_result_dir(s), &o)) {
        fprintf(stderr, "toy_prog: %s\n", aip_last_error());
        return 1;
    }
    printf("dir %s\n", aip_session_result_dir(s));
    aip_session_destroy(s);
    char why[512];
    aip_device_status(why, sizeof why);
    printf("status %s\n", why);
    const char *var, *off;
    for (size_t i = 0; (var = aip_injection_var(i, &off)); i++)
        printf("inject %s %s\n", var, off ? off : "-");
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0)
        _exit((int)toy_forks_seen());
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) {
        fprintf(stderr, "toy_prog: the forked child did not exit\n");
        return 1;
    }
    printf("child_forks %d\n", WEXITSTATUS(st));
    return 0;
}
