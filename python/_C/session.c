/*
 * session.c — aiprof._C.Session: one aip_session, driven from Python.
 *
 * The Python layer (aiprof/profiler/profiler.py) validates and converts
 * every user parameter; this type only maps keyword arguments onto
 * aip_config and the session calls onto Python methods.
 *
 * step() and stop() release the GIL: saving a trace waits for the raw
 * writer, and other Python threads should keep running meanwhile.  The C
 * session calls on_trace_ready between the end of one trace and the start
 * of the next (so handler time is not recorded, as in torch); our callback
 * takes the GIL back to run the Python callable, and an exception raised
 * there is kept and re-raised by the step()/stop() that triggered it.
 */
#include "aiprof_C.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    PyObject_HEAD
    aip_session *session;
    PyObject *on_trace_ready; /* callable(result_dir: str) or NULL */
    PyObject *pending_exc;    /* exception raised by on_trace_ready, or NULL */
    PyObject *schedule_fn;    /* callable(step) -> action, or NULL */
    int in_callback;
} SessionObject;

/* Python 3.12 has PyErr_GetRaisedException; 3.11 has the fetch trio. */
#if PY_VERSION_HEX < 0x030C0000
static PyObject *fetch_exc(void)
{
    PyObject *t, *v, *tb;
    PyErr_Fetch(&t, &v, &tb);
    PyErr_NormalizeException(&t, &v, &tb);
    if (tb && v)
        PyException_SetTraceback(v, tb);
    Py_XDECREF(t);
    Py_XDECREF(tb);
    return v;
}
#define PyErr_GetRaisedException_compat fetch_exc
#else
#define PyErr_GetRaisedException_compat PyErr_GetRaisedException
#endif

static void trace_ready(aip_session *session, const char *result_dir, void *data)
{
    SessionObject *self = data;
    PyGILState_STATE g = PyGILState_Ensure();
    if (self->on_trace_ready) {
        self->in_callback = 1;
        PyObject *r = PyObject_CallFunction(self->on_trace_ready, "s", result_dir);
        self->in_callback = 0;
        if (r) {
            Py_DECREF(r);
        } else if (!self->pending_exc) {
            self->pending_exc = PyErr_GetRaisedException_compat();
        } else {
            PyErr_WriteUnraisable(self->on_trace_ready); /* a second failure in one call */
        }
    }
    PyGILState_Release(g);
}

/* config.schedule_fn: the callable answers a step's action as an int (the
 * Python layer's _CallableSchedule turns the user's ProfilerAction into
 * one).  Called from start()/step() with the GIL released; an exception
 * is kept like a handler's and that step's action is NONE. */
static aip_action call_schedule(void *data, int64_t step)
{
    SessionObject *self = data;
    if (!self->schedule_fn)
        return AIP_ACTION_NONE; /* cleared by the garbage collector */
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *r = PyObject_CallFunction(self->schedule_fn, "L", (long long)step);
    long v = r ? PyLong_AsLong(r) : -1; /* a value out of range: libaiprof takes it as NONE */
    Py_XDECREF(r);
    if (PyErr_Occurred()) {
        v = AIP_ACTION_NONE;
        if (!self->pending_exc)
            self->pending_exc = PyErr_GetRaisedException_compat();
        else
            PyErr_WriteUnraisable(self->schedule_fn);
    }
    PyGILState_Release(g);
    return (aip_action)v;
}

static PyObject *reraise_pending(SessionObject *self, PyObject *result)
{
    if (!self->pending_exc)
        return result;
    PyObject *e = self->pending_exc;
    self->pending_exc = NULL;
    Py_XDECREF(result);
    PyErr_SetObject((PyObject *)Py_TYPE(e), e);
    Py_DECREF(e);
    return NULL;
}

/* A NULL-terminated copy of a list of str, pointing into the str objects
 * (kept alive by the caller's argument tuple until aip_session_create). */
