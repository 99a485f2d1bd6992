"""Loading and driving the PyTorch adapter (libaiprof_torch.so).

The adapter is C++ compiled against libtorch; it is loaded with ctypes only
once `torch` is imported, when a profile or a thread starts (it needs the
libtorch libraries torch has loaded, and importing torch ourselves would
cost seconds for scripts that never use it); its callbacks are installed
when a profile starts.  A missing or mismatched
adapter is reported once; the profile goes on without ATen ops.

Backward ops name their forward thread by torch's own thread number; the
adapter turns it into an OS thread id with a table each thread fills in
for itself.  A thread that ran its forward before any trace and never runs
an op while one records would be missing from it, so every threading.Thread
notes itself when it starts (or, if torch was not imported yet, when it
ends): the adapter is then loaded, without its callbacks, once torch is.
"""
import ctypes
import os
import sys
import threading
import warnings

from .. import _C

_lib = None              # loaded, checked and its callbacks installed
_loaded_lib = None       # loaded and checked
_problem = None          # why the adapter is not used, once known
_warned = False
_load_lock = threading.Lock()
_memory_problem = None


def _warn_once(msg):
    warnings.warn(f"aiprof: {msg}", RuntimeWarning, stacklevel=4)


def _load(torch):
    """The adapter loaded and checked against `torch`, or None with the
    reason in _problem (not reported here: new threads load it too)."""
    global _loaded_lib, _problem
    with _load_lock:
        if _loaded_lib is not None or _problem is not None:
            return _loaded_lib
        path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                            "libaiprof_torch.so")
        if not os.path.exists(path):
            _problem = "the PyTorch adapter was not built (libtorch headers missing?); ATen " \
                       "ops are not recorded"
            return None
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            _problem = f"cannot load the PyTorch adapter: {e}; ATen ops are not recorded"
            return None
        lib.aiprof_torch_built_for.restype = ctypes.c_char_p
        lib.aiprof_torch_error.restype = ctypes.c_char_p
        lib.aiprof_torch_configure.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_uint,
                                               ctypes.c_void_p]
        lib.aiprof_torch_enable.argtypes = [ctypes.c_int]
        lib.aiprof_torch_memory_enable.argtypes = [ctypes.c_int]
        built = lib.aiprof_torch_built_for().decode()
        running = ".".join(str(getattr(torch, "__version__", "")).split(".")[:2])
        if built != running:
            _problem = (f"the PyTorch adapter was built for torch {built}, this is torch "
                        f"{torch.__version__}; ATen ops are not recorded (rebuild aiprof)")
            return None
        if lib.aiprof_torch_abi() != _C.TORCH_ABI:
            _problem = "PyTorch adapter: ABI mismatch"
            return None
        _loaded_lib = lib
        return lib


def adapter():
    """The loaded adapter, or None (torch not imported, or unusable)."""
    global _lib, _problem, _warned
    if _lib is not None:
        return _lib
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    lib = _loaded_lib or _load(torch)
    if lib is not None and _problem is None and lib.aiprof_torch_install() != 0:
        _problem = "PyTorch adapter: " + lib.aiprof_torch_error().decode()
    if _problem is not None:
        if not _warned:
            _warned = True
            _warn_once(_problem)
        return None
    _C._adapter_functions(*(ctypes.cast(f, ctypes.c_void_p).value for f in (
        lib.aiprof_torch_configure, lib.aiprof_torch_enable, lib.aiprof_torch_memory_install,
        lib.aiprof_torch_memory_enable)))
    _lib = lib
    return lib


def _note_thread():
    """Note the calling thread's torch thread number → OS tid in the
    adapter; False if torch is not (fully) imported yet."""
    lib = _loaded_lib
    if lib is None:
        torch = sys.modules.get("torch")
        # A thread may start while another is still importing torch.
        if torch is None or getattr(getattr(torch, "__spec__", None), "_initializing", False) \
                or _problem is not None:
            return False
        lib = _load(torch)
        if lib is None:
            return False
    lib.aiprof_torch_note_thread()
    return True


def pause_thread(paused):
    """disable_/enable_profiler_in_child_thread(): the calling thread's ops
    and record_function ranges are (not) recorded: libaiprof leaves them
    out, and the adapter skips describing ops nobody records."""
    _C.thread_pause(paused)
    torch = sys.modules.get("torch")
    lib = _loaded_lib or (_load(torch) if torch is not None else None)
    if lib is None:
        return False
    lib.aiprof_torch_thread_pause(int(paused))
    return True


def thread_options(record_shapes, with_flops):
    """enable_profiler_in_child_thread(record_shapes=, with_flops=): the
    calling thread's ops keep input shapes (and FLOPs) whatever the running
    profile's options: libaiprof keeps them, the adapter describes them."""
    _C.thread_op_options(bool(record_shapes), bool(with_flops))
    torch = sys.modules.get("torch")
    lib = _loaded_lib or (_load(torch) if torch is not None else None)
    if lib is None:
        return False
    lib.aiprof_torch_thread_options(int(record_shapes), int(with_flops))
    return True


