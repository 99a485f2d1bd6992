/*
 * raw_format.h — the byte layout of aiprof raw files (docs/RAW_FORMAT.md).
 *
 * Shared by the recorder (core), the chunk writer (raw_writer.c) and the
 * reader (analysis).  Nothing here does I/O; this file only names magic
 * numbers, chunk types, record kinds and the fixed record structs that are
 * copied verbatim into event buffers.  The
 * structs are little-endian on disk; aiprof only builds on little-endian
 * hosts (checked below).
 */
#ifndef AIP_RAW_FORMAT_H
#define AIP_RAW_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "aiprof raw records are written verbatim and need a little-endian host"
#endif

#define AIP_RAW_MAGIC "AIPRAW\r\n"
#define AIP_RAW_MAGIC_LEN 8
#define AIP_RAW_VERSION_MAJOR 1
#define AIP_RAW_VERSION_MINOR 8
#define AIP_RAW_HEADER_SIZE 16

#define AIP_CHUNK_MAGIC 0x4B4E4843u /* "CHNK" */
#define AIP_CHUNK_HEADER_SIZE 24
#define AIP_CHUNK_MAX_PAYLOAD (64u * 1024u * 1024u)
/* The longest text a STRINGS entry holds: the recorder cuts longer names,
 * shapes and stacks to this length and counts them (profiler_info.json's
 * aiprof.texts_cut). */
#define AIP_RAW_STRING_MAX_LEN (64u * 1024u)

enum aip__chunk_type {
    AIP_CHUNK_INFO = 1,
    AIP_CHUNK_STRINGS = 2,
    AIP_CHUNK_EVENTS = 3,
    AIP_CHUNK_CLOCK = 4,
    AIP_CHUNK_STATS = 5,
    AIP_CHUNK_END = 6,
    AIP_CHUNK_PAD = 7,  /* format 1.3: padding, skipped */
    AIP_CHUNK_FLIGHT = 8 /* format 1.8: a flight recorder dump's counts (src/core/flight.h) */
};

/* format 1.8: a span (ANNOTATION, RANGE, OP, PYFUNC) still open when the
 * flight recorder dumped; its end is the dump's time (record flag). */
#define AIP_REC_UNFINISHED 0x80

enum aip__record_kind {
    AIP_REC_ANNOTATION = 1,
    AIP_REC_RANGE = 2,
    AIP_REC_RANGE_START = 3,
    AIP_REC_RANGE_END = 4,
    AIP_REC_MARK = 5,
    AIP_REC_OP = 6,
    AIP_REC_MEMORY = 7,
    AIP_REC_GC = 8,
    AIP_REC_THREAD_NAME = 9,
    AIP_REC_MEMORY_CATEGORY = 10,  /* format 1.1 */
    AIP_REC_PYFUNC = 11,           /* format 1.1 */
    /* format 1.4: device activity (docs/RAW_FORMAT.md "Device records") */
    AIP_REC_DEVICE = 12,           /* a device: id, kind, back end, vendor */
    AIP_REC_DEVICE_QUEUE = 13,     /* a queue/stream of a device */
    AIP_REC_DEVICE_TASK = 14,      /* a kernel, copy, fill, marker... with device times */
    AIP_REC_DEVICE_API = 15,       /* a runtime API call on the recording thread */
    AIP_REC_DEVICE_MEMORY = 16,    /* device memory allocated or freed */
    AIP_REC_DEVICE_CLOCK = 17,     /* a device clock <-> tick sample */
    /* format 1.4: communication (docs/RAW_FORMAT.md "Communication records") */
    AIP_REC_COMM_GROUP = 18,       /* a communicator / process group and its ranks */
    AIP_REC_COMM_OP = 19,          /* one collective or point-to-point operation */
    /* format 1.5: host system samples (docs/RAW_FORMAT.md "Host samples") */
    AIP_REC_HOST_SAMPLE = 20,      /* /proc and /sys counters read by the host sampler */
    /* format 1.5: OS runtime calls (docs/RAW_FORMAT.md "OS runtime records") */
    AIP_REC_OSRT = 21              /* one blocking libc / libpthread call */
};

/* OSRT flags (record header `flags`, format 1.5). */
enum { AIP_OSRTF_FAILED = 0x01 };  /* the call reported failure; `error` says why */

/* Communication op kinds, libraries and flags (format 1.4). */
enum aip__comm_kind { AIP_COMM_COLLECTIVE = 1, AIP_COMM_SEND = 2, AIP_COMM_RECV = 3,
                      AIP_COMM_SENDRECV = 4 };
