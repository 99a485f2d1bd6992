"""The background analysis process: `python -m aiprof.profiler._analyse_child
RESULT_DIR [EXPORT_BITS [gzip] [kineto]]`, started by
tensorboard_trace_handler(async_mode=True) (_analyse.analyse_in_background).

It is its own module, imported by nothing in the package, because `-m`
runs a module as __main__ after importing its package: a module the package
already imports (as aiprof.profiler imports _analyse) would then exist
twice, and runpy warns "found in sys.modules after import of package".
"""
import sys
import warnings

from aiprof.profiler._analyse import _main

if __name__ == "__main__":
    warnings.simplefilter("default")
    sys.exit(_main(sys.argv))
