/*
 * big_array.c — storage for the arrays that hold one entry per event.
 *
 * These grow one chunk at a time to hundreds of MB.  On the malloc heap a
 * growing realloc copies the array and can leave the old block resident,
 * so peak memory would be up to twice the data; malloc's own switch to
 * mmap for large blocks is a tunable the host program may have changed.
 * So once an array passes 1 MiB it lives in its own anonymous mapping and
 * grows with mremap(): page tables move, nothing is copied, and capacity
 * not yet filled is never touched, hence never resident.
 */
#include "model.h"
#include "error.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAP_FROM (1u << 20)

typedef struct array_head {
    size_t bytes;             /* of the allocation, head included */
    size_t mapped;            /* 1: mmap, 0: malloc */
} array_head;

#define HEAD_SIZE 16
_Static_assert(sizeof(array_head) <= HEAD_SIZE, "array head fits");

static size_t page_round(size_t n)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    return (n + pg - 1) / pg * pg;
}

aip_status aip__array_grow(void **v, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return AIP_OK;
    size_t c = *cap ? *cap : 64;
    while (c < need) {
        if (c > (SIZE_MAX - HEAD_SIZE) / 2 / elem)
            return aip__fail(AIP_ERR_NOMEM, "analysis array too large");
        c *= 2; /* unused capacity costs address space only */
    }
    size_t bytes = HEAD_SIZE + c * elem;
    array_head *old = *v ? (array_head *)((char *)*v - HEAD_SIZE) : NULL;
    array_head *h;
    if (bytes < MAP_FROM) {
        h = realloc(old, bytes);
        if (!h)
            return aip__fail(AIP_ERR_NOMEM, "no memory for %zu analysis records", c);
        h->mapped = 0;
    } else {
        bytes = page_round(bytes);
        void *p;
        if (old && old->mapped) {
            p = mremap(old, old->bytes, bytes, MREMAP_MAYMOVE);
        } else {
            p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
#ifdef MADV_HUGEPAGE
            /* One fault per 2 MiB instead of per 4 KiB as the array
             * fills (where transparent huge pages are on "madvise", the
             * common default); the advice moves with mremap.  Advice only:
             * refused, the pages stay small. */
            if (p != MAP_FAILED)
                madvise(p, bytes, MADV_HUGEPAGE);
#endif
            if (p != MAP_FAILED && old) {
                memcpy((char *)p + HEAD_SIZE, (char *)old + HEAD_SIZE, old->bytes - HEAD_SIZE);
                free(old);
            }
        }
        if (p == MAP_FAILED)
            return aip__fail(AIP_ERR_NOMEM, "no memory for %zu analysis records", c);
        h = p;
        h->mapped = 1;
    }
    h->bytes = bytes;
    *v = (char *)h + HEAD_SIZE;
    *cap = c;
    return AIP_OK;
}

void aip__array_free(void *v)
{
    if (!v)
        return;
    array_head *h = (array_head *)((char *)v - HEAD_SIZE);
    if (h->mapped)
        munmap(h, h->bytes);
    else
        free(h);
}
