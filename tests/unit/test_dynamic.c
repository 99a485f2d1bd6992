/*
 * test_dynamic.c — dynamic profiling: profiler_config.json parsing and
 * validation, log rotation, and end to end with real processes: a 40-step
 * training loop whose config is edited while it runs (exact steps collected,
 * ProfilerStep# = training step, a second edit → a new directory, malformed
 * edits logged and ignored), two processes sharing one watcher, cleanup
 * after exit, and a stale segment from a killed watcher taken over.
 * AIPROF_DP_POLL_MS=100 shortens the 2 s poll for the test.
 */
#include "aip_test.h"
#include "aiprof.h"
#include "dyn_config.h"
#include "dyn_log.h"
#include "dyn_watch.h"
#include "dyn_parse.h"
#include "fs.h"
#include "raw_count.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char tmp[PATH_MAX];

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* The training child's step count, for the parent to wait on: written to a
 * temporary file and renamed, so the parent never reads half a number. */
static void write_progress(const char *progress, int steps)
{
    char tmpf[PATH_MAX + 8];
    snprintf(tmpf, sizeof tmpf, "%s.tmp", progress);
    FILE *f = fopen(tmpf, "w");
    if (f) {
        fprintf(f, "%d\n", steps);
        fclose(f);
        rename(tmpf, progress);
    }
}

static aip_status parse(const char *text, aip__dyn_config *c, char *err, char *warn)
{
    return aip__dyn_config_parse(text, strlen(text), c, err, 512, warn, 512);
}

