/*
 * test_device_reports.c — device activity in the memory outputs and the
 * summary, from a trace recorded through the device interface with device
 * times chosen by the test (one clock sample: the alignment is a constant
 * offset, so every duration and gap below is exact):
 *
 *   queue 0: k1 [0, 100 us], k1 [200, 250 us]; queue 1: k2 [50, 150 us];
 *   queue 0: "Memcpy HtoD" [300, 320 us], 2 MiB
 *   -> busy = 150 + 50 + 20 = 220 us of a 320 us window (68.8%)
 *   device memory: A 1 MiB allocated inside aten::empty, B 2 MiB, A freed,
 *   C (512 KiB, from before the trace) freed, B freed
 *   -> live totals 1.5, 3.5, 2.5, 2.0, 0 MiB (C counted from the start)
 *
 * memory_record.csv gets APP rows with those totals, operator_memory.csv
 * one row per allocation, the memory timeline of npu:0 the events, and the
 * summary its device section (kernels, copies, busy time, memory peak).
 */
#include "aip_test.h"
#include "session_helpers.h"
#include "tmp_dir.h"
#include "clock.h"
#include "device.h"

#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define US 1000ull
#define BASE 7000000000000ull /* device clock at the sample */

static char tmp[PATH_MAX], dir[PATH_MAX];
static uint32_t dev, q0, q1;

static void spin_us(int us)
{
    uint64_t end = aip__mono_ns() + (uint64_t)us * 1000;
    while (aip__mono_ns() < end) {
    }
}

static void task(uint32_t q, const char *name, uint8_t kind, uint8_t dir_, uint64_t start_us,
                 uint64_t end_us, uint64_t bytes)
{
    aip__dev_task_info ti = {.name = name, .device = dev, .queue = q, .kind = kind,
                             .direction = dir_, .start = BASE + start_us * US,
                             .end = BASE + end_us * US, .bytes = bytes};
    aip__dev_task(&ti);
}

static char *output(const char *name)
{
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/ASCEND_PROFILER_OUTPUT/%s", dir, name);
    return aip_test_slurp(p, NULL);
}

static void test_record(void)
{
    dev = aip__dev_device(AIP_BACKEND_OPENCL, 0x51, "Test GPU", "aiprof", AIP_DEVKIND_GPU);
    q0 = aip__dev_queue(dev, 0x60, "queue 0");
    q1 = aip__dev_queue(dev, 0x61, "queue 1");
    aip_config c;
    base_config(&c, tmp);
    c.activities = AIP_ACTIVITY_CPU | AIP_ACTIVITY_NPU;
    c.profile_memory = 1;
    aip_session *s = start_new(&c);
    ASSERT_TRUE(s != NULL);
    uint64_t t0 = aip__ticks(), t1 = aip__ticks();
    aip__dev_clock(dev, t0, t1, BASE, AIP_SYNC_DEVICE_AND_HOST_TIMER);
    task(q0, "k1", AIP_TASK_KERNEL, 0, 0, 100, 0);
    task(q1, "k2", AIP_TASK_KERNEL, 0, 50, 150, 0);
    task(q0, "k1", AIP_TASK_KERNEL, 0, 200, 250, 0);
    task(q0, "Memcpy HtoD", AIP_TASK_MEMCPY, AIP_COPY_H2D, 300, 320, 2u << 20);
    aip_op_info op = {.name = "aten::empty", .sequence_number = -1};
    aip_op_begin(&op);
    spin_us(2);
    aip__dev_memory(dev, 0x100, 1 << 20, AIP_DEVMEM_BUFFER);
    spin_us(2);
    aip_op_end();
    spin_us(2); /* distinct times: the records' order is their time order */
    aip__dev_memory(dev, 0x200, 2 << 20, AIP_DEVMEM_BUFFER);
    spin_us(2);
    aip__dev_memory(dev, 0x100, -(1 << 20), AIP_DEVMEM_BUFFER);
    spin_us(2);
    aip__dev_memory(dev, 0x300, -(512 << 10), AIP_DEVMEM_BUFFER);
    spin_us(2);
    aip__dev_memory(dev, 0x200, -(2 << 20), AIP_DEVMEM_BUFFER);
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    snprintf(dir, sizeof dir, "%s", aip_session_result_dir(s));
    aip_session_destroy(s);
    aip_analyse_options o;
    aip_analyse_options_init(&o);
    o.quiet = 1;
    ASSERT_EQ(aip_analyse_dir(dir, &o), AIP_OK);
}

