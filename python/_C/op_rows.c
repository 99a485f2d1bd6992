/*
 * op_rows.c — result_rows(): a result directory's ops and annotations as
 * packed columns, from libaiprof's aip_result_op_rows() (the analyser's
 * own load and derive, torch's nesting rules; aiprof_integration.h).
 *
 * key_averages(), events(), export_stacks() and aiprof.mindspore read
 * these columns (bytes for array.array, one per field) plus one list of
 * distinct strings the columns index.  Strings equal in text get one
 * index, as key_averages(group_by_input_shape=True) groups by it; a text
 * with invalid UTF-8 shows U+FFFD for each bad byte, as the analyser's
 * outputs do.
 */
#include "aiprof_C.h"

#include <stdlib.h>
#include <string.h>

/* Text → str, each byte of invalid UTF-8 as U+FFFD. */
static PyObject *decode(const char *s, size_t n)
{
    PyObject *u = PyUnicode_DecodeUTF8(s, (Py_ssize_t)n, NULL);
    if (u || !PyErr_ExceptionMatches(PyExc_UnicodeDecodeError))
        return u;
    PyErr_Clear();
    PyObject *esc = PyUnicode_DecodeUTF8(s, (Py_ssize_t)n, "surrogateescape");
    if (!esc)
        return NULL;
    /* surrogateescape made U+DC80..U+DCFF of the bad bytes, one each */
    Py_ssize_t len = PyUnicode_GET_LENGTH(esc);
    Py_UCS4 *buf = PyUnicode_AsUCS4Copy(esc);
    Py_DECREF(esc);
    if (!buf)
        return NULL;
    for (Py_ssize_t i = 0; i < len; i++)
        if (buf[i] >= 0xDC80 && buf[i] <= 0xDCFF)
            buf[i] = 0xFFFD;
    u = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, buf, len);
    PyMem_Free(buf);
    return u;
}

/* The list of distinct texts and, per string of `rows`, its index there. */
static PyObject *strings(const aip_op_rows *rows, int32_t *remap)
{
    PyObject *list = PyList_New(0), *index = PyDict_New();
    if (!list || !index)
        goto fail;
    for (size_t i = 0; i < rows->n_strings; i++) {
        PyObject *s = decode(rows->strings[i], rows->string_lens[i]);
        if (!s)
            goto fail;
        PyObject *found = PyDict_GetItemWithError(index, s);
        if (found) {
            remap[i] = (int32_t)PyLong_AsLong(found);
            Py_DECREF(s);
            continue;
        }
        PyObject *num = PyErr_Occurred() ? NULL : PyLong_FromSsize_t(PyList_GET_SIZE(list));
        int bad = !num || PyDict_SetItem(index, s, num) < 0 || PyList_Append(list, s) < 0;
        if (!bad)
            remap[i] = (int32_t)(PyList_GET_SIZE(list) - 1);
        Py_XDECREF(num);
        Py_DECREF(s);
        if (bad)
            goto fail;
    }
    Py_DECREF(index);
    return list;
fail:
    Py_XDECREF(list);
    Py_XDECREF(index);
    return NULL;
}

#define STR(id) ((id) >= 0 ? remap[id] : -1)
#define COLUMN(key, type, expr)                                                        \
    do {                                                                               \
        PyObject *b_ = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n * sizeof(type))); \
        if (!b_)                                                                       \
            goto fail;                                                                 \
        type *c_ = (type *)PyBytes_AS_STRING(b_);                                      \
        for (size_t i = 0; i < n; i++) {                                               \
            const aip_op_row *e = &rows->rows[i];                                      \
            c_[i] = (type)(expr);                                                      \
        }                                                                              \
        int rc_ = PyDict_SetItemString(d, key, b_);                                    \
        Py_DECREF(b_);                                                                 \
        if (rc_ < 0)                                                                   \
            goto fail;                                                                 \
    } while (0)

