from typing import List, Optional, Union

__all__ = ["Profiler"]


class Profiler:
    start_profile: bool

    def __init__(self, *, output_path: str = ..., op_time: bool = ...,
                 profile_communication: bool = ..., profile_memory: bool = ...,
                 parallel_strategy: bool = ..., start_profile: bool = ..., aicore_metrics: int = ...,
                 l2_cache: bool = ..., sync_enable: bool = ..., data_process: bool = ...,
                 timeline_limit: int = ..., profile_framework: Optional[str] = ...,
                 **kwargs: object) -> None: ...
    def start(self) -> None: ...
    def stop(self) -> None: ...
    def analyse(self, offline_path: Optional[str] = ..., pretty: bool = ...) -> None: ...
    def op_analyse(self, op_name: Union[str, List[str]],
                   device_id: Optional[int] = ...) -> str: ...
