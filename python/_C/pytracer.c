/*
 * pytracer.c — with_stack: python_function events and the Python call
 * stack of every recorded op; the per-thread shadow stacks, the profile-hook
 * mode, what the adapter reads, start and stop.
 *
 * A per-thread shadow stack (pytracer.h) follows the Python frames of its
 * thread.  Two ways of seeing calls feed it:
 *
 *   - eval-frame mode (CPython 3.11, eval_frame.c): our function is the
 *     interpreter's frame evaluator (PEP 523) and pushes, evaluates and
 *     pops each frame; the specialising interpreter keeps running;
 *   - profile mode (here; other versions, or when someone else owns the
 *     frame evaluator; AIPROF_PY_TRACER=profile forces it): a C profile
 *     hook (PyEval_SetProfile) on every thread.
 *
 * When the PyTorch adapter records an op it asks for the thread's stack
 * (aipy_tracer_current_stack), usually with the GIL released, so it reads
 * only C data: each entry holds its frame (alive while on the stack), an
 * immutable code_info and the caller's instruction offset at the call; a
 * position is a hash-consed stack_node whose text is made once
 * (pystack_text.c).  An op costs a live read of the innermost frame's
 * offset and, for a new position, one table lookup.
 *
 * Frames already running when tracing starts are replayed onto the shadow
 * stacks — the starting thread's at once, other threads' at their first
 * call — and get python_function events from then on, as torch's tracer
 * does; such an event begins no later than the ranges and ops its thread
 * opened in the trace before its first Python call was seen
 * (aip_pyfunc_push_running), since it was running around them.  In
 * eval-frame mode their returns are not seen: a replayed frame
 * that is no longer the caller of the next call (or of an op) has
 * returned, and its event ends there.  Events still open when the trace
 * stops end at the stop.
 *
 * Every Python call seen while recording is a python_function event
 * (aip_pyfunc_push/pop) named "file.py(first line): function".  C calls are
 * not.  Popping a frame (or unwinding past it) ends the events pushed since
 * its own push (aipy_pyfunc_pop_to), so pushes and pops stay paired through
 * exceptions and generator suspends.
 */
#include "pytracer.h"

#include <frameobject.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- python_function events (shared with nn_module_path.c) ----------- */

/* The trace pf_level counts events of, and the events this thread has open
 * in it.  initial-exec: in a dlopen()ed extension the default TLS model
 * costs a __tls_get_addr call per access, and these are read at every
 * Python call. */
#define TLS_IE __attribute__((tls_model("initial-exec")))
static __thread uint32_t pf_gen TLS_IE;
static __thread uint32_t pf_level TLS_IE;

static aipy_pyfunc_mark pyfunc_push(aip_string_id name, aip_string_id module, int running)
{
    uint32_t g = __atomic_load_n(&aip_recording_generation, __ATOMIC_RELAXED);
    if (!g || !name)
        return (aipy_pyfunc_mark){0, 0};
    if (pf_gen != g) { /* a new trace: the library's thread stack is new too */
        pf_gen = g;
        pf_level = 0;
    }
    aipy_pyfunc_mark m = {g, pf_level++};
    if (running)
        aip_pyfunc_push_running(name, module);
    else
        aip_pyfunc_push(name, module);
    return m;
}

aipy_pyfunc_mark aipy_pyfunc_push(aip_string_id name, aip_string_id module)
{
    return pyfunc_push(name, module, 0);
}

aipy_pyfunc_mark aipy_pyfunc_push_running(aip_string_id name, aip_string_id module)
{
    return pyfunc_push(name, module, 1);
}

void aipy_pyfunc_pop_to(aipy_pyfunc_mark m)
{
    if (!m.gen || m.gen != pf_gen ||
        m.gen != __atomic_load_n(&aip_recording_generation, __ATOMIC_RELAXED))
        return;
    while (pf_level > m.level) {
        pf_level--;
        aip_pyfunc_pop();
    }
}

/* ---- per-thread shadow stacks ---------------------------------------- */

unsigned aipy_tracer_epoch; /* changes at every start and stop */
int aipy_tracer_on;
int aipy_tracer_mode;
__thread shadow *aipy_tls_shadow __attribute__((tls_model("initial-exec")));
static pthread_key_t shadow_key;

