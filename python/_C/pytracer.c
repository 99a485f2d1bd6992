/*
 * pytracer.c — with_stack: the Python call stack of every recorded op.
 *
 * A C profile hook (PyEval_SetProfile, on every thread) keeps a shadow
 * stack of Python frames per thread.  When the PyTorch adapter records an
 * op it asks for the thread's stack as text (aipy_tracer_current_stack).
 * That call usually runs with the GIL released, so it reads only C data:
 *
 *   - each shadow entry holds its frame (alive while on the stack), an
 *     immutable code_info (file and function name as UTF-8, made under the
 *     GIL at the call), and the caller's instruction offset at the call;
 *   - a stack position is a stack_node (parent node, code, instruction
 *     offset), hash-consed in a global table, whose text is built once.
 *     An op costs one live read of the innermost frame's instruction
 *     offset and one table lookup, however deep the stack; the text of a
 *     stack position seen before is never rebuilt.
 *
 * Frames already running when tracing starts are replayed onto the shadow
 * stacks: the current thread's at once, other threads' at their first
 * profile event (the frames travel in the per-thread hook argument), so a
 * shadow stack is only ever written by its own thread.  Threads started
 * later are caught by threading.setprofile(_tracer_thread_hook).
 *
 * Frames are written "file.py(line): function", innermost first, joined by
 * ";\n" — the aip_op_info.call_stack convention.
 *
 * Every Python call seen while recording is also a python_function event
 * (aip_pyfunc_push/pop, torch's with_stack layer) named
 * "file.py(first line): function", interned once per code object.  Frames
 * replayed at the start were entered before the trace and are not events;
 * C calls are not either.  A frame popped (or unwound past) ends the events
 * pushed since its own push (aipy_pyfunc_pop_to), so pushes and pops stay
 * paired through exceptions and generator suspends.
 */
#include "aiprof_C.h"

#include <frameobject.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 128
#define MAX_NODE_BYTES (256u << 20) /* stop making new stack texts beyond this */

/* ---- code objects → names ------------------------------------------- */

typedef struct code_info {
    PyObject *code; /* strong: keeps the address from being reused */
    char *filename, *name;
    aip_string_id func_id; /* "file.py(first line): name", 0 until first needed */
    struct code_info *next;
} code_info;

static code_info **code_tab; /* touched only with the GIL held */
static size_t code_cap, code_n;

static size_t ptr_hash(const void *p)
{
    uintptr_t x = (uintptr_t)p;
    x ^= x >> 17;
    x *= 0xed5ad4bbu;
    x ^= x >> 11;
    return (size_t)x;
}

static char *utf8_dup(PyObject *s)
{
    const char *u = s && PyUnicode_Check(s) ? PyUnicode_AsUTF8(s) : NULL;
    if (!u) {
        PyErr_Clear();
        u = "?";
    }
    return strdup(u);
}

static int code_grow(void)
{
    size_t cap = code_cap ? code_cap * 2 : 1024;
    code_info **t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < code_cap; i++)
        for (code_info *c = code_tab[i], *nx; c; c = nx) {
            nx = c->next;
            size_t h = ptr_hash(c->code) & (cap - 1);
            c->next = t[h];
            t[h] = c;
        }
    free(code_tab);
    code_tab = t;
    code_cap = cap;
    return 0;
}

static const code_info *code_info_get(PyCodeObject *code)
{
    if (code_cap) {
        for (code_info *c = code_tab[ptr_hash(code) & (code_cap - 1)]; c; c = c->next)
            if (c->code == (PyObject *)code)
                return c;
    }
    if (code_n * 2 >= code_cap && code_grow())
        return NULL;
    code_info *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->filename = utf8_dup(code->co_filename);
    c->name = utf8_dup(code->co_name);
    if (!c->filename || !c->name) {
        free(c->filename);
        free(c->name);
        free(c);
        return NULL;
    }
    Py_INCREF(code);
    c->code = (PyObject *)code;
    size_t h = ptr_hash(code) & (code_cap - 1);
    c->next = code_tab[h];
    code_tab[h] = c;
    code_n++;
    return c;
}

/* The python_function name of a code object, interned at its first call. */
static aip_string_id code_func_id(code_info *c)
{
    if (!c->func_id) {
        int line = ((PyCodeObject *)c->code)->co_firstlineno;
        size_t cap = strlen(c->filename) + strlen(c->name) + 32;
        char *text = malloc(cap);
        if (!text)
            return 0;
        snprintf(text, cap, "%s(%d): %s", c->filename, line, c->name);
        c->func_id = aip_intern(text);
        free(text);
    }
    return c->func_id;
}

/* ---- python_function events (shared with modules.c) ------------------ */