def _hook_thread_start():
    """Wrap threading.Thread's thread body (once) to call _note_thread()."""
    inner = getattr(threading.Thread, "_bootstrap_inner", None)
    if inner is None or getattr(inner, "_aiprof_wrapped", False):
        return

    def _bootstrap_inner(self):
        try:
            noted = _note_thread()
        except Exception:
            noted = True        # never break a thread; nor retry at its end
        try:
            inner(self)
        finally:
            if not noted:
                try:
                    _note_thread()
                except Exception:
                    pass

    _bootstrap_inner._aiprof_wrapped = True
    threading.Thread._bootstrap_inner = _bootstrap_inner


_hook_thread_start()


class _NativeLabels:
    """The adapter's labels.cpp entry points (called with the GIL held)."""

    def __init__(self, py):
        py.aiprof_torch_labels_init.argtypes = [ctypes.py_object]
        self.init = py.aiprof_torch_labels_init
        #: label(tensors, category, grads, new_pass) -> storages labelled
        self.label = py.aiprof_torch_label
        self.label.argtypes = [ctypes.py_object, ctypes.c_int, ctypes.c_int, ctypes.c_int]
        self.label.restype = ctypes.c_int
        #: label's address, for the frame evaluator (computed once: every
        #: profile_memory start and stop hands it over)
        self.label_address = ctypes.cast(self.label, ctypes.c_void_p).value
        #: label_step(optimizer, known_signature) -> signature (0: do it in Python)
        self.label_step = py.aiprof_torch_label_step
        self.label_step.argtypes = [ctypes.py_object, ctypes.c_ulonglong]
        self.label_step.restype = ctypes.c_ulonglong
        #: label_optimizer(optimizer, grads, new_pass): called from C only
        self.label_optimizer_address = ctypes.cast(py.aiprof_torch_label_optimizer,
                                                   ctypes.c_void_p).value


_native_labels = None
_native_labels_checked = False


def native_labels():
    """The adapter's memory-label functions, or None: no adapter, or one
    built without pybind11's headers (the labels are then made in Python)."""
    global _native_labels, _native_labels_checked
    if _native_labels_checked:
        return _native_labels
    lib = adapter()
    if lib is None:
        return None
    _native_labels_checked = True
    try:
        native = _NativeLabels(ctypes.PyDLL(lib._name))
    except (OSError, AttributeError):
        return None
    if native.init(sys.modules["torch"]._C._TensorBase) == 0:
        _native_labels = native
        # For the optimizer-step hook's fast path and a trace's start
        # (step_hook.c), called from C; label() through _C: no ctypes
        # conversions per call.
        _C.labels_functions(native.label_address,
                            ctypes.cast(native.label_step, ctypes.c_void_p).value,
                            native.label_optimizer_address)
        native.label = _C.labels_label
    return _native_labels


_module_class = None  # torch.nn.Module, once found


def module_class():
    """torch.nn.Module (found once), or None."""
    global _module_class
    cls = _module_class
    if cls is None:
        cls = _module_class = getattr(sys.modules.get("torch.nn.modules.module"), "Module", None)
    return cls


def module_call_code():
    """The code of torch's nn.Module._call_impl, whose frames are module
    calls (python/_C/nn_module_calls.c), or None.  (The method is looked up
    each time, in case someone replaced it.)"""
    return getattr(getattr(module_class(), "_call_impl", None), "__code__", None)


def problem():
    """Why ATen ops are not recorded, or None."""
    return _problem


class OpCapture:
    """The adapter's state for one profile: configured at start, switched
    on while a trace records."""

    def __init__(self, record_shapes, with_stack, with_modules, profile_memory,
                 with_flops=False):
        self.record_shapes = record_shapes
        self.with_flops = with_flops
        self.want = (1 if with_stack else 0) | (2 if with_modules else 0)
        self.profile_memory = profile_memory
        self.on = False
        self.lib = None

    def set_recording(self, recording):
        """Called after every start/step/stop with the session's state."""
        global _memory_problem
        if recording == self.on:
            return
        configure = False
        if recording and self.lib is None:
            # The first trace of this profile: the adapter's options are
            # set, and its memory hook installed, in the same C call
            # (aiprof_C.c _adapter_switch).
            self.lib = adapter()
            if self.lib is None:
                return
            configure = True
        elif self.lib is None:
            return
        self.on = recording
        memory = _C._adapter_switch(int(recording), int(self.profile_memory), int(configure),
                                    int(self.record_shapes), int(self.with_flops), self.want)
        if self.profile_memory and not memory:
            if _memory_problem is None:
                _memory_problem = self.lib.aiprof_torch_error().decode()
                _warn_once(f"profile_memory: {_memory_problem}")
            self.profile_memory = False
