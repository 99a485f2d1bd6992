/*
 * nn_module_calls.c — nn.Module calls followed through the frame evaluator
 * (CPython 3.11): every frame of Module._call_impl is one module call, its
 * `self` the frame's first local and its positional arguments the *args
 * tuple after it.  Two users:
 *
 *   - with_modules (nn_module_path.c): the call enters and leaves its
 *     module, so ops get their module path and the module its
 *     python_function event, exactly, exceptions included, with no module
 *     hook;
 *   - profile_memory (_memory_labels.py): the arguments of a top-level call
 *     (no module call running below it on the thread) are labelled INPUT
 *     through the adapter, again with no hook.
 *
 * Module hooks would send every module call of the program down torch's
 * slow _call_impl path; they remain the fallback where this is not
 * possible (another Python, someone else's evaluator).
 */
#include "eval_frame.h"

/* nn.Module calls through frames: Module._call_impl's code, whose frames
 * run one module call each (its `self` the frame's first local, its
 * positional arguments the *args tuple after it).  Set once, kept. */
PyCodeObject *aipy_module_call_code;
int aipy_module_calls_on;

#ifdef AIPY_EVAL_FRAME
static int module_args_index; /* localsplus index of the *args tuple */
static int modules_by_frame;  /* with_modules: enter and leave modules */

/* profile_memory: the adapter's aiprof_torch_label, called with the
 * arguments of every top-level module call (no module call running on the
 * thread) to label them INPUT; NULL when off. */
typedef int (*input_label_fn)(PyObject *tensors, int category, int grads, int new_pass);
static input_label_fn inputs_label;
static __thread int tls_module_calls __attribute__((tls_model("initial-exec")));

/* Evaluate a module call's frame: its inputs labelled if it is top-level,
 * its module entered for the module path. */
PyObject *aipy_eval_module_call(PyThreadState *ts, _PyInterpreterFrame *frame, int throwflag)
{
    if (inputs_label && tls_module_calls == 0) {
        PyObject *args = frame->localsplus[module_args_index];
        if (args && PyTuple_Check(args))
            inputs_label(args, AIP_MEM_INPUT, 0, 1);
    }
    PyObject *module = NULL;
    if (modules_by_frame) {
        module = frame->localsplus[0];
        if (module && aipy_module_enter(module) < 0) {
            PyErr_Clear(); /* no module path for this call; the call itself goes on */
            module = NULL;
        }
    }
    tls_module_calls++;
    PyObject *r = _PyEval_EvalFrameDefault(ts, frame, throwflag);
    tls_module_calls--;
    if (module)
        aipy_module_leave(module);
    return r;
}
#endif

#ifdef AIPY_EVAL_FRAME
/* Module calls can be followed as frames of `code`: this Python lets our
 * evaluator in, and `code` looks like _call_impl(self, *args, **kwargs). */
static int use_module_code(PyInterpreterState *interp, PyObject *code)
{
    PyCodeObject *c = (PyCodeObject *)code;
    if (c->co_argcount < 1 || !(c->co_flags & CO_VARARGS) || !aipy_want_eval_mode(interp))
        return 0;
    if (aipy_module_call_code && aipy_module_call_code != c)
        return 0; /* another Module class's code: keep the first */
    if (!aipy_module_call_code) {
        Py_INCREF(code);
        aipy_module_call_code = c;
        module_args_index = c->co_argcount + c->co_kwonlyargcount;
    }
    return 1;
}
#endif

/* modules_by_frames(code) -> bool: follow nn.Module calls as frames of
 * `code` (Module._call_impl.__code__) instead of global hooks; False if
 * this Python cannot (then the caller installs the hooks).
 * modules_by_frames(None) stops. */
static PyObject *py_modules_by_frames(PyObject *self, PyObject *code)
{
    if (code != Py_None && !PyCode_Check(code)) {
        PyErr_SetString(PyExc_TypeError, "modules_by_frames() takes a code object or None");
        return NULL;
    }
#ifdef AIPY_EVAL_FRAME
    PyThreadState *me = PyThreadState_Get();
    modules_by_frame = code != Py_None && use_module_code(me->interp, code);
    aipy_module_calls_on = modules_by_frame || inputs_label;
    aipy_eval_update(me->interp);
    return PyBool_FromLong(modules_by_frame);
#else
    Py_RETURN_FALSE;
#endif
}

/* Label the arguments of top-level module calls (frames of `code`, a code
 * object or None) INPUT through the adapter's aiprof_torch_label `fn`,
 * instead of module hooks.  @return 1 if that is how they are labelled
 * now, 0 if this Python cannot (or `code` is None or `fn` NULL: stopped). */
int aipy_inputs_by_frames(PyObject *code, void *fn)
{
#ifdef AIPY_EVAL_FRAME
    PyThreadState *me = PyThreadState_Get();
    inputs_label = fn && code != Py_None && use_module_code(me->interp, code)
        ? (input_label_fn)fn : NULL;
    aipy_module_calls_on = modules_by_frame || inputs_label;
    aipy_eval_update(me->interp);
    return inputs_label != NULL;
#else
    (void)code;
    (void)fn;
    return 0;
#endif
}

/* inputs_by_frames(code, label_address) -> bool: aipy_inputs_by_frames;
 * inputs_by_frames(None, 0) stops. */
static PyObject *py_inputs_by_frames(PyObject *self, PyObject *args)
{
    PyObject *code, *addr;
    if (!PyArg_ParseTuple(args, "OO:inputs_by_frames", &code, &addr))
        return NULL;
    if (code != Py_None && !PyCode_Check(code)) {
        PyErr_SetString(PyExc_TypeError, "inputs_by_frames() takes a code object or None");
        return NULL;
    }
    void *fn = code == Py_None ? NULL : PyLong_AsVoidPtr(addr);
    if (!fn && PyErr_Occurred())
        return NULL;
    return PyBool_FromLong(aipy_inputs_by_frames(code, fn));
}

int aipy_modules_by_frame_current(void)
{
#ifdef AIPY_EVAL_FRAME
    /* Someone else's evaluator (torch.compile installs one) no longer
     * shows us module frames: the path we hold would go stale. */
    return !modules_by_frame || aipy_eval_is_ours();
#else
    return 1;
#endif
}

static PyMethodDef methods[] = {
    {"inputs_by_frames", py_inputs_by_frames, METH_VARARGS,
     "inputs_by_frames(code, label_address) -> bool: label top-level module inputs through "
     "the frame evaluator (None, 0: stop)."},
    {"modules_by_frames", py_modules_by_frames, METH_O,
     "modules_by_frames(code) -> bool: follow nn.Module calls through the frame evaluator "
     "(None: stop)."},
    {NULL, NULL, 0, NULL},
};

int aipy_nn_module_calls_init(PyObject *module)
{
    return PyModule_AddFunctions(module, methods);
}
