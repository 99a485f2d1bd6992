/*
 * analyse_dirs.c — analyse_dirs(): many result directories through the
 * library's aip_analyse_dirs(), for aiprof.profiler.analyse().  The
 * directories are analysed on threads of this process (aip_analyse_dir()
 * keeps no global state; forking a process that holds an interpreter and
 * its threads is not safe) with the GIL released.  Ctrl-C: every ~0.2 s
 * without news the library calls back, the GIL is taken for a moment and
 * pending signals run (PyErr_CheckSignals); a KeyboardInterrupt there
 * cancels the run: no directory is started any more, those running finish
 * (a half-written output is never left: each is renamed into place when
 * complete), and the exception is raised.
 */
#include "aiprof_C.h"

#include <stdlib.h>

/* The library's callback, on the calling thread without the GIL. */
static int check_signals(void *arg, unsigned event, size_t index, size_t done, size_t total)
{
    int *interrupted = arg;
    (void)index;
    (void)done;
    (void)total;
    if (*interrupted || event == AIP_DIRS_STARTED)
        return *interrupted;
    PyGILState_STATE g = PyGILState_Ensure();
    if (PyErr_CheckSignals() < 0)
        *interrupted = 1; /* the exception stays set for the caller */
    PyGILState_Release(g);
    return *interrupted;
}

/* The outcome list: None for a directory analysed, else (status, message). */
static PyObject *outcomes(const aip_dir_result *res, size_t n)
{
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        PyObject *item = Py_None;
        if (res[i].status == AIP_OK)
            Py_INCREF(item);
        else
            item = Py_BuildValue("(is)", (int)res[i].status, res[i].message);
        if (!item) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, item);
    }
    return list;
}

/* Each path as a filesystem bytes object kept in `keep`, its text in `out`. */
static int take_paths(PyObject *seq, PyObject *keep, const char **out, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *b = NULL;
        if (!PyUnicode_FSConverter(PySequence_Fast_GET_ITEM(seq, i), &b))
            return -1;
        PyList_SET_ITEM(keep, i, b);
        out[i] = PyBytes_AS_STRING(b);
    }
    return 0;
}

/* analyse_dirs(dirs, export_type=0, trace_format=0, workers=0) -> list. */
static PyObject *py_analyse_dirs(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"dirs", "export_type", "trace_format", "workers", NULL};
    PyObject *dirs_obj;
    unsigned export_type = 0, trace_format = AIP_TRACE_TORCH_NPU;
    long workers = 0;
    (void)self;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|IIl", kwlist, &dirs_obj, &export_type,
                                     &trace_format, &workers))
        return NULL;
    PyObject *seq = PySequence_Fast(dirs_obj, "dirs must be a sequence of paths");
    if (!seq)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *keep = PyList_New(n);
    const char **paths = PyMem_Calloc(n ? (size_t)n : 1, sizeof *paths);
    aip_dir_result *res = PyMem_Calloc(n ? (size_t)n : 1, sizeof *res);
    PyObject *out = NULL;
    if (!keep || !paths || !res) {
        PyErr_NoMemory();
    } else if (!take_paths(seq, keep, paths, n)) {
        aip_analyse_options ao;
        aip_analyse_options_init(&ao);
        ao.quiet = 1;
        ao.export_type = export_type;
        ao.trace_format = trace_format;
        aip_analyse_dirs_options o;
        aip_analyse_dirs_options_init(&o);
        o.analyse = &ao;
        o.workers = workers;
        int interrupted = 0;
        o.progress = check_signals;
        o.progress_arg = &interrupted;
        Py_BEGIN_ALLOW_THREADS
        aip_analyse_dirs(paths, (size_t)n, &o, res);
        Py_END_ALLOW_THREADS
        out = interrupted ? NULL : outcomes(res, (size_t)n);
    }
    PyMem_Free(paths);
    PyMem_Free(res);
    Py_XDECREF(keep);
    Py_DECREF(seq);
    return out;
}

static PyMethodDef methods[] = {
    {"analyse_dirs", (PyCFunction)(void (*)(void))py_analyse_dirs, METH_VARARGS | METH_KEYWORDS,
     "analyse_dirs(dirs, export_type=0, trace_format=0, workers=0) -> list: aip_analyse_dirs() "
     "on threads, the GIL released; per directory None (analysed) or (status, message). "
     "Ctrl-C cancels: nothing new starts, those running finish, KeyboardInterrupt."},
    {NULL, NULL, 0, NULL},
};

int aipy_analyse_dirs_init(PyObject *module)
{
    return PyModule_AddFunctions(module, methods);
}
