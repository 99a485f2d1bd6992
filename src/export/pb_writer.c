/*
 * pb_writer.c — the rare, out-of-line half of pb_writer.h: closing a
 * nested message whose body turned out to need a multi-byte length.
 */
#include "pb_writer.h"

uint8_t *aip__pb_close_long(uint8_t *end, uint8_t *mark)
{
    size_t n = (size_t)(end - mark - 1);
    unsigned extra = aip__pb_varint_len(n) - 1; /* the one byte open() left is used too */
    memmove(mark + 1 + extra, mark + 1, n);
    aip__pb_varint(mark, n);
    return end + extra;
}
