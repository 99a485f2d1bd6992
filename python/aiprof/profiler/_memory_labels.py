"""Memory categories from the framework: optimizer parameters, gradients
and state (docs/MEMORY.md, "Categories from the framework").

The raw memory records name no tensor; the analyser can only say
TEMPORARY / AUTOGRAD_DETAIL / UNKNOWN by itself.  While a trace records
with profile_memory, this module tells the core what the optimizers'
tensors are, with one aip_memory_label() per block:

  - every parameter of every optimizer's param_groups -> PARAMETER,
  - their `.grad` tensors                              -> GRADIENT,
  - every tensor in `optimizer.state`                  -> OPTIMIZER_STATE,
  - the tensors passed to a top-level nn.Module call   -> INPUT
    (a module called while no other module runs on the thread: the
    model's own inputs, e.g. the batch, not its layers' intermediates),

after every optimizer.step() (all three: new gradients and state), and
for the optimizers that have not stepped in a trace, their parameters and
state: when it starts recording (dynamic profiling, aiprof run), or at a
profile's first step() or stop() in the trace (see Labeller).

Gradients are not labelled at the trace's start.  Torch's CPU allocator
reports no free of a block allocated before memory profiling began, so a
gradient from before the trace that zero_grad(set_to_none=True) releases
would stay in GRADIENT until the end of the timeline.  Labelled after the
first step instead, a gradient kept across steps (set_to_none=False) still
shows from the start (PREEXISTING), and one released is simply not seen, as
without labels.  Parameters and the built-in optimizers' state live across
steps (updated in place), so labelling them at the start is safe.  A block is named by its
storage: the storage's data pointer (the allocation's address, also for
views) and the storage's size in bytes; one label per storage and pass,
the first category met winning (parameters, then gradients, then state).

Optimizers are found without importing torch ourselves: torch calls
Optimizer._optimizer_step_code() after every step() (torch 1.13 and 2.x;
torch's own profiler hooks the same place), so a wrapper there
(_C.StepHook, python/_C/step_hook.c) sees every optimizer that steps, and
_after_step keeps a weak reference to it for the next trace start; the wrapper
is installed when a profile with profile_memory is made, so optimizers
stepping before its first trace are known there.  Once an optimizer's first step in a
trace has been handled here, its later steps are labelled by the adapter
straight from the C wrapper, with no Python in between.

Cost.  Storages are read by the PyTorch adapter (labels.cpp, one call per
list of tensors) when it is built with pybind11's headers, else here in
Python (~0.65 us a tensor).  With the adapter, turning labels on for a
trace is one C call (_C.labels_start: the input labels, and the
optimizers where they are labelled then).  Top-level module inputs: on
CPython 3.11 with the adapter's labels, the frame evaluator
(nn_module_calls.c) labels the arguments of each Module._call_impl frame
that runs with no module call below it on the thread, and no module hook
is installed.  Otherwise
top-level modules are found during a trace's first step with global
nn.Module hooks, which slow every module call; from the first optimizer or
profiler step on, only those modules keep hooks of their own (a pre-hook),
and the global ones are removed.
"""
import sys
import threading
import weakref

from .. import _C
from . import _torch_bridge

_PARAMETER = _C.MEM_PARAMETER
_OPTIMIZER_STATE = _C.MEM_OPTIMIZER_STATE
_GRADIENT = _C.MEM_GRADIENT
_INPUT = _C.MEM_INPUT
_DEVICE_TYPES = {"cpu": _C.DEVICE_CPU, "cuda": _C.DEVICE_CUDA, "npu": _C.DEVICE_NPU}

# id(optimizer) -> weak reference, for the optimizers seen stepping.  A
# dict, not a WeakSet: listing a WeakSet (a generator under an iteration
# guard) cost a trace's start ~10 us, a tenth of torch.profiler's start().
_optimizers = {}
_active = 0                       # Labellers currently labelling
_hooked = False                   # Optimizer._optimizer_step_code wrapped
_module_hooks = None              # the two global nn.Module hook handles (discovery)
_roots = weakref.WeakKeyDictionary()  # top-level module -> its pre-hook handle
_depth = threading.local()        # nn.Module calls running on this thread


