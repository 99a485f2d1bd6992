/*
 * step_hook.c — profile_memory labels after optimizer.step(), fast path,
 * and at a trace's start.
 *
 * _memory_labels.py wraps Optimizer._optimizer_step_code (torch calls it
 * after every step) to label the optimizer's gradients, and its parameters
 * and state when they changed.  A training loop steps the same optimizer
 * again and again: once Python has handled it in this trace and handed
 * over its state signature (labels_fast_state), the wrapper below calls
 * the adapter's label_step (labels.cpp) directly — no Python frame, no
 * ctypes.  Anything else (another optimizer, a new trace, a shape the
 * adapter does not know) goes to the Python function, as before.
 *
 * A trace's start turns labels on in one call (labels_start), which also
 * labels every optimizer seen so far through the adapter when asked (dynamic
 * profiling); a profile object labels those that have not stepped in the
 * trace at its first step() or stop() instead (labels_optimizers).
 *
 * Everything here runs with the GIL.
 */
#include "aiprof_C.h"

typedef unsigned long long (*label_step_fn)(PyObject *optimizer, unsigned long long known);

static label_step_fn step_fn; /* the adapter's aiprof_torch_label_step, or NULL */
static PyObject *last_ref;    /* weak reference to the optimizer of the fast path */
static unsigned long long last_sig;
static unsigned long last_gen, cur_gen;
static int labels_active;

typedef struct {
    PyObject_HEAD
    PyObject *original; /* the wrapped function */
    PyObject *after;    /* Python's handler: after(optimizer) */
    vectorcallfunc vectorcall;
} StepHook;

static int fast_path(PyObject *optimizer)
{
    if (!labels_active || !step_fn || !last_ref || last_gen != cur_gen ||
        PyWeakref_GET_OBJECT(last_ref) != optimizer)
        return 0;
    unsigned long long sig = step_fn(optimizer, last_sig);
    if (!sig)
        return 0; /* a shape the adapter does not know: Python decides */
    last_sig = sig;
    return 1;
}

static PyObject *StepHook_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf,
                                     PyObject *kwnames)
{
    StepHook *self = (StepHook *)callable;
    PyObject *r = PyObject_Vectorcall(self->original, args, nargsf, kwnames);
    if (!r || PyVectorcall_NARGS(nargsf) < 1 || fast_path(args[0]))
        return r;
    PyObject *done = PyObject_CallOneArg(self->after, args[0]);
    if (!done) { /* the handler swallows Exceptions: this is KeyboardInterrupt & co */
        Py_DECREF(r);
        return NULL;
    }
    Py_DECREF(done);
    return r;
}