static __thread uint32_t pf_gen;   /* the trace pf_level counts events of */
static __thread uint32_t pf_level; /* events this thread has open in it */

aipy_pyfunc_mark aipy_pyfunc_push(aip_string_id name, aip_string_id module)
{
    uint32_t g = __atomic_load_n(&aip_recording_generation, __ATOMIC_RELAXED);
    if (!g || !name)
        return (aipy_pyfunc_mark){0, 0};
    if (pf_gen != g) { /* a new trace: the library's thread stack is new too */
        pf_gen = g;
        pf_level = 0;
    }
    aipy_pyfunc_mark m = {g, pf_level++};
    aip_pyfunc_push(name, module);
    return m;
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

/* ---- stack positions ------------------------------------------------ */

typedef struct stack_node {
    const struct stack_node *parent; /* outer frames, NULL at the root */
    const code_info *ci;
    int lasti;
    aip_string_id id;                /* the text, interned once */
    char *text;
    struct stack_node *next;
} stack_node;

static pthread_mutex_t node_lock = PTHREAD_MUTEX_INITIALIZER;
static stack_node **node_tab;
static size_t node_cap, node_n, node_bytes;
static int node_full_warned;

static size_t node_hash(const stack_node *parent, const code_info *ci, int lasti)
{
    return ptr_hash(parent) * 31u + ptr_hash(ci) * 7u + (size_t)lasti;
}

static int node_grow(void)
{
    size_t cap = node_cap ? node_cap * 2 : 4096;
    stack_node **t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < node_cap; i++)
        for (stack_node *n = node_tab[i], *nx; n; n = nx) {
            nx = n->next;
            size_t h = node_hash(n->parent, n->ci, n->lasti) & (cap - 1);
            n->next = t[h];
            t[h] = n;
        }
    free(node_tab);
    node_tab = t;
    node_cap = cap;
    return 0;
}

/* Only immutable data is read: the code object's line table, code_info
 * strings and parent texts.  Caller holds node_lock. */
static const stack_node *node_make(const stack_node *parent, const code_info *ci, int lasti)
{
    if (node_bytes >= MAX_NODE_BYTES) {
        node_full_warned = 1;
        return NULL;
    }
    if (node_n * 2 >= node_cap && node_grow())
        return NULL;
    int line = PyCode_Addr2Line((PyCodeObject *)ci->code, lasti);
    size_t plen = parent ? strlen(parent->text) : 0;
    size_t cap = strlen(ci->filename) + strlen(ci->name) + 32 + plen;
    stack_node *n = malloc(sizeof *n + cap);
    if (!n)
        return NULL;
    n->text = (char *)(n + 1);
    int k = snprintf(n->text, cap, "%s(%d): %s", ci->filename, line, ci->name);
    if (parent && k > 0 && (size_t)k + 2 + plen < cap) {
        memcpy(n->text + k, ";\n", 2);
        memcpy(n->text + k + 2, parent->text, plen + 1);
    }
    n->parent = parent;
    n->ci = ci;
    n->lasti = lasti;
    n->id = aip_intern(n->text);
    size_t h = node_hash(parent, ci, lasti) & (node_cap - 1);
    n->next = node_tab[h];
    node_tab[h] = n;
    node_n++;
    node_bytes += sizeof *n + cap;
    return n;
}

static const stack_node *node_get(const stack_node *parent, const code_info *ci, int lasti)
{
    if (node_cap)
        for (stack_node *n = node_tab[node_hash(parent, ci, lasti) & (node_cap - 1)]; n;
             n = n->next)
            if (n->parent == parent && n->ci == ci && n->lasti == lasti)
                return n;
    return node_make(parent, ci, lasti);
}

/* ---- per-thread shadow stacks ---------------------------------------- */

typedef struct frame_entry {
    PyFrameObject *frame;      /* borrowed: alive while on the stack */
    uint64_t serial;           /* which push this is (see shadow.last_*) */
    const code_info *ci;       /* NULL if it could not be made */
    int caller_lasti;          /* the caller's offset when this frame was called */
    const stack_node *outer;   /* node of the frames below, once computed */
    int outer_known;
    aipy_pyfunc_mark pf;       /* its python_function event, gen 0 = none */
} frame_entry;

typedef struct shadow {
    unsigned epoch;
    int depth; /* may exceed MAX_DEPTH: deeper frames are only counted */
    uint64_t pushes;
    /* The last answer: one Python line often runs several ops (F.linear →
     * aten::linear, aten::t, aten::addmm), which then share a stack. */
    uint64_t last_serial;
    int last_lasti;
    const struct stack_node *last_node;
    frame_entry e[MAX_DEPTH];
} shadow;

static unsigned tracer_epoch; /* changes at every start and stop */
static int tracer_on;
static __thread shadow *tls_shadow __attribute__((tls_model("initial-exec")));
static pthread_key_t shadow_key;