static PyObject *columns(const aip_op_rows *rows)
{
    size_t n = rows->n;
    int32_t *remap = malloc((rows->n_strings ? rows->n_strings : 1) * sizeof *remap);
    PyObject *d = NULL, *list = NULL;
    if (!remap)
        return PyErr_NoMemory();
    if (!(list = strings(rows, remap)) || !(d = PyDict_New()))
        goto fail;
    COLUMN("name", int32_t, STR(e->name));
    COLUMN("cat", int8_t, e->kind);
    COLUMN("tid", int64_t, e->tid);
    COLUMN("start", double, (double)e->start_ns / 1000.0);
    COLUMN("dur", double, (double)e->dur_ns / 1000.0);
    COLUMN("self", double, (double)e->self_ns / 1000.0);
    COLUMN("parent", int32_t, e->parent);
    COLUMN("shapes", int32_t, STR(e->shapes));
    COLUMN("types", int32_t, STR(e->types));
    COLUMN("stack", int32_t, STR(e->stack));
    COLUMN("module", int32_t, STR(e->module));
    COLUMN("seq", int64_t, e->sequence_nr);
    COLUMN("fwd", int64_t, e->fwd_thread);
    COLUMN("flops", int64_t, e->flops);
    COLUMN("mem", int64_t, e->memory);
    COLUMN("self_mem", int64_t, e->self_memory);
    if (PyDict_SetItemString(d, "strings", list) < 0)
        goto fail;
    /* What `start` counts from, in ns: readers that need absolute times
     * (aiprof.mindspore's host_info) add it back. */
    PyObject *base = PyLong_FromLongLong((long long)rows->base_ns);
    if (!base || PyDict_SetItemString(d, "base_ns", base) < 0) {
        Py_XDECREF(base);
        goto fail;
    }
    Py_DECREF(base);
    Py_DECREF(list);
    free(remap);
    return d;
fail:
    free(remap);
    Py_XDECREF(list);
    Py_XDECREF(d);
    return NULL;
}

/* result_rows(result_dir, filtered: frozenset, quiet=True) -> dict of columns. */
static PyObject *py_result_rows(PyObject *self, PyObject *args)
{
    PyObject *path_obj, *filtered;
    int quiet = 1;
    if (!PyArg_ParseTuple(args, "O&O!|p:result_rows", PyUnicode_FSConverter, &path_obj,
                          &PyFrozenSet_Type, &filtered, &quiet))
        return NULL;
    Py_ssize_t nf = PySet_GET_SIZE(filtered), i = 0;
    const char **names = PyMem_Malloc((size_t)(nf ? nf : 1) * sizeof *names);
    PyObject *it = names ? PyObject_GetIter(filtered) : NULL, *key;
    if (!it) {
        PyMem_Free(names);
        Py_DECREF(path_obj);
        return names ? NULL : PyErr_NoMemory();
    }
    /* The set keeps each str, and so its UTF-8, alive. */
    while (i < nf && (key = PyIter_Next(it))) {
        names[i] = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
        Py_DECREF(key);
        if (!names[i++])
            break;
    }
    Py_DECREF(it);
    if (PyErr_Occurred() || (i && !names[i - 1])) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "result_rows: filtered names must be str");
        PyMem_Free(names);
        Py_DECREF(path_obj);
        return NULL;
    }
    aip_op_rows rows;
    aip_status st;
    Py_BEGIN_ALLOW_THREADS
    st = aip_result_op_rows(PyBytes_AS_STRING(path_obj), names, (size_t)i, quiet, &rows);
    Py_END_ALLOW_THREADS
    PyMem_Free(names);
    Py_DECREF(path_obj);
    PyObject *result = st ? aipy_raise(st, "result_rows") : columns(&rows);
    aip_op_rows_free(&rows);
    return result;
}

static PyMethodDef methods[] = {
    {"result_rows", py_result_rows, METH_VARARGS,
     "result_rows(result_dir, filtered_names: frozenset, quiet=True) -> dict of packed "
     "columns of the directory's ops and annotations."},
    {NULL, NULL, 0, NULL},
};

/* The `cat` column's values, as ROW_* constants for Python. */
int aipy_op_rows_init(PyObject *module)
{
    if (PyModule_AddIntConstant(module, "ROW_OP", AIP_OP_ROW_OP) < 0 ||
        PyModule_AddIntConstant(module, "ROW_ANNOTATION", AIP_OP_ROW_ANNOTATION) < 0 ||
        PyModule_AddIntConstant(module, "ROW_MEMORY", AIP_OP_ROW_MEMORY) < 0)
        return -1;
    return PyModule_AddFunctions(module, methods);
}
