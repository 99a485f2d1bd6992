/*
 * eval_frame.h — the frame evaluator (PEP 523, eval_frame.c) shared by the
 * with_stack tracer (pytracer.c) and nn_module_calls.c, which follows
 * nn.Module calls through it.  CPython 3.11 only (AIPY_EVAL_FRAME);
 * elsewhere the callers fall back to a profile hook and module hooks.
 */
#ifndef AIPY_EVAL_FRAME_H
#define AIPY_EVAL_FRAME_H

#include "aiprof_C.h"

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
#define AIPY_EVAL_FRAME 1
#define Py_BUILD_CORE 1
#include <internal/pycore_frame.h>
#undef Py_BUILD_CORE
#endif

/* eval_frame.c: whether our evaluator may be installed in `interp` (no one
 * else's is, AIPROF_PY_TRACER does not say "profile"); install or remove
 * it as the users' switches now need; whether it is still in place. */
int aipy_want_eval_mode(PyInterpreterState *interp);
void aipy_eval_update(PyInterpreterState *interp);
int aipy_eval_is_ours(void);

/* nn_module_calls.c: Module._call_impl's code (NULL until known), and
 * whether module calls are followed at all (with_modules or INPUT labels);
 * read on every frame. */
extern PyCodeObject *aipy_module_call_code;
extern int aipy_module_calls_on;

#ifdef AIPY_EVAL_FRAME
/* Evaluate a frame of aipy_module_call_code: label its inputs if it is a
 * top-level call, enter and leave its module. */
PyObject *aipy_eval_module_call(PyThreadState *ts, _PyInterpreterFrame *frame, int throwflag);
#endif

#endif
