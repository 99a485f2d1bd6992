/*
 * raw_writer.h — the writing direction of the raw format (docs/RAW_FORMAT.md):
 * the file header, and chunks appended to a raw file.
 *
 * The recorder's writer thread (src/core/writer.c) decides what goes out and
 * when; this file decides how it lies on disk.  Each chunk goes out in one
 * writev().  A chunk cut short by a failed write (a full disk) is taken back,
 * so the file always ends at its last whole chunk, which a reader can use,
 * and EVENTS that do not fit are written in smaller pieces cut at record
 * boundaries, so that what fits of the collected events reaches the disk.
 */
#ifndef AIP_RAW_WRITER_H
#define AIP_RAW_WRITER_H

#include "aiprof.h"
#include "raw_format.h"

typedef struct aip__raw_file {
    int fd;
    uint64_t bytes;   /* the file's length: the end of its last whole chunk */
} aip__raw_file;

/* aip__raw_put_header() : the file header, at the start of the empty file
 * `file->fd`.  AIP_ERR_IO (message names `path`) if it cannot be written. */
aip_status aip__raw_put_header(aip__raw_file *file, const char *path);

/* aip__raw_put_chunk() : append one chunk; 0, or the errno of a failed
 * write, after which the file is cut back to its last whole chunk. */
int aip__raw_put_chunk(aip__raw_file *file, uint16_t type, uint64_t tid, const void *payload,
                       uint32_t size);

/* aip__raw_put_events() : append `size` bytes of whole records as EVENTS,
 * in pieces cut at record boundaries when the whole does not fit.
 * @return the bytes of `records` written (a prefix of whole records); when
 * that is less than `size`, *error is the errno that stopped it, else 0. */
uint32_t aip__raw_put_events(aip__raw_file *file, uint64_t tid, const uint8_t *records,
                             uint32_t size, int *error);

/* aip__raw_records_within() : the bytes of the whole records at the start
 * of `records` that fit in `max` bytes. */
uint32_t aip__raw_records_within(const uint8_t *records, uint32_t size, uint32_t max);

/* aip__raw_count_records() : the number of whole records in `records`. */
uint64_t aip__raw_count_records(const uint8_t *records, uint32_t size);

#endif
