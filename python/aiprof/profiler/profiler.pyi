from . import (_KinetoProfile as _KinetoProfile, analyse as analyse, profile as profile,
               tensorboard_trace_handler as tensorboard_trace_handler)
