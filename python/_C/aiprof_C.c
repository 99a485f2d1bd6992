/*
 * aiprof_C.c — the aiprof._C extension module itself: its definition and
 * init (each part registers its own functions), process-level calls
 * (clock, names, analysis) and the error mapping every other part uses.
 *
 * aip_status → Python exception: bad arguments and paths are ValueError
 * (the message from aip_last_error() names the parameter), a call at the
 * wrong time is RuntimeError, I/O problems OSError, the rest RuntimeError.
 */
#include "aiprof_C.h"

#include <limits.h>
#include "op_context.h"

PyObject *aipy_raise(aip_status status, const char *what)
{
    const char *msg = aip_last_error();
    if (!msg || !*msg)
        msg = aip_strerror(status);
    PyObject *type;
    switch (status) {
    case AIP_ERR_INVALID_ARG:
    case AIP_ERR_PATH:
    case AIP_ERR_SYMLINK:
    case AIP_ERR_LIMIT:
        type = PyExc_ValueError;
        break;
    case AIP_ERR_IO:
        type = PyExc_OSError;
        break;
    case AIP_ERR_NOT_FOUND:
        type = PyExc_FileNotFoundError;
        break;
    case AIP_ERR_NOMEM:
        type = PyExc_MemoryError;
        break;
    default:
        type = PyExc_RuntimeError;
    }
    if (what)
        PyErr_Format(type, "%s: %s", what, msg);
    else
        PyErr_SetString(type, msg);
    return NULL;
}

static PyObject *py_now_ns(PyObject *self, PyObject *unused)
{
    return PyLong_FromUnsignedLongLong(aip_now_ns());
}

static PyObject *py_is_recording(PyObject *self, PyObject *unused)
{
    return PyBool_FromLong(aip_is_recording());
}

static PyObject *py_set_process_name(PyObject *self, PyObject *arg)
{
    const char *name = PyUnicode_AsUTF8(arg);
    if (!name)
        return NULL;
    aip_set_process_name(name);
    Py_RETURN_NONE;
}

static PyObject *py_thread_name(PyObject *self, PyObject *arg)
{
    const char *name = PyUnicode_AsUTF8(arg);
    if (!name)
        return NULL;
    aip_thread_name(name);
    Py_RETURN_NONE;
}

/* analyse_dir(result_dir, export_type=0, quiet=True, outputs=0): the C
 * analyser on one ..._ascend_pt directory, with the GIL released (it may take
 * seconds).  outputs=1 (AIP_OUTPUTS_TRACE_VIEW) writes trace_view.json only. */
static PyObject *py_analyse_dir(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"result_dir", "export_type", "quiet", "outputs", "trace_format",
                             NULL};
    PyObject *path_obj;
    unsigned export_type = 0, outputs = AIP_OUTPUTS_ALL, trace_format = AIP_TRACE_TORCH_NPU;
    int quiet = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|IpII", kwlist, PyUnicode_FSConverter,
                                     &path_obj, &export_type, &quiet, &outputs, &trace_format))
        return NULL;
    aip_analyse_options opt;
    aip_analyse_options_init(&opt);
    opt.export_type = export_type;
    opt.quiet = quiet;
    opt.outputs = outputs;
    opt.trace_format = trace_format;
    const char *path = PyBytes_AS_STRING(path_obj);
    aip_status st;
    Py_BEGIN_ALLOW_THREADS
    st = aip_analyse_dir(path, &opt);
    Py_END_ALLOW_THREADS
    Py_DECREF(path_obj);
    if (st)
        return aipy_raise(st, "analyse");
    Py_RETURN_NONE;
}

/* schedule_action(skip_first, wait, warmup, active, repeat, step) -> int:
 * the core's schedule, so Python and C never disagree on a step. */
static PyObject *py_schedule_action(PyObject *self, PyObject *args)
{
    aip_schedule s;
    long long step;
    if (!PyArg_ParseTuple(args, "LLLLLL:schedule_action", &s.skip_first, &s.wait, &s.warmup,
                          &s.active, &s.repeat, &step))
        return NULL;
    return PyLong_FromLong(aip_schedule_action(&s, step));
}

/* schedule_validate(skip_first, wait, warmup, active, repeat): ValueError
 * naming the field the core rejects. */
static PyObject *py_schedule_validate(PyObject *self, PyObject *args)
{
    aip_schedule s;
    if (!PyArg_ParseTuple(args, "LLLLL:schedule_validate", &s.skip_first, &s.wait, &s.warmup,
                          &s.active, &s.repeat))
        return NULL;
    aip_status st = aip_schedule_validate(&s);
    if (st)
        return aipy_raise(st, NULL);
    Py_RETURN_NONE;
}