static void shadow_free(void *p) { free(p); }

static shadow *shadow_fresh(void)
{
    shadow *s = tls_shadow;
    if (!s) {
        s = malloc(sizeof *s);
        if (!s)
            return NULL;
        tls_shadow = s;
        pthread_setspecific(shadow_key, s); /* freed when the thread exits */
    }
    s->epoch = tracer_epoch;
    s->depth = 0;
    s->last_node = NULL;
    return s;
}

static void shadow_push(shadow *s, PyFrameObject *frame, int event)
{
    int d = s->depth++;
    if (d >= MAX_DEPTH)
        return; /* deeper frames are only counted, and are no events */
    frame_entry *e = &s->e[d];
    PyCodeObject *code = PyFrame_GetCode(frame);
    e->ci = code_info_get(code);
    Py_DECREF(code);
    e->pf = event && e->ci ? aipy_pyfunc_push(code_func_id((code_info *)e->ci), 0)
                           : (aipy_pyfunc_mark){0, 0};
    e->frame = frame;
    e->serial = ++s->pushes;
    e->caller_lasti = d > 0 ? PyFrame_GetLasti(s->e[d - 1].frame) : -1;
    e->outer = NULL;
    e->outer_known = d == 0;
}

/* End the python_function events of entries [d, depth) (the first of them
 * that has one was pushed before all the others' events). */
static void shadow_end_events(shadow *s, int d)
{
    int top = s->depth < MAX_DEPTH ? s->depth : MAX_DEPTH;
    for (int i = d; i < top; i++)
        if (s->e[i].pf.gen) {
            aipy_pyfunc_pop_to(s->e[i].pf);
            return;
        }
}

static void shadow_pop(shadow *s, PyFrameObject *frame)
{
    if (s->depth <= 0)
        return;
    if (s->depth <= MAX_DEPTH && s->e[s->depth - 1].frame != frame) {
        /* A missed return (an exception through C code): unwind to it. */
        for (int d = s->depth - 1; d >= 0; d--)
            if (s->e[d].frame == frame) {
                shadow_end_events(s, d);
                s->depth = d;
                return;
            }
        return; /* not ours: a frame entered before tracing without replay */
    }
    shadow_end_events(s, s->depth - 1);
    s->depth--;
}

/* Push `frames` (a tuple, outermost first) onto the calling thread's stack. */
static void shadow_replay(shadow *s, PyObject *frames)
{
    Py_ssize_t n = PyTuple_GET_SIZE(frames);
    for (Py_ssize_t i = 0; i < n; i++)
        shadow_push(s, (PyFrameObject *)PyTuple_GET_ITEM(frames, i), 0);
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
    shadow *s = tls_shadow;
    if (!s || s->epoch != tracer_epoch) {
        if (!(s = shadow_fresh()))
            return 0;
        ReplayObject *r = (ReplayObject *)obj;
        if (r && r->frames && r->epoch == tracer_epoch) {
            shadow_replay(s, r->frames);
            Py_CLEAR(r->frames);
        }
    }
    if (what == PyTrace_CALL)
        shadow_push(s, frame, 1);
    else
        shadow_pop(s, frame);
    return 0;
}

/* ---- what the adapter calls (no GIL) --------------------------------- */

static const stack_node *outer_of(shadow *s, int k)
{
    int j = k;
    while (j > 0 && !s->e[j].outer_known)
        j--;
    const stack_node *node = s->e[j].outer;
    for (int i = j + 1; i <= k; i++) {
        frame_entry *below = &s->e[i - 1];
        node = below->ci ? node_get(node, below->ci, s->e[i].caller_lasti) : node;
        s->e[i].outer = node;
        s->e[i].outer_known = 1;
    }
    return node;
}

/* Our hook still sees every call on this thread.  Another profiler
 * (torch.profiler with_stack, a debugger) may have replaced it; from then
 * on frames leave unseen, and the shadow stack's frame pointers must not be
 * read.  The thread's own PyThreadState is found without the GIL; its
 * profile function changes only under the GIL, by a pointer-sized store. */
static int hook_is_ours(void)
{
    PyThreadState *ts = PyGILState_GetThisThreadState();
    return ts && __atomic_load_n(&ts->c_profilefunc, __ATOMIC_RELAXED) == profile_cb;
}