static void shadow_free(void *p) { free(p); }

shadow *aipy_shadow_fresh(void)
{
    shadow *s = aipy_tls_shadow;
    if (!s) {
        s = malloc(sizeof *s);
        if (!s)
            return NULL;
        memset(s->nodes, 0, sizeof s->nodes);
        aipy_tls_shadow = s;
        pthread_setspecific(shadow_key, s); /* freed when the thread exits */
    }
    s->epoch = aipy_tracer_epoch;
    s->mode = aipy_tracer_mode;
    s->depth = 0;
    s->ts = NULL;
    s->last_node = NULL;
    return s;
}

/* The byte offset of the instruction a frame is at (or last ran). */
static int frame_lasti(const shadow *s, const void *frame)
{
#ifdef AIPY_EVAL_FRAME
    if (s->mode == TRACER_MODE_EVAL) {
        const _PyInterpreterFrame *f = frame;
        return _PyInterpreterFrame_LASTI(f) * (int)sizeof(_Py_CODEUNIT);
    }
#endif
    return PyFrame_GetLasti((PyFrameObject *)frame);
}

/* With the GIL: push `frame` running `code`; `event` makes it a
 * python_function event too. */
void aipy_shadow_push(shadow *s, const void *frame, PyCodeObject *code, int event)
{
    int d = s->depth++;
    if (d >= SHADOW_MAX_DEPTH)
        return; /* deeper frames are only counted, and are no events */
    frame_entry *e = &s->e[d];
    e->ci = aipy_code_info(code);
    /* aiprof's own frames (profile.step() and the collectors below it) stay
     * on the shadow stack but are no events: they are the profiler's. */
    e->pf = event && e->ci && !e->ci->own
                ? pyfunc_push(aipy_code_func_id(e->ci), 0, event == AIPY_EVENT_RUNNING)
                : (aipy_pyfunc_mark){0, 0};
    e->frame = frame;
    e->serial = ++s->pushes;
    e->caller_lasti = d > 0 ? frame_lasti(s, s->e[d - 1].frame) : -1;
    e->outer = NULL;
    e->outer_known = d == 0;
}

/* ---- profile mode ------------------------------------------------------ */

static void profile_push(shadow *s, PyFrameObject *frame, int event)
{
    PyCodeObject *code = PyFrame_GetCode(frame);
    aipy_shadow_push(s, frame, code, event);
    Py_DECREF(code);
}

static void profile_pop(shadow *s, PyFrameObject *frame)
{
    if (s->depth <= 0)
        return;
    if (s->depth <= SHADOW_MAX_DEPTH && s->e[s->depth - 1].frame != frame) {
        /* A missed return (an exception through C code): unwind to it. */
        for (int d = s->depth - 1; d >= 0; d--)
            if (s->e[d].frame == frame) {
                aipy_shadow_pop_to(s, d);
                return;
            }
        return; /* not ours: a frame entered before tracing without replay */
    }
    aipy_shadow_pop_to(s, s->depth - 1);
}

/* Push `frames` (a tuple, outermost first) onto the calling thread's stack. */
static void profile_replay(shadow *s, PyObject *frames)
{
    Py_ssize_t n = PyTuple_GET_SIZE(frames);
    for (Py_ssize_t i = 0; i < n; i++)
        profile_push(s, (PyFrameObject *)PyTuple_GET_ITEM(frames, i), AIPY_EVENT_RUNNING);
}

/* The running frames of `ts`, outermost first. */
static PyObject *thread_frames(PyThreadState *ts)
{
    PyObject *list = PyList_New(0);
    if (!list)
        return NULL;
    PyFrameObject *f = PyThreadState_GetFrame(ts);
    while (f) {
        if (PyList_Append(list, (PyObject *)f) < 0) {
            Py_DECREF(f);
            Py_DECREF(list);
            return NULL;
        }
        PyFrameObject *back = PyFrame_GetBack(f);
        Py_DECREF(f);
        f = back;
    }
    if (PyList_Reverse(list) < 0) {
        Py_DECREF(list);
        return NULL;
    }
    PyObject *t = PyList_AsTuple(list);
    Py_DECREF(list);
    return t;
}