static void test_config_parsing(void)
{
    aip__dyn_config c;
    char err[512], warn[512];
    ASSERT_EQ(parse(aip__dyn_default_config_text(), &c, err, warn), AIP_OK);
    ASSERT_EQ(c.start_step, 0);
    ASSERT_EQ(c.active, 1);
    ASSERT_EQ(c.cfg.activities, AIP_ACTIVITY_CPU | AIP_ACTIVITY_NPU);
    ASSERT_EQ(c.cfg.data_simplification, 1);
    ASSERT_STREQ(c.prof_dir, "./");
    ASSERT_STREQ(warn, "");
    aip__dyn_config_free(&c);

    ASSERT_EQ(parse("{\"start_step\": 5, \"active\": 3, \"warmup\": 1, \"record_shapes\": true,"
                    "\"experimental_config\": {\"profiler_level\": \"Level1\","
                    "\"aic_metrics\": \"PipeUtilization\", \"export_type\": [\"text\", \"db\"],"
                    "\"gc_detect_threshold\": 1.5, \"mstx\": true, \"host_sys\": [\"cpu\"]},"
                    "\"metadata\": {\"distributed_args\": {\"tp\": 2}}, \"is_rank\": true,"
                    "\"rank_list\": [0, 2]}",
                    &c, err, warn),
              AIP_OK);
    ASSERT_EQ(c.start_step, 5);
    ASSERT_EQ(c.cfg.schedule.active, 3);
    ASSERT_EQ(c.cfg.schedule.warmup, 1);
    ASSERT_EQ(c.cfg.schedule.repeat, 1);
    ASSERT_EQ(c.cfg.record_shapes, 1);
    ASSERT_EQ(c.cfg.profiler_level, AIP_LEVEL1);
    ASSERT_EQ(c.cfg.aic_metrics, AIP_AIC_PIPE_UTILIZATION);
    ASSERT_EQ(c.cfg.export_type, AIP_EXPORT_TEXT | AIP_EXPORT_DB);
    ASSERT_TRUE(c.cfg.gc_detect_threshold_ms == 1.5);
    ASSERT_EQ(c.cfg.host_sys, AIP_HOST_SYS_CPU);
    ASSERT_TRUE(c.metadata != NULL);
    ASSERT_TRUE(aip__dyn_config_selects_rank(&c, 2));
    ASSERT_TRUE(!aip__dyn_config_selects_rank(&c, 1));
    aip__dyn_config_free(&c);

    struct {
        const char *text, *needle;
    } bad[] = {
        {"{\"start_step\": 1,", "malformed JSON"},
        {"[1, 2]", "JSON object"},
        {"{\"active\": -2}", "\"active\""},
        {"{\"active\": \"3\"}", "\"active\""},
        {"{\"start_step\": -5}", "\"start_step\""},
        {"{\"record_shapes\": 1}", "\"record_shapes\""},
        {"{\"activities\": [\"GPU\"]}", "\"activities\""},
        {"{\"prof_dir\": \"/tmp/a b\"}", "\"prof_dir\""},
        {"{\"rank_list\": [\"x\"]}", "\"rank_list\""},
        {"{\"experimental_config\": {\"profiler_level\": \"Level9\"}}", "profiler_level"},
        {"{\"experimental_config\": {\"export_type\": [\"csv\"]}}", "export_type"},
        {"{\"experimental_config\": {\"gc_detect_threshold\": -1}}", "gc_detect_threshold"},
        {"{\"experimental_config\": 3}", "experimental_config"},
        {"{\"metadata\": [1]}", "\"metadata\""},
        {"{\"active\": 1, \"active\": 2}", "malformed JSON"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        aip_status st = parse(bad[i].text, &c, err, warn);
        if (st == AIP_OK || !strstr(err, bad[i].needle))
            fprintf(stderr, "case %zu (%s): status %d, error \"%s\"\n", i, bad[i].text, st, err);
        ASSERT_TRUE(st != AIP_OK);
        ASSERT_TRUE(strstr(err, bad[i].needle) != NULL);
    }
    ASSERT_EQ(parse("{\"start_step\": 2, \"colour\": 1, \"experimental_config\": {\"shiny\": 1}}",
                    &c, err, warn),
              AIP_OK);
    ASSERT_TRUE(strstr(warn, "colour") != NULL);
    ASSERT_TRUE(strstr(warn, "experimental_config.shiny") != NULL);
    aip__dyn_config_free(&c);

    /* flight_recorder (docs/FLIGHT_RECORDER.md): seconds, an object or null */
    ASSERT_EQ(parse("{\"flight_recorder\": 60}", &c, err, warn), AIP_OK);
    ASSERT_TRUE(c.cfg.flight_recorder_seconds == 60);
    ASSERT_TRUE(aip__dyn_config_flight(&c));
    ASSERT_EQ(c.cfg.has_schedule, 0); /* armed: from start to stop */
    aip__dyn_config_free(&c);
    ASSERT_EQ(parse("{\"flight_recorder\": {\"seconds\": 30.5, \"ring_bytes\": 8388608, "
                    "\"slow_step\": 3, \"hang_seconds\": 300, \"signal\": -1, "
                    "\"ring_dir\": \"./ring\", \"shiny\": 1}}", &c, err, warn),
              AIP_OK);
    ASSERT_TRUE(c.cfg.flight_recorder_seconds == 30.5);
    ASSERT_EQ(c.cfg.flight_ring_bytes, 8388608);
    ASSERT_TRUE(c.cfg.flight_slow_step == 3);
    ASSERT_TRUE(c.cfg.flight_hang_seconds == 300);
    ASSERT_EQ(c.cfg.flight_signal, -1);
    ASSERT_STREQ(c.cfg.flight_ring_dir, "./ring");
    ASSERT_TRUE(strstr(warn, "flight_recorder.shiny") != NULL);
    aip__dyn_config_free(&c);
    ASSERT_EQ(parse("{\"flight_recorder\": null}", &c, err, warn), AIP_OK);
    ASSERT_TRUE(!aip__dyn_config_flight(&c));
    ASSERT_EQ(c.cfg.has_schedule, 1);
    aip__dyn_config_free(&c);
    struct {
        const char *text, *message;
    } bad_flight[] = {
        {"{\"flight_recorder\": true}",
         "\"flight_recorder\" must be a number of seconds > 0, an object of its options or null"},
        {"{\"flight_recorder\": 0}",
         "\"flight_recorder\" must be a number of seconds > 0, an object of its options or null"},
        {"{\"flight_recorder\": {\"ring_bytes\": 0}}",
         "\"flight_recorder.seconds\" is needed: the window a dump holds"},
        {"{\"flight_recorder\": {\"seconds\": \"60\"}}",
         "\"flight_recorder.seconds\" must be a number > 0"},
        {"{\"flight_recorder\": {\"seconds\": 1, \"ring_bytes\": 100}}",
         "\"flight_recorder.ring_bytes\" must be 0 (256 MiB) or an integer of at least 4194304 "
         "(4 MiB)"},
        {"{\"flight_recorder\": {\"seconds\": 1, \"slow_step\": 0.5}}",
         "\"flight_recorder.slow_step\" must be 0 (off) or a factor > 1"},
        {"{\"flight_recorder\": {\"seconds\": 1, \"hang_seconds\": -1}}",
         "\"flight_recorder.hang_seconds\" must be a number >= 0 (0: off)"},
        {"{\"flight_recorder\": {\"seconds\": 1, \"signal\": 9}}",
         "\"flight_recorder.signal\" must be 0 (SIGUSR2), -1 (none) or a signal number that can "
         "be caught"},
        {"{\"flight_recorder\": {\"seconds\": 1, \"ring_dir\": \"a b\"}}",
         "\"flight_recorder.ring_dir\" may only hold letters, digits and _ - . /"},
    };
    for (size_t i = 0; i < sizeof bad_flight / sizeof bad_flight[0]; i++) {
        ASSERT_EQ(parse(bad_flight[i].text, &c, err, warn), AIP_ERR_INVALID_ARG);
        ASSERT_STREQ(err, bad_flight[i].message);
    }

    size_t big = AIP_DYN_CONFIG_MAX_BYTES + 10;
    char *huge = malloc(big + 1);
    memset(huge, ' ', big);
    huge[0] = '{';
    huge[big - 1] = '}';
    huge[big] = 0;
    ASSERT_EQ(aip__dyn_config_parse(huge, big, &c, err, 512, warn, 512), AIP_ERR_LIMIT);
    ASSERT_TRUE(strstr(err, "1048576") != NULL);
    free(huge);
}

static off_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? st.st_size : -1;
}

