/*
 * raw_writer.c — the chunk writer behind raw_writer.h (docs/RAW_FORMAT.md).
 *
 * Nothing here keeps state between calls but the file's length, which is
 * what a failed write cuts the file back to.
 */
#include "raw_writer.h"
#include "fs.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* EVENTS smaller than this are not split further after a failed write. */
#define MIN_SPLIT_BYTES 4096u

aip_status aip__raw_put_header(aip__raw_file *file, const char *path)
{
    uint8_t header[AIP_RAW_HEADER_SIZE] = {0};
    memcpy(header, AIP_RAW_MAGIC, AIP_RAW_MAGIC_LEN);
    uint16_t major = AIP_RAW_VERSION_MAJOR, minor = AIP_RAW_VERSION_MINOR;
    uint32_t hs = AIP_RAW_HEADER_SIZE;
    memcpy(header + 8, &major, 2);
    memcpy(header + 10, &minor, 2);
    memcpy(header + 12, &hs, 4);
    aip_status s = aip__write_all(file->fd, header, sizeof header, path);
    if (!s)
        file->bytes = sizeof header;
    return s;
}

int aip__raw_put_chunk(aip__raw_file *file, uint16_t type, uint64_t tid, const void *payload,
                       uint32_t size)
{
    aip__chunk_header h;
    aip__chunk_fill(&h, type, tid, payload, size);
    static const uint8_t zeros[8];
    struct iovec iov[3] = {
        {&h, sizeof h}, {(void *)payload, size}, {(void *)zeros, aip__chunk_pad(size)}};
    size_t total = sizeof h + size + aip__chunk_pad(size);
    int cnt = 3;
    struct iovec *v = iov;
    size_t left = total;
    while (left) {
        ssize_t w = writev(file->fd, v, cnt);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            if (ftruncate(file->fd, (off_t)file->bytes) == 0)
                (void)lseek(file->fd, (off_t)file->bytes, SEEK_SET);
            return e;
        }
        left -= (size_t)w;
        while (cnt && (size_t)w >= v->iov_len) {
            w -= (ssize_t)v->iov_len;
            v++;
            cnt--;
        }
        if (cnt) {
            v->iov_base = (char *)v->iov_base + w;
            v->iov_len -= (size_t)w;
        }
    }
    file->bytes += total;
    return 0;
}

/* The last record boundary at or before `target` (the first record's end
 * if it is longer); 0 if `p` holds no whole record. */
static uint32_t record_cut(const uint8_t *p, uint32_t size, uint32_t target)
{
    uint32_t cut = 0;
    for (uint32_t off = 0; off + sizeof(aip__rec_header) <= size;) {
        const aip__rec_header *h = (const aip__rec_header *)(p + off);
        if (h->size < sizeof *h || off + h->size > size)
            break;
        off += h->size;
        if (off > target && cut)
            break;
        cut = off;
    }
    return cut;
}

/* In halves when the whole does not fit: only a full disk (or file size
 * limit) is worth retrying smaller; any other error ends the writing. */
uint32_t aip__raw_put_events(aip__raw_file *file, uint64_t tid, const uint8_t *records,
                             uint32_t size, int *error)
{
    *error = 0;
    int e = aip__raw_put_chunk(file, AIP_CHUNK_EVENTS, tid, records, size);
    if (!e)
        return size;
    if ((e == ENOSPC || e == EDQUOT || e == EFBIG) && size > MIN_SPLIT_BYTES) {
        uint32_t half = record_cut(records, size, size / 2);
        if (half > 0 && half < size) {
            uint32_t done = aip__raw_put_events(file, tid, records, half, error);
            if (done < half)
                return done;
            return half + aip__raw_put_events(file, tid, records + half, size - half, error);
        }
    }
    *error = e;
    return 0;
}

uint32_t aip__raw_records_within(const uint8_t *records, uint32_t size, uint32_t max)
{
    uint32_t off = 0;
    while (off + sizeof(aip__rec_header) <= size) {
        const aip__rec_header *h = (const aip__rec_header *)(records + off);
        if (h->size < sizeof *h || off + h->size > size || off + h->size > max)
            break;
        off += h->size;
    }
    return off;
}

uint64_t aip__raw_count_records(const uint8_t *records, uint32_t size)
{
    uint64_t n = 0;
    for (uint32_t off = 0; off + sizeof(aip__rec_header) <= size;) {
        const aip__rec_header *h = (const aip__rec_header *)(records + off);
        if (h->size < sizeof *h)
            break;
        off += h->size;
        n++;
    }
    return n;
}
