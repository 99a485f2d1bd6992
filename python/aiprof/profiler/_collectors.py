"""The collectors a profile switches on while its traces record.

The C session decides when a trace records (schedule, steps); after every
start/step/stop the profile calls Collectors.set_recording() with the
session's state, so the hooks below cost nothing during wait and warmup
steps and after the profile:

  - ATen ops, record_function ranges and CPU memory: the PyTorch adapter;
  - with profile_memory: labels for the optimizers' parameters, gradients
    and state (_memory_labels.py);
  - with_stack: the C call-stack tracer (python_function events, with or
    without torch; its stacks go on ATen ops);
  - with_modules: nn.Module calls seen as frames of Module._call_impl by the
    frame evaluator (CPython 3.11), else global nn.Module forward hooks,
    feeding the module path;
  - gc_detect_threshold: a gc.callbacks entry;
  - torch.distributed calls as communication operations (_distributed.py);
  - with mstx on: the ranges torch_npu adds by itself (communication,
    DataLoader fetches, torch.save: _mstx_auto.py).
"""
import gc
import os
import sys
import threading
import warnings

from .. import _C
from . import _distributed, _memory_labels, _mstx_auto, _torch_bridge

# aiprof's own calls (profile.step(), the collectors) are no python_function
# events: they are the profiler's, not the program's (pystack_text.c).
_C.tracer_own_dir(os.path.dirname(os.path.dirname(__file__)) + os.sep)


class Collectors:
    def __init__(self, cpu, record_shapes, profile_memory, with_stack, with_modules, gc_on,
                 with_flops=False, mstx=False, defer_labels=False, labels_follow_core=False):
        self.ops = _torch_bridge.OpCapture(record_shapes, with_stack, with_modules,
                                           profile_memory, with_flops) if cpu else None
        self.cpu = cpu
        self.with_stack = cpu and with_stack
        self.with_modules = cpu and with_modules
        self.gc_on = gc_on
        self.mstx = mstx
        self.recording = False
        self._tracer = False
        self._module_handles = None
        self._gc_added = False
        self._thread_hook = False
        self._hook_warned = False
        # defer_labels: the owner calls before_boundary() (a profile object).
        self._labels = _memory_labels.Labeller(defer_labels) \
            if self.ops is not None and profile_memory else None
        # labels_follow_core: the collectors are on for a whole dynamic
        # collection, warmup included, but labels only while the library
        # records (the owner calls sync_labels() after each step): a label
        # given before is dropped by the library, and the optimizer would be
        # taken as labelled for the rest of the trace.
        self._labels_follow_core = labels_follow_core

    def set_recording(self, recording):
        # Called at every start, step and stop: a collector that is neither
        # wanted nor on is not called at all (each Python call costs a start
        # after a training loop ~1-2 us on cold caches).
        ops = self.ops
        if ops is not None:
            ops.set_recording(recording)
        torch_ops = ops is not None and ops.on
        # with_stack's python_function events stand on their own (a program
        # without torch gets them too); module paths only travel on ATen ops.
        if self.with_stack or self._tracer:
            self._set_tracer(recording and self.with_stack)
        if self.with_modules or self._module_handles is not None:
            self._set_modules(recording and torch_ops and self.with_modules)
        if self.gc_on or self._gc_added:
            self._set_gc(recording and self.gc_on)
        # Before _distributed: it tells the adapter whether to add the ranges.
        if self.mstx or _mstx_auto.comm_on or _mstx_auto._on:  # (set_on's state)
            _mstx_auto.set_on(recording and self.mstx, _distributed.install)
        if self.cpu or not recording:
            _distributed.set_recording(recording)
        self.recording = recording
        self.sync_labels()

    def sync_labels(self):
        """Labels on while this records memory (and, for a dynamic
        collection, while the library records)."""
        if self._labels is not None:
            # After the adapter: labels are recorded only while memory is.
            on = self.recording and self.ops.on and self.ops.profile_memory
            if on and self._labels_follow_core:
                on = _C.is_recording()
            self._labels.set_on(on)

    def before_boundary(self):
        """Before profile.step() or stop() hands over to the session (which
        may end the trace): labels still owed to this trace."""
        if self._labels is not None:
            self._labels.before_boundary()

    def stepped(self):
        """After profile.step(), once the session moved on."""
        if self._labels is not None:
            self._labels.stepped()

    def stop(self):
        self.set_recording(False)

    def _set_tracer(self, on):
        if on and self._tracer:
            self._check_tracer()
            return
        if on == self._tracer:
            return
        self._tracer = on
        if on:
            if _C.tracer_start():
                self._warn_hook()
            # In profile mode, new threads install the hook themselves,
            # unless someone else already uses threading's profile slot
            # (the frame evaluator of eval-frame mode covers every thread).
            self._thread_hook = (_C.tracer_mode() == "profile"
                                 and threading.getprofile() is None)
            if self._thread_hook:
                threading.setprofile(_C._tracer_thread_hook)
        else:
            if self._thread_hook and threading.getprofile() is _C._tracer_thread_hook:
                threading.setprofile(None)
            _C.tracer_stop()

    def _check_tracer(self):
        """Another profiler (torch.profiler with_stack, a debugger) may have
        replaced the call-stack hook: put it back if nobody holds the slot,
        else say once that stacks are missing."""
        state = _C.tracer_hook_state()
        if state == _C.TRACER_HOOK_NONE:
            _C.tracer_start()
        elif state == _C.TRACER_HOOK_OTHER:
            self._warn_hook()

    def _warn_hook(self):
        """Once per profile."""
        if not self._hook_warned:
            self._hook_warned = True
            warnings.warn("aiprof: another profiler holds Python's profile hook (torch.profiler "
                          "with with_stack?); ops get no call stack while it does",
                          RuntimeWarning, stacklevel=5)

    def _set_modules(self, on):
        """Module calls are followed through the frame evaluator where it
        can be ours (frames of Module._call_impl), else with torch's global
        forward hooks, which send every module call down _call_impl's slow
        path."""
        if on == (self._module_handles is not None):
            return
        if on:
            module = sys.modules["torch"].nn.modules.module
            _C.modules_enable(True)
            call_impl = _torch_bridge.module_call_code()
            if call_impl is not None and _C.modules_by_frames(call_impl):
                self._module_handles = ()
            else:
                pre = module.register_module_forward_pre_hook(_C.module_pre_hook)
                try:  # torch >= 2.1: the hook runs after a forward that raised too
                    post = module.register_module_forward_hook(_C.module_hook, always_call=True)
                except TypeError:  # older: the path heals when an outer module returns
                    post = module.register_module_forward_hook(_C.module_hook)
                self._module_handles = (pre, post)
        else:
            if self._module_handles:
                for h in self._module_handles:
                    h.remove()
            else:
                _C.modules_by_frames(None)
            self._module_handles = None
            _C.modules_enable(False)

    def _set_gc(self, on):
        if on == self._gc_added:
            return
        self._gc_added = on
        if on:
            gc.callbacks.append(_C.gc_callback)
        else:
            try:
                gc.callbacks.remove(_C.gc_callback)
            except ValueError:
                pass