static PyObject *py_version(PyObject *self, PyObject *unused)
{
    return PyUnicode_FromString(aip_version());
}

/* memory_label(address, nbytes, category, device_type=0, device_index=-1):
 * the framework says what the live block at `address` holds
 * (aip_memory_label; recorded only while profile_memory records).  The
 * defaults are the CPU as the PyTorch adapter reports it (index -1, torch's
 * CPU device has none): the analyser matches a label to the records of the
 * same device type and index. */
static PyObject *py_memory_label(PyObject *self, PyObject *args)
{
    unsigned long long address;
    long long nbytes;
    int category, device_type = AIP_DEVICE_CPU, device_index = -1;
    if (!PyArg_ParseTuple(args, "KLi|ii:memory_label", &address, &nbytes, &category,
                          &device_type, &device_index))
        return NULL;
    if (category < 0 || category > AIP_MEM_UNKNOWN) {
        PyErr_Format(PyExc_ValueError, "memory_label: category must be 0..%d, got %d",
                     AIP_MEM_UNKNOWN, category);
        return NULL;
    }
    aip_memory_label((uint64_t)address, (int64_t)nbytes, (aip_device_type)device_type,
                     device_index, (aip_memory_category)category);
    Py_RETURN_NONE;
}

/* export_memory_timeline(result_dir, path, device=None) -> int: torch's
 * memory timeline from a result directory's raw data (the format follows
 * `path`'s ending); returns the number of memory records of `device`.  The
 * GIL is released while it runs. */
static PyObject *py_export_memory_timeline(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"result_dir", "path", "device", NULL};
    PyObject *dir_obj, *path_obj;
    const char *device = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&O&|z:export_memory_timeline", kwlist,
                                     PyUnicode_FSConverter, &dir_obj, PyUnicode_FSConverter,
                                     &path_obj, &device))
        return NULL;
    uint64_t records = 0;
    aip_status st;
    Py_BEGIN_ALLOW_THREADS
    st = aip_export_memory_timeline(PyBytes_AS_STRING(dir_obj), PyBytes_AS_STRING(path_obj),
                                    device, &records);
    Py_END_ALLOW_THREADS
    Py_DECREF(dir_obj);
    Py_DECREF(path_obj);
    if (st)
        return aipy_raise(st, "export_memory_timeline");
    return PyLong_FromUnsignedLongLong(records);
}

/* export_trace(result_dir, path, trace_format): the trace of a result
 * directory's raw data in the given aip_trace_format, written to `path`
 * (export_chrome_trace in the form ASCEND_PROFILER_OUTPUT does not hold).
 * The GIL is released while it runs. */
static PyObject *py_export_trace(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"result_dir", "path", "trace_format", NULL};
    PyObject *dir_obj, *path_obj;
    unsigned trace_format;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&O&I:export_trace", kwlist,
                                     PyUnicode_FSConverter, &dir_obj, PyUnicode_FSConverter,
                                     &path_obj, &trace_format))
        return NULL;
    aip_status st;
    Py_BEGIN_ALLOW_THREADS
    st = aip_export_trace(PyBytes_AS_STRING(dir_obj), PyBytes_AS_STRING(path_obj), trace_format);
    Py_END_ALLOW_THREADS
    Py_DECREF(dir_obj);
    Py_DECREF(path_obj);
    if (st)
        return aipy_raise(st, "export_trace");
    Py_RETURN_NONE;
}

/* The adapter's entry point into this extension (op_context.h). */
static void op_context(unsigned want, aiprof_op_context *ctx)
{
    ctx->call_stack = NULL;
    ctx->module_hierarchy = NULL;
    ctx->call_stack_id = ctx->module_hierarchy_id = 0;
    if (want & AIPROF_WANT_STACK)
        ctx->call_stack = aipy_tracer_current_stack(&ctx->call_stack_id);
    if (want & AIPROF_WANT_MODULES)
        ctx->module_hierarchy = aipy_modules_current_path(&ctx->module_hierarchy_id);
}

/* The PyTorch adapter's switches (aiprof_torch.h), given once by
 * _torch_bridge.py when it loads the adapter: a profile's start flips
 * them in one call here instead of four ctypes calls (a short profile's
 * start() paid some 8 us for those). */
static struct {
    void (*configure)(int, int, unsigned, void *);
    void (*enable)(int);
    int (*memory_install)(void);
    void (*memory_enable)(int);
} adapter_fns;