static const char **str_list(PyObject *seq, const char *what)
{
    if (seq == Py_None)
        return NULL;
    PyObject *fast = PySequence_Fast(seq, what);
    if (!fast)
        return (const char **)-1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    const char **out = calloc((size_t)n + 1, sizeof *out);
    if (!out) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return (const char **)-1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        out[i] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(fast, i));
        if (!out[i]) {
            free(out);
            Py_DECREF(fast);
            return (const char **)-1;
        }
    }
    Py_DECREF(fast); /* items stay alive: `seq` holds them */
    return out;
}

static int Session_init(SessionObject *self, PyObject *args, PyObject *kw)
{
    /* Ordered by how often a caller passes them: the parser looks the
     * names up one by one and stops once every keyword given is found, so
     * a start() that passes only what differs from aip_config_init's
     * defaults (profiler.py) pays for the first few names only. */
    static char *kwlist[] = {"activities", "on_trace_ready", "dir_name", "worker_name",
                             "aic_metrics", "schedule", "schedule_fn", "step_offset",
                             "record_shapes", "profile_memory", "with_stack", "with_modules",
                             "with_flops", "use_cuda", "export_type", "profiler_level",
                             "record_op_args", "mstx", "gc_detect_threshold_ms", "host_sys",
                             "l2_cache", "op_attr", "data_simplification",
                             "mstx_domain_include", "mstx_domain_exclude", "sys_io",
                             "sys_interconnection", "buffer_cap_bytes",
                             "flight_recorder_seconds", "flight_ring_bytes", "flight_ring_dir",
                             "flight_slow_step", "flight_hang_seconds", "flight_signal", NULL};
    aip_config c;
    aip_config_init(&c);
    PyObject *sched = Py_None, *dir = Py_None, *worker = Py_None, *otr = Py_None;
    PyObject *incl = Py_None, *excl = Py_None, *sched_fn = Py_None, *ring_dir = Py_None;
    unsigned long long ring_bytes = 0;
    int level = c.profiler_level, aic = c.aic_metrics;
    unsigned long long cap = c.buffer_cap_bytes;
    long long step_offset = 0;
    if (!PyArg_ParseTupleAndKeywords(
            args, kw, "|$IOOOiOOLppppppIippdIpppOOppKdKOddi", kwlist, &c.activities, &otr, &dir,
            &worker, &aic, &sched, &sched_fn, &step_offset, &c.record_shapes,
            &c.profile_memory, &c.with_stack, &c.with_modules, &c.with_flops, &c.use_cuda,
            &c.export_type, &level, &c.record_op_args, &c.mstx, &c.gc_detect_threshold_ms,
            &c.host_sys, &c.l2_cache, &c.op_attr, &c.data_simplification, &incl, &excl,
            &c.sys_io, &c.sys_interconnection, &cap, &c.flight_recorder_seconds, &ring_bytes,
            &ring_dir, &c.flight_slow_step, &c.flight_hang_seconds, &c.flight_signal))
        return -1;
    c.profiler_level = (aip_profiler_level)level;
    c.aic_metrics = (aip_aic_metrics)aic;
    c.buffer_cap_bytes = (size_t)cap;
    c.flight_ring_bytes = ring_bytes;
    if (ring_dir != Py_None && !(c.flight_ring_dir = PyUnicode_AsUTF8(ring_dir)))
        return -1;
    if (sched != Py_None) {
        long long v[5];
        if (!PyArg_ParseTuple(sched, "LLLLL;schedule must be (skip_first, wait, warmup, "
                              "active, repeat)", &v[0], &v[1], &v[2], &v[3], &v[4]))
            return -1;
        c.has_schedule = 1;
        c.schedule = (aip_schedule){v[0], v[1], v[2], v[3], v[4]};
    }
    if (sched_fn != Py_None) {
        if (!PyCallable_Check(sched_fn)) {
            PyErr_SetString(PyExc_TypeError, "schedule_fn must be callable or None");
            return -1;
        }
        c.schedule_fn = call_schedule;
        c.schedule_fn_data = self;
    }
    if (dir != Py_None && !(c.dir_name = PyUnicode_AsUTF8(dir)))
        return -1;
    if (worker != Py_None && !(c.worker_name = PyUnicode_AsUTF8(worker)))
        return -1;
    if (otr != Py_None && !PyCallable_Check(otr)) {
        PyErr_SetString(PyExc_TypeError, "on_trace_ready must be callable or None");
        return -1;
    }
    const char **inc = str_list(incl, "mstx_domain_include must be a list of str");
    if (inc == (const char **)-1)
        return -1;
    const char **exc = str_list(excl, "mstx_domain_exclude must be a list of str");
    if (exc == (const char **)-1) {
        free(inc);
        return -1;
    }
    c.mstx_domain_include = inc;
    c.mstx_domain_exclude = exc;
    /* A flight recorder's dumps are made on its writer thread, where no
     * Python runs: they are result directories to analyse, not handler
     * calls (docs/FLIGHT_RECORDER.md). */
    c.on_trace_ready = c.flight_recorder_seconds > 0 ? NULL : trace_ready;
    c.on_trace_ready_data = self;

    aip_session_destroy(self->session);
    self->session = NULL;
    aip_status st = aip_session_create(&c, &self->session);
    free(inc);
    free(exc);
    if (st) {
        aipy_raise(st, NULL);
        return -1;
    }
    if (step_offset && (st = aip_session_set_step_offset(self->session, step_offset))) {
        aipy_raise(st, NULL);
        return -1;
    }
    Py_XINCREF(otr == Py_None ? NULL : otr);
    Py_XSETREF(self->on_trace_ready, otr == Py_None ? NULL : otr);
    Py_XINCREF(sched_fn == Py_None ? NULL : sched_fn);
    Py_XSETREF(self->schedule_fn, sched_fn == Py_None ? NULL : sched_fn);
    return 0;
}