def block_of(tensor):
    """(address, nbytes, device_type, device_index) of the storage holding
    `tensor`, or None (no storage: sparse, meta, ...)."""
    try:
        # The untyped storage: untyped_storage() (torch 2), _storage() (torch
        # 1.13, 0.1 us where storage() builds a TypedStorage in 0.6 us).
        get = getattr(tensor, "untyped_storage", None) or getattr(tensor, "_storage", None) \
            or tensor.storage
        storage = get()
        address = storage.data_ptr()
        nbytes = storage.nbytes()
        device = tensor.device
    except Exception:
        return None
    device_type = _DEVICE_TYPES.get(device.type)
    if not address or device_type is None:
        return None
    # torch's CPU device has no index: the adapter reports -1, and a label
    # matches only records of the same device type and index.
    return address, nbytes, device_type, -1 if device.index is None else device.index


def _params_of(optimizer):
    """The objects in the optimizer's param_groups' "params", in order."""
    return [p for group in getattr(optimizer, "param_groups", ()) for p in group.get("params", ())]


def _state_tensors(optimizer):
    """The values of optimizer.state's per-parameter dicts, in order."""
    state = getattr(optimizer, "state", None)
    out = []
    if state:
        for per_param in list(state.values()):
            if isinstance(per_param, dict):
                out += per_param.values()
    return out


def optimizer_tensors(optimizer, grads=True):
    """[(tensor, category)] of one optimizer: parameters, gradients (unless
    grads=False), state."""
    torch = sys.modules.get("torch")
    if torch is None:
        return []
    tensor_type = torch.Tensor
    params = [p for p in _params_of(optimizer) if isinstance(p, tensor_type)]
    out = [(p, _PARAMETER) for p in params]
    if grads:
        out += [(p.grad, _GRADIENT) for p in params if p.grad is not None]
    out += [(v, _OPTIMIZER_STATE) for v in _state_tensors(optimizer)
            if isinstance(v, tensor_type)]
    return out


def blocks(optimizers, grads=True):
    """{address: (nbytes, device_type, device_index, category)}, one per
    storage, the first category met winning."""
    seen = {}
    for opt in optimizers:
        for tensor, category in optimizer_tensors(opt, grads):
            b = block_of(tensor)
            if b is not None and b[0] not in seen:
                seen[b[0]] = (b[1], b[2], b[3], category)
    return seen


def _label(optimizers, grads=True, new_pass=1):
    """Label the optimizers' tensors in one pass (new_pass=0: go on with
    the pass labels_start began)."""
    native = _torch_bridge.native_labels()
    if native is not None:
        # One pass: a storage gets the first category met (parameters,
        # then gradients, then state), as blocks() below.
        for opt in optimizers:
            params = _params_of(opt)
            native.label(params, _PARAMETER, 0, new_pass)
            new_pass = 0
            if grads:
                native.label(params, _GRADIENT, 1, 0)
            native.label(_state_tensors(opt), _OPTIMIZER_STATE, 0, 0)
        return
    label = _C.memory_label
    for address, (nbytes, device_type, device_index, category) in \
            blocks(optimizers, grads).items():
        label(address, nbytes, category, device_type, device_index)


# id(optimizer) -> (weak reference, generation, state signature); by id, as
# a WeakKeyDictionary makes a weak reference at every lookup.
_state_seen = {}
_generation = 0                            # bumped when labelling (re)starts


def _state_signature(optimizer):
    """Which tensor objects the optimizer holds (parameters and state), by
    identity: cheap (no torch calls), and it changes when the optimizer
    creates or replaces a state tensor."""
    return tuple(id(t) for t in _params_of(optimizer) + _state_tensors(optimizer))


_last_stepped = None  # weak reference to the optimizer that stepped last


def _after_step(optimizer):
    # A training loop steps the same optimizer again and again: adding it
    # to the weak set makes a new weak reference each time, so skip that.
    global _last_stepped
    if _last_stepped is None or _last_stepped() is not optimizer:
        key = id(optimizer)
        try:
            ref = _optimizers.get(key)
            if ref is None or ref() is not optimizer:
                # The callback runs as the optimizer is freed, before its
                # id can be another object's.
                ref = weakref.ref(optimizer, lambda _, key=key: _optimizers.pop(key, None))
                _optimizers[key] = ref
        except TypeError:
            return
        _last_stepped = ref
    if not _active:
        return
    try:
        _label_after_step(optimizer)
    except Exception:
        pass  # labels must never break training
    _end_discovery()


def _live_optimizers():
    """The optimizers seen stepping that are still alive, oldest first."""
    out = []
    for ref in list(_optimizers.values()):
        opt = ref()
        if opt is not None:
            out.append(opt)
    return out