static void test_log_rotation(void)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/rot", tmp);
    mkdir(dir, 0750);
    aip__dyn_log log;
    ASSERT_EQ(aip__dyn_log_open(&log, dir, "dp", "test"), 0);
    char line[200];
    memset(line, 'x', sizeof line - 1);
    line[sizeof line - 1] = 0;
    for (int i = 0; i < 3000; i++) /* ~700 KB of lines */
        aip__dyn_log_write(&log, "INFO", "%d %s", i, line);
    char backup[PATH_MAX + 8];
    snprintf(backup, sizeof backup, "%s.1", log.path);
    ASSERT_TRUE(file_size(log.path) > 0);
    ASSERT_TRUE(file_size(log.path) <= AIP_DYN_LOG_MAX_BYTES);
    ASSERT_TRUE(file_size(backup) > AIP_DYN_LOG_MAX_BYTES - 1000);
    ASSERT_TRUE(file_size(backup) <= AIP_DYN_LOG_MAX_BYTES);
    char backup2[PATH_MAX + 8];
    snprintf(backup2, sizeof backup2, "%s.2", log.path);
    ASSERT_EQ(file_size(backup2), -1);
    /* The newest line is in the current file. */
    FILE *f = fopen(log.path, "r");
    ASSERT_TRUE(f != NULL);
    char buf[512], last[512] = "";
    while (fgets(buf, sizeof buf, f))
        snprintf(last, sizeof last, "%s", buf);
    fclose(f);
    ASSERT_TRUE(strstr(last, "[INFO]") != NULL);
    ASSERT_TRUE(strstr(last, " 2999 ") != NULL);
}

/* ---- end to end with real processes ---------------------------------- */

static void write_config(const char *dir, const char *json)
{
    char path[PATH_MAX], tmpf[PATH_MAX];
    snprintf(path, sizeof path, "%s/profiler_config.json", dir);
    snprintf(tmpf, sizeof tmpf, "%s/.edit.tmp", dir);
    FILE *f = fopen(tmpf, "w");
    if (!f)
        return;
    fputs(json, f);
    fclose(f);
    rename(tmpf, path); /* a new mtime in one step, as an editor would */
}

static long read_progress(const char *path)
{
    FILE *f = fopen(path, "r");
    long v = -1;
    if (f) {
        if (fscanf(f, "%ld", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

/* The training loop: `steps` steps of ~step_ms each, each with one op;
 * writes the number of finished steps to `progress`. */
static int train(const char *cfg_dir, const char *progress, int steps, int step_ms)
{
    if (aip_dynamic_init(cfg_dir) != AIP_OK)
        return 20;
    for (int s = 0; s < steps; s++) {
        char name[32];
        snprintf(name, sizeof name, "train_op_%d", s);
        aip_op_info op = {.name = name, .sequence_number = -1};
        aip_op_begin(&op);
        sleep_ms(step_ms);
        aip_op_end();
        if (aip_dynamic_step() != AIP_OK)
            return 21;
        write_progress(progress, s + 1);
    }
    aip_dynamic_shutdown();
    return 0;
}

static pid_t spawn_train(const char *cfg_dir, const char *progress, int steps, int step_ms)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(train(cfg_dir, progress, steps, step_ms));
    return pid;
}

static int wait_progress(const char *progress, long at_least, int timeout_ms)
{
    for (int waited = 0; waited < timeout_ms; waited += 10) {
        if (read_progress(progress) >= at_least)
            return 1;
        sleep_ms(10);
    }
    return 0;
}

/* Result directories under `dir`, sorted by name (= by time). */
static int list_results(const char *dir, char out[][PATH_MAX], int max)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max)
        if (strstr(e->d_name, "_ascend_pt"))
            snprintf(out[n++], PATH_MAX, "%s/%s", dir, e->d_name);
    closedir(d);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (strcmp(out[i], out[j]) > 0) {
                char t[PATH_MAX];
                memcpy(t, out[i], PATH_MAX);
                memcpy(out[i], out[j], PATH_MAX);
                memcpy(out[j], t, PATH_MAX);
            }
    return n;
}

static int log_contains(const char *cfg_dir, const char *prefix, const char *needle)
{
    char logdir[PATH_MAX];
    snprintf(logdir, sizeof logdir, "%s/log", cfg_dir);
    DIR *d = opendir(logdir);
    if (!d)
        return 0;
    struct dirent *e;
    int count = 0;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
            continue;
        char path[PATH_MAX * 2];
        snprintf(path, sizeof path, "%s/%s", logdir, e->d_name);
        FILE *f = fopen(path, "r");
        char line[2048];
        while (f && fgets(line, sizeof line, f))
            if (strstr(line, needle))
                count++;
        if (f)
            fclose(f);
    }
    closedir(d);
    return count;
}

/* Which ProfilerStep# numbers a result directory holds (bit set). */
static uint64_t steps_in(const char *result_dir)
{
    uint64_t bits = 0;
    char raw[PATH_MAX];
    for (int s = 0; s < 64; s++) {
        char name[32];
        snprintf(name, sizeof name, "ProfilerStep#%d", s);
        if (!raw_find(result_dir, raw, sizeof raw))
            return 0;
        raw_counts rc = raw_count_file(raw, name);
        /* prefix match: #1 also matches #10..#19; count exact below */
        if (rc.prefix_hits) {
            int longer = 0;
            for (int k = 0; k < 10; k++) {
                char lname[40];
                snprintf(lname, sizeof lname, "%s%d", name, k);
                longer += (int)raw_count_file(raw, lname).prefix_hits;
            }
            if ((int)rc.prefix_hits > longer)
                bits |= 1ull << s;
        }
    }
    return bits;
}

