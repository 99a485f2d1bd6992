"""torch.distributed: process groups and their communication, recorded.

While a profile's trace records CPU activity, the torch.distributed calls a
program makes (all_reduce, broadcast, reduce, all_gather, gather, scatter,
reduce_scatter, all_to_all, barrier and their tensor forms; send, recv,
isend, irecv) are recorded as communication operations through aiprof._C
(libaiprof's aip_comm_*): the process group with its members' global
ranks, bytes, element count and dtype of this rank's tensors, root and
peer global ranks, tag, and the group's collective sequence number, which
names one collective alike on every member (they call a group's
collectives in the same order).  An async_op call or isend/irecv ends at
the wait() on the Work it returned.

The wrappers replace the functions of torch.distributed (and its
distributed_c10d module) once, when a profile first records with the
default process group initialised; while nothing records they only test
one flag.  Code that imported a function by name before that keeps the
original.  Where the PyTorch adapter can (adapters/torch/comm.cpp), the
collectives are recorded there instead, from the c10d::* ops that every
collective of this torch goes through — DistributedDataParallel's gradient
buckets included — from their launch to the completion of their Work;
the wrappers then record point-to-point calls only.  Both name a group by
the address of its C++ ProcessGroup, so they share its id and sequence.

With mstx on, each recorded call is also an mstx range in the domain
"communication" (_mstx_auto.py; the adapter's collectives get theirs in
the adapter), even where the trace records no CPU activity.

prepare() gives the rank to libaiprof (profiler_info_{rank}.json) and
profiler_metadata.json's parallel_group_info, as torch_npu writes it:
{group key: {"group_name", "group_rank", "global_ranks"}}.
"""
import ctypes
import functools
import json
import sys
import threading

from .. import _C
from . import _mstx_auto

_LIBS = {"mpi": _C.COMM_LIB_MPI, "gloo": _C.COMM_LIB_GLOO, "nccl": _C.COMM_LIB_NCCL,
         "hccl": _C.COMM_LIB_HCCL}
_COLL, _SEND, _RECV = _C.COMM_OP_COLLECTIVE, _C.COMM_OP_SEND, _C.COMM_OP_RECV
_KEY_BASE = 0xA1 << 56          # group keys of this module, apart from MPI handles

_on = False                     # a trace records: the wrappers record
_installed = False
_groups = {}                    # process group -> (id or None, name, ranks, lib)


_initialized = None  # torch.distributed.is_initialized, once it is available


def _dist():
    """torch.distributed if it is initialised, else None.  (Asked twice at
    every start: is_available() is asked once.)"""
    global _initialized
    try:
        if _initialized is None:
            d = sys.modules.get("torch.distributed")
            if d is None or not d.is_available():
                return None
            _initialized = d.is_initialized
        return sys.modules["torch.distributed"] if _initialized() else None
    except Exception:
        return None


def _group_info(d, pg):
    """(name, group_name, my group rank, global ranks) of a process group."""
    c10d = d.distributed_c10d
    default = c10d._get_default_group()
    name = c10d._pg_names.get(pg) or ("0" if pg is default else str(len(_groups)))
    table = c10d._pg_group_ranks.get(pg, {})
    ranks = [g for g, _ in sorted(table.items(), key=lambda kv: kv[1])]
    me = table.get(d.get_rank(), -1)
    return name, "default_group" if pg is default else name, me, ranks


def _process_groups(d):
    c10d = d.distributed_c10d
    return [pg for pg in list(c10d._pg_group_ranks) if isinstance(pg, c10d.ProcessGroup)]


def prepare():
    """Before a trace starts: the rank, and parallel_group_info's JSON text
    (None without torch.distributed)."""
    d = _dist()
    if d is None:
        return None
    try:
        _C.set_rank(d.get_rank())
        info = {}
        for pg in _process_groups(d):
            name, group_name, me, ranks = _group_info(d, pg)
            info[name] = {"group_name": group_name, "group_rank": me, "global_ranks": ranks}
        return json.dumps(info)
    except Exception:   # a torch whose internals differ: no metadata, the profile goes on
        return None