static PyObject *py_adapter_functions(PyObject *self, PyObject *args)
{
    unsigned long long f[4];
    if (!PyArg_ParseTuple(args, "KKKK", &f[0], &f[1], &f[2], &f[3]))
        return NULL;
    if (!f[0] || !f[1] || !f[2] || !f[3]) {
        PyErr_SetString(PyExc_ValueError, "_adapter_functions: a null function address");
        return NULL;
    }
    adapter_fns.configure = (void (*)(int, int, unsigned, void *))(uintptr_t)f[0];
    adapter_fns.enable = (void (*)(int))(uintptr_t)f[1];
    adapter_fns.memory_install = (int (*)(void))(uintptr_t)f[2];
    adapter_fns.memory_enable = (void (*)(int))(uintptr_t)f[3];
    Py_RETURN_NONE;
}

/* _adapter_switch(on, memory, configure, record_shapes, with_flops, want)
 * -> memory still on (0 when its install failed: the caller asks the
 * adapter why).  With `configure`, the profile's options are set and, with
 * `memory`, the allocator hook installed, before the switch.  The adapter
 * takes its own locks: the GIL is released, as ctypes did. */
static PyObject *py_adapter_switch(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    if (n != 6) {
        PyErr_SetString(PyExc_TypeError, "_adapter_switch takes 6 arguments");
        return NULL;
    }
    long v[6];
    for (int i = 0; i < 6; i++) {
        v[i] = PyLong_AsLong(args[i]);
        if (v[i] == -1 && PyErr_Occurred())
            return NULL;
    }
    if (!adapter_fns.enable) {
        PyErr_SetString(PyExc_RuntimeError, "_adapter_switch: no adapter functions given");
        return NULL;
    }
    int on = v[0] != 0, memory = v[1] != 0;
    aiprof_op_context_fn ctx = op_context;
    Py_BEGIN_ALLOW_THREADS
    if (v[2]) {
        adapter_fns.configure((int)v[3], (int)v[4], (unsigned)v[5],
                              v[5] ? (void *)ctx : NULL);
        if (memory && adapter_fns.memory_install() != 0)
            memory = 0;
    }
    adapter_fns.enable(on);
    if (memory)
        adapter_fns.memory_enable(on);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(memory);
}

static PyObject *py_thread_pause(PyObject *self, PyObject *arg)
{
    int paused = PyObject_IsTrue(arg);
    if (paused < 0)
        return NULL;
    aip_thread_pause(paused);
    Py_RETURN_NONE;
}

static PyObject *py_thread_op_options(PyObject *self, PyObject *args)
{
    int shapes, flops;
    if (!PyArg_ParseTuple(args, "pp:thread_op_options", &shapes, &flops))
        return NULL;
    aip_thread_op_options((shapes ? AIP_THREAD_RECORD_SHAPES : 0u) |
                          (flops ? AIP_THREAD_WITH_FLOPS : 0u));
    Py_RETURN_NONE;
}

/* (activity bits, reason) of this process now: CPU, plus NPU when a back
 * end collects device data here (aip_device_status: never loads a device
 * runtime), and the back ends' own words on why there is or is not. */
static PyObject *py_device_status(PyObject *self, PyObject *unused)
{
    char why[1024];
    unsigned bits = AIP_ACTIVITY_CPU;
    if (aip_device_status(why, sizeof why) > 0)
        bits |= AIP_ACTIVITY_NPU;
    return Py_BuildValue("(Is)", bits, why);
}

/* aip_supported_activities(): what this machine records (may load a
 * device runtime). */
static PyObject *py_supported_activities(PyObject *self, PyObject *unused)
{
    return PyLong_FromUnsignedLong(aip_supported_activities());
}

/* flight_dump(reason=None) -> str: aip_flight_dump(), the GIL released
 * while the writer thread writes the dump. */
static PyObject *py_flight_dump(PyObject *self, PyObject *args)
{
    (void)self;
    const char *reason = NULL;
    if (!PyArg_ParseTuple(args, "|z", &reason))
        return NULL;
    char dir[PATH_MAX];
    aip_status st;
    Py_BEGIN_ALLOW_THREADS
    st = aip_flight_dump(reason, dir, sizeof dir);
    Py_END_ALLOW_THREADS
    if (st)
        return aipy_raise(st, "flight_dump");
    return PyUnicode_DecodeFSDefault(dir);
}