static void test_edits_drive_collections(void)
{
    char cfg[PATH_MAX], prof[PATH_MAX], progress[PATH_MAX], json[1024];
    snprintf(cfg, sizeof cfg, "%s/cfg1", tmp);
    snprintf(prof, sizeof prof, "%s/prof1", tmp);
    snprintf(progress, sizeof progress, "%s/progress1", tmp);
    pid_t pid = spawn_train(cfg, progress, 70, 40);
    ASSERT_TRUE(pid > 0);
    ASSERT_TRUE(wait_progress(progress, 3, 10000));
    /* The default file was created at init. */
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/profiler_config.json", cfg);
    ASSERT_TRUE(file_size(path) > 100);

    long now = read_progress(progress);
    long start1 = now + 10; /* ~400 ms ahead: several polls, even on a loaded machine */
    snprintf(json, sizeof json,
             "{\"start_step\": %ld, \"active\": 3, \"warmup\": 1, \"prof_dir\": \"%s\", "
             "\"activities\": [\"CPU\"], \"metadata\": {\"run\": \"first\"}}",
             start1, prof);
    write_config(cfg, json);
    sleep_ms(300);
    write_config(cfg, "{\"start_step\": 1, \"active\": "); /* malformed: ignored */
    sleep_ms(300);
    write_config(cfg, "{\"start_step\": 3, \"active\": -1}"); /* invalid value: ignored */
    sleep_ms(300);
    ASSERT_TRUE(wait_progress(progress, start1 + 6, 20000));
    now = read_progress(progress);
    long start2 = now + 10;
    snprintf(json, sizeof json,
             "{\"start_step\": %ld, \"active\": 10, \"prof_dir\": \"%s\", \"activities\": [\"CPU\"]}",
             start2, prof);
    write_config(cfg, json);
    /* An edit while that collection runs is applied after it ends. */
    ASSERT_TRUE(wait_progress(progress, start2 + 1, 20000));
    snprintf(json, sizeof json,
             "{\"start_step\": -1, \"active\": 1, \"prof_dir\": \"%s\", \"activities\": [\"CPU\"]}",
             prof);
    write_config(cfg, json);
    ASSERT_TRUE(wait_progress(progress, start2 + 16, 20000));
    write_config(cfg, "{\"start_step\": 2, \"active\": 1}"); /* in the past: dropped */
    sleep_ms(300);
    int status;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0);

    char dirs[8][PATH_MAX];
    int n = list_results(prof, dirs, 8);
    ASSERT_EQ(n, 3);
    /* First: warmup step start1 is not recorded; active steps start1+1..start1+3. */
    uint64_t expect1 = (1ull << (start1 + 1)) | (1ull << (start1 + 2)) | (1ull << (start1 + 3));
    uint64_t expect2 = ((1ull << 10) - 1) << start2;
    uint64_t got1 = steps_in(dirs[0]), got2 = steps_in(dirs[1]);
    if (got1 != expect1 || got2 != expect2)
        fprintf(stderr, "steps: got %llx %llx, expected %llx %llx (start %ld %ld)\n",
                (unsigned long long)got1, (unsigned long long)got2,
                (unsigned long long)expect1, (unsigned long long)expect2, start1, start2);
    ASSERT_EQ(got1, expect1);
    ASSERT_EQ(got2, expect2);
    uint64_t got3 = steps_in(dirs[2]);
    ASSERT_EQ(__builtin_popcountll(got3), 1);
    ASSERT_TRUE(got3 >= (1ull << (start2 + 10)));
    /* The ops of exactly those steps. */
    char raw[PATH_MAX];
    ASSERT_TRUE(raw_find(dirs[0], raw, sizeof raw));
    ASSERT_EQ(raw_count_file(raw, "train_op_").prefix_hits, 3);
    char meta[PATH_MAX + 32];
    snprintf(meta, sizeof meta, "%s/profiler_metadata.json", dirs[0]);
    json_t *m = json_load_file(meta, 0, NULL);
    ASSERT_TRUE(m != NULL);
    ASSERT_STREQ(json_string_value(json_object_get(m, "run")), "first");
    json_decref(m);
    /* Logs say what happened. */
    ASSERT_TRUE(log_contains(cfg, "dp_", "malformed JSON") >= 1);
    ASSERT_TRUE(log_contains(cfg, "dp_", "\"active\" must be a positive integer") >= 1);
    ASSERT_EQ(log_contains(cfg, "dp_", "already past"), 1);
    ASSERT_EQ(log_contains(cfg, "dp_", "collection started"), 3);
    ASSERT_TRUE(log_contains(cfg, "dp_", "applied after the running collection") >= 1);
    ASSERT_TRUE(log_contains(cfg, "monitor_dp_", "load json success") >= 4);
    ASSERT_TRUE(log_contains(cfg, "monitor_dp_", "load json failed") >= 2);
}

static int shm_exists(const char *cfg_dir)
{
    char name[96];
    aip__dyn_watch_name(cfg_dir, name, sizeof name);
    char path[200];
    snprintf(path, sizeof path, "/dev/shm%s", name);
    return access(path, F_OK) == 0;
}

/* The default config is created only where none exists, atomically: a
 * file written meanwhile (by a user, or another process) is kept. */
static void test_create_file_never_overwrites(void)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/created.json", tmp);
    int created = -1;
    ASSERT_EQ(aip__create_file(path, "{\"a\": 1}", 8, &created), AIP_OK);
    ASSERT_EQ(created, 1);
    ASSERT_EQ(aip__create_file(path, "{}", 2, &created), AIP_OK);
    ASSERT_EQ(created, 0);
    size_t n = 0;
    char *text = aip_test_slurp(path, &n);
    ASSERT_TRUE(text && n == 8 && memcmp(text, "{\"a\": 1}", 8) == 0);
    free(text);
    DIR *d = opendir(tmp); /* no temp file left behind */
    struct dirent *e;
    while (d && (e = readdir(d)))
        ASSERT_TRUE(strstr(e->d_name, ".tmp") == NULL);
    if (d)
        closedir(d);
}

