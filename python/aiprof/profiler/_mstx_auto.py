"""mstx's automatic ranges: the ones torch_npu adds by itself with mstx on.

The seed ("采集并解析mstx数据"): with mstx on, torch_npu records, without a
line of the program asking for them, the communication operators, the
DataLoader's time and the checkpoint saves.  torch_npu does it in
ProcessGroupHCCL (each HCCL call inside a range in the domain
"communication" whose message is a JSON text) and in a patch of
DataLoader's iterators and torch.serialization.save (ranges "dataloader"
and "save_checkpoint" in the domain "default").  aiprof does the same while
a trace records with mstx on, so the ranges go wherever the program's own
mstx ranges go (trace_view.json's "mstx" events, the db's PYTORCH_API rows
of type mstx, op_statistic's mstx rows, the summary) and are filtered by
mstx_domain_include/_exclude like them (in libaiprof: a dropped domain
records nothing).

  - torch.distributed: every call the communication capture sees
    (_distributed.py's wrappers; the collectives that the PyTorch adapter
    records instead, from c10d's ops, get their range there,
    adapters/torch/comm.cpp), from its launch to its completion like the
    communication op, message comm_message().
  - DataLoader: each call of its iterator's __next__ (the base class's, which
    the single- and multi-process iterators share; it runs in the process
    that iterates, workers or not), the call that finds the epoch over
    included: it is time spent in the DataLoader too.
  - torch.save (and torch.serialization.save, the same function).
  - torch.profiler.itt's range_push / range_pop / mark (and its range(),
    which calls them): besides going to ITT (VTune) as before, each is an
    mstx range or mark in the domain "itt", as aiprof.profiler.itt's are.
    Torch's ITT calls go straight to libittnotify, which no profiler but
    VTune sees; the module's functions are the one place to catch them, so
    a name bound before the trace (`from torch.profiler.itt import
    range_push`) is not caught.

Nothing is replaced while no trace records with mstx on: set_on(True)
installs the wrappers, set_on(False) puts the originals back (unless
something replaced them after us: then ours stays and passes the calls
through).  A wrapper never changes what the call does: its return value and
exceptions pass through, and a range it could not record is simply absent.
"""
import functools
import sys

from .. import _C

DOMAIN_COMM = "communication"   # torch_npu's DOMAIN_COMMUNICATION
DOMAIN_DEFAULT = "default"      # its patch calls range_start(message) without a domain

comm_on = False                 # communication calls get ranges now

_on = False
_saved = []                     # (owner, attribute, original, wrapper) we replaced

# torch dtype (its Python name) -> the HCCL data type name torch_npu writes
# (getMstxHcclMsg); bool travels as uint8 in HCCL.  Others are "na", as there.
_HCCL_TYPES = {
    "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
    "uint8": "uint8", "bool": "uint8", "uint16": "uint16", "uint32": "uint32",
    "uint64": "uint64", "float16": "fp16", "float32": "fp32", "float64": "fp64",
    "bfloat16": "bfp16",
}


def hccl_type(dtype):
    """The seed's dataType of a torch dtype name ("float32" -> "fp32")."""
    return _HCCL_TYPES.get(dtype or "", "na")


def comm_message(op, count, dtype, group, src=None, dst=None):
    """The message of a communication range, in the seed's format:
    {"streamId": ...,"count": ...,"dataType": ...,["srcRank": ...,]
    ["destRank": ...,]"groupName": ...,"opName": ...}.  There is no device
    stream here: streamId is "N/A".  src/dst are group ranks (a recv's
    sender, a send's receiver); "N/A" where the sender is only known after
    the call (recv from any source)."""
    parts = ['{"streamId": "N/A"', f'"count": "{int(count)}"',
             f'"dataType": "{hccl_type(dtype)}"']
    if src is not None:
        parts.append(f'"srcRank": "{"N/A" if src < 0 else int(src)}"')
    if dst is not None:
        parts.append(f'"destRank": "{"N/A" if dst < 0 else int(dst)}"')
    parts.append(f'"groupName": "{_json_text(group)}"')
    parts.append(f'"opName": "{op}"}}')
    return ",".join(parts)


