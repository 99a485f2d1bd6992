/*
 * raw_reader.c — the chunk reader behind raw.h (docs/RAW_FORMAT.md).
 *
 * The file is read through a sliding window (1 MiB, grown only to hold the
 * largest chunk), never whole, so memory stays bounded by the largest chunk
 * rather than the file.  Every chunk's CRC is checked; a chunk that fails is
 * counted and skipped, and reading resumes at the next 8-aligned offset that
 * holds the chunk magic *and* a valid CRC.  A chunk running past the end of
 * the file is the torn tail of a crashed writer unless a valid chunk follows
 * it, in which case its size field was corrupt.  Nothing here trusts a length
 * before checking it against the window, so any byte string is safe input.
 */
#include "raw.h"
#include "error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WINDOW_MIN (4u << 20) /* big enough that carrying a partial chunk over is rare */
#define MAX_HEADER_SIZE 4096u

struct aip__raw_reader {
    int fd;
    char path[160];           /* for messages (tail of the path if long) */
    uint16_t version_minor;
    uint64_t pos;             /* file offset of the next chunk to examine */
    int done;                 /* no more chunks */
    int io_error;
    uint8_t *win;             /* window holding file bytes [win_off, win_off+win_len) */
    size_t win_cap, win_len;
    size_t win_first;         /* first capacity: small files get a small window */
    uint64_t win_off;
    aip__raw_damage problems;
};

static void note_problem(aip__raw_reader *r, const char *fmt, uint64_t off, const char *what)
{
    if (r->problems.first_message[0])
        return;
    snprintf(r->problems.first_message, sizeof r->problems.first_message, fmt, what,
             (unsigned long long)off);
}

/* Make file bytes [off, off+len) available in the window.  @return a pointer
 * to them, or NULL if the file ends first (or on an I/O error, flagged). */
static const uint8_t *window(aip__raw_reader *r, uint64_t off, size_t len)
{
    if (off >= r->win_off && off + len <= r->win_off + r->win_len)
        return r->win + (off - r->win_off);
    /* Keep the bytes from `off` on that are already buffered, drop the rest. */
    size_t keep = 0;
    if (off >= r->win_off && off < r->win_off + r->win_len) {
        keep = (size_t)(r->win_off + r->win_len - off);
        memmove(r->win, r->win + (off - r->win_off), keep);
    }
    r->win_off = off;
    r->win_len = keep;
    if (len > r->win_cap) {
        size_t cap = r->win_cap ? r->win_cap : r->win_first;
        while (cap < len)
            cap *= 2;
        uint8_t *p = realloc(r->win, cap);
        if (!p) {
            r->io_error = ENOMEM;
            return NULL;
        }
        r->win = p;
        r->win_cap = cap;
    }
    while (r->win_len < len) {
        ssize_t got = pread(r->fd, r->win + r->win_len, r->win_cap - r->win_len,
                            (off_t)(r->win_off + r->win_len));
        if (got < 0) {
            if (errno == EINTR)
                continue;
            r->io_error = errno;
            return NULL;
        }
        if (got == 0)
            return NULL; /* end of file before `len` bytes */
        r->win_len += (size_t)got;
    }
    return r->win;
}

static void release_window(aip__raw_reader *r)
{
    /* Large windows only exist for large chunks; return the memory once the
     * window is no longer needed at that size. */
    if (r->win_cap > 4 * WINDOW_MIN && r->win_len < WINDOW_MIN) {
        uint8_t *p = realloc(r->win, WINDOW_MIN);
        if (p) {
            r->win = p;
            r->win_cap = WINDOW_MIN;
        }
    }
}

aip_status aip__raw_open(const char *path, aip__raw_reader **out)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return aip__fail(errno == ENOENT ? AIP_ERR_NOT_FOUND : AIP_ERR_IO, "cannot open %s: %s",
                         path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return aip__fail(AIP_ERR_FORMAT, "%s is not a regular file", path);
    }
    aip__raw_reader *r = calloc(1, sizeof *r);
    if (!r) {
        close(fd);
        return aip__fail(AIP_ERR_NOMEM, "no memory to read %s", path);
    }
    r->fd = fd;
    r->win_first = WINDOW_MIN;
    if (st.st_size < (off_t)WINDOW_MIN)
        r->win_first = st.st_size < 65536 ? 65536 : (size_t)st.st_size;
    size_t n = strlen(path);
    snprintf(r->path, sizeof r->path, "%s", n < sizeof r->path ? path : path + n - (sizeof r->path - 1));
    const uint8_t *h = window(r, 0, AIP_RAW_HEADER_SIZE);
    aip_status s = AIP_OK;
    if (!h) {
        if (r->io_error)
            s = aip__fail(AIP_ERR_IO, "cannot read %s: %s", path, strerror(r->io_error));
        else
            s = aip__fail(AIP_ERR_FORMAT, "%s is not aiprof raw data (shorter than the %d-byte header)",
                          path, AIP_RAW_HEADER_SIZE);
    } else if (memcmp(h, AIP_RAW_MAGIC, AIP_RAW_MAGIC_LEN) != 0) {
        s = aip__fail(AIP_ERR_FORMAT, "%s is not aiprof raw data (bad magic)", path);
    } else {
        uint16_t major, minor;
        uint32_t hsize;
        memcpy(&major, h + 8, 2);
        memcpy(&minor, h + 10, 2);
        memcpy(&hsize, h + 12, 4);
        if (major > AIP_RAW_VERSION_MAJOR)
            s = aip__fail(AIP_ERR_VERSION,
                          "%s: raw file format %u.x is newer than this aiprof (%d.x); upgrade aiprof",
                          path, major, AIP_RAW_VERSION_MAJOR);
        else if (major < 1)
            s = aip__fail(AIP_ERR_FORMAT, "%s: raw format version %u.%u is not supported", path,
                          major, minor);
        else if (hsize < AIP_RAW_HEADER_SIZE || hsize > MAX_HEADER_SIZE)
            s = aip__fail(AIP_ERR_FORMAT, "%s: raw header size %u is invalid", path, hsize);
        else {
            r->version_minor = minor;
            r->pos = ((uint64_t)hsize + 7) & ~(uint64_t)7;
        }
    }
    if (s) {
        aip__raw_close(r);
        return s;
    }
    *out = r;
    return AIP_OK;
}

