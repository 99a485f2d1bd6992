/*
 * comm.c — communication from Python (aiprof.profiler's torch.distributed
 * capture, _distributed.py) into libaiprof: process groups with their
 * global ranks, one record per collective or point-to-point operation
 * (aip_comm_* of aiprof_integration.h), and the rank torch.distributed
 * gives this process.
 */
#include "aiprof_C.h"

static PyObject *py_comm_recording(PyObject *self, PyObject *unused)
{
    return PyBool_FromLong(AIP_RECORDING() && aip_comm_recording());
}

static PyObject *py_comm_ticks(PyObject *self, PyObject *unused)
{
    return PyLong_FromUnsignedLongLong(aip_comm_ticks());
}

/* comm_group(key, name, my_rank, ranks) -> id (None when not registered) */
static PyObject *py_comm_group(PyObject *self, PyObject *args)
{
    unsigned long long key;
    const char *name;
    unsigned int my_rank;
    PyObject *ranks;
    if (!PyArg_ParseTuple(args, "KsIO:comm_group", &key, &name, &my_rank, &ranks))
        return NULL;
    PyObject *seq = PySequence_Fast(ranks, "comm_group: ranks must be a sequence of ints");
    if (!seq)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    uint32_t *v = PyMem_Malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    if (!v) {
        Py_DECREF(seq);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        long r = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
        if (r == -1 && PyErr_Occurred()) {
            PyMem_Free(v);
            Py_DECREF(seq);
            return NULL;
        }
        v[i] = r >= 0 && r < (long)UINT32_MAX ? (uint32_t)r : AIP_COMM_NO_RANK;
    }
    uint32_t id = aip_comm_group(key, name, my_rank, (uint32_t)n, v);
    PyMem_Free(v);
    Py_DECREF(seq);
    if (id == AIP_COMM_NO_GROUP)
        Py_RETURN_NONE;
    return PyLong_FromUnsignedLong(id);
}

static PyObject *py_comm_next_seq(PyObject *self, PyObject *arg)
{
    unsigned long id = PyLong_AsUnsignedLong(arg);
    if (id == (unsigned long)-1 && PyErr_Occurred())
        return NULL;
    return PyLong_FromUnsignedLongLong(aip_comm_next_seq((uint32_t)id));
}

static uint32_t rank_arg(long r) { return r >= 0 && r < (long)UINT32_MAX ? (uint32_t)r : AIP_COMM_NO_RANK; }

/* comm_op(name, start, end, group, kind, lib, bytes, count, dtype, seq, peer, root, tag,
 *         nonblocking): start/end from comm_ticks(); group -1, peer/root -1 = none. */
static PyObject *py_comm_op(PyObject *self, PyObject *args)
{
    const char *name, *dtype;
    unsigned long long start, end, bytes, count, seq;
    long group, peer, root;
    int kind, lib, tag, nb;
    if (!PyArg_ParseTuple(args, "sKKliiKKzKllip:comm_op", &name, &start, &end, &group, &kind,
                          &lib, &bytes, &count, &dtype, &seq, &peer, &root, &tag, &nb))
        return NULL;
    aip_comm_op_info op = {.name = name, .start = start, .end = end,
                           .group = group >= 0 ? (uint32_t)group : AIP_COMM_NO_GROUP,
                           .peer = rank_arg(peer), .root = rank_arg(root), .bytes = bytes,
                           .count = count, .seq = seq, .dtype = dtype, .tag = tag,
                           .kind = (uint8_t)kind, .lib = (uint8_t)lib, .nonblocking = (uint8_t)nb};
    aip_comm_op(&op);
    Py_RETURN_NONE;
}

static PyObject *py_set_rank(PyObject *self, PyObject *arg)
{
    long r = PyLong_AsLong(arg);
    if (r == -1 && PyErr_Occurred())
        return NULL;
    aip_set_rank((int)(r >= -1 && r < 1000000 ? r : -1));
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"comm_recording", py_comm_recording, METH_NOARGS,
     "comm_recording() -> bool: a trace records communication now."},
    {"comm_ticks", py_comm_ticks, METH_NOARGS,
     "comm_ticks() -> int: the recording clock, for comm_op's start and end."},
    {"comm_group", py_comm_group, METH_VARARGS,
     "comm_group(key, name, my_rank, ranks) -> int | None: register a process group once "
     "(ranks: its members' global ranks)."},
    {"comm_next_seq", py_comm_next_seq, METH_O,
     "comm_next_seq(group) -> int: the group's next collective sequence number."},
    {"comm_op", py_comm_op, METH_VARARGS,
     "comm_op(name, start, end, group, kind, lib, bytes, count, dtype, seq, peer, root, tag, "
     "nonblocking): record one communication operation."},
    {"set_rank", py_set_rank, METH_O,
     "set_rank(rank): this process's global rank (profiler_info_{rank}.json); -1: from the "
     "environment."},
    {NULL, NULL, 0, NULL},
};

int aipy_comm_init(PyObject *module) { return PyModule_AddFunctions(module, methods); }
