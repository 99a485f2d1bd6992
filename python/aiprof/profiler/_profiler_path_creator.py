"""ProfPathCreator: where the next profile writes its result directories.

torch_npu's custom on_trace_ready handlers (see the seed's FAQ) call
ProfPathCreator().init(worker_name=..., dir_name=...) before the profile
is made; the next profile that starts without a tensorboard_trace_handler
takes those values, and clears them when it stops.
"""
import threading

from ._validate import check_path, check_worker_name

__all__ = ["ProfPathCreator"]


class ProfPathCreator:
    _instance = None
    _lock = threading.Lock()

    def __new__(cls):
        with cls._lock:
            if cls._instance is None:
                inst = super().__new__(cls)
                inst._dir_name = None
                inst._worker_name = None
                cls._instance = inst
        return cls._instance

    def init(self, worker_name=None, dir_name=None, **_ignored):
        self._worker_name = None if worker_name is None else check_worker_name(
            "worker_name", worker_name)
        self._dir_name = None if dir_name is None else check_path("dir_name", dir_name)

    def is_set(self):
        return self._dir_name is not None or self._worker_name is not None

    def get(self):
        """(dir_name, worker_name), None where not set."""
        return self._dir_name, self._worker_name

    def reset(self):
        self._dir_name = None
        self._worker_name = None
