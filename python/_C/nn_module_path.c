/*
 * nn_module_path.c — with_modules: the nn.Module path of every recorded op.
 *
 * Modules are entered and left (aipy_module_enter / aipy_module_leave)
 * from one of two places while a profile with with_modules records:
 *
 *   - the frame evaluator (eval_frame.c, nn_module_calls.c; CPython 3.11):
 *     every frame of nn.Module._call_impl enters its `self` and leaves it
 *     when the frame ends, raising or not.  No Python hook is installed, so torch keeps
 *     the fast path of _call_impl (global hooks send every module call of
 *     the program down its slow path, ~1.5 us each);
 *   - otherwise torch's global forward pre-hook and forward hook
 *     (module_pre_hook / module_hook).
 *
 * They keep a per-thread stack of the modules being run; the PyTorch
 * adapter reads the innermost path (aipy_modules_current_path) without the
 * GIL: "nn.Module: MLP_0;nn.Module: Linear_1" — outermost first, each
 * module named by its class and a per-class index in order of first use,
 * as torch's Python tracer names modules.
 *
 * A training loop enters the same modules under the same parents at every
 * step, so each (parent path, module) pair is made once per profile: its
 * path text, interned id and the module's event name id live in a table
 * (with the GIL), and entering a module costs one lookup.  A profile's
 * texts are freed only when the profile after it starts, so an adapter
 * still reading one on another thread never reads freed memory.
 *
 * A forward that raises skips its forward hook; the next hook of an outer
 * module unwinds past it, so the stack heals at the next return (frames
 * always leave).
 *
 * Each module run is also a python_function event named after the module
 * alone ("nn.Module: Linear_0", its string id also the module id), from
 * the pre-hook to the hook; unwinding ends the events of the modules
 * unwound (aipy_pyfunc_pop_to).
 */
#include "aiprof_C.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 128

typedef struct mod_entry {
    PyObject *module;    /* borrowed; identity only */
    const char *path;    /* owned by the path table */
    aip_string_id id;    /* the path's string id */
    aipy_pyfunc_mark pf; /* its python_function event */
} mod_entry;

typedef struct mod_stack {
    unsigned epoch;
    int depth;
    mod_entry e[MAX_DEPTH];
} mod_stack;

/* (parent path id, module) → the module's path under that parent. */
typedef struct path_slot {
    PyObject *module; /* NULL = empty; identity only */
    aip_string_id parent, id, name_id;
    char *text;
} path_slot;

typedef struct path_table {
    path_slot *slots;
    size_t cap, used;
} path_table;

static unsigned modules_epoch;
static int modules_on;
static __thread mod_stack *tls_mods __attribute__((tls_model("initial-exec")));
static pthread_key_t mods_key;
static PyObject *names;         /* {id(module): bytes name} */
static PyObject *class_counts;  /* {class name: next index} */
static path_table paths, retired_paths; /* this profile's; the previous one's */

static void stack_clear(mod_stack *s) { s->depth = 0; }

static void stack_free(void *p) { free(p); }