enum aip__comm_lib { AIP_COMMLIB_OTHER = 0, AIP_COMMLIB_MPI = 1, AIP_COMMLIB_GLOO = 2,
                     AIP_COMMLIB_NCCL = 3, AIP_COMMLIB_HCCL = 4 };
enum { AIP_COMMF_NONBLOCKING = 0x01, /* started by an I* call, ended at its completion */
       AIP_COMMF_RANKS_CUT = 0x02 };  /* COMM_GROUP: not every rank is listed */
#define AIP_RAW_MAX_GROUPS 65536
#define AIP_RAW_NO_RANK UINT32_MAX

/* Device kinds, task kinds, copy directions and back ends (format 1.4). */
enum aip__dev_kind { AIP_DEVKIND_OTHER = 0, AIP_DEVKIND_CPU = 1, AIP_DEVKIND_GPU = 2,
                     AIP_DEVKIND_ACCELERATOR = 3 };
/* Back ends: a number is for good (raw files keep it); 128..255 are
 * private, for a back end not numbered here yet (docs/ADD_A_BACKEND.md):
 * the outputs give it raw_backend.c's defaults. */
enum aip__dev_backend { AIP_BACKEND_NONE = 0, AIP_BACKEND_OPENCL = 1, AIP_BACKEND_CUDA = 2,
                        AIP_BACKEND_PRIVATE = 128 };
enum aip__task_kind { AIP_TASK_KERNEL = 1, AIP_TASK_MEMCPY = 2, AIP_TASK_MEMSET = 3,
                      AIP_TASK_MARKER = 4, AIP_TASK_BARRIER = 5, AIP_TASK_MAP = 6,
                      AIP_TASK_OTHER = 7 };
enum aip__copy_dir { AIP_COPY_NONE = 0, AIP_COPY_H2D = 1, AIP_COPY_D2H = 2, AIP_COPY_D2D = 3,
                     AIP_COPY_H2H = 4 };
enum aip__devmem_kind { AIP_DEVMEM_BUFFER = 0, AIP_DEVMEM_SVM = 1, AIP_DEVMEM_IMAGE = 2,
                        AIP_DEVMEM_OTHER = 3 };
enum aip__sync_method { AIP_SYNC_DEVICE_AND_HOST_TIMER = 1, /* clGetDeviceAndHostTimer & co. */
                        AIP_SYNC_MEASURED = 2,              /* a marker timed by the host */
                        AIP_SYNC_SAME_CLOCK = 3 };          /* device ns are host monotonic ns */
/* Device and queue ids are below these (a reader rejects larger ones). */
#define AIP_RAW_MAX_DEVICES 64
#define AIP_RAW_MAX_QUEUES 4096
/* DEVICE_TASK flags (record header `flags`). */
enum { AIP_TASKF_QUEUED = 0x01, AIP_TASKF_SUBMIT = 0x02, /* those times are known */
       AIP_TASKF_APP_EVENT = 0x04 };                     /* the application's own event */

enum aip__op_flags {
    AIP_OPF_SEQ = 0x01,
    AIP_OPF_FWD = 0x02,
    AIP_OPF_SHAPES = 0x04,
    AIP_OPF_STACK = 0x08,
    AIP_OPF_BACKWARD = 0x10,
    AIP_OPF_FLOPS = 0x20, /* format 1.2 */
    /* format 1.7: the record is a record_function scope (user_annotation)
     * carrying op fields (its call stack / module hierarchy), not an op */
    AIP_OPF_ANNOTATION = 0x40
};

typedef struct aip__chunk_header {
    uint32_t magic;
    uint16_t type;
    uint16_t flags;
    uint32_t payload_size;
    uint32_t crc32;
    uint64_t tid;
} aip__chunk_header;

typedef struct aip__rec_header {
    uint8_t kind;
    uint8_t flags;
    uint16_t size;
    uint32_t name;
} aip__rec_header;

typedef struct aip__rec_span {   /* ANNOTATION, GC, OP (fixed part) */
    aip__rec_header h;
    uint64_t start;
    uint64_t end;
} aip__rec_span;

typedef struct aip__rec_range {  /* RANGE */
    aip__rec_header h;
    uint64_t start;
    uint64_t end;
    uint32_t domain;
    uint32_t reserved;
} aip__rec_range;

