"""A name longer than 64 KiB is cut when recorded, and the cut is counted:
profiler_info.json's aiprof.texts_cut and a line in logs/analyse.log."""
import glob
import json
import os

from aiprof import profiler as P
from conftest import result_dirs


def test_long_record_function_name_is_counted():
    long_name = "n" * 70000
    with P.profile(activities=[P.ProfilerActivity.CPU],
                   on_trace_ready=P.tensorboard_trace_handler("./r")):
        with P.record_function(long_name):
            pass
        with P.record_function("short"):
            pass
    (rdir,) = result_dirs("./r")
    (info_path,) = glob.glob(os.path.join(rdir, "profiler_info*.json"))
    with open(info_path) as f:
        info = json.load(f)
    assert info["aiprof"]["texts_cut"] == 1
    with open(os.path.join(rdir, "logs", "analyse.log")) as f:
        log = f.read()
    assert "texts cut at 65536 bytes when recorded: 1;" in log