/* The hook argument of threads that were running when tracing started. */
typedef struct {
    PyObject_HEAD
    PyObject *frames; /* tuple to replay at the thread's first event, or NULL */
    unsigned epoch;
} ReplayObject;

static void Replay_dealloc(ReplayObject *self)
{
    Py_XDECREF(self->frames);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject ReplayType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "aiprof._C._TracerReplay",
    .tp_basicsize = sizeof(ReplayObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)Replay_dealloc,
};

static int profile_cb(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg)
{
    if (what != PyTrace_CALL && what != PyTrace_RETURN)
        return 0;
    shadow *s = aipy_tls_shadow;
    if (!s || s->epoch != aipy_tracer_epoch) {
        if (!(s = aipy_shadow_fresh()))
            return 0;
        ReplayObject *r = (ReplayObject *)obj;
        if (r && r->frames && r->epoch == aipy_tracer_epoch) {
            profile_replay(s, r->frames);
            Py_CLEAR(r->frames);
        }
    }
    if (what == PyTrace_CALL)
        profile_push(s, frame, AIPY_EVENT);
    else
        profile_pop(s, frame);
    return 0;
}

/* Our hook still sees every call on this thread.  Another profiler
 * (torch.profiler with_stack, a debugger) may have replaced it; from then
 * on frames leave unseen, and the shadow stack's frame pointers must not be
 * read.  The thread's own PyThreadState is found without the GIL; its
 * profile function changes only under the GIL, by a pointer-sized store. */
static int profile_hook_is_ours(void)
{
    PyThreadState *ts = PyGILState_GetThisThreadState();
    return ts && __atomic_load_n(&ts->c_profilefunc, __ATOMIC_RELAXED) == profile_cb;
}

/* A profile function that is not ours belongs to another profiler (torch's
 * with_stack tracer, a debugger, cProfile): it is never replaced or
 * removed — CPython has one slot, and taking it would break that tool. */
static int foreign_hook(PyThreadState *ts)
{
    return ts->c_profilefunc && ts->c_profilefunc != profile_cb;
}

/* Profile mode: the hook on every thread whose slot is free (or ours). */
static PyObject *profile_start(PyThreadState *me)
{
    long skipped = 0;
    for (PyThreadState *ts = PyInterpreterState_ThreadHead(me->interp); ts;
         ts = PyThreadState_Next(ts)) {
        if (foreign_hook(ts)) {
            skipped++;
            continue;
        }
        PyObject *frames = thread_frames(ts);
        if (!frames)
            return NULL;
        if (ts == me) {
            shadow *s = aipy_shadow_fresh();
            if (s)
                profile_replay(s, frames);
            Py_DECREF(frames);
            PyEval_SetProfile(profile_cb, NULL);
            continue;
        }
        ReplayObject *r = PyObject_New(ReplayObject, &ReplayType);
        if (!r) {
            Py_DECREF(frames);
            return NULL;
        }
        r->frames = frames;
        r->epoch = aipy_tracer_epoch;
        int rc = _PyEval_SetProfile(ts, profile_cb, (PyObject *)r);
        Py_DECREF(r);
        if (rc < 0)
            return NULL;
    }
    return PyLong_FromLong(skipped);
}

/* ---- what the adapter calls (no GIL) --------------------------------- */

/* aipy_stack_node through the thread's cache (pytracer.h). */
static const stack_node *node_of(shadow *s, const stack_node *parent, const code_info *ci,
                                 int lasti)
{
    uint64_t h = ((uintptr_t)parent ^ ((uintptr_t)ci << 3)) * 0x9E3779B97F4A7C15ull;
    node_cache_slot *c = &s->nodes[((h >> 40) + (unsigned)lasti) & (NODE_CACHE_SLOTS - 1)];
    if (c->node && c->parent == parent && c->ci == ci && c->lasti == lasti)
        return c->node;
    const stack_node *n = aipy_stack_node(parent, ci, lasti);
    if (n) {
        c->parent = parent;
        c->ci = ci;
        c->lasti = lasti;
        c->node = n;
    }
    return n;
}

