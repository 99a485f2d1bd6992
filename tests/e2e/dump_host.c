/*
 * dump_host.c — prints the host system figures a result directory
 * recorded, as the analyser derives them (aip__host_derive, each raw file
 * of FRAMEWORK/): one JSON object per process on its own line, for
 * tests/e2e/check_host_sys.py to compare with what the program did.
 *
 *   dump_host RESULT_DIR
 */
#include "dump_raw.h"

static void dump(const aip__process *p)
{
    aip__host_series s;
    if (aip__host_derive(p, &s)) {
        fprintf(stderr, "dump_host: %s\n", aip_last_error());
        return;
    }
    printf("{\"pid\":%lld,\"samples\":%zu,\"bad\":%llu,\"cpu_ns\":%llu,\"cpu_user_ns\":%llu,"
           "\"cpu_sys_ns\":%llu,\"read_bytes\":%llu,\"write_bytes\":%llu,\"rchar\":%llu,"
           "\"wchar\":%llu,\"syscr\":%llu,\"syscw\":%llu,\"minflt\":%llu,\"majflt\":%llu,"
           "\"rss_peak\":%llu,\"vms_peak\":%llu,\"n_cpu\":%zu,\"n_core\":%zu,\"n_mem\":%zu,"
           "\"n_disk\":%zu,\"n_net\":%zu,\"n_nic\":%zu,\"n_roce\":%zu,\"has_status\":%d,"
           "\"status_samples\":%llu,\"missed\":%llu,\"sampler_cpu_ns\":%llu,\"sources_bad\":%llu,"
           "\"period_ns\":%llu,\"threads\":[",
           (long long)p->pid, p->host.n, (unsigned long long)p->host_bad_records,
           (unsigned long long)s.cpu_ns, (unsigned long long)s.cpu_user_ns,
           (unsigned long long)s.cpu_sys_ns, (unsigned long long)s.read_bytes,
           (unsigned long long)s.write_bytes, (unsigned long long)s.rchar,
           (unsigned long long)s.wchar, (unsigned long long)s.syscr, (unsigned long long)s.syscw,
           (unsigned long long)s.minflt, (unsigned long long)s.majflt,
           (unsigned long long)s.rss_peak, (unsigned long long)s.vms_peak, s.n_cpu, s.n_core,
           s.n_mem, s.n_disk, s.n_net, s.n_nic, s.n_roce, s.has_status,
           (unsigned long long)s.samples, (unsigned long long)s.missed,
           (unsigned long long)s.sampler_cpu_ns, (unsigned long long)s.sources_bad,
           (unsigned long long)s.period_ns);
    for (size_t i = 0; i < s.n_threads; i++)
        printf("%s[%llu,%llu]", i ? "," : "", (unsigned long long)s.threads[i].tid,
               (unsigned long long)s.threads[i].cpu_ns);
    printf("],\"mem\":[");
    for (size_t i = 0; i < s.n_mem; i++)
        printf("%s[%lld,%llu]", i ? "," : "", (long long)s.mem[i].ts,
               (unsigned long long)s.mem[i].rss);
    printf("],\"cpu\":[");
    for (size_t i = 0; i < s.n_cpu; i++)
        printf("%s[%lld,%lld,%llu]", i ? "," : "", (long long)s.cpu[i].ts,
               (long long)s.cpu[i].dt, (unsigned long long)s.cpu[i].cpu_ns);
    printf("],\"nic\":[");
    for (size_t i = 0; i < s.n_nic; i++) {
        size_t len;
        const char *name = aip__model_str(p, s.nic[i].name, &len);
        printf("%s[\"%.*s\",%llu,%llu]", i ? "," : "", (int)len, name,
               (unsigned long long)s.nic[i].rx_bytes, (unsigned long long)s.nic[i].tx_bytes);
    }
    printf("]}\n");
    aip__host_series_free(&s);
}

int main(int argc, char **argv)
{
    return dump_raw_main(argc, argv, "dump_host", dump);
}