typedef struct aip__rec_range_start {
    aip__rec_header h;
    uint64_t ts;
    uint64_t range_id;
    uint32_t domain;
    uint32_t reserved;
} aip__rec_range_start;

typedef struct aip__rec_range_end {
    aip__rec_header h;
    uint64_t ts;
    uint64_t range_id;
} aip__rec_range_end;

typedef struct aip__rec_mark {
    aip__rec_header h;
    uint64_t ts;
    uint32_t domain;
    uint32_t reserved;
} aip__rec_mark;

typedef struct aip__rec_memory {
    aip__rec_header h;
    uint64_t ts;
    uint64_t address;
    int64_t bytes;
    int64_t total_allocated;
    int64_t total_reserved;
    uint8_t device_type;
    int8_t device_index;
    uint8_t reserved[6];
} aip__rec_memory;

typedef struct aip__rec_memory_category {
    aip__rec_header h;
    uint64_t ts;
    uint64_t address;
    int64_t bytes;
    uint8_t device_type;
    int8_t device_index;
    uint8_t category;
    uint8_t reserved[5];
} aip__rec_memory_category;

typedef struct aip__rec_pyfunc {  /* PYFUNC: a Python function call or nn.Module */
    aip__rec_header h;
    uint64_t start;
    uint64_t end;
    uint32_t python_id;            /* unique per process, from 1 */
    uint32_t parent_id;            /* python_id of the caller, 0 = none */
    uint32_t module_id;            /* string id of "nn.Module: Name_n", 0 = none */
    uint32_t reserved;
} aip__rec_pyfunc;

/* Format 1.4 device records.  Device times are nanoseconds of the device's
 * own clock; DEVICE_CLOCK samples map them to ticks (the analyser aligns). */
typedef struct aip__rec_device {   /* name = device name */
    aip__rec_header h;
    uint32_t device_id;            /* process-wide, from 0 */
    uint32_t vendor;               /* string id, 0 = unknown */
    uint8_t kind;                  /* enum aip__dev_kind */
    uint8_t backend;               /* enum aip__dev_backend */
    uint16_t reserved;
    uint32_t reserved2;
} aip__rec_device;

typedef struct aip__rec_device_queue { /* name = queue label ("queue 3", "stream 7") */
    aip__rec_header h;
    uint32_t device_id;
    uint32_t queue_id;             /* process-wide, from 0 */
    /* 1.6: the back end's own number of the queue + 1 (CUDA stream id + 1),
     * 0 = it has none (OpenCL).  1.4/1.5 records end before it (16 bytes). */
    uint64_t native_id1;
} aip__rec_device_queue;
#define AIP_REC_DEVICE_QUEUE_SIZE_1_4 16

typedef struct aip__rec_device_task { /* name = kernel or operation name */
    aip__rec_header h;
    uint32_t device_id, queue_id;
    uint8_t task_kind;             /* enum aip__task_kind */
    uint8_t direction;             /* enum aip__copy_dir (copies) */
    uint16_t reserved;
    uint32_t reserved2;
    uint64_t correlation;          /* of the DEVICE_API call that launched it, 0 = none */
    uint64_t queued, submit, start, end; /* device clock ns */
    uint64_t bytes;                /* copies, fills, maps */
    uint32_t global[3], local[3];  /* work sizes (grid/block), 0 = not given */
} aip__rec_device_task;

typedef struct aip__rec_device_api { /* name = runtime function ("clEnqueueNDRangeKernel") */
    aip__rec_header h;
    uint64_t start, end;           /* ticks, on the chunk's thread */
    uint64_t correlation;          /* process-wide, from 1; 0 = launched nothing */
    uint32_t device_id;            /* UINT32_MAX = none */
    uint32_t reserved;
} aip__rec_device_api;

typedef struct aip__rec_device_memory { /* name 0 */
    aip__rec_header h;
    uint64_t ts;                   /* ticks */
    uint64_t address;              /* handle or address */
    int64_t bytes;                 /* > 0 allocated, < 0 freed */
    uint32_t device_id;
    uint8_t mem_kind;              /* enum aip__devmem_kind */
    uint8_t reserved[3];
} aip__rec_device_memory;

typedef struct aip__rec_device_clock { /* name 0 */
    aip__rec_header h;
    uint64_t ticks;                /* host ticks at the sample (the midpoint of the bracket) */
    uint64_t device_ns;            /* device clock at the same moment */
    uint64_t error_ticks;          /* half the bracket: the sample's error bound */
    uint32_t device_id;
    uint8_t method;                /* enum aip__sync_method */
    uint8_t reserved[3];
} aip__rec_device_clock;