static const stack_node *outer_of(shadow *s, int k)
{
    int j = k;
    while (j > 0 && !s->e[j].outer_known)
        j--;
    const stack_node *node = s->e[j].outer;
    for (int i = j + 1; i <= k; i++) {
        frame_entry *below = &s->e[i - 1];
        node = below->ci ? node_of(s, node, below->ci, s->e[i].caller_lasti) : node;
        s->e[i].outer = node;
        s->e[i].outer_known = 1;
    }
    return node;
}

/* The shadow stack is right about the thread's frames now: in eval-frame
 * mode after dropping frames that returned unseen, in profile mode while
 * our hook is still the thread's. */
static int shadow_current(shadow *s)
{
#ifdef AIPY_EVAL_FRAME
    if (s->mode == TRACER_MODE_EVAL) {
        if (s->depth > SHADOW_MAX_DEPTH) /* the counted-only frames are above */
            return 1;
        if (!s->ts)
            return 0;
        const _PyInterpreterFrame *cur = s->ts->cframe->current_frame;
        if (s->depth > 0 && s->e[s->depth - 1].frame == cur)
            return 1; /* the usual case, without a call */
        aipy_eval_sync(s, cur);
        return s->depth > 0 && s->e[s->depth - 1].frame == cur;
    }
#endif
    return profile_hook_is_ours();
}

/* The position of entry `top` at `lasti` when it is not the last answer:
 * through the thread's node cache, the frames below it first. */
static __attribute__((noinline)) const stack_node *position_of(shadow *s, int top, int lasti)
{
    frame_entry *e = &s->e[top];
    const stack_node *n = node_of(s, outer_of(s, top), e->ci, lasti);
    if (n) {
        s->last_node = n;
        s->last_serial = e->serial;
        s->last_lasti = lasti;
    }
    return n;
}

const char *aipy_tracer_current_stack(aip_string_id *id)
{
    shadow *s = aipy_tls_shadow;
    if (!s || !__atomic_load_n(&aipy_tracer_on, __ATOMIC_RELAXED) ||
        s->epoch != aipy_tracer_epoch || s->depth <= 0 || !shadow_current(s))
        return NULL;
    int top = (s->depth < SHADOW_MAX_DEPTH ? s->depth : SHADOW_MAX_DEPTH) - 1;
    frame_entry *e = &s->e[top];
    if (!e->ci)
        return NULL;
    int lasti = frame_lasti(s, e->frame);
    const stack_node *n = s->last_node;
    if (!n || s->last_serial != e->serial || s->last_lasti != lasti) {
        n = position_of(s, top, lasti);
        if (!n)
            return NULL;
    }
    *id = n->id;
    return n->text;
}

/* ---- start / stop ------------------------------------------------------ */

/* tracer_start() -> int: start following calls; returns how many threads
 * kept another profiler's hook (profile mode), 0 in eval-frame mode. */
static PyObject *py_tracer_start(PyObject *self, PyObject *unused)
{
    PyThreadState *me = PyThreadState_Get();
    __atomic_store_n(&aipy_tracer_epoch, aipy_tracer_epoch + 1, __ATOMIC_RELAXED);
    PyObject *r;
#ifdef AIPY_EVAL_FRAME
    if (aipy_want_eval_mode(me->interp)) {
        aipy_tracer_mode = TRACER_MODE_EVAL;
        shadow *s = aipy_shadow_fresh();
        if (s) {
            s->ts = me;
            aipy_eval_replay(s, me);
        }
        r = PyLong_FromLong(0);
    } else
#endif
    {
        aipy_tracer_mode = TRACER_MODE_PROFILE;
        r = profile_start(me);
    }
    if (r)
        __atomic_store_n(&aipy_tracer_on, 1, __ATOMIC_RELAXED);
#ifdef AIPY_EVAL_FRAME
    aipy_eval_update(me->interp);
#endif
    return r;
}