static void test_two_processes_share_one_watcher(void)
{
    char cfg[PATH_MAX], prof[PATH_MAX], p1[PATH_MAX], p2[PATH_MAX], json[1024];
    snprintf(cfg, sizeof cfg, "%s/cfg2", tmp);
    snprintf(prof, sizeof prof, "%s/prof2", tmp);
    snprintf(p1, sizeof p1, "%s/progress2a", tmp);
    snprintf(p2, sizeof p2, "%s/progress2b", tmp);
    pid_t a = spawn_train(cfg, p1, 30, 40);
    pid_t b = spawn_train(cfg, p2, 30, 40);
    ASSERT_TRUE(wait_progress(p1, 3, 10000) && wait_progress(p2, 3, 10000));
    snprintf(json, sizeof json,
             "{\"start_step\": -1, \"active\": 2, \"prof_dir\": \"%s\", \"activities\": [\"CPU\"]}",
             prof);
    write_config(cfg, json);
    int status;
    ASSERT_EQ(waitpid(a, &status, 0), a);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ASSERT_EQ(waitpid(b, &status, 0), b);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char dirs[8][PATH_MAX];
    ASSERT_EQ(list_results(prof, dirs, 8), 2); /* each process collected once */
    ASSERT_EQ(log_contains(cfg, "dp_", "started config watcher"), 1);
    ASSERT_EQ(log_contains(cfg, "monitor_dp_", "load json success"), 1);
    /* Nothing stale after a normal exit: the watcher leaves within a poll. */
    int gone = 0;
    for (int i = 0; i < 100 && !gone; i++) {
        gone = !shm_exists(cfg);
        sleep_ms(20);
    }
    ASSERT_TRUE(gone);
    ASSERT_TRUE(log_contains(cfg, "monitor_dp_", "Dynamic profiler process done") == 1);
}

static void test_stale_segment_is_taken_over(void)
{
    char cfg[PATH_MAX], progress[PATH_MAX];
    snprintf(cfg, sizeof cfg, "%s/cfg3", tmp);
    snprintf(progress, sizeof progress, "%s/progress3", tmp);
    mkdir(cfg, 0750);
    /* A watcher that was SIGKILLed: start one, kill it, leave the segment. */
    pid_t pid = spawn_train(cfg, progress, 1000, 20);
    ASSERT_TRUE(wait_progress(progress, 2, 10000));
    char name[96];
    aip__dyn_watch_name(cfg, name, sizeof name);
    int fd = shm_open(name, O_RDWR, 0);
    ASSERT_TRUE(fd >= 0);
    /* The watcher pid is the third u32 of the segment. */
    uint32_t *hdr = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ASSERT_TRUE(hdr != MAP_FAILED);
    pid_t watcher = (pid_t)hdr[2];
    ASSERT_TRUE(watcher > 0);
    kill(pid, SIGKILL);
    kill(watcher, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    sleep_ms(100);
    munmap(hdr, 4096);
    close(fd);
    ASSERT_TRUE(shm_exists(cfg)); /* the leftover */
    /* A new run detects it, replaces the watcher and works. */
    char prof[PATH_MAX], json[1024];
    snprintf(prof, sizeof prof, "%s/prof3", tmp);
    unlink(progress);
    pid = spawn_train(cfg, progress, 20, 40);
    ASSERT_TRUE(wait_progress(progress, 2, 10000));
    snprintf(json, sizeof json,
             "{\"start_step\": -1, \"active\": 1, \"prof_dir\": \"%s\", \"activities\": [\"CPU\"]}",
             prof);
    write_config(cfg, json);
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ASSERT_TRUE(log_contains(cfg, "dp_", "stale watcher") >= 1);
    char dirs[4][PATH_MAX];
    ASSERT_EQ(list_results(prof, dirs, 4), 1);
}

/* The config directory deleted while training runs: the program goes on,
 * and once the directory is back, the next valid edit works. */
static void test_config_dir_deleted_while_running(void)
{
    char cfg[PATH_MAX], prof[PATH_MAX], progress[PATH_MAX], json[1024];
    snprintf(cfg, sizeof cfg, "%s/cfg4", tmp);
    snprintf(prof, sizeof prof, "%s/prof4", tmp);
    snprintf(progress, sizeof progress, "%s/progress4", tmp);
    pid_t pid = spawn_train(cfg, progress, 60, 40);
    ASSERT_TRUE(wait_progress(progress, 3, 10000));
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cfg);
    ASSERT_EQ(system(cmd), 0);
    sleep_ms(400); /* a few polls without the directory */
    ASSERT_EQ(mkdir(cfg, 0750), 0);
    snprintf(json, sizeof json,
             "{\"start_step\": -1, \"active\": 2, \"prof_dir\": \"%s\", \"activities\": [\"CPU\"]}",
             prof);
    write_config(cfg, json);
    int status;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char dirs[4][PATH_MAX];
    ASSERT_EQ(list_results(prof, dirs, 4), 1);
    ASSERT_EQ(__builtin_popcountll(steps_in(dirs[0])), 2);
    ASSERT_TRUE(log_contains(cfg, "monitor_dp_", "is back") >= 1);
}

/* The process that started the watcher exits; the watcher stays for the
 * others, and their edits still work. */