/* Check the chunk at `off`: 1 if it is complete with a valid CRC (then
 * *payload and *hdr are filled), 0 if it is not a valid chunk, -1 if it is
 * a plausible header whose chunk runs past the end of the file. */
static int check_chunk(aip__raw_reader *r, uint64_t off, aip__chunk_header *hdr,
                       const uint8_t **payload)
{
    const uint8_t *p = window(r, off, AIP_CHUNK_HEADER_SIZE);
    if (!p)
        return r->io_error ? 0 : -1;
    memcpy(hdr, p, sizeof *hdr);
    if (hdr->magic != AIP_CHUNK_MAGIC || hdr->payload_size > AIP_CHUNK_MAX_PAYLOAD)
        return 0;
    p = window(r, off, AIP_CHUNK_HEADER_SIZE + (size_t)hdr->payload_size);
    if (!p)
        return r->io_error ? 0 : -1;
    if (aip__chunk_crc(hdr, p + AIP_CHUNK_HEADER_SIZE, hdr->payload_size) != hdr->crc32)
        return 0;
    *payload = p + AIP_CHUNK_HEADER_SIZE;
    return 1;
}

/* Find the next valid chunk at an 8-aligned offset >= `from`.  Only offsets
 * holding the magic are CRC-checked, so a scan costs little unless the file
 * is full of forged magics.  @return its offset, or UINT64_MAX if none. */
static uint64_t resync(aip__raw_reader *r, uint64_t from)
{
    uint64_t off = from;
    for (;;) {
        const uint8_t *p = window(r, off, 4);
        if (!p)
            return UINT64_MAX;
        /* Scan what is buffered without re-entering window() per offset. */
        size_t avail = (size_t)(r->win_off + r->win_len - off);
        size_t i = 0;
        for (; i + 4 <= avail; i += 8) {
            uint32_t m;
            memcpy(&m, p + i, 4);
            if (m == AIP_CHUNK_MAGIC)
                break;
        }
        if (i + 4 > avail) {
            off += i;
            continue;
        }
        off += i;
        aip__chunk_header h;
        const uint8_t *payload;
        if (check_chunk(r, off, &h, &payload) == 1)
            return off;
        if (r->io_error)
            return UINT64_MAX;
        off += 8;
    }
}

static int io_failure(aip__raw_reader *r)
{
    aip__fail(AIP_ERR_IO, "reading %s failed: %s", r->path, strerror(r->io_error));
    return -1;
}

int aip__raw_next(aip__raw_reader *r, aip__raw_chunk *chunk)
{
    if (!r)
        return -1;
    if (r->io_error)
        return io_failure(r);
    while (!r->done) {
        uint64_t off = r->pos;
        aip__chunk_header h;
        const uint8_t *payload = NULL;
        int ok = check_chunk(r, off, &h, &payload);
        if (r->io_error)
            return io_failure(r);
        if (ok == 1) {
            r->pos = off + AIP_CHUNK_HEADER_SIZE + h.payload_size + aip__chunk_pad(h.payload_size);
            chunk->type = h.type;
            chunk->tid = h.tid;
            chunk->payload = payload;
            chunk->size = h.payload_size;
            chunk->offset = off;
            if (h.type == AIP_CHUNK_END)
                r->problems.clean_end = 1;
            return 1;
        }
        /* Bad or incomplete chunk here: is there a valid one further on? */
        uint64_t next = resync(r, off + 8);
        if (r->io_error)
            return io_failure(r);
        if (next != UINT64_MAX || ok == 0) {
            /* A complete chunk that fails its check, or one whose size field
             * points past the end while valid chunks follow: corrupt. */
            r->problems.corrupt_chunks++;
            note_problem(r, "%s: corrupt chunk at offset %llu skipped", off, r->path);
            if (next == UINT64_MAX)
                r->done = 1;
            else
                r->pos = next;
            continue;
        }
        /* Nothing valid follows an incomplete chunk: the torn tail of a
         * writer that stopped mid-write (or nothing at all: a clean end). */
        if (window(r, off, 1)) {
            struct stat st;
            uint64_t size = fstat(r->fd, &st) == 0 ? (uint64_t)st.st_size : off;
            r->problems.truncated_bytes = size > off ? size - off : 0;
            note_problem(r, "%s: truncated data at offset %llu (incomplete chunk)", off, r->path);
        }
        if (r->io_error)
            return io_failure(r);
        r->done = 1;
    }
    release_window(r);
    return 0;
}

const aip__raw_damage *aip__raw_problems(const aip__raw_reader *r) { return &r->problems; }

uint16_t aip__raw_version_minor(const aip__raw_reader *r) { return r->version_minor; }

void aip__raw_close(aip__raw_reader *r)
{
    if (!r)
        return;
    if (r->fd >= 0)
        close(r->fd);
    free(r->win);
    free(r);
}