def _json_text(s):
    return str(s).replace("\\", "\\\\").replace('"', '\\"')


def range_start(message, domain):
    """An mstx range id (0: not recorded: nothing records, or the domain is
    filtered out)."""
    try:
        return _C.range_start(message, domain)
    except Exception:  # never the program's problem
        return 0


def range_end(range_id):
    if range_id:
        try:
            _C.range_end(range_id)
        except Exception:
            pass


def _ranged(fn, message):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if not _on:
            return fn(*args, **kwargs)
        rid = range_start(message, DOMAIN_DEFAULT)
        try:
            return fn(*args, **kwargs)
        finally:
            range_end(rid)
    wrapper._aiprof_original = fn
    return wrapper


def _replace(owner, attr, message):
    fn = owner.__dict__.get(attr) if isinstance(owner, type) else getattr(owner, attr, None)
    if fn is None or hasattr(fn, "_aiprof_original"):
        return None
    w = _ranged(fn, message)
    setattr(owner, attr, w)
    _saved.append((owner, attr, fn, w))
    return w


DOMAIN_ITT = "itt"              # aiprof.profiler.itt's domain


def _itt_push(msg, *args, **kwargs):
    _C.range_push(msg, DOMAIN_ITT)


def _itt_pop(*args, **kwargs):
    _C.range_pop()


def _itt_mark(msg, *args, **kwargs):
    _C.mark(msg, DOMAIN_ITT)


def _also(fn, record):
    """fn, which also records while mstx is on, once fn succeeded (a call
    torch refuses — no ITT in this build, a message not a str — leaves no
    half of a range behind)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        result = fn(*args, **kwargs)
        if _on:
            try:
                record(*args, **kwargs)
            except Exception:  # never the program's problem
                pass
        return result
    wrapper._aiprof_original = fn
    return wrapper


def _install_itt(torch):
    itt = getattr(getattr(torch, "profiler", None), "itt", None)
    if itt is None:
        return
    for attr, record in (("range_push", _itt_push), ("range_pop", _itt_pop),
                         ("mark", _itt_mark)):
        fn = getattr(itt, attr, None)
        if fn is None or hasattr(fn, "_aiprof_original"):
            continue
        w = _also(fn, record)
        setattr(itt, attr, w)
        _saved.append((itt, attr, fn, w))


def _install(torch):
    try:
        base = torch.utils.data.dataloader._BaseDataLoaderIter
    except AttributeError:  # a torch without it: no dataloader ranges
        base = None
    if base is not None:
        _replace(base, "__next__", "dataloader")
    ser = getattr(torch, "serialization", None)
    original = getattr(ser, "save", None) if ser is not None else None
    w = _replace(ser, "save", "save_checkpoint") if original is not None else None
    if w is not None and getattr(torch, "save", None) is original:
        setattr(torch, "save", w)
        _saved.append((torch, "save", original, w))
    _install_itt(torch)


def _uninstall():
    while _saved:
        owner, attr, original, w = _saved.pop()
        current = owner.__dict__.get(attr) if isinstance(owner, type) else \
            getattr(owner, attr, None)
        if current is w:
            setattr(owner, attr, original)
        # else someone replaced it after us: ours stays, passing calls through


def set_on(on, distributed=None):
    """Called with the recording state whenever it may change (start, each
    step, stop); `on` is False unless the profile has mstx on.
    `distributed` is _distributed's install-the-wrappers function."""
    global _on, comm_on
    on = bool(on)
    torch = sys.modules.get("torch")
    if on and not _on and torch is not None:
        _install(torch)
    elif not on and _on:
        _uninstall()
    _on = on and torch is not None
    comm_on = on
    if on and distributed is not None:
        distributed()