/* Format 1.4 communication records.  Ranks are global (world) ranks. */
typedef struct aip__rec_comm_group { /* name = group name; then u32 ranks[listed], 0-padded */
    aip__rec_header h;
    uint32_t group_id;             /* process-wide, below AIP_RAW_MAX_GROUPS */
    uint32_t n_ranks;              /* ranks in the group */
    uint32_t my_rank;              /* this process's rank within the group */
    uint32_t listed;               /* ranks listed after the record (flag RANKS_CUT: < n) */
} aip__rec_comm_group;

typedef struct aip__rec_comm_op {  /* name = operation ("allreduce", "MPI_Send") */
    aip__rec_header h;
    uint64_t start, end;           /* ticks, on the chunk's thread */
    uint64_t bytes;                /* bytes this rank sent (collectives: its buffer's size) */
    uint64_t seq;                  /* per group: the n-th collective (matches across ranks) */
    uint64_t count;                /* elements */
    uint32_t group_id;             /* AIP_RAW_NO_RANK = none */
    uint32_t peer;                 /* p2p peer, global rank; AIP_RAW_NO_RANK = none */
    uint32_t root;                 /* rooted collectives, global rank; AIP_RAW_NO_RANK = none */
    uint32_t dtype;                /* string id of the element type, 0 = unknown */
    int32_t tag;                   /* p2p tag, -1 = none */
    uint8_t kind;                  /* enum aip__comm_kind */
    uint8_t lib;                   /* enum aip__comm_lib */
    uint16_t reserved;
} aip__rec_comm_op;

/* Format 1.5 host samples (src/collect/host): what a HOST_SAMPLE carries
 * (`what`), and its flags.  Counters are cumulative, as the kernel gives
 * them; the analyser turns two samples into a rate. */
enum aip__host_what {
    AIP_HOST_PROC_CPU = 1,   /* v: user ns, system ns, process CPU ns (precise), threads,
                              * online CPUs */
    AIP_HOST_THREAD_CPU = 2, /* index = tid; v: user ns, system ns, CPU it last ran on,
                              * run time ns (schedstat, with flag PRECISE) */
    AIP_HOST_MEM = 3,        /* v: RSS, VMS, shared bytes, minor, major faults, MemTotal bytes */
    AIP_HOST_DISK = 4,       /* v: read_bytes, write_bytes, rchar, wchar, syscr, syscw,
                              * cancelled_write_bytes, block I/O delay ns */
    AIP_HOST_NET = 5,        /* name = interface; index = speed Mb/s (UINT32_MAX unknown);
                              * v: rx bytes, packets, errors, drops, tx bytes, packets,
                              * errors, drops */
    AIP_HOST_ROCE = 6,       /* name = "device/port"; index = rate Mb/s (UINT32_MAX
                              * unknown); v as NET (drops: discards) */
    AIP_HOST_STATUS = 7      /* v: samples taken, periods missed, largest lag ns, sampler
                              * CPU ns, sources unreadable (bits), period ns */
};
enum { AIP_HOSTF_NETWORK = 0x01, /* NET: taken for host_sys NETWORK */
       AIP_HOSTF_NIC = 0x02,     /* NET / ROCE: taken for sys_io */
       AIP_HOSTF_DELAYACCT = 0x04,   /* DISK: the kernel counts block I/O delay */
       AIP_HOSTF_PRECISE = 0x08 };   /* PROC_CPU: v[2] holds CLOCK_PROCESS_CPUTIME_ID;
                                      * THREAD_CPU: v[3] holds the run time */
#define AIP_HOST_VALUES 8
/* HOST_SAMPLE STATUS v[4] bits: sources the sampler could not read (each
 * also logged once), and facts worth a note. */
enum {
    AIP_HOSTSRC_STAT = 1u << 0,     /* /proc/self/stat */
    AIP_HOSTSRC_TASK = 1u << 1,     /* /proc/self/task */
    AIP_HOSTSRC_STATM = 1u << 2,    /* /proc/self/statm */
    AIP_HOSTSRC_IO = 1u << 3,       /* /proc/self/io */
    AIP_HOSTSRC_NETDEV = 1u << 4,   /* /proc/net/dev */
    AIP_HOSTSRC_MEMINFO = 1u << 5,  /* /proc/meminfo */
    AIP_HOSTSRC_NO_RDMA = 1u << 6,  /* sys_io: no /sys/class/infiniband (not an error) */
    AIP_HOSTSRC_IFACE_GONE = 1u << 7, /* an interface disappeared while sampling */
    AIP_HOSTSRC_THREADS_CUT = 1u << 8 /* more threads than AIP_HOST_MAX_THREADS */
};