/* flight_salvage(ring_dir, out_dir) -> str: aip_flight_salvage(). */
static PyObject *py_flight_salvage(PyObject *self, PyObject *args)
{
    (void)self;
    const char *ring, *out;
    if (!PyArg_ParseTuple(args, "ss", &ring, &out))
        return NULL;
    char dir[PATH_MAX];
    aip_status st;
    Py_BEGIN_ALLOW_THREADS
    st = aip_flight_salvage(ring, out, dir, sizeof dir);
    Py_END_ALLOW_THREADS
    if (st)
        return aipy_raise(st, "flight_salvage");
    return PyUnicode_DecodeFSDefault(dir);
}

static PyMethodDef methods[] = {
    {"flight_dump", py_flight_dump, METH_VARARGS,
     "flight_dump(reason=None) -> str: dump the armed flight recorder; its result directory."},
    {"flight_salvage", py_flight_salvage, METH_VARARGS,
     "flight_salvage(ring_dir, out_dir) -> str: a killed process's ring as a result directory."},
    {"now_ns", py_now_ns, METH_NOARGS, "now_ns() -> int: the recording clock in ns."},
    {"is_recording", py_is_recording, METH_NOARGS,
     "is_recording() -> bool: a trace is being recorded."},
    {"thread_pause", py_thread_pause, METH_O,
     "thread_pause(paused): the calling thread's ops and annotations are not recorded "
     "while paused."},
    {"thread_op_options", py_thread_op_options, METH_VARARGS,
     "thread_op_options(record_shapes, with_flops): the calling thread's ops keep input "
     "shapes (and FLOPs) whatever the trace's options."},
    {"set_process_name", py_set_process_name, METH_O,
     "set_process_name(name): the process name shown in traces."},
    {"thread_name", py_thread_name, METH_O, "thread_name(name): name the calling thread."},
    {"analyse_dir", (PyCFunction)(void (*)(void))py_analyse_dir, METH_VARARGS | METH_KEYWORDS,
     "analyse_dir(result_dir, export_type=0, quiet=True, outputs=0, trace_format=0): write "
     "ASCEND_PROFILER_OUTPUT/ (trace_format 0 torch_npu's array, 1 Kineto's object)."},
    {"export_trace", (PyCFunction)(void (*)(void))py_export_trace, METH_VARARGS | METH_KEYWORDS,
     "export_trace(result_dir, path, trace_format): the trace in that form (0 torch_npu, "
     "1 kineto) at path."},
    {"schedule_action", py_schedule_action, METH_VARARGS,
     "schedule_action(skip_first, wait, warmup, active, repeat, step) -> int action."},
    {"schedule_validate", py_schedule_validate, METH_VARARGS,
     "schedule_validate(skip_first, wait, warmup, active, repeat): ValueError if invalid."},
    {"device_status", py_device_status, METH_NOARGS,
     "device_status() -> (int, str): the aip_activity bits this process records now and why "
     "there is or is not device data (loads no device runtime)."},
    {"supported_activities", py_supported_activities, METH_NOARGS,
     "supported_activities() -> int: the aip_activity bits this machine records (may load "
     "a device runtime)."},
    {"version", py_version, METH_NOARGS, "version() -> str: libaiprof's version."},
    {"memory_label", py_memory_label, METH_VARARGS,
     "memory_label(address, nbytes, category, device_type=0, device_index=-1): label the "
     "live block at address (0 PARAMETER, 1 OPTIMIZER_STATE, ... 5 GRADIENT, 7 UNKNOWN)."},
    {"export_memory_timeline", (PyCFunction)(void (*)(void))py_export_memory_timeline,
     METH_VARARGS | METH_KEYWORDS,
     "export_memory_timeline(result_dir, path, device=None) -> int memory records."},
    {"_adapter_functions", py_adapter_functions, METH_VARARGS,
     "_adapter_functions(configure, enable, memory_install, memory_enable): addresses."},
    {"_adapter_switch", (PyCFunction)(void (*)(void))py_adapter_switch, METH_FASTCALL,
     "_adapter_switch(on, memory, configure, record_shapes, with_flops, want) -> memory on."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moddef = {
    PyModuleDef_HEAD_INIT, "aiprof._C",
    "C core of aiprof: sessions, annotations, mstx, Python tracer, GC and module hooks.", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__C(void)
{
    PyObject *m = PyModule_Create(&moddef);
    if (!m)
        return NULL;
    if (aipy_session_init(m) || aipy_annotate_init(m) || aipy_tracer_init(m) ||
        aipy_nn_module_path_init(m) || aipy_gc_init(m) || aipy_dynamic_init(m) ||
        aipy_step_hook_init(m) ||
        aipy_nn_module_calls_init(m) || aipy_comm_init(m) || aipy_constants_init(m) ||
        aipy_op_rows_init(m) || aipy_analyse_dirs_init(m)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
