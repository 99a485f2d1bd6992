/*
 * aiprof_torch.h — the C entry points of libaiprof_torch, the PyTorch
 * adapter.  The Python package loads the library with ctypes only after
 * `torch` is imported (it needs libtorch_cpu and libc10 already loaded) and
 * drives it through these calls; nothing here needs Python.
 *
 * The adapter forwards at once to libaiprof: ATen ops and backward nodes to
 * aip_op_begin/aip_op_end, record_function (USER_SCOPE) to
 * aip_annotation_push/pop, CPU tensor allocations and frees to
 * aip_memory_event.  Every call returns at once when nothing records.
 */
#ifndef AIPROF_TORCH_H
#define AIPROF_TORCH_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AIPROF_TORCH_ABI 5
#define AIPROF_TORCH_API __attribute__((visibility("default")))

/* @return AIPROF_TORCH_ABI of the library. */
AIPROF_TORCH_API int aiprof_torch_abi(void);

/* "MAJOR.MINOR" of the libtorch headers the adapter was built with; the
 * package refuses to load it into another torch (C++ ABI). */
AIPROF_TORCH_API const char *aiprof_torch_built_for(void);

/* Register the global RecordFunction callbacks (disabled).  Idempotent.
 * @return 0, or -1 with aiprof_torch_error() set. */
AIPROF_TORCH_API int aiprof_torch_install(void);

/* What to record with each op from the next aiprof_torch_enable(1) on:
 * input shapes and dtypes, estimated FLOPs (flops.h; implies the inputs),
 * and the op context (op_context.h) — `want` is a mask of
 * AIPROF_WANT_STACK / AIPROF_WANT_MODULES, `context_fn` the extension's
 * aiprof_op_context_fn (NULL: none). */
AIPROF_TORCH_API void aiprof_torch_configure(int record_shapes, int with_flops, unsigned want,
                                             void *context_fn);

/* Note the calling thread's (RecordFunction thread id → OS tid) pair, so
 * backward ops of forward ops it ran get its OS tid as "Fwd thread id"
 * even if it never runs an op while a trace records (or has exited by
 * then).  Cheap (no lock, no allocation); call it once per thread, early:
 * the Python package calls it when a threading.Thread starts.  Needs no
 * aiprof_torch_install(). */
AIPROF_TORCH_API void aiprof_torch_note_thread(void);

/* disable_profiler_in_child_thread() / enable_...(): while paused the
 * calling thread's ops are not described (libaiprof's aip_thread_pause()
 * is what leaves them out).  @return 0, or -1 out of memory. */
AIPROF_TORCH_API int aiprof_torch_thread_pause(int paused);

/* enable_profiler_in_child_thread(record_shapes=, with_flops=): the calling
 * thread's ops are described with input shapes (and FLOPs) even when the
 * trace's options lack them; libaiprof's aip_thread_op_options() is what
 * keeps them.  While any thread asks for shapes the input-boxing callback
 * is the one enabled.  @return 0, or -1 out of memory. */
AIPROF_TORCH_API int aiprof_torch_thread_options(int record_shapes, int with_flops);

/* Turn the op callbacks on (while a trace records) or off; notes the
 * calling thread as aiprof_torch_note_thread() does. */
AIPROF_TORCH_API void aiprof_torch_enable(int on);

/* Put the allocation-tracking wrapper in front of the CPU allocator
 * (once; it stays, passing through when off).  @return 0, or -1 with
 * aiprof_torch_error() set (another allocator that cannot be wrapped). */
AIPROF_TORCH_API int aiprof_torch_memory_install(void);

/* Record allocations (on) or not (off); frees of recorded blocks are
 * always recorded while a trace records. */
AIPROF_TORCH_API void aiprof_torch_memory_enable(int on);

/* torch.distributed (comm.cpp; absent when the adapter was built without
 * c10d's headers).  aiprof_torch_comm_group(): the process group at C++
 * address `key` is libaiprof group `id` (aip_comm_group), its group rank i
 * global rank ranks[i].  aiprof_torch_comm_enable(): record c10d
 * collectives (launch to the Work's completion) while a trace records;
 * `lib` is their AIP_COMM_LIB_*.  Both @return 0, or -1 (with
 * aiprof_torch_error() for enable). */
AIPROF_TORCH_API int aiprof_torch_comm_group(uint64_t key, uint32_t id, const uint32_t *ranks,
                                             int n);
AIPROF_TORCH_API int aiprof_torch_comm_enable(int on, int lib);
/* mstx's automatic ranges (docs/PYTHON.md "mstx's automatic ranges"):
 * aiprof_torch_comm_group_name() names the group at `key` for the ranges'
 * groupName; aiprof_torch_comm_mstx(on): each recorded collective is also
 * an mstx range in the domain "communication" with torch_npu's message.
 * @return 0, or -1. */
AIPROF_TORCH_API int aiprof_torch_comm_group_name(uint64_t key, const char *name);
AIPROF_TORCH_API int aiprof_torch_comm_mstx(int on);

/* The last error of this library ("" if none). */
AIPROF_TORCH_API const char *aiprof_torch_error(void);

#ifdef __cplusplus
}
#endif
#endif
