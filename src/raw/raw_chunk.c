/*
 * raw_chunk.c — chunk header checksums, shared by writer and reader.
 *
 * The CRC covers the header without its own crc field, so a flipped bit in
 * the type, size or tid is caught as well as one in the payload.
 */
#include "raw_format.h"
#include "crc32_fast.h"

#include <zlib.h>

uint32_t aip__chunk_crc(const aip__chunk_header *h, const void *payload, size_t size)
{
    const unsigned char *hb = (const unsigned char *)h;
    uLong crc = crc32(0L, Z_NULL, 0);
    crc = crc32(crc, hb, 12);
    crc = crc32(crc, hb + 16, 8);
    if (size) /* zlib's value, computed faster (crc32_fast.h) */
        crc = aip__crc32((uint32_t)crc, payload, size);
    return (uint32_t)crc;
}

void aip__chunk_fill(aip__chunk_header *h, uint16_t type, uint64_t tid, const void *payload,
                     uint32_t size)
{
    h->magic = AIP_CHUNK_MAGIC;
    h->type = type;
    h->flags = 0;
    h->payload_size = size;
    h->crc32 = 0;
    h->tid = tid;
    h->crc32 = aip__chunk_crc(h, payload, size);
}
