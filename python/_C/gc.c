/*
 * gc.c — Python garbage-collection passes as GC events.
 *
 * gc_callback(phase, info) goes into gc.callbacks while a profile with
 * gc_detect_threshold runs.  A collection runs with the GIL held and never
 * nests, so one start time is enough.  The core drops passes shorter than
 * the threshold (aip_gc_event), so this side does no filtering.
 */
#include "aiprof_C.h"

#include <string.h>

static uint64_t gc_start_ns;

static PyObject *py_gc_callback(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    if (n < 1 || !AIP_RECORDING())
        Py_RETURN_NONE;
    const char *phase = PyUnicode_AsUTF8(args[0]);
    if (!phase)
        return NULL;
    if (phase[0] == 's' && phase[1] == 't' && phase[2] == 'a') { /* "start" */
        gc_start_ns = aip_now_ns();
    } else if (gc_start_ns) { /* "stop" */
        aip_gc_event(gc_start_ns, aip_now_ns());
        gc_start_ns = 0;
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"gc_callback", (PyCFunction)(void (*)(void))py_gc_callback, METH_FASTCALL,
     "gc_callback(phase, info): for gc.callbacks; records each collection pass."},
    {NULL, NULL, 0, NULL},
};

int aipy_gc_init(PyObject *module) { return PyModule_AddFunctions(module, methods); }