static void test_watcher_survives_its_starter(void)
{
    char cfg[PATH_MAX], prof[PATH_MAX], p1[PATH_MAX], p2[PATH_MAX], json[1024];
    snprintf(cfg, sizeof cfg, "%s/cfg5", tmp);
    snprintf(prof, sizeof prof, "%s/prof5", tmp);
    snprintf(p1, sizeof p1, "%s/progress5a", tmp);
    snprintf(p2, sizeof p2, "%s/progress5b", tmp);
    pid_t starter = spawn_train(cfg, p1, 5, 20);
    ASSERT_TRUE(wait_progress(p1, 1, 10000));
    pid_t other = spawn_train(cfg, p2, 60, 40);
    int status;
    ASSERT_EQ(waitpid(starter, &status, 0), starter);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ASSERT_TRUE(wait_progress(p2, 3, 10000));
    ASSERT_TRUE(shm_exists(cfg)); /* still watched */
    snprintf(json, sizeof json,
             "{\"start_step\": -1, \"active\": 2, \"prof_dir\": \"%s\", \"activities\": [\"CPU\"]}",
             prof);
    write_config(cfg, json);
    ASSERT_EQ(waitpid(other, &status, 0), other);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char dirs[4][PATH_MAX];
    ASSERT_EQ(list_results(prof, dirs, 4), 1);
    ASSERT_EQ(log_contains(cfg, "dp_", "started config watcher"), 1);
}

/* dp.start: refused while a collection runs; collects once otherwise. */
static void test_start_once(void)
{
    char cfg[PATH_MAX], prof[PATH_MAX], start_cfg[PATH_MAX + 32], json[1024];
    snprintf(cfg, sizeof cfg, "%s/cfg6", tmp);
    snprintf(prof, sizeof prof, "%s/prof6", tmp);
    pid_t pid = fork();
    if (pid == 0) {
        if (aip_dynamic_init(cfg) != AIP_OK)
            _exit(30);
        snprintf(start_cfg, sizeof start_cfg, "%s/start.json", cfg);
        snprintf(json, sizeof json,
                 "{\"active\": 3, \"prof_dir\": \"%s\", \"activities\": [\"CPU\"]}", prof);
        FILE *f = fopen(start_cfg, "w");
        if (!f)
            _exit(31);
        fputs(json, f);
        fclose(f);
        for (int s = 0; s < 10; s++) {
            if (s == 2 && aip_dynamic_start(start_cfg) != AIP_OK)
                _exit(32);
            if (s == 3 && aip_dynamic_start(start_cfg) != AIP_ERR_STATE)
                _exit(33); /* a collection is running */
            if (s == 3 && aip_dynamic_get_state() != AIP_DYN_RUNNING)
                _exit(34);
            AIP_ANNOTATION_PUSH("work");
            AIP_ANNOTATION_POP();
            aip_dynamic_step();
        }
        _exit(aip_dynamic_get_state() == AIP_DYN_IDLE ? 0 : 35);
    }
    int status;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0);
    char dirs[4][PATH_MAX];
    ASSERT_EQ(list_results(prof, dirs, 4), 1);
    ASSERT_EQ(steps_in(dirs[0]), (1ull << 2) | (1ull << 3) | (1ull << 4));
}

/* A config with "flight_recorder" arms the flight recorder: it stays armed
 * past warmup + active (whatever they say), writes nothing but its dumps
 * (here the API's) into prof_dir, and a new config disarms it; the log
 * says so.  Armed by dp.start here and by an edit of profiler_config.json
 * in the same run. */
static void test_flight_recorder_by_config(void)
{
    char cfg[PATH_MAX], prof[PATH_MAX], start_cfg[PATH_MAX + 32], json[1024], ring[PATH_MAX];
    snprintf(cfg, sizeof cfg, "%s/cfg7", tmp);
    snprintf(prof, sizeof prof, "%s/prof7", tmp);
    snprintf(ring, sizeof ring, "%s/ring7", tmp);
    pid_t pid = fork();
    if (pid == 0) {
        if (aip_dynamic_init(cfg) != AIP_OK)
            _exit(30);
        snprintf(start_cfg, sizeof start_cfg, "%s/start.json", cfg);
        snprintf(json, sizeof json,
                 "{\"active\": 1, \"prof_dir\": \"%s\", \"activities\": [\"CPU\"], "
                 "\"flight_recorder\": {\"seconds\": 60, \"ring_bytes\": 4194304, "
                 "\"ring_dir\": \"%s\"}}", prof, ring);
        FILE *f = fopen(start_cfg, "w");
        if (!f)
            _exit(31);
        fputs(json, f);
        fclose(f);
        char dir[PATH_MAX];
        for (int s = 0; s < 10; s++) {
            if (s == 2 && aip_dynamic_start(start_cfg) != AIP_OK)
                _exit(32);
            AIP_ANNOTATION_PUSH("armed_work");
            AIP_ANNOTATION_POP();
            aip_dynamic_step();
        }
        if (aip_dynamic_get_state() != AIP_DYN_RUNNING) /* past active: still armed */
            _exit(33);
        if (aip_flight_dump("test", dir, sizeof dir) != AIP_OK)
            _exit(34);
        write_config(cfg, "{\"start_step\": 0}"); /* a new config disarms it */
        for (int s = 0; s < 400 && aip_dynamic_get_state() == AIP_DYN_RUNNING; s++) {
            sleep_ms(10);
            aip_dynamic_step();
        }
        if (aip_dynamic_get_state() == AIP_DYN_RUNNING)
            _exit(35);
        if (aip_flight_dump("late", dir, sizeof dir) != AIP_ERR_STATE)
            _exit(36); /* nothing armed any more */
        aip_dynamic_shutdown();
        _exit(0);
    }
    int status;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0);
    char dirs[4][PATH_MAX];
    ASSERT_EQ(list_results(prof, dirs, 4), 1); /* the dump only: disarming writes nothing */
    char raw[PATH_MAX];
    ASSERT_TRUE(raw_find(dirs[0], raw, sizeof raw));
    ASSERT_EQ(raw_count_file(raw, "armed_work").prefix_hits, 8); /* steps 2..9 */
    ASSERT_EQ(log_contains(cfg, "dp_", "flight recorder armed at step 2"), 1);
    ASSERT_EQ(log_contains(cfg, "dp_", "flight recorder dump saved in"), 1);
    ASSERT_EQ(log_contains(cfg, "dp_", "flight recorder disarmed"), 1);
    DIR *d = opendir(ring);
    int left = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        left += e->d_name[0] != '.';
    if (d)
        closedir(d);
    ASSERT_EQ(left, 0); /* the ring is gone */
}