/* The n-th line (0 = header) of a CSV text, without its CRLF. */
static void line_of(const char *text, int n, char *out, size_t cap)
{
    const char *p = text;
    for (int i = 0; i < n && p; i++) {
        p = strstr(p, "\r\n");
        p = p ? p + 2 : NULL;
    }
    out[0] = 0;
    if (!p)
        return;
    const char *e = strstr(p, "\r\n");
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len >= cap)
        len = cap - 1;
    memcpy(out, p, len);
    out[len] = 0;
}

/* Cells of a CSV line after dropping the time stamps' tabs. */
static void cells(char *line, char **v, int max)
{
    int n = 0;
    for (char *p = line; n < max; n++) {
        v[n] = p;
        char *c = strchr(p, ',');
        if (!c) {
            n++;
            break;
        }
        *c = 0;
        p = c + 1;
    }
    for (int i = n; i < max; i++)
        v[i] = "";
}

static void test_memory_record(void)
{
    char *t = output("memory_record.csv");
    ASSERT_TRUE(t != NULL);
    static const char *const totals[] = {"1.500000", "3.500000", "2.500000", "2.000000",
                                         "0.000000"};
    for (int i = 0; i < 5; i++) {
        char line[256], *v[7];
        line_of(t, i + 1, line, sizeof line);
        cells(line, v, 7);
        ASSERT_STREQ(v[0], "APP");
        ASSERT_STREQ(v[2], totals[i]); /* allocated */
        ASSERT_STREQ(v[3], totals[i]); /* reserved */
        ASSERT_STREQ(v[4], totals[i]); /* active */
        ASSERT_STREQ(v[5], "");
        ASSERT_STREQ(v[6], "NPU:0");
    }
    char last[64];
    line_of(t, 6, last, sizeof last);
    ASSERT_STREQ(last, ""); /* no more rows: the framework recorded nothing */
    free(t);
}

static void test_operator_memory(void)
{
    char *t = output("operator_memory.csv");
    ASSERT_TRUE(t != NULL);
    char line[512], *v[15];
    line_of(t, 1, line, sizeof line);
    cells(line, v, 15);
    ASSERT_STREQ(v[0], "aten::empty");
    ASSERT_STREQ(v[1], "1024.000");
    ASSERT_TRUE(*v[2] && *v[3]);          /* allocated and released in the trace */
    ASSERT_STREQ(v[7], "1.500000");
    ASSERT_STREQ(v[10], "2.500000");      /* after its release */
    ASSERT_STREQ(v[14], "NPU:0");
    line_of(t, 2, line, sizeof line);
    cells(line, v, 15);
    ASSERT_STREQ(v[0], "");               /* no op open */
    ASSERT_STREQ(v[1], "2048.000");
    ASSERT_STREQ(v[7], "3.500000");
    ASSERT_STREQ(v[10], "0.000000");
    line_of(t, 3, line, sizeof line);
    ASSERT_STREQ(line, "");               /* C was not allocated in the trace: no row */
    free(t);
}

static void test_memory_timeline(void)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/npu.raw.json.gz", tmp);
    uint64_t records = 0;
    ASSERT_EQ(aip_export_memory_timeline(dir, path, "npu:0", &records), AIP_OK);
    ASSERT_EQ(records, 5);
    gzFile g = gzopen(path, "rb");
    ASSERT_TRUE(g != NULL);
    char buf[1024];
    int n = gzread(g, buf, sizeof buf - 1);
    gzclose(g);
    ASSERT_TRUE(n > 0);
    buf[n] = 0;
    /* PREEXISTING C at -1, then CREATE A, CREATE B, DESTROY A, C, B; UNKNOWN (7) */
    long long ts[6], act[6], bytes[6], cat[6];
    const char *p = buf;
    for (int i = 0; i < 6; i++) {
        p = strchr(p + 1, '[');
        ASSERT_TRUE(p != NULL);
        ASSERT_EQ(sscanf(p, "[%lld, %lld, %lld, %lld]", &ts[i], &act[i], &bytes[i], &cat[i]), 4);
    }
    ASSERT_EQ(ts[0], -1);
    static const long long want_act[] = {1, 2, 2, 4, 4, 4};
    static const long long want_bytes[] = {512 << 10, 1 << 20, 2 << 20, -(1 << 20), -(512 << 10),
                                           -(2 << 20)};
    for (int i = 0; i < 6; i++) {
        ASSERT_EQ(act[i], want_act[i]);
        ASSERT_EQ(bytes[i], want_bytes[i]);
        ASSERT_EQ(cat[i], 7);
    }
    /* cpu: nothing of the device */
    snprintf(path, sizeof path, "%s/cpu.json", tmp);
    ASSERT_EQ(aip_export_memory_timeline(dir, path, "cpu", &records), AIP_OK);
    ASSERT_EQ(records, 0);
}

