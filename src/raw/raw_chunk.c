/*
 * raw_chunk.c — chunk header checksums, shared by writer and reader.
 *
 * The CRC covers the header without its own crc field, so a flipped bit in
 * the type, size or tid is caught as well as one in the payload.
 */
#include "raw_format.h"
#include "crc32.h"

uint32_t aip__chunk_crc(const aip__chunk_header *h, const void *payload, size_t size)
{
    const unsigned char *hb = (const unsigned char *)h;
    /* zlib's CRC-32, folded with PCLMULQDQ where the CPU has it: the
     * writer checksums every byte a trace records (src/common/crc32.c). */
    uint32_t crc = aip__crc32(0, hb, 12);
    crc = aip__crc32(crc, hb + 16, 8);
    if (size)
        crc = aip__crc32(crc, payload, size);
    return crc;
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
