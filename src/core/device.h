/*
 * device.h — what a device back end (src/collect/opencl, src/collect/cuda)
 * calls to record device activity, and how it hooks into the session.
 *
 * A back end sees the runtime's calls on the application's threads and the
 * device's timestamps later (an event callback, a collector thread).  It
 * records:
 *   - each runtime API call (aip__dev_api_begin/end) on the calling thread:
 *     the analyser makes the framework op open around it the parent of what
 *     the call launched;
 *   - each device task (aip__dev_task), from any thread, carrying the
 *     correlation id of the call that launched it and its times in the
 *     device clock;
 *   - device memory allocations and frees (aip__dev_memory);
 *   - clock samples (aip__dev_clock) from which the analyser maps device
 *     time to the recording clock.
 * Devices and queues are registered once per process (aip__dev_device,
 * aip__dev_queue); their description records are emitted into each trace
 * that uses them, before the first record naming them, by this layer.
 *
 * Every call is cheap and safe when nothing records (it returns at once),
 * thread-safe, never blocks on I/O, and never aborts.  Records are dropped
 * and counted like any other event when the buffers are full.
 */
#ifndef AIP_DEVICE_H
#define AIP_DEVICE_H

#include "aiprof.h"
#include "raw_format.h"

#include <stddef.h>
#include <stdint.h>

#define AIP_DEV_MAX_DEVICES AIP_RAW_MAX_DEVICES
#define AIP_DEV_MAX_QUEUES AIP_RAW_MAX_QUEUES
#define AIP_DEV_NONE UINT32_MAX

/* aip__dev_recording() : a trace is open and records device activity
 * (activities include NPU or CUDA, or use_cuda).  One relaxed load. */
int aip__dev_recording(void);

/* aip__dev_device() : register a device once per process; `key` is the
 * back end's handle for it (cl_device_id, CUDA ordinal + 1), so asking
 * again returns the same id.  @return its id, or AIP_DEV_NONE when the
 * table is full (logged once). */
uint32_t aip__dev_device(uint8_t backend, uint64_t key, const char *name, const char *vendor,
                         uint8_t kind);

/* aip__dev_queue() : register a queue (cl_command_queue, CUDA stream) of
 * `device` once per process; `label` names it in the outputs ("" = "queue
 * <id>").  Same key: same id.  A key may be reused after the application
 * released its queue: aip__dev_queue_forget() first.
 * aip__dev_queue_native() : the same for a back end that numbers its
 * queues itself (CUDA's stream id): `native_id` is what the outputs show
 * as the stream id (AIP_DEV_NO_NATIVE = none: they show aiprof's id, as
 * aip__dev_queue does).  The first registration of a key decides it. */
#define AIP_DEV_NO_NATIVE UINT64_MAX
uint32_t aip__dev_queue(uint32_t device, uint64_t key, const char *label);
uint32_t aip__dev_queue_native(uint32_t device, uint64_t key, const char *label,
                               uint64_t native_id);
void aip__dev_queue_forget(uint64_t key);

/* aip__dev_correlation() : a new correlation id (process-wide, from 1). */
uint64_t aip__dev_correlation(void);

/* A runtime API call on the calling thread.  begin returns the start tick
 * (0 when nothing records); end records the call [start, now] with its
 * correlation id (0 = it launched no task) and device (AIP_DEV_NONE = none). */
uint64_t aip__dev_api_begin(void);
void aip__dev_api_end(const char *name, uint64_t start, uint64_t correlation, uint32_t device);
/* The same with the name already interned (aip_intern), for a back end
 * that calls it at every enqueue and caches the id. */
void aip__dev_api_end_id(aip_string_id name, uint64_t start, uint64_t correlation,
                         uint32_t device);

/* One device task; times in device-clock ns (0 = unknown; start and end
 * are required). */
typedef struct aip__dev_task_info {
    const char *name;           /* kernel name, or the operation ("Memcpy HtoD") */
    aip_string_id name_id;      /* the name interned, when the back end has it (0: `name`) */
    uint32_t device, queue;
    uint8_t kind;               /* enum aip__task_kind */
    uint8_t direction;          /* enum aip__copy_dir */
    uint8_t app_event;          /* the application's own event was used */
    uint64_t correlation;
    uint64_t queued, submit, start, end;
    uint64_t bytes;
    uint32_t global[3], local[3];
} aip__dev_task_info;
void aip__dev_task(const aip__dev_task_info *ti);

/* Device memory: `bytes` > 0 allocated, < 0 freed (the size it had). */
void aip__dev_memory(uint32_t device, uint64_t address, int64_t bytes, uint8_t mem_kind);
/* The same at host tick `ticks`, for a back end that learns of it later
 * (CUPTI's memory records come in buffers, after the fact). */
void aip__dev_memory_at(uint32_t device, uint64_t address, int64_t bytes, uint8_t mem_kind,
                        uint64_t ticks);

/* A clock sample: the device clock read `device_ns` between host ticks
 * t0 and t1 (the analyser uses the midpoint, error bound half the gap). */
void aip__dev_clock(uint32_t device, uint64_t t0, uint64_t t1, uint64_t device_ns,
                    uint8_t method);

/* ---- back ends and the session ---------------------------------------
 * A back end is a collector (collector.h) with a `backend`: the core
 * starts it at a trace that records device activity (recording is on: take
 * a clock sample, describe what is known) and stops it before the trace
 * ends, while recording is still on (wait, boundedly, for the device times
 * still owed, take a last clock sample).  Its `status` and `probe` answer
 * aip_device_status(), aip_supported_activities() and, per trace, why
 * there is no device data (device_status.c). */

/* aip__dev_wanted() : whether a trace with `cfg` records device activity
 * (activities include NPU, CUDA or XPU, or use_cuda): every back end's
 * `wanted`. */
int aip__dev_wanted(const aip_config *cfg);

/* What aip_device_status() and aip_supported_activities() answer, over
 * the back ends b[0..n) (device_status.c; the public calls pass every
 * collector with a `backend`). */
struct aip__collector;
int aip__dev_status_of(const struct aip__collector *const *b, size_t n, char *buf, size_t cap);
unsigned aip__dev_activities_of(const struct aip__collector *const *b, size_t n);

/* What profiler_info.json says of the open trace's devices: the devices
 * its records named, with their clock samples (session_info.c).  Call
 * while the trace is still recording (before aip__recorder_end).  `name`
 * points into the registry (valid for the process's life).  error_ns is
 * the largest sample's error bound, -1 without samples. */
typedef struct aip__dev_trace_device {
    uint32_t id;
    const char *name;
    uint8_t backend, method;
    uint64_t samples;
    int64_t error_ns;
} aip__dev_trace_device;
size_t aip__dev_trace_devices(aip__dev_trace_device *out, size_t cap);
/* "device_and_host_timer", "measured_offset", "same_clock" or "none". */
const char *aip__dev_sync_method_name(uint8_t method);

/* Why the open trace records no device data although it asked for it
 * ("no device data can be collected (OpenCL: ...; CUDA: ...)"), or NULL
 * (profiler_info.json's aiprof.device_status). */
const char *aip__dev_trace_status(void);

/* Called by the collectors' walk (collectors.c), after the collectors
 * started and after they stopped. */
void aip__dev_trace_started(int device_requested);
void aip__dev_trace_stopping(void);

#endif
