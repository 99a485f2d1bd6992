/*
 * model_device.h — the analysis model's records of device activity and
 * communication (raw format 1.4), part of every aip__process (model.h
 * includes it; include model.h, not this file).  Loaded by device_load.c
 * and comm_load.c, aligned by device_align.c and tick_convert.c, linked by
 * device_derive.c; docs/DEVICE.md and docs/COMMUNICATION.md say what the
 * outputs make of them.
 */
#ifndef AIP_MODEL_DEVICE_H
#define AIP_MODEL_DEVICE_H

#include <stdint.h>

/* ---- communication (raw format 1.4; comm_load.c).  Groups are indexed by
 * their raw id (below AIP_RAW_MAX_GROUPS). */
typedef struct aip__comm_group_info {
    uint8_t present;
    uint8_t ranks_cut;         /* not every member is listed */
    uint32_t name;             /* string id */
    uint32_t my_rank, n_ranks; /* this process's rank in the group, its size */
    uint32_t listed;
    uint32_t *ranks;           /* global ranks of group ranks 0..listed-1 (malloc'd) */
    /* The group's name in the communication outputs (derive): the decimal
     * double_hash of its recorded name, which is its parallel_group_info
     * key, as CANN names groups and msprof-analyze maps them back;
     * "ungrouped" for a group recorded without a name. */
    char label[24];
} aip__comm_group_info;

typedef struct aip__comm_event {
    int64_t start, end;        /* ticks when loaded, then wall ns */
    uint64_t bytes, seq, count;
    uint32_t name, dtype;      /* string ids */
    uint32_t group;            /* raw group id, AIP_RAW_NO_RANK = none */
    uint32_t peer, root;       /* global ranks, AIP_RAW_NO_RANK = none */
    int32_t tag;
    uint32_t thread;           /* index in threads */
    uint8_t kind, lib, flags;  /* enum aip__comm_kind, aip__comm_lib, AIP_COMMF_* */
} aip__comm_event;

/* ---- device activity (raw format 1.4; device_load.c, device_align.c,
 * device_derive.c).  Raw device and queue ids are small process-wide
 * numbers, so both tables are indexed by them directly (`present` says
 * whether the file described that id). */
typedef struct aip__device {
    uint8_t present;
    uint8_t kind;              /* enum aip__dev_kind */
    uint8_t backend;           /* enum aip__dev_backend */
    uint8_t sync_method;       /* enum aip__sync_method of the samples used; 0 = none */
    uint32_t name, vendor;     /* string ids */
    /* alignment (device_align.c): device ns -> wall ns */
    uint64_t n_samples;        /* usable DEVICE_CLOCK samples */
    int64_t error_ns;          /* bound on the alignment error, -1 = unknown (no samples) */
    uint64_t tasks;            /* DEVICE_TASK records of this device */
} aip__device;

typedef struct aip__queue {
    uint8_t present;
    uint32_t device;           /* raw device id */
    uint32_t label;            /* string id */
    uint8_t has_native;        /* the back end numbers its queues itself (CUDA) */
    uint64_t native;           /* that number (the CUDA stream id) when has_native */
    uint64_t tasks;
} aip__queue;

/* One device task.  Times are device-clock ns when loaded, wall-clock ns
 * once aligned (device_align.c); queued/submit 0 = unknown. */
typedef struct aip__device_task {
    int64_t start, end;
    int64_t queued, submit;
    uint64_t correlation;
    uint64_t bytes;
    uint32_t name;             /* string id */
    uint32_t device, queue;    /* raw ids; queue UINT32_MAX = none */
    uint8_t kind;              /* enum aip__task_kind */
    uint8_t direction;         /* enum aip__copy_dir */
    uint8_t flags;             /* AIP_TASKF_* */
    uint8_t pad;
    uint32_t global[3], local[3];
    /* derived (device_derive.c) */
    int64_t api;               /* index in dev_api of the call that launched it, -1 none */
    int64_t step;              /* index in m->steps of its step, -1 none (device_steps.c) */
} aip__device_task;

/* One runtime API call ("clEnqueueNDRangeKernel") on a host thread. */
typedef struct aip__device_call {
    int64_t start, end;        /* ticks when loaded, then wall ns */
    uint64_t correlation;      /* 0 = launched nothing */
    uint32_t name;             /* string id */
    uint32_t thread;           /* index in threads */
    uint32_t device;           /* raw id, UINT32_MAX = none */
    /* derived: the innermost op / record_function / mstx range open on
     * its thread when it began (the launching op), or -1 */
    uint32_t parent_thread;
    int64_t parent_span;       /* index in threads[parent_thread].spans */
} aip__device_call;

typedef struct aip__device_mem {
    int64_t ts;                /* ticks, then wall ns */
    uint64_t address;
    int64_t bytes;             /* > 0 allocated, < 0 freed */
    uint32_t device;           /* raw id */
    uint32_t thread;
    uint8_t mem_kind;          /* enum aip__devmem_kind */
} aip__device_mem;

typedef struct aip__device_clock {
    int64_t ticks;             /* ticks, then wall ns */
    uint64_t device_ns;
    int64_t error;             /* ticks, then ns */
    uint32_t device;
    uint8_t method;
} aip__device_clock;

#endif