static void paths_free(path_table *t)
{
    for (size_t i = 0; i < t->cap; i++)
        free(t->slots[i].text);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

static size_t path_hash(PyObject *module, aip_string_id parent, size_t cap)
{
    uint64_t h = ((uint64_t)(uintptr_t)module >> 4) * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t)parent * 0xC2B2AE3D27D4EB4Full;
    return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

static path_slot *paths_find(PyObject *module, aip_string_id parent)
{
    if (!paths.cap)
        return NULL;
    for (size_t i = path_hash(module, parent, paths.cap);; i = (i + 1) & (paths.cap - 1)) {
        path_slot *e = &paths.slots[i];
        if (!e->module)
            return NULL;
        if (e->module == module && e->parent == parent)
            return e;
    }
}

/* A free slot for a new pair (the table grows at half full). */
static path_slot *paths_add(PyObject *module, aip_string_id parent)
{
    if ((paths.used + 1) * 2 > paths.cap) {
        size_t cap = paths.cap ? paths.cap * 2 : 256;
        path_slot *slots = calloc(cap, sizeof *slots);
        if (!slots)
            return NULL;
        for (size_t i = 0; i < paths.cap; i++) {
            path_slot *e = &paths.slots[i];
            if (!e->module)
                continue;
            size_t j = path_hash(e->module, e->parent, cap);
            while (slots[j].module)
                j = (j + 1) & (cap - 1);
            slots[j] = *e;
        }
        free(paths.slots);
        paths.slots = slots;
        paths.cap = cap;
    }
    size_t i = path_hash(module, parent, paths.cap);
    while (paths.slots[i].module)
        i = (i + 1) & (paths.cap - 1);
    paths.used++;
    return &paths.slots[i];
}

/* The calling thread's stack for this profile; entries left from a
 * previous profile are dropped. */
static mod_stack *stack_get(void)
{
    mod_stack *s = tls_mods;
    if (!s) {
        s = calloc(1, sizeof *s);
        if (!s)
            return NULL;
        tls_mods = s;
        pthread_setspecific(mods_key, s);
        s->epoch = modules_epoch;
    }
    if (s->epoch != modules_epoch) {
        stack_clear(s);
        s->epoch = modules_epoch;
    }
    return s;
}

static PyObject *module_name(PyObject *module)
{
    PyObject *key = PyLong_FromVoidPtr(module);
    if (!key)
        return NULL;
    PyObject *name = PyDict_GetItemWithError(names, key);
    if (name) {
        Py_DECREF(key);
        return name; /* borrowed */
    }
    if (PyErr_Occurred()) {
        Py_DECREF(key);
        return NULL;
    }
    const char *cls = _PyType_Name(Py_TYPE(module));
    PyObject *count = PyDict_GetItemString(class_counts, cls);
    long idx = count ? PyLong_AsLong(count) : 0;
    PyObject *next = PyLong_FromLong(idx + 1);
    name = PyBytes_FromFormat("nn.Module: %s_%ld", cls, idx);
    if (!next || !name || PyDict_SetItemString(class_counts, cls, next) < 0 ||
        PyDict_SetItem(names, key, name) < 0) {
        Py_XDECREF(next);
        Py_XDECREF(name);
        Py_DECREF(key);
        return NULL;
    }
    Py_DECREF(next);
    Py_DECREF(key);
    Py_DECREF(name); /* the dict holds it */
    return name;
}

/* The path slot of `module` under the entry `parent` (NULL: outermost),
 * made on first use; NULL with a Python error set on failure. */
static const path_slot *path_of(PyObject *module, const mod_entry *parent)
{
    aip_string_id parent_id = parent ? parent->id : 0;
    path_slot *e = paths_find(module, parent_id);
    if (e)
        return e;
    PyObject *name = module_name(module);
    if (!name)
        return NULL;
    const char *nm = PyBytes_AS_STRING(name);
    size_t nlen = (size_t)PyBytes_GET_SIZE(name);
    size_t plen = parent ? strlen(parent->path) : 0;
    char *text = malloc(plen + 1 + nlen + 1);
    if (!text) {
        PyErr_NoMemory();
        return NULL;
    }
    if (parent) {
        memcpy(text, parent->path, plen);
        text[plen++] = ';';
    }
    memcpy(text + plen, nm, nlen + 1);
    e = paths_add(module, parent_id);
    if (!e) {
        free(text);
        PyErr_NoMemory();
        return NULL;
    }
    e->module = module;
    e->parent = parent_id;
    e->text = text;
    e->id = aip_intern(text);
    e->name_id = aip_intern(nm);
    return e;
}

int aipy_module_enter(PyObject *module)
{
    if (!modules_on)
        return 0;
    mod_stack *s = stack_get();
    if (!s)
        return 0;
    int d = s->depth++;
    if (d >= MAX_DEPTH)
        return 0;
    const path_slot *p = path_of(module, d > 0 ? &s->e[d - 1] : NULL);
    if (!p) {
        s->depth--;
        return -1;
    }
    s->e[d].module = module;
    s->e[d].path = p->text;
    s->e[d].id = p->id;
    s->e[d].pf = aipy_pyfunc_push(p->name_id, p->name_id);
    return 0;
}

void aipy_module_leave(PyObject *module)
{
    mod_stack *s = tls_mods;
    if (!s || s->epoch != modules_epoch || s->depth <= 0)
        return;
    if (s->depth > MAX_DEPTH) {
        s->depth--;
        return;
    }
    for (int d = s->depth - 1; d >= 0; d--) {
        if (s->e[d].module != module)
            continue;
        /* the events of the entries unwound too: d's was pushed first */
        aipy_pyfunc_pop_to(s->e[d].pf);
        s->depth = d;
        break;
    }
}

static PyObject *py_pre_hook(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    if (n >= 1 && aipy_module_enter(args[0]) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_hook(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    if (n >= 1)
        aipy_module_leave(args[0]);
    Py_RETURN_NONE;
}

const char *aipy_modules_current_path(aip_string_id *id)
{
    mod_stack *s = tls_mods;
    if (!s || !__atomic_load_n(&modules_on, __ATOMIC_RELAXED) || s->epoch != modules_epoch ||
        s->depth <= 0 || !aipy_modules_by_frame_current())
        return NULL;
    int top = (s->depth < MAX_DEPTH ? s->depth : MAX_DEPTH) - 1;
    *id = s->e[top].id;
    return s->e[top].path;
}

/* modules_enable(on): start or end a profile's module tracking.  Each
 * start is a new epoch: names restart at _0 and old stacks are dropped. */
static PyObject *py_modules_enable(PyObject *self, PyObject *arg)
{
    int on = PyObject_IsTrue(arg);
    if (on < 0)
        return NULL;
    if (on && !modules_on) {
        mod_stack *s = tls_mods;
        if (s && s->epoch == modules_epoch)
            stack_clear(s);
        PyDict_Clear(names);
        PyDict_Clear(class_counts);
        __atomic_store_n(&modules_epoch, modules_epoch + 1, __ATOMIC_RELAXED);
        /* Two profiles back: no thread can still be reading those texts. */
        paths_free(&retired_paths);
        retired_paths = paths;
        memset(&paths, 0, sizeof paths);
    }
    __atomic_store_n(&modules_on, on, __ATOMIC_RELAXED);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"module_pre_hook", (PyCFunction)(void (*)(void))py_pre_hook, METH_FASTCALL,
     "global nn.Module forward pre-hook: enter a module."},
    {"module_hook", (PyCFunction)(void (*)(void))py_hook, METH_FASTCALL,
     "global nn.Module forward hook: leave a module."},
    {"modules_enable", py_modules_enable, METH_O,
     "modules_enable(on): start (True) or stop (False) module tracking."},
    {NULL, NULL, 0, NULL},
};

int aipy_nn_module_path_init(PyObject *module)
{
    if (pthread_key_create(&mods_key, stack_free) != 0) {
        PyErr_SetString(PyExc_RuntimeError, "cannot create the module tracker's thread key");
        return -1;
    }
    names = PyDict_New();
    class_counts = PyDict_New();
    if (!names || !class_counts)
        return -1;
    return PyModule_AddFunctions(module, methods);
}