typedef struct aip__rec_host_sample { /* name: see enum aip__host_what, else 0 */
    aip__rec_header h;
    uint64_t ts;                   /* ticks when the sample was read */
    uint8_t what;                  /* enum aip__host_what */
    uint8_t reserved[3];
    uint32_t index;                /* tid, or link speed; see enum aip__host_what */
    uint64_t v[AIP_HOST_VALUES];   /* cumulative counters and gauges */
} aip__rec_host_sample;

typedef struct aip__rec_osrt {    /* name = the function ("read", "pthread_mutex_lock") */
    aip__rec_header h;
    uint64_t start, end;           /* ticks, on the chunk's thread */
    int64_t result;                /* its return value (a pointer's address) */
    int32_t error;                 /* errno (pthread: the returned code) of a failed call, else 0 */
    uint32_t reserved;
} aip__rec_osrt;

typedef struct aip__rec_thread_name {
    aip__rec_header h;
    uint64_t ts;
} aip__rec_thread_name;

typedef struct aip__clock_pair {  /* CLOCK payload */
    uint64_t ticks;
    uint64_t monotonic_ns;
    uint64_t realtime_ns;
} aip__clock_pair;

typedef struct aip__stats_entry { /* STATS payload entries */
    uint64_t tid;
    uint64_t recorded;
    uint64_t dropped;
} aip__stats_entry;

_Static_assert(sizeof(aip__chunk_header) == 24, "chunk header layout");
_Static_assert(sizeof(aip__rec_header) == 8, "record header layout");
_Static_assert(sizeof(aip__rec_span) == 24, "span layout");
_Static_assert(sizeof(aip__rec_range) == 32, "range layout");
_Static_assert(sizeof(aip__rec_range_start) == 32, "range start layout");
_Static_assert(sizeof(aip__rec_range_end) == 24, "range end layout");
_Static_assert(sizeof(aip__rec_mark) == 24, "mark layout");
_Static_assert(sizeof(aip__rec_memory) == 56, "memory layout");
_Static_assert(sizeof(aip__rec_thread_name) == 16, "thread name layout");
_Static_assert(sizeof(aip__rec_memory_category) == 40, "memory category layout");
_Static_assert(sizeof(aip__rec_pyfunc) == 40, "pyfunc layout");
_Static_assert(sizeof(aip__rec_device) == 24, "device layout");
_Static_assert(sizeof(aip__rec_device_queue) == 24, "device queue layout");
_Static_assert(sizeof(aip__rec_device_task) == 96, "device task layout");
_Static_assert(sizeof(aip__rec_device_api) == 40, "device api layout");
_Static_assert(sizeof(aip__rec_device_memory) == 40, "device memory layout");
_Static_assert(sizeof(aip__rec_device_clock) == 40, "device clock layout");
_Static_assert(sizeof(aip__rec_comm_group) == 24, "comm group layout");
_Static_assert(sizeof(aip__rec_comm_op) == 72, "comm op layout");
_Static_assert(sizeof(aip__rec_host_sample) == 88, "host sample layout");
_Static_assert(sizeof(aip__rec_osrt) == 40, "osrt layout");
_Static_assert(sizeof(aip__clock_pair) == 24, "clock layout");
_Static_assert(sizeof(aip__stats_entry) == 24, "stats layout");

/* Largest OP record: span + seq + fwd + shapes pair + stack pair + flops. */
#define AIP_REC_OP_MAX_SIZE (24 + 8 + 8 + 8 + 8 + 8)

/* aip__chunk_crc() : CRC over header bytes 0-11, 16-23 and the payload. */
uint32_t aip__chunk_crc(const aip__chunk_header *h, const void *payload, size_t size);

/* aip__chunk_fill() : fill a chunk header (magic, crc) for `payload`. */
void aip__chunk_fill(aip__chunk_header *h, uint16_t type, uint64_t tid, const void *payload,
                     uint32_t size);

/* Padding after a payload of `size` bytes. */
static inline size_t aip__chunk_pad(size_t size) { return (8 - (size & 7)) & 7; }

#endif
