#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_cuda_translate (tests/fuzz/corpus_fuzz_cuda_translate/).

Usage: make_corpus_cuda_translate.py [OUT_DIR] [CUPTI_INCLUDE_DIR]
CUPTI activity buffers in the packed layout of the unit tests (each record
the size of cupti.h's struct for its kind, 8-byte aligned): the records
test_cuda_translate.c builds (kernels, copies, a peer copy, a memset,
device memory alloc/release, pinned memory, runtime and synchronisation
records), and bad ones (times backwards or zero, ordinals past the
table, huge grids, unknown enums, a cut record, an unknown kind).  The
record structs' layout is cupti.h's, so a small C program compiled here
against it (cc, $CUDA_HOME/include or /usr/local/cuda/include) writes them.
A kernel's name pointer picks the name (its value modulo the harness's
table).  libFuzzer's finds are merged into the same directory (-merge=1).
Files named regress_* are not written here: they are inputs libFuzzer
found that crashed the translation, kept as regression cases of the bug
their name says (regress_ns_to_ticks_overflow: a CUPTI time near 2^64
converted to ticks through a double out of uint64_t's range).
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

C = r'''
#include <cupti.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static _Alignas(8) uint8_t b[65536];
static size_t n;

static void *put(CUpti_ActivityKind kind, size_t size)
{
    void *r = b + n;
    memset(r, 0, size);
    ((CUpti_Activity *)r)->kind = kind;
    n += (size + 7) & ~(size_t)7;
    return r;
}
#define PUT(T, kind) ((T *)put(kind, sizeof(T)))

static void kernel(uintptr_t name, uint32_t dev, uint32_t stream, uint32_t corr, uint64_t t0,
                   uint64_t t1, int gx, int bx)
{
    CUpti_ActivityKernel10 *k = PUT(CUpti_ActivityKernel10, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    memcpy(&k->name, &name, sizeof name);
    k->deviceId = dev, k->streamId = stream, k->correlationId = corr;
    k->start = t0, k->end = t1, k->queued = t0 - 5, k->submitted = t0 - 2;
    k->gridX = gx, k->gridY = 2, k->gridZ = 1, k->blockX = bx, k->blockY = 1, k->blockZ = 1;
}

static void memcpy_rec(uint8_t kind, uint8_t src, uint8_t dst, uint64_t bytes, uint32_t dev,
                       uint64_t t0, uint64_t t1)
{
    CUpti_ActivityMemcpy6 *m = PUT(CUpti_ActivityMemcpy6, CUPTI_ACTIVITY_KIND_MEMCPY);
    m->copyKind = kind, m->srcKind = src, m->dstKind = dst, m->bytes = bytes;
    m->deviceId = dev, m->streamId = 7, m->correlationId = 13, m->start = t0, m->end = t1;
}

static void memory(int alloc, unsigned kind, uint64_t addr, uint64_t bytes, uint64_t ts,
                   uint32_t dev)
{
    CUpti_ActivityMemory4 *m = PUT(CUpti_ActivityMemory4, CUPTI_ACTIVITY_KIND_MEMORY2);
    m->memoryOperationType = alloc ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION
                                   : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
    m->memoryKind = (CUpti_ActivityMemoryKind)kind;
    m->address = addr, m->bytes = bytes, m->timestamp = ts, m->correlationId = 17;
    m->deviceId = dev;
}

static void save(const char *dir, const char *name, size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b, 1, len, f) != len) {
        perror(path);
        return;
    }
    fclose(f);
    n = 0;
}

int main(int argc, char **argv)
{
    const char *d = argv[1];
    uint64_t t = 1000000000ull;
    kernel(0, 0, 7, 11, t + 10000, t + 50000, 4, 128);
    kernel(1, 0, 13, 12, t + 20000, t + 30000, 64, 256);
    memcpy_rec(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE,
               CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 4096, 0, t + 60000, t + 64000);
    memcpy_rec(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
               CUPTI_ACTIVITY_MEMORY_KIND_PINNED, 2048, 0, t + 70000, t + 72000);
    CUpti_ActivityMemcpyPtoP4 *p = PUT(CUpti_ActivityMemcpyPtoP4, CUPTI_ACTIVITY_KIND_MEMCPY2);
    p->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
    p->srcKind = p->dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    p->bytes = 1024, p->streamId = 13, p->correlationId = 15, p->start = t + 74000;
    p->end = t + 75000;
    CUpti_ActivityMemset4 *s = PUT(CUpti_ActivityMemset4, CUPTI_ACTIVITY_KIND_MEMSET);
    s->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, s->bytes = 512, s->streamId = 7;
    s->correlationId = 16, s->start = t + 80000, s->end = t + 81000;
    memory(1, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0x7f0000000000ull, 1 << 20, t + 5000, 0);
    memory(0, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0x7f0000000000ull, 1 << 20, t + 90000, 0);
    memory(1, CUPTI_ACTIVITY_MEMORY_KIND_PINNED, 0x1000, 4096, t + 6000, 0);
    CUpti_ActivityAPI *a = PUT(CUpti_ActivityAPI, CUPTI_ACTIVITY_KIND_RUNTIME);
    a->start = t + 1000, a->end = t + 2000, a->correlationId = 11;
    PUT(CUpti_ActivitySynchronization2, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
    size_t all = n;
    save(d, "everything", all);

    kernel(2, 0, 7, 1, t + 100, t + 99, 1, 1); /* backwards */
    kernel(3, 1, 7, 2, 0, 0, 1, 1);            /* no time */
    kernel(4, 63, 1, 3, t, t + 1, 1, 1);      /* the last ordinal */
    kernel(5, 64, 1, 4, t, t + 1, 1, 1);      /* past the table */
    kernel(6, 0xffffffffu, 0xffffffffu, 0xffffffffu, t, t + 1, 1, 1);
    save(d, "kernels_bad", n);

    kernel(7, 0, 1, 1, t, t + 1, 0x7fffffff, 0x7fffffff); /* grid x block past 2^32 */
    kernel(0, 0, 1, 1, t, t + 1, -5, 0);                  /* negative, zero */
    kernel(0, 3, 1, 1, t, UINT64_MAX, 1, 1);              /* device 3: no name */
    kernel(4, 5, 1, 1, t, t + 1, 1, 1);                   /* device 5's hostile name */
    save(d, "kernels_odd", n);

    memcpy_rec(200, 99, 250, UINT64_MAX, 0, t, t + 1); /* unknown enums */
    memcpy_rec(CUPTI_ACTIVITY_MEMCPY_KIND_HTOH, 0, 0, 0, 70, t, t + 1);
    memory(1, 99, 0, UINT64_MAX, t, 0);
    memory(0, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0xdead, 4096, t, 0); /* release unseen */
    memory(1, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED, 0x10, 16, t, 200);
    save(d, "enums_bad", n);

    for (int i = 0; i < 40; i++) /* many streams, one device */
        kernel((uintptr_t)i, 0, (uint32_t)i * 977u, (uint32_t)i, t + (uint64_t)i * 10,
               t + (uint64_t)i * 10 + 5, 1, 32);
    save(d, "streams", n);

    kernel(0, 0, 7, 11, t + 10000, t + 50000, 4, 128);
    size_t one = n;
    memcpy_rec(1, 1, 3, 4096, 0, t, t + 1);
    save(d, "cut_record", one + 40); /* the second record cut */

    memset(b, 0xA5, 256);
    save(d, "garbage", 256);
    ((CUpti_Activity *)b)->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    save(d, "kernel_header_only", sizeof(CUpti_Activity));
    return 0;
}
'''


def cupti_dir():
    for d in (os.environ.get("CUDA_HOME", "") + "/include", "/usr/local/cuda/include",
              "/usr/local/cuda/extras/CUPTI/include"):
        if os.path.exists(os.path.join(d, "cupti.h")):
            return d
    return None


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "corpus_fuzz_cuda_translate")
    inc = sys.argv[2] if len(sys.argv) > 2 else cupti_dir()
    if not inc:
        sys.exit("no cupti.h: pass the CUPTI include directory")
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "seed.c"), os.path.join(tmp, "seed")
        with open(src, "w") as f:
            f.write(C)
        subprocess.check_call(["cc", "-std=gnu11", "-I", inc, src, "-o", exe])
        subprocess.check_call([exe, out])


if __name__ == "__main__":
    main()