/* aip__read_file never blocks and reads nothing but a regular file: a
 * FIFO with no writer, a directory and a device are refused at once, with
 * a message naming the path and what it is; the nofollow form refuses a
 * symbolic link. */
static void test_read_file_refuses_non_regular(void)
{
    char fifo[PATH_MAX], dir[PATH_MAX], reg[PATH_MAX], link[PATH_MAX];
    snprintf(fifo, sizeof fifo, "%s/rf_fifo", tmp);
    snprintf(dir, sizeof dir, "%s/rf_dir", tmp);
    snprintf(reg, sizeof reg, "%s/rf_reg", tmp);
    snprintf(link, sizeof link, "%s/rf_link", tmp);
    ASSERT_EQ(mkfifo(fifo, 0600), 0);
    ASSERT_EQ(mkdir(dir, 0700), 0);
    FILE *f = fopen(reg, "w");
    ASSERT_TRUE(f != NULL);
    fputs("{}", f);
    fclose(f);
    ASSERT_EQ(symlink(reg, link), 0);
    alarm(20); /* a blocking open would hang here: SIGALRM fails the test instead */
    char *text = NULL;
    size_t n = 0;
    ASSERT_EQ(aip__read_file(fifo, 1024, &text, &n), AIP_ERR_IO);
    ASSERT_TRUE(text == NULL);
    ASSERT_TRUE(strstr(aip_last_error(), fifo) != NULL);
    ASSERT_TRUE(strstr(aip_last_error(), "is a FIFO (named pipe), not a regular file") != NULL);
    ASSERT_EQ(aip__read_file(dir, 1024, &text, &n), AIP_ERR_IO);
    ASSERT_TRUE(strstr(aip_last_error(), "is a directory, not a regular file") != NULL);
    ASSERT_EQ(aip__read_file("/dev/null", 1024, &text, &n), AIP_ERR_IO);
    ASSERT_TRUE(strstr(aip_last_error(), "is a character device") != NULL);
    ASSERT_EQ(aip__read_file_nofollow(link, 1024, &text, &n), AIP_ERR_SYMLINK);
    ASSERT_TRUE(strstr(aip_last_error(), "is a symbolic link") != NULL);
    ASSERT_EQ(aip__read_file(link, 1024, &text, &n), AIP_OK); /* following is the caller's choice */
    free(text);
    ASSERT_EQ(aip__read_file_nofollow(reg, 1024, &text, &n), AIP_OK);
    ASSERT_EQ(n, 2);
    ASSERT_STREQ(text, "{}");
    free(text);
    ASSERT_EQ(aip__read_file_nofollow(reg, 1, &text, &n), AIP_ERR_LIMIT);
    alarm(0);
}

/* profiler_config.json as a FIFO: init returns (the refusal logged), the
 * watcher never opens it, a regular file written there later starts a
 * collection, the FIFO coming back is refused again without hanging the
 * watcher, and the watcher still notices the program's exit.  dp.start
 * with a FIFO, a directory or a symbolic link returns at once. */
static int fifo_child(const char *cfg, const char *fifo2, const char *dirpath,
                      const char *link, const char *progress)
{
    alarm(60); /* a blocked init / start / step ends the child: the test fails, not hangs */
    if (aip_dynamic_init(cfg) != AIP_OK)
        return 40;
    if (aip_dynamic_start(fifo2) != AIP_ERR_INVALID_ARG) /* both FIFOs: nothing usable */
        return 41;
    if (aip_dynamic_start(dirpath) != AIP_ERR_INVALID_ARG)
        return 42;
    if (aip_dynamic_start(link) != AIP_ERR_INVALID_ARG)
        return 43;
    if (aip_dynamic_get_state() != AIP_DYN_IDLE)
        return 44;
    pid_t me = (pid_t)syscall(SYS_gettid);
    int saw_running = 0;
    for (int s = 0; s < 80; s++) {
        aip_op_info op = {.name = "fifo_op", .sequence_number = -1};
        aip_op_begin(&op);
        sleep_ms(40);
        aip_op_end();
        if (aip_dynamic_step() != AIP_OK)
            return 45;
        if (aip_dynamic_get_state() == AIP_DYN_RUNNING) {
            saw_running = 1;
            /* The edit was parsed, and not by this (the training) thread. */
            pid_t t = aip__dyn_last_parse_tid();
            if (t == 0 || t == me)
                return 46;
        }
        write_progress(progress, s + 1);
    }
    aip_dynamic_shutdown();
    return saw_running ? 0 : 47;
}

