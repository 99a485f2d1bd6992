from typing import Any, Optional

from .. import mstx as mstx

class _NoDeviceStream: ...

def current_stream(device: Optional[Any] = ...) -> _NoDeviceStream: ...