static PyObject *py_tracer_own_dir(PyObject *self, PyObject *dir)
{
    if (aipy_set_own_dir(dir) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_tracer_stop(PyObject *self, PyObject *unused)
{
    PyThreadState *me = PyThreadState_Get();
    __atomic_store_n(&aipy_tracer_on, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&aipy_tracer_epoch, aipy_tracer_epoch + 1, __ATOMIC_RELAXED);
#ifdef AIPY_EVAL_FRAME
    aipy_eval_update(me->interp);
#endif
    for (PyThreadState *ts = PyInterpreterState_ThreadHead(me->interp); ts;
         ts = PyThreadState_Next(ts))
        if (ts->c_profilefunc == profile_cb && _PyEval_SetProfile(ts, NULL, NULL) < 0)
            return NULL;
    Py_RETURN_NONE;
}

/* threading.setprofile() target (profile mode): runs once in each thread
 * started while tracing, replaces itself by the C hook and replays the
 * thread's frames. */
static PyObject *py_tracer_thread_hook(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    if (!aipy_tracer_on || aipy_tracer_mode != TRACER_MODE_PROFILE) {
        PyEval_SetProfile(NULL, NULL);
        Py_RETURN_NONE;
    }
    PyObject *frames = thread_frames(PyThreadState_Get());
    if (!frames)
        return NULL;
    shadow *s = aipy_shadow_fresh();
    if (s)
        profile_replay(s, frames);
    Py_DECREF(frames);
    PyEval_SetProfile(profile_cb, NULL);
    Py_RETURN_NONE;
}

/* tracer_hook_state() -> int: 0 our hook is in place on this thread (or
 * the frame evaluator is ours), 1 no hook, 2 another one replaced ours. */
static PyObject *py_tracer_hook_state(PyObject *self, PyObject *unused)
{
    PyThreadState *ts = PyThreadState_Get();
#ifdef AIPY_EVAL_FRAME
    if (aipy_tracer_mode == TRACER_MODE_EVAL)
        return PyLong_FromLong(aipy_eval_hook_state(ts->interp));
#endif
    return PyLong_FromLong(ts->c_profilefunc == profile_cb ? AIPY_HOOK_OURS
                           : ts->c_profilefunc           ? AIPY_HOOK_OTHER
                                                         : AIPY_HOOK_NONE);
}

static PyObject *py_tracer_mode(PyObject *self, PyObject *unused)
{
    int mode = aipy_tracer_on ? aipy_tracer_mode : 0;
    if (!mode) /* not following calls now: what a start would choose */
        mode = aipy_want_eval_mode(PyThreadState_Get()->interp) ? TRACER_MODE_EVAL
                                                                : TRACER_MODE_PROFILE;
    return PyUnicode_FromString(mode == TRACER_MODE_EVAL ? "eval_frame" : "profile");
}

static PyObject *py_tracer_stats(PyObject *self, PyObject *unused)
{
    return aipy_stack_text_stats();
}

static PyMethodDef methods[] = {
    {"tracer_start", py_tracer_start, METH_NOARGS,
     "tracer_start() -> int: start following Python calls on every thread; returns the "
     "number of threads skipped because another profiler holds their hook."},
    {"tracer_stop", py_tracer_stop, METH_NOARGS, "tracer_stop(): stop following calls."},
    {"tracer_own_dir", py_tracer_own_dir, METH_O,
     "tracer_own_dir(path): calls of code under path (aiprof's package) are no "
     "python_function events."},
    {"_tracer_thread_hook", (PyCFunction)(void (*)(void))py_tracer_thread_hook, METH_FASTCALL,
     "threading.setprofile target used while tracing in profile mode."},
    {"tracer_hook_state", py_tracer_hook_state, METH_NOARGS,
     "tracer_hook_state() -> 0 (ours), 1 (none) or 2 (another profiler's)."},
    {"tracer_mode", py_tracer_mode, METH_NOARGS,
     "tracer_mode() -> 'eval_frame' or 'profile': how calls are followed (or would be, "
     "by the next start)."},
    {"tracer_stats", py_tracer_stats, METH_NOARGS,
     "tracer_stats() -> dict: sizes of the tracer's caches."},
    {NULL, NULL, 0, NULL},
};

int aipy_tracer_init(PyObject *module)
{
    if (pthread_key_create(&shadow_key, shadow_free) != 0) {
        PyErr_SetString(PyExc_RuntimeError, "cannot create the tracer's thread key");
        return -1;
    }
    if (PyType_Ready(&ReplayType) < 0)
        return -1;
    return PyModule_AddFunctions(module, methods);
}
