/*
 * op_context.h — the contract between aiprof._C and the PyTorch adapter.
 *
 * The adapter (adapters/torch, C++) records every ATen op.  When with_stack
 * or with_modules is on it asks the extension for the calling thread's
 * Python call stack and nn.Module path.  It runs inside RecordFunction
 * callbacks, usually with the GIL released by the op's binding, so the
 * function below never touches Python objects: it reads per-thread state
 * that the extension keeps in C while the GIL is held.
 *
 * The extension hands the function's address to the adapter itself, in C,
 * with each configure call (_C._adapter_switch).  The strings stay valid at least until the op ends on this thread.
 * Each text comes with its string id, interned once when the extension
 * first made the text, so that an op need not hash kilobytes of stack.
 */
#ifndef AIPROF_OP_CONTEXT_H
#define AIPROF_OP_CONTEXT_H

#include "aiprof.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AIPROF_OP_CONTEXT_ABI 2

enum { AIPROF_WANT_STACK = 1u << 0, AIPROF_WANT_MODULES = 1u << 1 };

typedef struct aiprof_op_context {
    const char *call_stack;       /* "file.py(12): f;\nfile.py(3): <module>", innermost first */
    const char *module_hierarchy; /* "nn.Module: MLP_0;nn.Module: Linear_0", outermost first */
    aip_string_id call_stack_id;  /* the same texts, interned once by the extension */
    aip_string_id module_hierarchy_id;
} aiprof_op_context;

/* Fill `ctx` for the calling thread; fields not wanted or unknown are NULL. */
typedef void (*aiprof_op_context_fn)(unsigned want, aiprof_op_context *ctx);

#ifdef __cplusplus
}
#endif
#endif