static int check(SessionObject *self, const char *what)
{
    if (!self->session) {
        PyErr_Format(PyExc_RuntimeError, "%s: the session is closed", what);
        return -1;
    }
    if (self->in_callback) {
        PyErr_Format(PyExc_RuntimeError, "%s cannot be called from inside on_trace_ready",
                     what);
        return -1;
    }
    return 0;
}

typedef aip_status (*session_fn)(aip_session *);

static PyObject *run(SessionObject *self, session_fn fn, const char *what)
{
    if (check(self, what))
        return NULL;
    aip_status st;
    Py_BEGIN_ALLOW_THREADS
    st = fn(self->session);
    Py_END_ALLOW_THREADS
    /* A save error does not hide a handler's exception; the handler's wins. */
    if (st && !self->pending_exc)
        return aipy_raise(st, what);
    Py_INCREF(Py_None);
    return reraise_pending(self, Py_None);
}

static PyObject *Session_start(SessionObject *self, PyObject *unused)
{
    return run(self, aip_session_start, "start");
}

static PyObject *Session_step(SessionObject *self, PyObject *unused)
{
    return run(self, aip_session_step, "step");
}

static PyObject *Session_step_started(SessionObject *self, PyObject *unused)
{
    return run(self, aip_session_step_started, "step_started");
}

static PyObject *Session_stop(SessionObject *self, PyObject *unused)
{
    return run(self, aip_session_stop, "stop");
}

static PyObject *Session_close(SessionObject *self, PyObject *unused)
{
    if (self->in_callback) {
        PyErr_SetString(PyExc_RuntimeError, "close cannot be called from inside on_trace_ready");
        return NULL;
    }
    aip_session *s = self->session;
    self->session = NULL;
    Py_BEGIN_ALLOW_THREADS
    aip_session_destroy(s);
    Py_END_ALLOW_THREADS
    return reraise_pending(self, (Py_INCREF(Py_None), Py_None));
}

static PyObject *add_meta(SessionObject *self, PyObject *args, int json)
{
    const char *key, *value;
    if (!PyArg_ParseTuple(args, json ? "ss:add_metadata_json" : "ss:add_metadata", &key, &value))
        return NULL;
    if (check(self, json ? "add_metadata_json" : "add_metadata"))
        return NULL;
    aip_status st = json ? aip_session_add_metadata_json(self->session, key, value)
                         : aip_session_add_metadata(self->session, key, value);
    if (st)
        return aipy_raise(st, NULL);
    Py_RETURN_NONE;
}