const char *aipy_tracer_current_stack(aip_string_id *id)
{
    shadow *s = tls_shadow;
    if (!s || !__atomic_load_n(&tracer_on, __ATOMIC_RELAXED) || s->epoch != tracer_epoch ||
        s->depth <= 0 || !hook_is_ours())
        return NULL;
    int top = (s->depth < MAX_DEPTH ? s->depth : MAX_DEPTH) - 1;
    frame_entry *e = &s->e[top];
    if (!e->ci)
        return NULL;
    int lasti = PyFrame_GetLasti(e->frame);
    const stack_node *n;
    if (s->last_node && s->last_serial == e->serial && s->last_lasti == lasti) {
        n = s->last_node;
    } else {
        pthread_mutex_lock(&node_lock);
        n = node_get(outer_of(s, top), e->ci, lasti);
        pthread_mutex_unlock(&node_lock);
        if (!n)
            return NULL;
        s->last_node = n;
        s->last_serial = e->serial;
        s->last_lasti = lasti;
    }
    *id = n->id;
    return n->text;
}

/* ---- start / stop ------------------------------------------------------ */

/* A profile function that is not ours belongs to another profiler (torch's
 * with_stack tracer, a debugger, cProfile): it is never replaced or
 * removed — CPython has one slot, and taking it would break that tool. */
static int foreign_hook(PyThreadState *ts)
{
    return ts->c_profilefunc && ts->c_profilefunc != profile_cb;
}

/* tracer_start() -> int: install the hook on every thread whose slot is
 * free (or ours); returns how many threads kept another profiler's hook. */
static PyObject *py_tracer_start(PyObject *self, PyObject *unused)
{
    PyThreadState *me = PyThreadState_Get();
    long skipped = 0;
    __atomic_store_n(&tracer_epoch, tracer_epoch + 1, __ATOMIC_RELAXED);
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
            shadow *s = shadow_fresh();
            if (s)
                shadow_replay(s, frames);
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
        r->epoch = tracer_epoch;
        int rc = _PyEval_SetProfile(ts, profile_cb, (PyObject *)r);
        Py_DECREF(r);
        if (rc < 0)
            return NULL;
    }
    __atomic_store_n(&tracer_on, 1, __ATOMIC_RELAXED);
    return PyLong_FromLong(skipped);
}

static PyObject *py_tracer_stop(PyObject *self, PyObject *unused)
{
    PyThreadState *me = PyThreadState_Get();
    __atomic_store_n(&tracer_on, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&tracer_epoch, tracer_epoch + 1, __ATOMIC_RELAXED);
    for (PyThreadState *ts = PyInterpreterState_ThreadHead(me->interp); ts;
         ts = PyThreadState_Next(ts))
        if (ts->c_profilefunc == profile_cb && _PyEval_SetProfile(ts, NULL, NULL) < 0)
            return NULL;
    Py_RETURN_NONE;
}

/* threading.setprofile() target: runs once in each thread started while
 * tracing, replaces itself by the C hook and replays the thread's frames. */
static PyObject *py_tracer_thread_hook(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    if (!tracer_on) {
        PyEval_SetProfile(NULL, NULL);
        Py_RETURN_NONE;
    }
    PyObject *frames = thread_frames(PyThreadState_Get());
    if (!frames)
        return NULL;
    shadow *s = shadow_fresh();
    if (s)
        shadow_replay(s, frames);
    Py_DECREF(frames);
    PyEval_SetProfile(profile_cb, NULL);
    Py_RETURN_NONE;
}

/* tracer_hook_state() -> int: 0 our hook is on this thread, 1 no hook,
 * 2 another profile function replaced ours. */
static PyObject *py_tracer_hook_state(PyObject *self, PyObject *unused)
{
    PyThreadState *ts = PyThreadState_Get();
    return PyLong_FromLong(ts->c_profilefunc == profile_cb ? 0 : ts->c_profilefunc ? 2 : 1);
}

static PyObject *py_tracer_stats(PyObject *self, PyObject *unused)
{
    pthread_mutex_lock(&node_lock);
    PyObject *r = Py_BuildValue("{s:n,s:n,s:n,s:O}", "code_objects", (Py_ssize_t)code_n,
                                "stack_nodes", (Py_ssize_t)node_n, "stack_bytes",
                                (Py_ssize_t)node_bytes, "full",
                                node_full_warned ? Py_True : Py_False);
    pthread_mutex_unlock(&node_lock);
    return r;
}

static PyMethodDef methods[] = {
    {"tracer_start", py_tracer_start, METH_NOARGS,
     "tracer_start() -> int: install the call-stack hook on every thread without another "
     "profiler's hook; returns the number of threads skipped."},
    {"tracer_stop", py_tracer_stop, METH_NOARGS,
     "tracer_stop(): remove the call-stack hook from every thread."},
    {"_tracer_thread_hook", (PyCFunction)(void (*)(void))py_tracer_thread_hook, METH_FASTCALL,
     "threading.setprofile target used while tracing."},
    {"tracer_hook_state", py_tracer_hook_state, METH_NOARGS,
     "tracer_hook_state() -> 0 (ours), 1 (none) or 2 (another profiler's)."},
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
