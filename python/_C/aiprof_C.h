/*
 * aiprof_C.h — what the parts of the aiprof._C extension share.
 *
 * The extension is the Python face of libaiprof: session control
 * (session.c), annotations and mstx (annotate.c), and the collectors that
 * need the interpreter — the Python call-stack tracer (pytracer.c,
 * eval_frame.c), the nn.Module path (nn_module_path.c, nn_module_calls.c)
 * and GC passes (gc.c).  aiprof_C.c defines the module itself.  The PyTorch adapter
 * (adapters/torch) reads the tracer's and module path's per-thread state
 * through op_context.h, never through Python.
 */
#ifndef AIPROF_C_H
#define AIPROF_C_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "aiprof.h"
#include "aiprof_integration.h"

/* aiprof_C.c : raise the Python exception matching an aip_status, with
 * aip_last_error() as the message.  Returns NULL for `return raise_...`. */
PyObject *aipy_raise(aip_status status, const char *what);

/* Registration of each part's functions and types into the module. */
int aipy_session_init(PyObject *module);
int aipy_annotate_init(PyObject *module);
int aipy_tracer_init(PyObject *module);
int aipy_nn_module_path_init(PyObject *module);
int aipy_gc_init(PyObject *module);
int aipy_dynamic_init(PyObject *module);
int aipy_step_hook_init(PyObject *module);
int aipy_nn_module_calls_init(PyObject *module);
int aipy_comm_init(PyObject *module);
/* constants.c : the headers' enum numbers Python uses, as module constants. */
int aipy_constants_init(PyObject *module);
/* analyse_dirs.c : analyse_dirs(), many result directories at once. */
int aipy_analyse_dirs_init(PyObject *module);
/* op_rows.c : result_rows() and the ROW_* kinds of its `cat` column. */
int aipy_op_rows_init(PyObject *module);

/* pytracer.c / nn_module_path.c : the current thread's call stack and module
 * path as text (NULL when none) and its string id; safe without the GIL,
 * see op_context.h. */
const char *aipy_tracer_current_stack(aip_string_id *id);
const char *aipy_modules_current_path(aip_string_id *id);

/* with_modules (nn_module_path.c), with the GIL: `module` starts running / has
 * returned (or raised) on this thread.  enter returns -1 with a Python
 * error set, else 0. */
int aipy_module_enter(PyObject *module);
void aipy_module_leave(PyObject *module);

/* nn_module_calls.c : false when module calls are followed through the frame
 * evaluator and another evaluator has replaced ours (no GIL needed). */
int aipy_modules_by_frame_current(void);
/* nn_module_calls.c : profile_memory's INPUT labels of top-level module
 * calls from the frame evaluator (1), or not (0: module hooks must). */
int aipy_inputs_by_frames(PyObject *code, void *label_fn);

/* pytracer.c : python_function events (aip_pyfunc_push/pop) of the Python
 * tracer and the nn.Module hooks, which share the library's per-thread
 * stack.  A push notes the trace it went to and the thread's count of open
 * events before it (aipy_pyfunc_mark); popping back to a mark ends every
 * event pushed since, so a frame unwound by an exception also ends what it
 * left open (a module whose forward raised, inner frames missed).  Marks
 * of another trace pop nothing.  Called with the GIL held. */
typedef struct aipy_pyfunc_mark {
    uint32_t gen;   /* aip_recording_generation of the push, 0 = not pushed */
    uint32_t level; /* open events on the thread before the push */
} aipy_pyfunc_mark;
aipy_pyfunc_mark aipy_pyfunc_push(aip_string_id name, aip_string_id module);
/* For a frame that was running before the thread's calls were followed
 * (replayed): aip_pyfunc_push_running, which encloses what is open. */
aipy_pyfunc_mark aipy_pyfunc_push_running(aip_string_id name, aip_string_id module);
void aipy_pyfunc_pop_to(aipy_pyfunc_mark m);

#endif
