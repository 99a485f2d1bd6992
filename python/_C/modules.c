/*
 * modules.c — with_modules: the nn.Module path of every recorded op.
 *
 * module_pre_hook / module_hook are installed as torch's global forward
 * pre-hook and forward hook while a profile with with_modules records.
 * They keep a per-thread stack of the modules being run; the PyTorch
 * adapter reads the innermost path (aipy_modules_current_path) without the
 * GIL, so each entry owns its path text, made once when the module is
 * entered: "nn.Module: MLP_0;nn.Module: Linear_1" — outermost first, each
 * module named by its class and a per-class index in order of first use,
 * as torch's Python tracer names modules.
 *
 * A forward that raises skips its forward hook; the next hook of an outer
 * module unwinds past it, so the stack heals at the next return.
 *
 * Each module run is also a python_function event named after the module
 * alone ("nn.Module: Linear_0", its string id also the module id), from
 * the pre-hook to the hook; unwinding ends the events of the modules
 * unwound (aipy_pyfunc_pop_to).
 */
#include "aiprof_C.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 128

typedef struct mod_entry {
    PyObject *module; /* borrowed; identity only */
    char *path;
    aip_string_id id; /* the path, interned once per entry */
    aipy_pyfunc_mark pf; /* its python_function event */
} mod_entry;

typedef struct mod_stack {
    unsigned epoch;
    int depth;
    mod_entry e[MAX_DEPTH];
} mod_stack;

static unsigned modules_epoch;
static int modules_on;
static __thread mod_stack *tls_mods __attribute__((tls_model("initial-exec")));
static pthread_key_t mods_key;
static PyObject *names;         /* {id(module): bytes name} */
static PyObject *name_ids;      /* {bytes name: int string id} */
static PyObject *class_counts;  /* {class name: next index} */

static void stack_clear(mod_stack *s)
{
    int n = s->depth < MAX_DEPTH ? s->depth : MAX_DEPTH;
    for (int i = 0; i < n; i++)
        free(s->e[i].path);
    s->depth = 0;
}

static void stack_free(void *p)
{
    mod_stack *s = p;
    stack_clear(s);
    free(s);
}

/* The calling thread's stack for this profile; entries left from a
 * previous profile are dropped.  stack_clear() zeroes the depth, so a
 * stack is never freed twice. */
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

/* The string id of a module's name, interned once per profile. */
static aip_string_id module_name_id(PyObject *name)
{
    if (!__atomic_load_n(&aip_recording_generation, __ATOMIC_RELAXED))
        return 0; /* no event to name */
    PyObject *v = PyDict_GetItemWithError(name_ids, name);
    if (v)
        return (aip_string_id)PyLong_AsUnsignedLong(v);
    if (PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    aip_string_id id = aip_intern(PyBytes_AS_STRING(name));
    v = PyLong_FromUnsignedLong(id);
    if (!v || PyDict_SetItem(name_ids, name, v) < 0)
        PyErr_Clear();
    Py_XDECREF(v);
    return id;
}

static PyObject *py_pre_hook(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    if (n < 1 || !modules_on)
        Py_RETURN_NONE;
    mod_stack *s = stack_get();
    if (!s)
        Py_RETURN_NONE;
    int d = s->depth++;
    if (d >= MAX_DEPTH)
        Py_RETURN_NONE;
    PyObject *name = module_name(args[0]);
    if (!name) {
        s->depth--;
        return NULL;
    }
    const char *nm = PyBytes_AS_STRING(name);
    size_t nlen = (size_t)PyBytes_GET_SIZE(name);
    const char *parent = d > 0 ? s->e[d - 1].path : NULL;
    size_t plen = parent ? strlen(parent) : 0;
    char *path = malloc(plen + 1 + nlen + 1);
    if (!path) {
        s->depth--;
        return PyErr_NoMemory();
    }
    if (parent) {
        memcpy(path, parent, plen);
        path[plen++] = ';';
    }
    memcpy(path + plen, nm, nlen + 1);
    s->e[d].module = args[0];
    s->e[d].path = path;
    s->e[d].id = aip_intern(path);
    aip_string_id nid = module_name_id(name);
    s->e[d].pf = aipy_pyfunc_push(nid, nid);
    Py_RETURN_NONE;
}

static PyObject *py_hook(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    mod_stack *s = tls_mods;
    if (n < 1 || !s || s->epoch != modules_epoch || s->depth <= 0)
        Py_RETURN_NONE;
    if (s->depth > MAX_DEPTH) {
        s->depth--;
        Py_RETURN_NONE;
    }
    for (int d = s->depth - 1; d >= 0; d--) {
        if (s->e[d].module != args[0])
            continue;
        /* the events of the entries unwound too: d's was pushed first */
        aipy_pyfunc_pop_to(s->e[d].pf);
        for (int i = s->depth - 1; i >= d; i--)
            free(s->e[i].path);
        s->depth = d;
        break;
    }
    Py_RETURN_NONE;
}

const char *aipy_modules_current_path(aip_string_id *id)
{
    mod_stack *s = tls_mods;
    if (!s || !__atomic_load_n(&modules_on, __ATOMIC_RELAXED) || s->epoch != modules_epoch ||
        s->depth <= 0)
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
        PyDict_Clear(name_ids);
        PyDict_Clear(class_counts);
        __atomic_store_n(&modules_epoch, modules_epoch + 1, __ATOMIC_RELAXED);
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

int aipy_modules_init(PyObject *module)
{
    if (pthread_key_create(&mods_key, stack_free) != 0) {
        PyErr_SetString(PyExc_RuntimeError, "cannot create the module tracker's thread key");
        return -1;
    }
    names = PyDict_New();
    class_counts = PyDict_New();
    name_ids = PyDict_New();
    if (!names || !class_counts || !name_ids)
        return -1;
    return PyModule_AddFunctions(module, methods);
}
