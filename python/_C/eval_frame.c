/*
 * eval_frame.c — our frame evaluator (PEP 523, CPython 3.11): the
 * eval-frame mode of the with_stack tracer, and the way nn.Module calls are
 * followed without module hooks (nn_module_calls.c).
 *
 * While the tracer follows calls in this mode or module calls are followed,
 * eval_cb is the interpreter's frame evaluator, so each Python call and
 * generator resume runs through it: it pushes the frame on the thread's
 * shadow stack (pytracer.h), evaluates it, and pops it.  Python-to-Python
 * calls then take the C path instead of being inlined, but the
 * specialising interpreter keeps running: a profile hook would make
 * CPython 3.11 de-specialise every instruction and build a frame object
 * for every call, which made with_stack cost ~340 ns per call.
 *
 * Frames already running when tracing starts are replayed onto the shadow
 * stacks, but their returns are not seen here: a replayed frame that is no
 * longer the caller of the next call (or of an op) has returned, and its
 * entry is dropped then (aipy_eval_sync).
 *
 * Our evaluator never replaces someone else's (torch.compile's); the
 * tracer then falls back to the profile hook (pytracer.c), and module calls
 * to module hooks.  On other Python versions this file defines only the
 * answers "not possible".
 */
#include "pytracer.h"

#ifdef AIPY_EVAL_FRAME
#define Py_BUILD_CORE 1
#include <internal/pycore_interp.h> /* PyInterpreterState.eval_frame */
#undef Py_BUILD_CORE
#endif

#include <stdlib.h>
#include <string.h>

#ifdef AIPY_EVAL_FRAME

/* `cur` is the thread's running frame: entries above it returned unseen
 * (frames replayed at the start).  Cheap when nothing did: one compare. */
void aipy_eval_sync(shadow *s, const _PyInterpreterFrame *cur)
{
    int top = s->depth;
    if (top == 0 || top > SHADOW_MAX_DEPTH || s->e[top - 1].frame == cur)
        return;
    for (int k = top - 2; k >= 0; k--)
        if (s->e[k].frame == cur) {
            aipy_shadow_pop_to(s, k + 1);
            return;
        }
    if (!cur)
        aipy_shadow_pop_to(s, 0);
}

/* With the GIL: push the thread's running frames, outermost first, as
 * python_function events that start now. */
void aipy_eval_replay(shadow *s, PyThreadState *ts)
{
    int n = 0;
    for (_PyInterpreterFrame *f = ts->cframe->current_frame; f; f = f->previous)
        if (!_PyFrame_IsIncomplete(f))
            n++;
    if (!n)
        return;
    _PyInterpreterFrame **chain = malloc(sizeof *chain * (size_t)n);
    if (!chain)
        return;
    int i = n;
    for (_PyInterpreterFrame *f = ts->cframe->current_frame; f; f = f->previous)
        if (!_PyFrame_IsIncomplete(f))
            chain[--i] = f;
    for (i = 0; i < n; i++)
        aipy_shadow_push(s, chain[i], chain[i]->f_code, AIPY_EVENT_RUNNING);
    free(chain);
}

/* Module calls are handed to nn_module_calls.c (with_modules, INPUT labels). */
static inline PyObject *eval_frame_of(PyThreadState *ts, _PyInterpreterFrame *frame,
                                      int throwflag)
{
    if (aipy_module_calls_on && frame->f_code == aipy_module_call_code && !throwflag)
        return aipy_eval_module_call(ts, frame, throwflag);
    return _PyEval_EvalFrameDefault(ts, frame, throwflag);
}

static PyObject *eval_cb(PyThreadState *ts, _PyInterpreterFrame *frame, int throwflag)
{
    shadow *s = aipy_tls_shadow;
    if (__builtin_expect(!s || s->epoch != aipy_tracer_epoch || s->mode != TRACER_MODE_EVAL,
                         0)) {
        if (!aipy_tracer_on || aipy_tracer_mode != TRACER_MODE_EVAL ||
            !(s = aipy_shadow_fresh()))
            return eval_frame_of(ts, frame, throwflag);
        aipy_eval_replay(s, ts);
    }
    s->ts = ts;
    aipy_eval_sync(s, ts->cframe->current_frame);
    int d = s->depth;
    aipy_shadow_push(s, frame, frame->f_code, AIPY_EVENT);
    uint64_t serial = s->pushes;
    unsigned epoch = s->epoch;
    PyObject *r = eval_frame_of(ts, frame, throwflag);
    if (s->epoch == epoch && s->depth > d &&
        (d >= SHADOW_MAX_DEPTH || s->e[d].serial == serial))
        aipy_shadow_pop_to(s, d);
    return r;
}

static PyInterpreterState *eval_interp; /* where eval_cb was installed */

/* Our evaluator is installed while it follows calls or module calls; it
 * never replaces another one (torch.compile's). */
void aipy_eval_update(PyInterpreterState *interp)
{
    eval_interp = interp;
    int need =
        (aipy_tracer_on && aipy_tracer_mode == TRACER_MODE_EVAL) || aipy_module_calls_on;
    _PyFrameEvalFunction cur = _PyInterpreterState_GetEvalFrameFunc(interp);
    if (need && cur == _PyEval_EvalFrameDefault)
        _PyInterpreterState_SetEvalFrameFunc(interp, eval_cb);
    else if (!need && cur == eval_cb)
        _PyInterpreterState_SetEvalFrameFunc(interp, _PyEval_EvalFrameDefault);
}

int aipy_eval_hook_state(PyInterpreterState *interp)
{
    _PyFrameEvalFunction cur = _PyInterpreterState_GetEvalFrameFunc(interp);
    return cur == eval_cb ? AIPY_HOOK_OURS
           : cur == _PyEval_EvalFrameDefault ? AIPY_HOOK_NONE
                                              : AIPY_HOOK_OTHER;
}

#endif /* AIPY_EVAL_FRAME */

int aipy_want_eval_mode(PyInterpreterState *interp)
{
#ifdef AIPY_EVAL_FRAME
    const char *force = getenv("AIPROF_PY_TRACER");
    if (force && !strcmp(force, "profile"))
        return 0;
    _PyFrameEvalFunction cur = _PyInterpreterState_GetEvalFrameFunc(interp);
    return cur == eval_cb || cur == _PyEval_EvalFrameDefault;
#else
    (void)interp;
    return 0;
#endif
}

int aipy_eval_is_ours(void)
{
#ifdef AIPY_EVAL_FRAME
    /* The interpreter's field itself (what _PyInterpreterState_GetEvalFrameFunc
     * returns, NULL meaning the default): this is asked for every op with
     * with_modules, and a call into libpython's code is one more
     * instruction-cache line there. */
    return eval_interp &&
           __atomic_load_n(&eval_interp->eval_frame, __ATOMIC_RELAXED) == eval_cb;
#else
    return 0;
#endif
}