def distributed_info():
    """torch.profiler's "distributedInfo" (its _KinetoProfile.start_trace()
    adds it as add_metadata_json when a process group exists) as JSON text:
    backend, rank, world_size, and on torch 2.x pg_count, pg_config and
    nccl_version; None without torch.distributed.  The trace writer puts it
    first among the metadata keys: HTA takes a trace's rank from it."""
    d = _dist()
    if d is None:
        return None
    try:
        backend = d.get_backend()
        info = {"backend": backend, "rank": d.get_rank(), "world_size": d.get_world_size()}
        if hasattr(d, "get_pg_count"):
            info["pg_count"] = d.get_pg_count()
        configs = getattr(d.distributed_c10d, "_get_all_pg_configs", None)
        if configs is not None:
            info["pg_config"] = configs()
        if backend == "nccl":
            torch = sys.modules.get("torch")
            version = torch.cuda.nccl.version() if torch is not None else None
            if version:
                info["nccl_version"] = ".".join(str(v) for v in version)
        return json.dumps(info)
    except Exception:   # a torch whose internals differ: derived from the groups instead
        return None


_adapter_comm = None            # the adapter's comm capture (ctypes functions), or False
_adapter_on = False             # it records the collectives now
_adapter_mstx = False           # and gives them their mstx ranges


def _adapter():
    global _adapter_comm
    if _adapter_comm is None:
        _adapter_comm = False
        try:
            from . import _torch_bridge
            lib = _torch_bridge.adapter()
            if lib is not None and hasattr(lib, "aiprof_torch_comm_enable"):
                lib.aiprof_torch_comm_enable.argtypes = [ctypes.c_int, ctypes.c_int]
                lib.aiprof_torch_comm_group.argtypes = [
                    ctypes.c_uint64, ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint32),
                    ctypes.c_int]
                if hasattr(lib, "aiprof_torch_comm_mstx"):
                    lib.aiprof_torch_comm_mstx.argtypes = [ctypes.c_int]
                    lib.aiprof_torch_comm_group_name.argtypes = [ctypes.c_uint64,
                                                                 ctypes.c_char_p]
                _adapter_comm = lib
        except Exception:
            _adapter_comm = False
    return _adapter_comm


def _cpp_address(pg):
    """The address of the C++ ProcessGroup behind `pg` (a pybind11 object:
    its value pointer follows the object header), the key both the
    wrappers and the adapter use; None if it cannot be read."""
    try:
        addr = ctypes.c_void_p.from_address(id(pg) + 2 * ctypes.sizeof(ctypes.c_void_p)).value
        return addr or None
    except Exception:
        return None


def install():
    """The wrappers in place if torch.distributed is initialised (mstx's
    ranges need them even where the trace records no CPU activity)."""
    d = _dist()
    if d is not None and not _installed:
        _install()
        try:  # dynamic profiling has no prepare(): the next traces get the rank
            _C.set_rank(d.get_rank())
        except Exception:
            pass
    return d


def set_recording(on):
    global _on, _adapter_on
    d = _dist() if on else None
    if d is not None and not _installed:
        install()
    _on = bool(on) and _installed
    lib = _adapter() if (on and d is not None) or _adapter_on else False
    if not lib:
        return
    if on and d is not None:
        for pg in _process_groups(d):
            _group(d, pg)
        if not _adapter_on:  # once per trace: steps call this too
            lib_id = _LIBS.get(str(d.get_backend()).lower(), 0)
            _adapter_on = lib.aiprof_torch_comm_enable(1, lib_id) == 0
    elif _adapter_on:
        lib.aiprof_torch_comm_enable(0, 0)
        _adapter_on = False
    _set_adapter_mstx(lib, _adapter_on and _mstx_auto.comm_on)


def _set_adapter_mstx(lib, on):
    global _adapter_mstx
    if hasattr(lib, "aiprof_torch_comm_mstx"):
        _adapter_mstx = lib.aiprof_torch_comm_mstx(int(on)) == 0 and on


def _group(d, pg):
    if pg is None:
        pg = d.distributed_c10d._get_default_group()
    g = _groups.get(pg)
    if g is None:
        name, _, me, ranks = _group_info(d, pg)
        try:
            lib = _LIBS.get(str(d.get_backend(pg)).lower(), 0)
        except Exception:
            lib = 0
        key = _cpp_address(pg) or _KEY_BASE + len(_groups)
        gid = _C.comm_group(key, name, max(me, 0), ranks)
        g = _groups[pg] = (gid, name, ranks, lib)
        cpp = _adapter()
        if cpp and gid is not None and key < _KEY_BASE:
            arr = (ctypes.c_uint32 * max(len(ranks), 1))(*ranks)
            cpp.aiprof_torch_comm_group(key, gid, arr, len(ranks))
            if hasattr(cpp, "aiprof_torch_comm_group_name"):
                cpp.aiprof_torch_comm_group_name(key, name.encode("utf-8", "replace"))
    return g