static void test_summary(void)
{
    char txt[PATH_MAX + 32], html[PATH_MAX + 32];
    snprintf(txt, sizeof txt, "%s/summary.txt", tmp);
    snprintf(html, sizeof html, "%s/summary.html", tmp);
    int fd = open(txt, O_WRONLY | O_CREAT | O_TRUNC, 0640);
    ASSERT_TRUE(fd >= 0);
    ASSERT_EQ(aip_summarise(dir, fd, html), AIP_OK);
    close(fd);
    char *t = aip_test_slurp(txt, NULL);
    ASSERT_TRUE(t != NULL);
    /* NPU:0, its tasks, kernels, queues, busy 0.220 of 0.320 ms */
    ASSERT_TRUE(strstr(t, "\nDevices:\n") != NULL);
    ASSERT_TRUE(strstr(t, "NPU:0") && strstr(t, "Test GPU"));
    ASSERT_TRUE(strstr(t, "       4        3       2        0.220        0.320  68.8%") != NULL);
    ASSERT_TRUE(strstr(t, "Top 2 of 2 kernels by total device time:") != NULL);
    /* k1: 2 runs, 150 us in all (60% of 250), mean 75, max 100; then k2 */
    const char *k1 = strstr(t, "0.150  60.00%        2       75.000      100.000  k1");
    const char *k2 = strstr(t, "0.100  40.00%        1      100.000      100.000  k2");
    ASSERT_TRUE(k1 && k2 && k1 < k2);
    ASSERT_TRUE(strstr(t, "HtoD         1        2097152        0.020    104.858  Memcpy HtoD"));
    ASSERT_TRUE(strstr(t, "NPU:0 device buffers: peak allocated 3.50 MiB (2 allocations, "
                          "5 records)"));
    ASSERT_TRUE(strstr(t, "no device activity was recorded") == NULL);
    free(t);
    char *h = aip_test_slurp(html, NULL);
    ASSERT_TRUE(h != NULL);
    ASSERT_TRUE(strstr(h, "id=\"devices\"") && strstr(h, "id=\"top-kernels\"") &&
                strstr(h, "id=\"kernel-chart\"") && strstr(h, "id=\"copies\"") &&
                strstr(h, "id=\"memory-chart\""));
    ASSERT_TRUE(strstr(h, "<td>0.220</td><td>0.320</td><td>68.8</td>") != NULL);
    free(h);
}

/* A host-only trace asking for device activity: no device section, and
 * the note saying why. */
static void test_summary_without_device(void)
{
    aip_config c;
    base_config(&c, tmp);
    c.activities = AIP_ACTIVITY_CPU | AIP_ACTIVITY_XPU;
    aip_session *s = start_new(&c);
    ASSERT_TRUE(s != NULL);
    aip_op_info op = {.name = "aten::add", .sequence_number = -1};
    aip_op_begin(&op);
    aip_op_end();
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    char txt[PATH_MAX + 32];
    snprintf(txt, sizeof txt, "%s/host.txt", tmp);
    int fd = open(txt, O_WRONLY | O_CREAT | O_TRUNC, 0640);
    ASSERT_TRUE(fd >= 0);
    ASSERT_EQ(aip_summarise(aip_session_result_dir(s), fd, NULL), AIP_OK);
    close(fd);
    aip_session_destroy(s);
    char *t = aip_test_slurp(txt, NULL);
    ASSERT_TRUE(t != NULL);
    ASSERT_TRUE(strstr(t, "Devices:") == NULL);
    ASSERT_TRUE(strstr(t, "XPU activity requested, but no device activity was recorded"));
    free(t);
}

/* profile_memory off, a device back end's buffers recorded: the memory
 * CSVs show them as the database does, `auto` picks that device, and the
 * summary does not say memory was not recorded. */