def _label_after_step(optimizer):
    """Parameters and state are updated in place by the optimizers: label
    them again only when the set of tensors changed (a new state tensor, a
    replaced one).  Gradients may be new blocks at every step
    (zero_grad(set_to_none=True)): always."""
    seen = _state_seen.get(id(optimizer))
    if seen is not None and seen[0]() is not optimizer:
        seen = None
    known = seen[2] if seen is not None and seen[1] == _generation else None
    native = _torch_bridge.native_labels()
    # The adapter walks the optimizer itself and returns an int signature
    # (0: a shape it does not know; then the signature is a Python tuple).
    sig = 0
    if native is not None:
        sig = native.label_step(optimizer, known if isinstance(known, int) else 0)
    if not sig:
        sig = _state_signature(optimizer)
        if sig == known:
            _label_tensors([getattr(p, "grad", None) for p in _params_of(optimizer)],
                           _GRADIENT)
        else:
            _label((optimizer,))
    ref = seen[0] if seen is not None else weakref.ref(
        optimizer, lambda _, key=id(optimizer): _state_seen.pop(key, None))
    _state_seen[id(optimizer)] = (ref, _generation, sig)
    # The next steps of this optimizer in this trace: the adapter straight
    # from the step hook (step_hook.c), while its signature is the adapter's.
    if isinstance(sig, int):
        _C.labels_fast_state(optimizer, _generation, sig)
    else:
        _C.labels_fast_state(None, 0, 0)


def _label_tensors(tensors, category):
    """One label per storage of `tensors` (None items skipped)."""
    native = _torch_bridge.native_labels()
    if native is not None:
        native.label(tensors, category, 0, 1)
        return
    label = _C.memory_label
    seen = set()
    for t in tensors:
        b = block_of(t) if t is not None else None
        if b is not None and b[0] not in seen:
            seen.add(b[0])
            label(b[0], b[1], category, b[2], b[3])


def _install():
    """Wrap Optimizer._optimizer_step_code once; False if torch lacks it."""
    global _hooked
    if _hooked:
        return True
    optim = sys.modules.get("torch.optim.optimizer")
    base = getattr(optim, "Optimizer", None)
    original = getattr(base, "_optimizer_step_code", None)
    if original is None:
        return False
    if not isinstance(original, _C.StepHook):
        # A C callable: it calls the original, then labels — the adapter
        # directly for an optimizer already handled in this trace, else
        # _after_step (step_hook.c).
        base._optimizer_step_code = _C.StepHook(original, _after_step)
    _hooked = True
    return True


def _input_tensors(args, kwargs):
    torch = sys.modules.get("torch")
    if torch is None:
        return []
    items = list(args) + list(kwargs.values() if kwargs else ())
    out = []
    for a in items:
        if isinstance(a, torch.Tensor):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            out += [t for t in a if isinstance(t, torch.Tensor)]
    return out


def _label_inputs(args, kwargs):
    native = _torch_bridge.native_labels()
    if native is not None and not kwargs and type(args) is tuple:
        native.label(args, _INPUT, 0, 1)  # it looks into list and tuple arguments too
        return
    tensors = _input_tensors(args, kwargs)
    if tensors:
        _label_tensors(tensors, _INPUT)


def _pre_forward(module, args, kwargs=None):
    """Global pre-hook while discovering: a module called with no other
    running on the thread is top-level; it gets hooks of its own."""
    depth = getattr(_depth, "n", 0)
    _depth.n = depth + 1
    if depth == 0 and _active:
        try:
            if module not in _roots:
                _add_root(module)
            _label_inputs(args, kwargs)
        except Exception:
            pass  # labels must never break training


def _post_forward(module, args, output):
    _depth.n = max(0, getattr(_depth, "n", 0) - 1)


def _root_pre(module, args):
    """Pre-hook of a top-level module, once discovery is over: it labels
    its inputs at every call (no post-hook: a module found top-level is
    taken to stay so, which spares the slow path of forward hooks)."""
    if _module_hooks is None and _active:
        try:
            _label_inputs(args, None)
        except Exception:
            pass  # labels must never break training


def _add_root(module):
    try:
        _roots[module] = module.register_forward_pre_hook(_root_pre)
    except (AttributeError, TypeError):
        pass


def _remove_roots():
    for handle in list(_roots.values()):
        handle.remove()
    _roots.clear()


def _install_module_hooks():
    """Global nn.Module hooks for a trace's first step (discovery of the
    top-level modules); they slow every module call."""
    global _module_hooks
    if _module_hooks is not None:
        return
    mod = sys.modules.get("torch.nn.modules.module")
    if mod is None or not hasattr(mod, "register_module_forward_pre_hook"):
        return
    _module_hooks = (mod.register_module_forward_pre_hook(_pre_forward),
                     mod.register_module_forward_hook(_post_forward))


