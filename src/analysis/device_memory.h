/*
 * device_memory.h — what the DEVICE_MEMORY records (device_load.c) say
 * once put together, for the memory outputs (memory_record.csv,
 * operator_memory.csv, the memory timeline, the summary): which free
 * releases which allocation, the bytes live on the device after each
 * record, and the op open on the allocating thread.  Derived on demand by
 * the exporters that need it (the model keeps the records only: they are
 * few, one per buffer a program creates), never stored in the model.
 *
 * A device runtime reports no totals, so they are counted here
 * (docs/MEMORY.md "Device memory"):
 * - pairs, as for the framework's records (memory.c): per (device,
 *   address), a free releases the latest allocation not yet released; a
 *   free with none released a block from before the trace;
 * - total: the bytes of the blocks the trace knows to be live on that
 *   device after the record: those allocated in it and not yet freed, plus
 *   the blocks from before the trace that it saw freed (live from its start
 *   until their free, as torch counts PREEXISTING blocks).  Blocks from
 *   before the trace that it never saw freed are not known, so not counted.
 *   A runtime's allocations go to the device directly (no caching pool), so
 *   reserved = allocated = active for them;
 * - name: the innermost op, record_function or mstx range open on the
 *   recording thread at the record's time (as operator_memory's Name).
 */
#ifndef AIP_DEVICE_MEMORY_H
#define AIP_DEVICE_MEMORY_H

#include "model.h"

typedef struct aip__devmem_row {
    int64_t pair;            /* alloc: index of its free; free: of its alloc; -1 none */
    int64_t total;           /* bytes live on the device after this record */
    uint32_t name;           /* string id of the op open around it, 0 = none */
} aip__devmem_row;

typedef struct aip__devmem {
    aip__devmem_row **rows;  /* per process, parallel to its dev_memory */
    size_t n_procs;
    size_t n_records;        /* of every process */
} aip__devmem;

/* aip__devmem_derive() : rows of every process (after aip__model_derive). */
aip_status aip__devmem_derive(const aip__model *m, aip__devmem *d);
void aip__devmem_free(aip__devmem *d);

/* aip__devmem_tag_type() : the memory device type (aip_device_type) the
 * outputs name device `id` of p with: its back end's (raw_backend.c: CUDA
 * for the CUDA back end's devices, NPU, torch_npu's "NPU:<id>", for the
 * others'), the id being the raw device id; NPU for an unknown device. */
static inline uint8_t aip__devmem_tag_type(const aip__process *p, uint32_t id)
{
    const aip__device *d = aip__model_device(p, id);
    return d ? aip__raw_backend(d->backend)->memory_type : AIP_DEVICE_NPU;
}

/* Every process's device memory records in time order (processes in
 * raw-file order on equal times). */
typedef struct aip__devmem_iter {
    const aip__model *m;
    size_t *pos;
} aip__devmem_iter;
aip_status aip__devmem_iter_init(aip__devmem_iter *it, const aip__model *m);
int aip__devmem_iter_next(aip__devmem_iter *it, size_t *proc, size_t *idx);
void aip__devmem_iter_free(aip__devmem_iter *it);

#endif
