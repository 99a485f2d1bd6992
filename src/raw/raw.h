/*
 * raw.h — all that analysis may know of the raw format: a chunk reader,
 * and the decoder of the INFO chunk's JSON (raw_info.c).
 *
 * The reader walks a raw file chunk by chunk (docs/RAW_FORMAT.md), checks
 * CRCs, and reports truncated or corrupt chunks through `problems` instead of
 * failing, so that everything complete in a crashed run is recovered.  It
 * reads with buffered I/O; a chunk's payload stays valid until the next call
 * to aip__raw_next().
 */
#ifndef AIP_RAW_H
#define AIP_RAW_H

#include "aiprof.h"
#include "raw_format.h"

typedef struct aip__raw_reader aip__raw_reader;

typedef struct aip__raw_chunk {
    uint16_t type;
    uint64_t tid;
    const uint8_t *payload;   /* valid until the next aip__raw_next() */
    uint32_t size;
    uint64_t offset;          /* file offset of the chunk header */
} aip__raw_chunk;

typedef struct aip__raw_damage {
    uint64_t corrupt_chunks;  /* CRC/magic mismatches skipped */
    uint64_t truncated_bytes; /* bytes at the end that did not form a chunk */
    int clean_end;            /* an END chunk was seen */
    char first_message[256];  /* first problem, with file offset; "" if none */
} aip__raw_damage;

/* aip__raw_open() : open and check the file header.  AIP_ERR_NOT_FOUND,
 * AIP_ERR_IO, AIP_ERR_FORMAT (not a raw file, too short), AIP_ERR_VERSION
 * (newer major).  Message in aip_last_error(). */
aip_status aip__raw_open(const char *path, aip__raw_reader **out);

/* aip__raw_next() : 1 and *chunk for the next good chunk, 0 at the end of
 * data (truncated tail recorded in problems), -1 on an I/O error. */
int aip__raw_next(aip__raw_reader *reader, aip__raw_chunk *chunk);

const aip__raw_damage *aip__raw_problems(const aip__raw_reader *reader);
uint16_t aip__raw_version_minor(const aip__raw_reader *reader);
void aip__raw_close(aip__raw_reader *reader);

/* The INFO chunk's fields (raw_info.c); strings malloc'd, NULL if absent. */
typedef struct aip__raw_info {
    int has_pid, has_ticks_per_second;
    int64_t pid;
    double ticks_per_second;
    char *hostname, *program, *clock, *version, *host_uid;
} aip__raw_info;

/* aip__raw_info_parse() : decode an INFO payload.  @return 0, or -1 (and
 * nothing allocated) if it is not a JSON object.  The strings become the
 * caller's: the model loader keeps them in its process (model_load.c). */
int aip__raw_info_parse(const uint8_t *payload, size_t size, aip__raw_info *out);

/* What the outputs say of a device back end's devices (raw_backend.c):
 * its name in trace_view.json's deviceProperties ("opencl", "cuda",
 * "other") and the memory device type (aip_device_type) memory rows tag
 * its devices with (torch_npu's "NPU:<id>" unless the back end is CUDA's).
 * Never NULL: a number not listed gets "other" and NPU. */
typedef struct aip__backend_desc {
    const char *kineto;
    uint8_t memory_type;
} aip__backend_desc;
const aip__backend_desc *aip__raw_backend(uint8_t backend);

#endif