static void test_fifo_as_config(void)
{
    char cfg[PATH_MAX], prof[PATH_MAX], progress[PATH_MAX], path[PATH_MAX + 32],
        fifo2[PATH_MAX], dirpath[PATH_MAX], link[PATH_MAX], json[1024];
    snprintf(cfg, sizeof cfg, "%s/cfg_fifo", tmp);
    snprintf(prof, sizeof prof, "%s/prof_fifo", tmp);
    snprintf(progress, sizeof progress, "%s/progress_fifo", tmp);
    snprintf(fifo2, sizeof fifo2, "%s/start_fifo.json", tmp);
    snprintf(dirpath, sizeof dirpath, "%s/start_dir.json", tmp);
    snprintf(link, sizeof link, "%s/start_link.json", tmp);
    snprintf(path, sizeof path, "%s/profiler_config.json", cfg);
    ASSERT_EQ(mkdir(cfg, 0700), 0);
    ASSERT_EQ(mkfifo(path, 0600), 0);
    ASSERT_EQ(mkfifo(fifo2, 0600), 0);
    ASSERT_EQ(mkdir(dirpath, 0700), 0);
    ASSERT_EQ(symlink(fifo2, link), 0);
    pid_t pid = fork();
    if (pid == 0)
        _exit(fifo_child(cfg, fifo2, dirpath, link, progress));
    ASSERT_TRUE(pid > 0);
    ASSERT_TRUE(wait_progress(progress, 3, 20000));
    ASSERT_TRUE(log_contains(cfg, "dp_", "is a FIFO (named pipe), not a regular file") >= 1);
    /* A regular file replaces the FIFO: an edit like any other. */
    snprintf(json, sizeof json,
             "{\"start_step\": -1, \"active\": 2, \"prof_dir\": \"%s\", \"activities\": [\"CPU\"]}",
             prof);
    write_config(cfg, json);
    long now = read_progress(progress);
    ASSERT_TRUE(wait_progress(progress, now + 10, 20000));
    /* The FIFO comes back: refused, the watcher goes on. */
    ASSERT_EQ(unlink(path), 0);
    ASSERT_EQ(mkfifo(path, 0600), 0);
    now = read_progress(progress);
    ASSERT_TRUE(wait_progress(progress, now + 10, 20000));
    ASSERT_TRUE(log_contains(cfg, "monitor_dp_", "is a FIFO (named pipe), not a regular file") >= 1);
    write_config(cfg, json); /* and a regular edit after it is seen */
    int status;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0);
    char dirs[4][PATH_MAX];
    ASSERT_EQ(list_results(prof, dirs, 4), 2);
    ASSERT_TRUE(log_contains(cfg, "dp_", "not usable") >= 3); /* the three dp.start refusals */
    ASSERT_TRUE(log_contains(cfg, "dp_", "is a directory, not a regular file") >= 1);
    ASSERT_TRUE(log_contains(cfg, "dp_", "is a symbolic link") >= 1);
    ASSERT_TRUE(log_contains(cfg, "dp_", "by the config thread") >= 2);
    /* The watcher was not stuck in an open(): it sees the exit and leaves. */
    int gone = 0;
    for (int i = 0; i < 200 && !gone; i++) {
        gone = !shm_exists(cfg);
        if (!gone)
            sleep_ms(50);
    }
    ASSERT_TRUE(gone);
}

static void test_api_misuse(void)
{
    ASSERT_EQ(aip_dynamic_step(), AIP_ERR_STATE);
    ASSERT_EQ(aip_dynamic_start(NULL), AIP_ERR_STATE);
    ASSERT_EQ(aip_dynamic_get_state(), AIP_DYN_UNINITIALIZED);
    ASSERT_EQ(aip_dynamic_init("/tmp/bad dir"), AIP_ERR_PATH);
    char link[PATH_MAX];
    snprintf(link, sizeof link, "%s/cfglink", tmp);
    ASSERT_EQ(symlink("/tmp", link), 0);
    ASSERT_EQ(aip_dynamic_init(link), AIP_ERR_SYMLINK);
}

static void setup(void)
{
    make_tmpdir(tmp, sizeof tmp, "dynamic");
    setenv("AIPROF_DP_POLL_MS", "100", 1);
    setenv("AIPROF_QUIET", "1", 1);
}
static void teardown(void) { if (!getenv("AIP_KEEP_TMP")) rm_rf(tmp); }

TEST_MAIN(TEST_CASE(setup), TEST_CASE(test_config_parsing), TEST_CASE(test_log_rotation),
          TEST_CASE(test_api_misuse), TEST_CASE(test_edits_drive_collections),
          TEST_CASE(test_create_file_never_overwrites),
          TEST_CASE(test_two_processes_share_one_watcher),
          TEST_CASE(test_stale_segment_is_taken_over),
          TEST_CASE(test_config_dir_deleted_while_running),
          TEST_CASE(test_watcher_survives_its_starter), TEST_CASE(test_start_once),
          TEST_CASE(test_flight_recorder_by_config),
          TEST_CASE(test_read_file_refuses_non_regular), TEST_CASE(test_fifo_as_config),
          TEST_CASE(teardown))