/* A method of the Optimizer class: bound like a function. */
static PyObject *StepHook_get(PyObject *self, PyObject *obj, PyObject *type)
{
    if (!obj || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
    return PyMethod_New(self, obj);
}

static PyObject *StepHook_wrapped(StepHook *self, void *unused)
{
    Py_INCREF(self->original);
    return self->original;
}

/* torch.profiler with with_stack recognises optimizer steps by the code
 * object of Optimizer._optimizer_step_code (it reads its __code__ at every
 * start): the original's, whose frame still runs inside this hook. */
static PyObject *StepHook_code(StepHook *self, void *unused)
{
    return PyObject_GetAttrString(self->original, "__code__");
}

static int StepHook_traverse(StepHook *self, visitproc visit, void *arg)
{
    Py_VISIT(self->original);
    Py_VISIT(self->after);
    return 0;
}

static int StepHook_clear(StepHook *self)
{
    Py_CLEAR(self->original);
    Py_CLEAR(self->after);
    return 0;
}

static void StepHook_dealloc(StepHook *self)
{
    PyObject_GC_UnTrack(self);
    StepHook_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *StepHook_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *original, *after;
    static char *kw[] = {"original", "after", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO:StepHook", kw, &original, &after))
        return NULL;
    if (!PyCallable_Check(original) || !PyCallable_Check(after)) {
        PyErr_SetString(PyExc_TypeError, "StepHook(original, after): both must be callable");
        return NULL;
    }
    StepHook *self = (StepHook *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    Py_INCREF(original);
    Py_INCREF(after);
    self->original = original;
    self->after = after;
    self->vectorcall = StepHook_vectorcall;
    return (PyObject *)self;
}

static PyGetSetDef StepHook_getset[] = {
    {"__wrapped__", (getter)StepHook_wrapped, NULL, "the wrapped function", NULL},
    {"__code__", (getter)StepHook_code, NULL, "the wrapped function's code", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject StepHookType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "aiprof._C.StepHook",
    .tp_doc = "StepHook(original, after): calls original, then labels the optimizer's memory "
              "(the adapter directly, or after(optimizer)).",
    .tp_basicsize = sizeof(StepHook),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(StepHook, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_descr_get = StepHook_get,
    .tp_getset = StepHook_getset,
    .tp_new = StepHook_new,
    .tp_traverse = (traverseproc)StepHook_traverse,
    .tp_clear = (inquiry)StepHook_clear,
    .tp_dealloc = (destructor)StepHook_dealloc,
};

/* The adapter's aiprof_torch_label(tensors, category, grads, new_pass) and
 * aiprof_torch_label_optimizer(optimizer, grads, new_pass) (labels.cpp),
 * called with the GIL held (they read Python objects), as ctypes' PyDLL
 * did, without ctypes' per-call conversions. */
typedef int (*label_fn)(PyObject *, int, int, int);
typedef int (*label_optimizer_fn)(PyObject *, int, int);
static label_fn label_tensors_fn;
static label_optimizer_fn label_optimizer;

/* labels_functions(label, label_step, label_optimizer): the adapter's
 * three label functions' addresses (0: none). */
static PyObject *py_labels_functions(PyObject *self, PyObject *args)
{
    PyObject *a[3];
    void *p[3];
    if (!PyArg_UnpackTuple(args, "labels_functions", 3, 3, &a[0], &a[1], &a[2]))
        return NULL;
    for (int i = 0; i < 3; i++) {
        p[i] = PyLong_AsVoidPtr(a[i]);
        if (!p[i] && PyErr_Occurred())
            return NULL;
    }
    label_tensors_fn = (label_fn)p[0];
    step_fn = (label_step_fn)p[1];
    label_optimizer = (label_optimizer_fn)p[2];
    Py_RETURN_NONE;
}

/* labels_label(tensors, category, grads, new_pass) -> storages labelled. */
static PyObject *py_labels_label(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    if (n != 4) {
        PyErr_SetString(PyExc_TypeError, "labels_label takes 4 arguments");
        return NULL;
    }
    if (!label_tensors_fn) {
        PyErr_SetString(PyExc_RuntimeError, "labels_label: no adapter label function given");
        return NULL;
    }
    int v[3];
    for (int i = 0; i < 3; i++) {
        long x = PyLong_AsLong(args[i + 1]);
        if (x == -1 && PyErr_Occurred())
            return NULL;
        v[i] = (int)x;
    }
    return PyLong_FromLong(label_tensors_fn(args[0], v[0], v[1], v[2]));
}

/* labels_generation(active, generation): labels on or off, and the trace
 * they belong to (a new trace labels everything again). */
static PyObject *py_labels_generation(PyObject *self, PyObject *args)
{
    int active;
    unsigned long gen;
    if (!PyArg_ParseTuple(args, "pk:labels_generation", &active, &gen))
        return NULL;
    labels_active = active;
    cur_gen = gen;
    Py_RETURN_NONE;
}

/* labels_fast_state(optimizer, generation, signature): the optimizer
 * Python has just labelled, with the adapter's signature of its tensors;
 * None stops the fast path. */
static PyObject *py_labels_fast_state(PyObject *self, PyObject *args)
{
    PyObject *opt;
    unsigned long gen;
    unsigned long long sig;
    if (!PyArg_ParseTuple(args, "OkK:labels_fast_state", &opt, &gen, &sig))
        return NULL;
    Py_CLEAR(last_ref);
    if (opt != Py_None && sig) {
        last_ref = PyWeakref_NewRef(opt, NULL);
        if (!last_ref)
            return NULL;
        last_gen = gen;
        last_sig = sig;
    }
    Py_RETURN_NONE;
}

/* Labels the parameters and state (gradients not: see _memory_labels.py)
 * of the optimizers in `optimizers`, a dict whose values are weak
 * references, oldest first, in one pass.  Returns a new reference: a list
 * of those of a shape the adapter does not know (for Python to label in the
 * same pass), or None; NULL with an exception set. */
static PyObject *label_optimizers(PyObject *optimizers)
{
    /* A copy: reading an optimizer's attributes may run Python code, and
     * with it the weak references' callbacks that shrink the dict. */
    PyObject *refs = PyDict_Values(optimizers);
    if (!refs)
        return NULL;
    PyObject *unknown = NULL;
    int new_pass = 1;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(refs); i++) {
        PyObject *ref = PyList_GET_ITEM(refs, i);
        PyObject *opt = PyWeakref_Check(ref) ? PyWeakref_GET_OBJECT(ref) : Py_None;
        if (opt == Py_None)
            continue;
        Py_INCREF(opt);
        if (!label_optimizer(opt, 0, new_pass)) {
            if ((!unknown && !(unknown = PyList_New(0))) || PyList_Append(unknown, opt) < 0) {
                Py_DECREF(opt);
                Py_DECREF(refs);
                Py_XDECREF(unknown);
                return NULL;
            }
        }
        new_pass = 0;
        Py_DECREF(opt);
    }
    Py_DECREF(refs);
    if (!unknown) {
        Py_INCREF(Py_None);
        unknown = Py_None;
    }
    return unknown;
}

static int have_label_functions(const char *who)
{
    if (label_tensors_fn && label_optimizer)
        return 1;
    PyErr_Format(PyExc_RuntimeError, "%s: no adapter label functions given", who);
    return 0;
}

/* labels_start(generation, code, optimizers) -> (inputs_by_frames, unknown):
 * a profile_memory trace's start in one call (a short profile's start()
 * paid ~15 us for it in Python).  Labels go on for `generation`; top-level
 * module inputs are labelled from the frame evaluator if it can (code:
 * Module._call_impl's code, nn.Module itself, or None); the optimizers (see
 * label_optimizers; None: none now, a profile labels them at its first
 * step or stop instead) get their parameters and state labelled. */
static PyObject *py_labels_start(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    /* Fast-call and an interned name: this runs in a profile's start(),
     * where the caches are cold after a training loop. */
    static PyObject *call_impl_name;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "labels_start() takes 3 arguments");
        return NULL;
    }
    unsigned long gen = PyLong_AsUnsignedLong(args[0]);
    if (gen == (unsigned long)-1 && PyErr_Occurred())
        return NULL;
    PyObject *code = args[1], *optimizers = args[2];
    if (optimizers != Py_None && !PyDict_Check(optimizers)) {
        PyErr_SetString(PyExc_TypeError, "labels_start() takes a dict of optimizers or None");
        return NULL;
    }
    if (!have_label_functions("labels_start"))
        return NULL;
    PyObject *found = NULL; /* a reference held while `code` is it */
    if (PyType_Check(code)) {
        /* nn.Module: its _call_impl's code, looked up here each time (it
         * may have been replaced), ~2 us cheaper than in Python. */
        if (!call_impl_name && !(call_impl_name = PyUnicode_InternFromString("_call_impl")))
            return NULL;
        PyObject *fn = PyObject_GetAttr(code, call_impl_name);
        found = fn && PyFunction_Check(fn) ? PyFunction_GetCode(fn) : NULL;
        Py_XINCREF(found);
        Py_XDECREF(fn);
        PyErr_Clear();
        code = found ? found : Py_None;
    } else if (code != Py_None && !PyCode_Check(code)) {
        PyErr_SetString(PyExc_TypeError,
                        "labels_start() takes a code object, nn.Module's class or None");
        return NULL;
    }
    labels_active = 1;
    cur_gen = gen;
    int by_frames = aipy_inputs_by_frames(code, (void *)label_tensors_fn);
    Py_XDECREF(found); /* the evaluator keeps what it needs (use_module_code) */
    PyObject *unknown = optimizers == Py_None ? (Py_INCREF(Py_None), Py_None)
                                              : label_optimizers(optimizers);
    if (!unknown)
        return NULL;
    return Py_BuildValue("(NN)", PyBool_FromLong(by_frames), unknown);
}

/* labels_optimizers(optimizers) -> unknown: label_optimizers() for a
 * trace already labelling (a profile's first step or stop in the trace). */
static PyObject *py_labels_optimizers(PyObject *self, PyObject *optimizers)
{
    if (!PyDict_Check(optimizers)) {
        PyErr_SetString(PyExc_TypeError, "labels_optimizers() takes a dict");
        return NULL;
    }
    if (!have_label_functions("labels_optimizers"))
        return NULL;
    return label_optimizers(optimizers);
}

static PyMethodDef methods[] = {
    {"labels_functions", py_labels_functions, METH_VARARGS,
     "labels_functions(label, label_step, label_optimizer): the adapter's label functions."},
    {"labels_label", (PyCFunction)(void (*)(void))py_labels_label, METH_FASTCALL,
     "labels_label(tensors, category, grads, new_pass) -> storages labelled."},
    {"labels_generation", py_labels_generation, METH_VARARGS,
     "labels_generation(active, generation): whether labels are on, and for which trace."},
    {"labels_fast_state", py_labels_fast_state, METH_VARARGS,
     "labels_fast_state(optimizer, generation, signature): hand an optimizer to the fast "
     "path (None: stop)."},
    {"labels_start", (PyCFunction)(void (*)(void))py_labels_start, METH_FASTCALL,
     "labels_start(generation, code, optimizers or None) -> (inputs_by_frames, unknown "
     "optimizers)."},
    {"labels_optimizers", py_labels_optimizers, METH_O,
     "labels_optimizers(optimizers) -> unknown optimizers (or None)."},
    {NULL, NULL, 0, NULL},
};

int aipy_step_hook_init(PyObject *module)
{
    if (PyType_Ready(&StepHookType) < 0)
        return -1;
    Py_INCREF(&StepHookType);
    if (PyModule_AddObject(module, "StepHook", (PyObject *)&StepHookType) < 0) {
        Py_DECREF(&StepHookType);
        return -1;
    }
    return PyModule_AddFunctions(module, methods);
}