static PyObject *Session_add_metadata(SessionObject *self, PyObject *args)
{
    return add_meta(self, args, 0);
}

static PyObject *Session_add_metadata_json(SessionObject *self, PyObject *args)
{
    return add_meta(self, args, 1);
}

static PyObject *Session_get_result_dir(SessionObject *self, void *unused)
{
    const char *d = self->session ? aip_session_result_dir(self->session) : NULL;
    if (!d)
        Py_RETURN_NONE;
    return PyUnicode_DecodeFSDefault(d);
}

static PyObject *Session_get_step_num(SessionObject *self, void *unused)
{
    return PyLong_FromLongLong(self->session ? aip_session_step_num(self->session) : 0);
}

static PyObject *Session_get_action(SessionObject *self, void *unused)
{
    return PyLong_FromLong(self->session ? aip_session_current_action(self->session)
                                         : AIP_ACTION_NONE);
}

static PyObject *Session_get_dropped(SessionObject *self, void *unused)
{
    return PyLong_FromUnsignedLongLong(
        self->session ? aip_session_dropped_events(self->session) : 0);
}

static int Session_traverse(SessionObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->on_trace_ready);
    Py_VISIT(self->pending_exc);
    Py_VISIT(self->schedule_fn);
    return 0;
}

static int Session_clear(SessionObject *self)
{
    Py_CLEAR(self->on_trace_ready);
    Py_CLEAR(self->pending_exc);
    Py_CLEAR(self->schedule_fn);
    return 0;
}

static void Session_dealloc(SessionObject *self)
{
    PyObject_GC_UnTrack(self);
    /* A session still recording is stopped and saved, without a callback:
     * its Python owner is gone. */
    aip_session *s = self->session;
    self->session = NULL;
    Session_clear(self);
    if (s) {
        Py_BEGIN_ALLOW_THREADS
        aip_session_destroy(s);
        Py_END_ALLOW_THREADS
    }
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef Session_methods[] = {
    {"start", (PyCFunction)Session_start, METH_NOARGS, "Begin at step 0."},
    {"step", (PyCFunction)Session_step, METH_NOARGS, "End the current step, begin the next."},
    {"step_started", (PyCFunction)Session_step_started, METH_NOARGS,
     "The current step begins now (after the collectors' set-up)."},
    {"stop", (PyCFunction)Session_stop, METH_NOARGS, "End the session, saving a trace."},
    {"close", (PyCFunction)Session_close, METH_NOARGS, "Stop if needed and free the session."},
    {"add_metadata", (PyCFunction)Session_add_metadata, METH_VARARGS,
     "add_metadata(key, value): a string entry for profiler_metadata.json."},
    {"add_metadata_json", (PyCFunction)Session_add_metadata_json, METH_VARARGS,
     "add_metadata_json(key, json_text): a JSON entry for profiler_metadata.json."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Session_getset[] = {
    {"result_dir", (getter)Session_get_result_dir, NULL,
     "directory of the trace being recorded or last saved, or None", NULL},
    {"step_num", (getter)Session_get_step_num, NULL, "current step number", NULL},
    {"current_action", (getter)Session_get_action, NULL, "schedule action (int)", NULL},
    {"dropped_events", (getter)Session_get_dropped, NULL, "events dropped at the cap", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject SessionType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "aiprof._C.Session",
    .tp_basicsize = sizeof(SessionObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "One libaiprof session (aip_session_*).  Keyword arguments map onto aip_config.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Session_init,
    .tp_dealloc = (destructor)Session_dealloc,
    .tp_traverse = (traverseproc)Session_traverse,
    .tp_clear = (inquiry)Session_clear,
    .tp_methods = Session_methods,
    .tp_getset = Session_getset,
};

int aipy_session_init(PyObject *module)
{
    if (PyType_Ready(&SessionType) < 0)
        return -1;
    Py_INCREF(&SessionType);
    if (PyModule_AddObject(module, "Session", (PyObject *)&SessionType) < 0) {
        Py_DECREF(&SessionType);
        return -1;
    }
    return 0;
}
