/*
 * pb_writer.h — the protocol buffers wire format, written by hand for the
 * native Perfetto trace (trace_perfetto*.c): varints, fixed64 / double,
 * length-delimited strings and nested messages, straight into a buffer the
 * caller has reserved (outbuf.h's aip__out_reserve).  No schema, no
 * allocation: a writer of a few fields per event must cost what
 * formatting a number costs, not a generated library's builder.
 *
 * A nested message's length is not known until it is written: open()
 * leaves one byte for it and close() fills it in, moving the body up when
 * the length needs more bytes (rare: messages of 128 bytes and more), so
 * the caller reserves AIP_PB_NEST_SLACK spare bytes per open nesting.
 * Field tags are (number << 3 | wire type) as varints; wire types 0
 * (varint), 1 (64-bit), 2 (length-delimited).
 */
#ifndef AIP_PB_WRITER_H
#define AIP_PB_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define AIP_PB_VARINT 0u
#define AIP_PB_I64 1u
#define AIP_PB_LEN 2u
#define AIP_PB_NEST_SLACK 4u  /* a body up to 2^28 bytes: 4 more length bytes */

/* At most 10 bytes. */
static inline uint8_t *aip__pb_varint(uint8_t *d, uint64_t v)
{
    while (v >= 0x80) {
        *d++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *d++ = (uint8_t)v;
    return d;
}

static inline unsigned aip__pb_varint_len(uint64_t v)
{
    unsigned n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static inline uint8_t *aip__pb_tag(uint8_t *d, uint32_t field, unsigned wire)
{
    return aip__pb_varint(d, (uint64_t)field << 3 | wire);
}

/* uint32/uint64/int32/int64/enum/bool fields (a negative int is its
 * two's complement: 10 bytes, as protobuf encodes it). */
static inline uint8_t *aip__pb_uint(uint8_t *d, uint32_t field, uint64_t v)
{
    return aip__pb_varint(aip__pb_tag(d, field, AIP_PB_VARINT), v);
}

static inline uint8_t *aip__pb_fixed64(uint8_t *d, uint32_t field, uint64_t v)
{
    d = aip__pb_tag(d, field, AIP_PB_I64);
    for (int i = 0; i < 8; i++) /* little-endian whatever the host */
        *d++ = (uint8_t)(v >> (8 * i));
    return d;
}

static inline uint8_t *aip__pb_double(uint8_t *d, uint32_t field, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return aip__pb_fixed64(d, field, bits);
}

/* string / bytes: at most 15 + n bytes. */
static inline uint8_t *aip__pb_bytes(uint8_t *d, uint32_t field, const void *s, size_t n)
{
    d = aip__pb_varint(aip__pb_tag(d, field, AIP_PB_LEN), n);
    memcpy(d, s, n);
    return d + n;
}

static inline uint8_t *aip__pb_str(uint8_t *d, uint32_t field, const char *s)
{
    return aip__pb_bytes(d, field, s, strlen(s));
}

/* A nested message: *mark receives where its length goes; the body
 * follows the returned pointer. */
static inline uint8_t *aip__pb_open(uint8_t *d, uint32_t field, uint8_t **mark)
{
    d = aip__pb_tag(d, field, AIP_PB_LEN);
    *mark = d;
    return d + 1;
}

/* aip__pb_close_long() (pb_writer.c) : close() of a body of 128 bytes or
 * more: moves it up to make room for its length. */
uint8_t *aip__pb_close_long(uint8_t *end, uint8_t *mark);

/* End the message opened at `mark`, whose body ends at `end`; @return the
 * end, moved by the length's extra bytes. */
static inline uint8_t *aip__pb_close(uint8_t *end, uint8_t *mark)
{
    size_t n = (size_t)(end - mark - 1);
    if (n < 0x80) {
        *mark = (uint8_t)n;
        return end;
    }
    return aip__pb_close_long(end, mark);
}

#endif