static void test_device_memory_without_profile_memory(void)
{
    char sub[PATH_MAX + 16];
    snprintf(sub, sizeof sub, "%s/nomem", tmp);
    aip_config c;
    base_config(&c, sub);
    c.activities = AIP_ACTIVITY_CPU | AIP_ACTIVITY_NPU;
    aip_session *s = start_new(&c);
    ASSERT_TRUE(s != NULL);
    aip__dev_memory(dev, 0x400, 1 << 20, AIP_DEVMEM_BUFFER);
    aip__dev_memory(dev, 0x400, -(1 << 20), AIP_DEVMEM_BUFFER);
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    char d[PATH_MAX];
    snprintf(d, sizeof d, "%s", aip_session_result_dir(s));
    aip_session_destroy(s);
    aip_analyse_options o;
    aip_analyse_options_init(&o);
    o.quiet = 1;
    ASSERT_EQ(aip_analyse_dir(d, &o), AIP_OK);
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/ASCEND_PROFILER_OUTPUT/memory_record.csv", d);
    char *csv = aip_test_slurp(p, NULL);
    ASSERT_TRUE(csv != NULL); /* main: not written, while the db had the rows */
    ASSERT_TRUE(strstr(csv, ",NPU:") != NULL); /* the device's APP rows */
    free(csv);
    snprintf(p, sizeof p, "%s/auto.json", tmp);
    uint64_t records = 0;
    ASSERT_EQ(aip_export_memory_timeline(d, p, "auto", &records), AIP_OK);
    ASSERT_EQ(records, 2);
    char txt[PATH_MAX + 32];
    snprintf(txt, sizeof txt, "%s/nomem.txt", tmp);
    int fd = open(txt, O_WRONLY | O_CREAT | O_TRUNC, 0640);
    ASSERT_TRUE(fd >= 0);
    ASSERT_EQ(aip_summarise(d, fd, NULL), AIP_OK);
    close(fd);
    char *t = aip_test_slurp(txt, NULL);
    ASSERT_TRUE(t != NULL);
    ASSERT_TRUE(strstr(t, "- memory not recorded") == NULL);
    ASSERT_TRUE(strstr(t, "framework memory not recorded (profile_memory=False)") != NULL);
    free(t);
}

/* Four steps: the first flagged as the profiler's start, the last as its
 * stop (the seed's FAQ), and the median of the two between them as listed. */
static void test_summary_profiler_steps(void)
{
    aip_config c;
    base_config(&c, tmp);
    aip_session *s = start_new(&c);
    ASSERT_TRUE(s != NULL);
    for (int i = 1; i <= 4; i++) {
        char name[32];
        snprintf(name, sizeof name, "ProfilerStep#%d", i);
        aip_annotation_push(name);
        spin_us(100 * i);
        aip_annotation_pop();
    }
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    char txt[PATH_MAX + 32];
    snprintf(txt, sizeof txt, "%s/steps.txt", tmp);
    int fd = open(txt, O_WRONLY | O_CREAT | O_TRUNC, 0640);
    ASSERT_TRUE(fd >= 0);
    ASSERT_EQ(aip_summarise(aip_session_result_dir(s), fd, NULL), AIP_OK);
    close(fd);
    aip_session_destroy(s);
    char *t = aip_test_slurp(txt, NULL);
    ASSERT_TRUE(t != NULL);
    double ms[5] = {0}, median = -1;
    for (int i = 1; i <= 4; i++) {
        char key[32];
        snprintf(key, sizeof key, "  step %-8d ", i);
        const char *l = strstr(t, key);
        ASSERT_TRUE(l != NULL);
        ms[i] = strtod(l + strlen(key), NULL);
        const char *eol = strchr(l, '\n');
        int start = strstr(l, "(profiler start:") && strstr(l, "(profiler start:") < eol;
        int stop = strstr(l, "(profiler stop:") && strstr(l, "(profiler stop:") < eol;
        ASSERT_EQ(start, i == 1);
        ASSERT_EQ(stop, i == 4);
    }
    const char *b = strstr(t, "the steps between: median ");
    ASSERT_TRUE(b != NULL);
    median = strtod(b + strlen("the steps between: median "), NULL);
    /* the listed times are rounded to µs: the median of 2 and 3 within 1 µs */
    ASSERT_TRUE(fabs(median - (ms[2] + ms[3]) / 2) <= 0.001 + 1e-9);
    free(t);
}

int main(void)
{
    make_tmpdir(tmp, sizeof tmp, "device_reports");
    static const aip_test_case cases[] = {
        TEST_CASE(test_record),          TEST_CASE(test_memory_record),
        TEST_CASE(test_operator_memory), TEST_CASE(test_memory_timeline),
        TEST_CASE(test_summary),         TEST_CASE(test_summary_without_device),
        TEST_CASE(test_summary_profiler_steps),
        TEST_CASE(test_device_memory_without_profile_memory),
    };
    int rc = aip_test_run(cases, sizeof cases / sizeof cases[0]);
    if (!getenv("KEEP"))
        rm_rf(tmp);
    return rc;
}
