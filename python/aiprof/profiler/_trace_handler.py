"""tensorboard_trace_handler(): where a profile's traces go, and whether
they are analysed when saved (torch_npu.profiler / torch.profiler)."""
import warnings

from ._validate import check_bool, check_path, check_trace_format, check_worker_name

__all__ = ["tensorboard_trace_handler"]


class _TensorboardTraceHandler:
    """The callable tensorboard_trace_handler() returns."""

    def __init__(self, dir_name, worker_name, analyse_flag, async_mode, use_gzip,
                 trace_format="torch_npu"):
        self.dir_name = dir_name
        self.worker_name = worker_name
        self.analyse_flag = analyse_flag
        self.async_mode = async_mode
        self.use_gzip = use_gzip
        self.trace_format = trace_format

    def __call__(self, prof):
        if self.analyse_flag:
            prof.prof_if.analyse(async_mode=self.async_mode, use_gzip=self.use_gzip,
                                 trace_format=self.trace_format)

    def __repr__(self):
        return (f"tensorboard_trace_handler(dir_name={self.dir_name!r}, "
                f"worker_name={self.worker_name!r}, analyse_flag={self.analyse_flag}, "
                f"async_mode={self.async_mode}, use_gzip={self.use_gzip}, "
                f"trace_format={self.trace_format!r})")


def tensorboard_trace_handler(dir_name=None, worker_name=None, analyse_flag=True,
                              async_mode=False, use_gzip=False, *, trace_format="torch_npu"):
    """on_trace_ready handler: traces go to `dir_name` (default
    $ASCEND_WORK_PATH/profiling_data, else the current directory) as
    {worker_name}_{timestamp}_ascend_pt; with analyse_flag the C analyser
    writes ASCEND_PROFILER_OUTPUT/ at once, in a background process if
    async_mode.  use_gzip (torch.profiler's; pass it by keyword, torch's
    third parameter is torch_npu's analyse_flag) also writes
    trace_view.json.gz beside trace_view.json.

    trace_format (aiprof's, keyword only): "torch_npu" (default) writes
    trace_view.json as torch_npu does — a JSON array with string ts of
    absolute epoch µs, what msprof-analyze, MindStudio Insight and Perfetto
    read; "kineto" as torch.profiler does — {"traceEvents": [...],
    "baseTimeNanoseconds": N, ...} with numeric ts relative to N and
    add_metadata entries as top-level keys, for viewers that read ts as a
    float (speedscope, the old chrome://tracing); "perfetto" writes
    torch_npu's trace_view.json and also trace.perfetto-trace, Perfetto's
    own protobuf trace (exact ns, about a fifth of the JSON's size), the
    form to open in ui.perfetto.dev."""
    check_trace_format("trace_format", trace_format)
    if dir_name is not None:
        dir_name = check_path("dir_name", dir_name)
    if worker_name is not None:
        worker_name = check_worker_name("worker_name", worker_name)
    analyse_flag = check_bool("analyse_flag", analyse_flag)
    if check_bool("use_gzip", use_gzip) and not analyse_flag:
        warnings.warn("tensorboard_trace_handler: use_gzip has no effect with "
                      "analyse_flag=False (no trace_view.json is written)", stacklevel=2)
    return _TensorboardTraceHandler(dir_name, worker_name, analyse_flag,
                                    check_bool("async_mode", async_mode), use_gzip, trace_format)