def _end_discovery(force=False):
    """After a step: the top-level modules are known; drop the global hooks
    (only when no module is running, so that depths stay paired)."""
    global _module_hooks
    if _module_hooks is None or (getattr(_depth, "n", 0) and not force):
        return
    for h in _module_hooks:
        h.remove()
    _module_hooks = None


def _inputs_by_frames(on):
    """Top-level module inputs labelled from the frame evaluator
    (nn_module_calls.c: frames of Module._call_impl with no module call running
    on the thread), with no module hook at all; True if that is how they are
    labelled now, False when the hooks must do it (another Python, no
    adapter labels, a foreign evaluator)."""
    native = _torch_bridge.native_labels() if on else None
    code = _torch_bridge.module_call_code()
    if native is None or code is None:
        _C.inputs_by_frames(None, 0)
        return False
    return _C.inputs_by_frames(code, native.label_address)


def _unstepped():
    """{id: weak reference} of the live optimizers that have not stepped in
    the trace now labelling (_label_after_step has not seen them in this
    generation), oldest first."""
    out = {}
    for key, ref in list(_optimizers.items()):
        seen = _state_seen.get(key)
        if seen is None or seen[1] != _generation or seen[0]() is not ref():
            out[key] = ref
    return out


def _label_unstepped(optimizers):
    """Parameters and state of `optimizers` ({id: weak reference}), one pass."""
    if not optimizers:
        return
    try:
        if _torch_bridge.native_labels() is not None:
            unknown = _C.labels_optimizers(optimizers)
            if unknown:
                _label(unknown, grads=False, new_pass=0)
            return
        _label([opt for opt in (ref() for ref in optimizers.values()) if opt is not None],
               grads=False)
    except Exception:
        pass  # labels must never break training


class Labeller:
    """One profile's labels: on while its traces record with profile_memory.

    deferred=False (dynamic profiling, aiprof run): the optimizers seen so
    far are labelled when a trace starts.  deferred=True (a profile object):
    not then, but at the trace's first profile.step() or stop()
    (before_boundary), and only those that have not stepped by then — an
    optimizer's first step in a trace labels it whole anyway.  A label names
    the block live at its time, from before the trace too (docs/MEMORY.md),
    so the categories are the same, and a short profile's start() does not
    chase every parameter's storage (~13 us on cold caches, a seventh of
    torch.profiler's whole start())."""

    def __init__(self, deferred=False):
        self.on = False
        self.deferred = deferred
        self._pending = False
        # Optimizers are known from their steps (the step hook), installed
        # now so that those stepping before the first trace are labelled at
        # its start.  No heap scan (gc.get_objects()): on torch 1.13 it races
        # with tensors other threads are freeing, which torch reports as
        # tensors whose Python objects "will now fail".
        if not _hooked and "torch" in sys.modules:
            _install()

    def set_on(self, on):
        global _active
        if on == self.on:
            return
        if on:
            if not _hooked and ("torch" not in sys.modules or not _install()):
                return
            global _generation
            self.on = True
            _active += 1
            _generation += 1  # a new trace: everything is labelled again
            self._pending = self.deferred
            bridge = _torch_bridge
            if bridge.native_labels() is not None:
                # Inputs, optimizers and the generation in one C call; it
                # finds Module._call_impl's code itself, from the class the
                # bridge keeps (read directly: one Python call fewer).
                try:
                    by_frames, unknown = _C.labels_start(
                        _generation, bridge._module_class or bridge.module_class(),
                        None if self.deferred else _optimizers)
                except Exception:  # labels must never break training
                    by_frames, unknown = False, None
                if not by_frames:
                    _depth.n = 0  # a forward that raised must not hide later inputs
                    _install_module_hooks()
                if unknown:
                    try:
                        _label(unknown, grads=False, new_pass=0)
                    except Exception:
                        pass
                return
            _C.labels_generation(True, _generation)
            if not _inputs_by_frames(True):
                _depth.n = 0
                _install_module_hooks()
            if not self.deferred:
                try:
                    _label(_live_optimizers(), grads=False)
                except Exception:
                    pass
        else:
            self.on = False
            self._pending = False
            _active -= 1
            _C.labels_generation(_active > 0, _generation)
            if not _active:
                _inputs_by_frames(False)
                _end_discovery(force=True)
                _remove_roots()

    def before_boundary(self):
        """A profile's step() or stop() is about to end a step (and maybe
        the trace): the deferred labels, once per trace."""
        if self._pending and self.on:
            self._pending = False
            _label_unstepped(_unstepped())

    def stepped(self):
        """A profiler step passed: discovery of top-level modules is over."""
        if self.on:
            _end_discovery()
