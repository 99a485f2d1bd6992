/*
 * dynamic.c — dynamic_profile (profiler_config.json) from Python.
 *
 * libaiprof does the work: it watches the config file, starts, steps and
 * saves collections, and analyses them.  The only Python part is the
 * collectors living in this package (PyTorch ops, call stacks, module
 * paths, GC): the library calls a hook when a collection starts and ends,
 * and the hook calls the Python function set with dynamic_set_hook(fn),
 * fn(starting: bool, options: dict); at a start, a dict it returns holds
 * metadata entries {key: JSON text} for the collection's
 * profiler_metadata.json.
 *
 * dynamic_step() releases the GIL (saving and analysing a collection can
 * take a while), so the hook takes it back.  The hook is never run after
 * the interpreter began finalising: the library's own exit handler runs
 * after Python's, when only C may be called.
 */
#include "aiprof_C.h"

static PyObject *hook_fn; /* strong reference, or NULL */

/* What the hook returned at a collection's start: {key: JSON text} for
 * profiler_metadata.json (torch.distributed's parallel_group_info).  An
 * entry that cannot be added is a warning: the collection goes on. */
static void add_metadata(aip_session *session, PyObject *entries)
{
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(entries, &pos, &k, &v)) {
        const char *key = PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;
        const char *text = PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : NULL;
        if (!key || !text || aip_session_add_metadata_json(session, key, text)) {
            PyErr_Clear();
            if (PyErr_WarnFormat(PyExc_RuntimeWarning, 1, "aiprof: metadata %R not added: %s",
                                 k, key && text ? aip_last_error() : "not a str: str entry"))
                PyErr_Clear();
        }
    }
}

static void dynamic_hook(const aip_config *c, aip_session *session, int starting, void *data)
{
    if (!hook_fn || !Py_IsInitialized() || _Py_IsFinalizing())
        return;
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *opts = Py_BuildValue(
        "{s:O,s:O,s:O,s:O,s:O,s:O,s:d,s:O}", "cpu",
        (c->activities & AIP_ACTIVITY_CPU) ? Py_True : Py_False, "record_shapes",
        c->record_shapes ? Py_True : Py_False, "profile_memory",
        c->profile_memory ? Py_True : Py_False, "with_stack", c->with_stack ? Py_True : Py_False,
        "with_flops", c->with_flops ? Py_True : Py_False, "with_modules",
        c->with_modules ? Py_True : Py_False, "gc_detect_threshold_ms", c->gc_detect_threshold_ms, "mstx",
        c->mstx || c->profiler_level == AIP_LEVEL_NONE ? Py_True : Py_False);
    PyObject *r = opts ? PyObject_CallFunction(hook_fn, "OO", starting ? Py_True : Py_False, opts)
                       : NULL;
    if (!r)
        PyErr_WriteUnraisable(hook_fn); /* a collector problem never stops training */
    else if (starting && PyDict_Check(r))
        add_metadata(session, r);
    Py_XDECREF(r);
    Py_XDECREF(opts);
    PyGILState_Release(g);
}

static PyObject *py_dynamic_init(PyObject *self, PyObject *arg)
{
    PyObject *b;
    if (!PyUnicode_FSConverter(arg, &b))
        return NULL;
    aip_status st = aip_dynamic_init(PyBytes_AS_STRING(b));
    Py_DECREF(b);
    if (st)
        return aipy_raise(st, NULL);
    Py_RETURN_NONE;
}

static PyObject *py_dynamic_step(PyObject *self, PyObject *unused)
{
    aip_status st;
    Py_BEGIN_ALLOW_THREADS
    st = aip_dynamic_step();
    Py_END_ALLOW_THREADS
    if (st)
        return aipy_raise(st, NULL);
    Py_RETURN_NONE;
}

static PyObject *py_dynamic_start(PyObject *self, PyObject *arg)
{
    PyObject *b = NULL;
    if (arg != Py_None && !PyUnicode_FSConverter(arg, &b))
        return NULL;
    aip_status st;
    const char *path = b ? PyBytes_AS_STRING(b) : NULL;
    Py_BEGIN_ALLOW_THREADS
    st = aip_dynamic_start(path);
    Py_END_ALLOW_THREADS
    Py_XDECREF(b);
    if (st)
        return aipy_raise(st, NULL);
    Py_RETURN_NONE;
}

static PyObject *py_dynamic_shutdown(PyObject *self, PyObject *unused)
{
    Py_BEGIN_ALLOW_THREADS
    aip_dynamic_shutdown();
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *py_dynamic_state(PyObject *self, PyObject *unused)
{
    return PyLong_FromLong(aip_dynamic_get_state());
}

static PyObject *py_dynamic_current_step(PyObject *self, PyObject *unused)
{
    return PyLong_FromLongLong(aip_dynamic_current_step());
}

static PyObject *py_dynamic_set_hook(PyObject *self, PyObject *fn)
{
    if (fn != Py_None && !PyCallable_Check(fn)) {
        PyErr_SetString(PyExc_TypeError, "dynamic_set_hook: a callable or None");
        return NULL;
    }
    Py_XINCREF(fn == Py_None ? NULL : fn);
    Py_XSETREF(hook_fn, fn == Py_None ? NULL : fn);
    aip_dynamic_set_hook(hook_fn ? dynamic_hook : NULL, NULL);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"dynamic_init", py_dynamic_init, METH_O,
     "dynamic_init(config_dir): watch config_dir/profiler_config.json."},
    {"dynamic_step", py_dynamic_step, METH_NOARGS, "dynamic_step(): a training step ended."},
    {"dynamic_start", py_dynamic_start, METH_O,
     "dynamic_start(config_path or None): collect once now."},
    {"dynamic_shutdown", py_dynamic_shutdown, METH_NOARGS,
     "dynamic_shutdown(): save a running collection and stop watching."},
    {"dynamic_state", py_dynamic_state, METH_NOARGS,
     "dynamic_state() -> -1 uninitialised, 0 idle, 1 running, 2 ready."},
    {"dynamic_current_step", py_dynamic_current_step, METH_NOARGS,
     "dynamic_current_step() -> int."},
    {"dynamic_set_hook", py_dynamic_set_hook, METH_O,
     "dynamic_set_hook(fn): fn(starting, options) at each collection's start and end."},
    {NULL, NULL, 0, NULL},
};

int aipy_dynamic_init(PyObject *module) { return PyModule_AddFunctions(module, methods); }