def _group_names(d, pg):
    """(name, global ranks) of a group, for mstx's groupName and peers,
    without registering it (nothing may record communication)."""
    if pg is None:
        pg = d.distributed_c10d._get_default_group()
    g = _groups.get(pg)
    if g is not None:
        return g[1], g[2]
    name, _, _, ranks = _group_info(d, pg)
    return name, ranks


# torch.distributed's function -> the HCCL operator torch_npu's range names
# (opName); gather has no HCCL operator (torch_npu runs it as sends and
# receives), barrier none with data here (torch_npu all-reduces one float).
_HCCL_OPS = {
    "all_reduce": "HcclAllreduce", "broadcast": "HcclBroadcast", "reduce": "HcclReduce",
    "all_gather": "HcclAllGather", "all_gather_into_tensor": "HcclAllGather",
    "_all_gather_base": "HcclAllGather", "gather": "HcclGather", "scatter": "HcclScatter",
    "reduce_scatter": "HcclReduceScatter", "reduce_scatter_tensor": "HcclReduceScatter",
    "_reduce_scatter_base": "HcclReduceScatter", "all_to_all": "HcclAlltoAllV",
    "all_to_all_single": "HcclAlltoAll", "barrier": "HcclBarrier",
    "send": "HcclSend", "isend": "HcclSend", "recv": "HcclRecv", "irecv": "HcclRecv",
}


def _mstx_message(d, attr, kind, a, group_arg, peer, count, dtype):
    name, ranks = _group_names(d, a.get(group_arg))
    op = _HCCL_OPS.get(attr, attr)
    if attr == "all_to_all_single" and (a.get("output_split_sizes") or
                                        a.get("input_split_sizes")):
        op = "HcclAlltoAllV"
    # peers are group ranks in the message, global ones in torch.distributed's call
    rank = ranks.index(peer) if peer is not None and peer in ranks else -1
    return _mstx_auto.comm_message(op, count, dtype, name,
                                   src=rank if kind == _RECV else None,
                                   dst=rank if kind == _SEND else None)


def _global_rank(d, a, arg, group_arg):
    """The global rank a src/dst parameter names: torch 2.x also takes it as
    group_src / group_dst, a rank within the call's group."""
    r = a.get(arg)
    if r is None:
        g = a.get("group_" + arg)
        if g is not None:
            ranks = _group_names(d, a.get(group_arg))[1]
            r = ranks[g] if 0 <= g < len(ranks) else -1
    return -1 if r is None else r


def _tensor(t):
    """(bytes, count, dtype) of a tensor or a list of tensors."""
    if isinstance(t, (list, tuple)):
        parts = [_tensor(x) for x in t]
        return (sum(p[0] for p in parts), sum(p[1] for p in parts),
                parts[0][2] if parts and len({p[2] for p in parts}) == 1 else None)
    n = t.numel()
    return n * t.element_size(), n, str(t.dtype).replace("torch.", "")


_inside = threading.local()   # depth of recorded calls on this thread (wrapper)


class _Work:
    """The Work of an async call: its wait() ends the recorded op."""

    def __init__(self, work, record):
        self._work, self._record = work, record

    def wait(self, *args, **kwargs):
        try:
            r = self._work.wait(*args, **kwargs)
        except BaseException:
            if self._record is not None:
                self._record(None)   # its mstx range ends; the op waits for a wait() that works
            raise
        rec, self._record = self._record, None
        if rec is not None:
            rec(_C.comm_ticks())
        return r

    def __getattr__(self, name):
        return getattr(self._work, name)


