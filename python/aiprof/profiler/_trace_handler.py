"""tensorboard_trace_handler(): where a profile's traces go, and whether
they are analysed when saved (torch_npu.profiler / torch.profiler)."""
import warnings

from ._validate import check_bool, check_path, check_worker_name

__all__ = ["tensorboard_trace_handler"]


class _TensorboardTraceHandler:
    """The callable tensorboard_trace_handler() returns."""

    def __init__(self, dir_name, worker_name, analyse_flag, async_mode, use_gzip):
        self.dir_name = dir_name
        self.worker_name = worker_name
        self.analyse_flag = analyse_flag
        self.async_mode = async_mode
        self.use_gzip = use_gzip

    def __call__(self, prof):
        if self.analyse_flag:
            prof.prof_if.analyse(async_mode=self.async_mode, use_gzip=self.use_gzip)

    def __repr__(self):
        return (f"tensorboard_trace_handler(dir_name={self.dir_name!r}, "
                f"worker_name={self.worker_name!r}, analyse_flag={self.analyse_flag}, "
                f"async_mode={self.async_mode}, use_gzip={self.use_gzip})")


def tensorboard_trace_handler(dir_name=None, worker_name=None, analyse_flag=True,
                              async_mode=False, use_gzip=False):
    """on_trace_ready handler: traces go to `dir_name` (default
    $ASCEND_WORK_PATH/profiling_data, else the current directory) as
    {worker_name}_{timestamp}_ascend_pt; with analyse_flag the C analyser
    writes ASCEND_PROFILER_OUTPUT/ at once, in a background process if
    async_mode.  use_gzip (torch.profiler's; pass it by keyword, torch's
    third parameter is torch_npu's analyse_flag) also writes
    trace_view.json.gz beside trace_view.json."""
    if dir_name is not None:
        dir_name = check_path("dir_name", dir_name)
    if worker_name is not None:
        worker_name = check_worker_name("worker_name", worker_name)
    analyse_flag = check_bool("analyse_flag", analyse_flag)
    if check_bool("use_gzip", use_gzip) and not analyse_flag:
        warnings.warn("tensorboard_trace_handler: use_gzip has no effect with "
                      "analyse_flag=False (no trace_view.json is written)", stacklevel=2)
    return _TensorboardTraceHandler(dir_name, worker_name, analyse_flag,
                                    check_bool("async_mode", async_mode), use_gzip)
