/*
 * annotate.c — record_function annotations, mstx ranges and marks, and
 * torch.profiler.itt-style ranges, straight onto the recording calls.
 *
 * These run on the user's hot path (a record_function per layer, an mstx
 * range per step), so each one first checks, with one load, whether
 * anything records and returns at once when nothing does.
 */
#include "aiprof_C.h"

/* annotation_push(name) -> int: the trace generation it went to, 0 if
 * nothing records; annotation_pop(gen) then closes it only in that trace,
 * so a range opened before a trace (or in the previous of two back-to-back
 * traces) is not a pop without a push in this one. */
static PyObject *py_annotation_push(PyObject *self, PyObject *arg)
{
    uint32_t gen = __atomic_load_n(&aip_recording_generation, __ATOMIC_RELAXED);
    if (!gen)
        return PyLong_FromLong(0);
    const char *name = PyUnicode_AsUTF8(arg);
    if (!name)
        return NULL;
    aip_annotation_push(name);
    return PyLong_FromUnsignedLong(gen);
}

static PyObject *py_annotation_pop(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    if (n > 1) {
        PyErr_SetString(PyExc_TypeError, "annotation_pop expects at most one argument");
        return NULL;
    }
    uint32_t gen = __atomic_load_n(&aip_recording_generation, __ATOMIC_RELAXED);
    if (n == 1 && args[0] != Py_None) {
        unsigned long pushed = PyLong_AsUnsignedLong(args[0]);
        if (pushed == (unsigned long)-1 && PyErr_Occurred())
            return NULL;
        if (pushed != gen)
            Py_RETURN_NONE; /* pushed in no trace, or in another one */
    }
    if (gen)
        aip_annotation_pop();
    Py_RETURN_NONE;
}

/* Arguments are (message, domain); the Python layer has checked types. */
static int msg_domain(PyObject *const *args, Py_ssize_t n, const char *fn, const char **msg,
                      const char **domain)
{
    if (n != 2) {
        PyErr_Format(PyExc_TypeError, "%s expects (message, domain)", fn);
        return -1;
    }
    *msg = PyUnicode_AsUTF8(args[0]);
    *domain = args[1] == Py_None ? NULL : PyUnicode_AsUTF8(args[1]);
    if (!*msg || (args[1] != Py_None && !*domain))
        return -1;
    return 0;
}

static PyObject *py_mark(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    if (!AIP_RECORDING())
        Py_RETURN_NONE;
    const char *msg, *domain;
    if (msg_domain(args, n, "mark", &msg, &domain))
        return NULL;
    aip_mark(domain, msg);
    Py_RETURN_NONE;
}

static PyObject *py_range_start(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    if (!AIP_RECORDING())
        return PyLong_FromLong(0);
    const char *msg, *domain;
    if (msg_domain(args, n, "range_start", &msg, &domain))
        return NULL;
    return PyLong_FromUnsignedLongLong(aip_range_start(domain, msg));
}

static PyObject *py_range_end(PyObject *self, PyObject *arg)
{
    unsigned long long id = PyLong_AsUnsignedLongLong(arg);
    if (id == (unsigned long long)-1 && PyErr_Occurred())
        return NULL;
    if (AIP_RECORDING())
        aip_range_end(id);
    Py_RETURN_NONE;
}

/* itt: push/pop ranges nest per thread; the depth is counted whether or
 * not a trace records, so the return values do not depend on profiling. */
static __thread long itt_depth;

static PyObject *py_itt_range_push(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    const char *msg, *domain;
    if (msg_domain(args, n, "range_push", &msg, &domain))
        return NULL;
    long depth = itt_depth++;
    if (AIP_RECORDING())
        aip_range_push(domain, msg);
    return PyLong_FromLong(depth);
}

static PyObject *py_itt_range_pop(PyObject *self, PyObject *unused)
{
    if (itt_depth == 0)
        return PyLong_FromLong(-1); /* nothing to pop */
    long depth = --itt_depth;
    if (AIP_RECORDING())
        aip_range_pop();
    return PyLong_FromLong(depth);
}

static PyMethodDef methods[] = {
    {"annotation_push", py_annotation_push, METH_O,
     "annotation_push(name) -> int: open a record_function range on this thread; returns "
     "the trace generation it went to (0: nothing records)."},
    {"annotation_pop", (PyCFunction)(void (*)(void))py_annotation_pop, METH_FASTCALL,
     "annotation_pop(gen=None): close the innermost record_function range; with the "
     "generation annotation_push returned, only if it went to the trace recording now."},
    {"mark", (PyCFunction)(void (*)(void))py_mark, METH_FASTCALL,
     "mark(message, domain): an mstx instant."},
    {"range_start", (PyCFunction)(void (*)(void))py_range_start, METH_FASTCALL,
     "range_start(message, domain) -> int: an mstx range that may end on any thread."},
    {"range_end", py_range_end, METH_O, "range_end(range_id): end an mstx range."},
    {"range_push", (PyCFunction)(void (*)(void))py_itt_range_push, METH_FASTCALL,
     "range_push(message, domain) -> int: nested range; returns its zero-based depth."},
    {"range_pop", py_itt_range_pop, METH_NOARGS,
     "range_pop() -> int: close the innermost nested range; its depth, -1 if none."},
    {NULL, NULL, 0, NULL},
};

int aipy_annotate_init(PyObject *module) { return PyModule_AddFunctions(module, methods); }