def _wrap(d, fn, attr, name, kind, what, group_arg, root_arg=None, peer_arg=None,
          async_default=False):
    """A wrapper recording fn.  what(bound args) -> tensors of this rank's
    part; group_arg / root_arg / peer_arg name parameters."""
    import inspect
    sig = inspect.signature(fn)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        # torch 2.x implements some calls through others (send() calls the
        # module's isend(), which is this module's wrapper then): the outer
        # call is the user's, the inner one is not recorded again.
        if getattr(_inside, "depth", 0):
            return fn(*args, **kwargs)
        comm = _on and not (kind == _COLL and _adapter_on) and _C.comm_recording()
        mstx = _mstx_auto.comm_on and not (kind == _COLL and _adapter_mstx)
        if not comm and not mstx:
            return fn(*args, **kwargs)
        try:
            b = sig.bind(*args, **kwargs)
            b.apply_defaults()
            a = b.arguments
            gid, gname, ranks, lib = _group(d, a.get(group_arg)) if comm else (None,) * 4
            nbytes, count, dtype = _tensor(what(a)) if what else (0, 0, None)
            root = _global_rank(d, a, root_arg, group_arg) if root_arg else -1
            peer = _global_rank(d, a, peer_arg, group_arg) if peer_arg else -1
            tag = a.get("tag", -1) if kind != _COLL else -1
            nb = bool(a.get("async_op", async_default))
            seq = _C.comm_next_seq(gid) if comm and kind == _COLL and gid is not None else 0
            msg = _mstx_message(d, attr, kind, a, group_arg, peer, count, dtype) if mstx \
                else None
        except Exception:   # arguments torch will reject: let it say so
            return fn(*args, **kwargs)
        rid = _mstx_auto.range_start(msg, _mstx_auto.DOMAIN_COMM) if msg else 0
        start = _C.comm_ticks()
        _inside.depth = 1
        try:
            r = fn(*args, **kwargs)
        except BaseException:
            _mstx_auto.range_end(rid)
            raise
        finally:
            _inside.depth = 0
        end = _C.comm_ticks()
        if kind == _RECV and peer in (None, -1) and isinstance(r, int):
            peer = r    # recv(src=None) returns the sender

        ended = []

        def record(at, peer=peer):
            if comm and at is not None:
                _C.comm_op(name, start, at, -1 if gid is None else gid, kind, lib, nbytes,
                           count, dtype, seq, -1 if peer is None else peer,
                           -1 if root is None else root, -1 if tag is None else tag, nb)
            if not ended:   # once, though a failed wait() may be followed by another
                ended.append(True)
                _mstx_auto.range_end(rid)
        if nb and r is not None and hasattr(r, "wait"):
            return _Work(r, record)
        record(end)
        return r
    wrapper._aiprof_original = fn
    return wrapper


def _install():
    global _installed
    d = sys.modules["torch.distributed"]
    c10d = d.distributed_c10d
    first = lambda key: lambda a: a[key]
    specs = {
        "all_reduce": ("all_reduce", _COLL, first("tensor"), "group", None, None),
        "broadcast": ("broadcast", _COLL, first("tensor"), "group", "src", None),
        "reduce": ("reduce", _COLL, first("tensor"), "group", "dst", None),
        "all_gather": ("all_gather", _COLL, first("tensor"), "group", None, None),
        "all_gather_into_tensor": ("all_gather_into_tensor", _COLL, first("input_tensor"),
                                   "group", None, None),
        "_all_gather_base": ("all_gather_into_tensor", _COLL, first("input_tensor"), "group",
                             None, None),
        "gather": ("gather", _COLL, first("tensor"), "group", "dst", None),
        "scatter": ("scatter", _COLL, first("tensor"), "group", "src", None),
        "reduce_scatter": ("reduce_scatter", _COLL, first("input_list"), "group", None, None),
        "reduce_scatter_tensor": ("reduce_scatter_tensor", _COLL, first("input"), "group",
                                  None, None),
        "_reduce_scatter_base": ("reduce_scatter_tensor", _COLL, first("input"), "group", None,
                                 None),
        "all_to_all": ("all_to_all", _COLL, first("input_tensor_list"), "group", None, None),
        "all_to_all_single": ("all_to_all_single", _COLL, first("input"), "group", None, None),
        "barrier": ("barrier", _COLL, None, "group", None, None),
        "send": ("send", _SEND, first("tensor"), "group", None, "dst"),
        "recv": ("recv", _RECV, first("tensor"), "group", None, "src"),
        "isend": ("isend", _SEND, first("tensor"), "group", None, "dst"),
        "irecv": ("irecv", _RECV, first("tensor"), "group", None, "src"),
    }
    for attr, (name, kind, what, group, root, peer) in specs.items():
        fn = getattr(c10d, attr, None)
        if fn is None or hasattr(fn, "_aiprof_original"):
            continue
        w = _wrap(d, fn, attr, name, kind, what, group, root, peer,
                  async_default=attr in ("isend", "irecv"))
        setattr(c10d, attr, w)
        if getattr(d, attr, None) is fn:
            setattr(d, attr, w)
    _installed = True
