/*
 * host_read.c — the host sampler's parsers (host_sampler.h): the text of
 * /proc/<pid>/stat, statm, io, /proc/meminfo, /proc/net/dev and an
 * InfiniBand port's rate file into numbers.
 *
 * They are pure and bounded by the length given, since a sampler can be
 * pointed at any file (a fake /proc in the tests, a kernel that formats
 * differently): text that does not parse is reported, never trusted, and
 * nothing here reads past `n` or needs a terminator.
 */
#include "host_sampler.h"

#include <string.h>

/* The unsigned decimal at *p (spaces before it skipped), advancing *p;
 * 0 when there is none (then *ok is cleared). */
static uint64_t num(const char **p, const char *end, int *ok)
{
    const char *s = *p;
    while (s < end && (*s == ' ' || *s == '\t'))
        s++;
    int neg = s < end && *s == '-'; /* "-1" fields: read as 0 */
    s += neg;
    if (s >= end || *s < '0' || *s > '9') {
        *ok = 0;
        *p = s;
        return 0;
    }
    uint64_t v = 0;
    while (s < end && *s >= '0' && *s <= '9') {
        uint64_t d = (uint64_t)(*s - '0');
        v = v > (UINT64_MAX - d) / 10 ? UINT64_MAX : v * 10 + d; /* saturate */
        s++;
    }
    *p = s;
    return neg ? 0 : v;
}

int aip__parse_proc_stat(const char *text, size_t n, aip__proc_stat *out)
{
    memset(out, 0, sizeof *out);
    const char *end = text + n, *p = NULL;
    for (const char *q = text; q < end; q++) /* the comm field ends at the last ')' */
        if (*q == ')')
            p = q + 1;
    if (!p)
        return -1;
    /* After ")": field 3 is the state letter, then numbers from field 4. */
    while (p < end && *p == ' ')
        p++;
    if (p >= end)
        return -1;
    p++; /* state */
    uint64_t f[40] = {0};
    int field = 4;
    while (field <= 42) {
        int good = 1;
        uint64_t v = num(&p, end, &good);
        if (!good)
            break;
        f[field - 4] = v;
        field++;
    }
    if (field <= 15) /* utime and stime (14, 15) are the least a stat must have */
        return -1;
    out->minflt = f[10 - 4];
    out->majflt = f[12 - 4];
    out->utime = f[14 - 4];
    out->stime = f[15 - 4];
    out->num_threads = field > 20 ? f[20 - 4] : 0;
    out->processor = field > 39 ? f[39 - 4] : 0;
    out->blkio_ticks = field > 42 ? f[42 - 4] : 0;
    return 0;
}

int aip__parse_statm(const char *text, size_t n, uint64_t out[3])
{
    const char *p = text, *end = text + n;
    int ok = 1;
    for (int i = 0; i < 3; i++)
        out[i] = num(&p, end, &ok);
    return ok ? 0 : -1;
}

/* The value after "key:" at the start of a line of `text`; *found set. */
static uint64_t keyed(const char *text, size_t n, const char *key, int *found)
{
    size_t kl = strlen(key);
    const char *end = text + n;
    for (const char *line = text; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        const char *le = nl ? nl : end;
        if ((size_t)(le - line) > kl && !memcmp(line, key, kl) && line[kl] == ':') {
            const char *p = line + kl + 1;
            int ok = 1;
            uint64_t v = num(&p, le, &ok);
            if (ok) {
                *found = 1;
                return v;
            }
        }
        line = nl ? nl + 1 : end;
    }
    return 0;
}

int aip__parse_proc_io(const char *text, size_t n, uint64_t out[7])
{
    static const char *const keys[7] = {"rchar", "wchar", "syscr", "syscw",
                                        "read_bytes", "write_bytes", "cancelled_write_bytes"};
    int found = 0;
    for (int i = 0; i < 7; i++) {
        int f = 0;
        out[i] = keyed(text, n, keys[i], &f);
        found += f;
    }
    return found;
}

uint64_t aip__parse_meminfo_total(const char *text, size_t n)
{
    int f = 0;
    uint64_t kib = keyed(text, n, "MemTotal", &f);
    return f && kib < UINT64_MAX / 1024 ? kib * 1024 : 0;
}

size_t aip__parse_net_dev(const char *text, size_t n, aip__netdev *out, size_t cap)
{
    size_t k = 0;
    const char *end = text + n;
    for (const char *line = text; line < end && k < cap;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        const char *le = nl ? nl : end;
        const char *colon = memchr(line, ':', (size_t)(le - line));
        if (colon) { /* the two header lines have none */
            const char *a = line;
            while (a < colon && *a == ' ')
                a++;
            size_t len = (size_t)(colon - a);
            uint64_t v[16];
            const char *p = colon + 1;
            int ok = 1;
            for (int i = 0; i < 16 && ok; i++)
                v[i] = num(&p, le, &ok);
            if (ok && len && len < sizeof out[k].name) {
                aip__netdev *d = &out[k++];
                memcpy(d->name, a, len);
                d->name[len] = 0;
                d->rx_bytes = v[0], d->rx_packets = v[1], d->rx_errs = v[2], d->rx_drop = v[3];
                d->tx_bytes = v[8], d->tx_packets = v[9], d->tx_errs = v[10], d->tx_drop = v[11];
            }
        }
        line = nl ? nl + 1 : end;
    }
    return k;
}

uint32_t aip__parse_link_rate(const char *text, size_t n)
{
    const char *p = text, *end = text + n;
    int ok = 1;
    uint64_t whole = num(&p, end, &ok), frac = 0, scale = 1;
    if (!ok)
        return 0;
    if (p < end && *p == '.') {
        p++;
        while (p < end && *p >= '0' && *p <= '9' && scale < 1000) {
            frac = frac * 10 + (uint64_t)(*p++ - '0');
            scale *= 10;
        }
        while (p < end && *p >= '0' && *p <= '9')
            p++;
    }
    while (p < end && *p == ' ')
        p++;
    uint64_t mult = 1000; /* Gb/sec, the kernel's unit */
    if (p < end && *p == 'M')
        mult = 1;
    uint64_t mbps = whole * mult + frac * mult / scale;
    return mbps > UINT32_MAX - 1 ? UINT32_MAX - 1 : (uint32_t)mbps;
}
