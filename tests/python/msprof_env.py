"""Running msprof-analyze (Ascend's cluster/compare/advisor tool) from an
extracted source tree named by MSPROF_SRC (else the installed release), for the tests that check it reads
aiprof's outputs (test_msprof_analyze.py, test_device_trace_db.py).  Without
MSPROF_SRC, or without the Debian Python modules it imports, those tests
skip and say why (missing())."""
import importlib.util
import os
import subprocess
import sys

def _installed():
    """The directory holding an installed msprof_analyze package (the torch
    2.x venv's: msprof-analyze 26.2.0 from PyPI), or ""."""
    spec = importlib.util.find_spec("msprof_analyze")
    if spec is None or not spec.submodule_search_locations:
        return ""
    return os.path.dirname(list(spec.submodule_search_locations)[0])


# A source tree named by MSPROF_SRC, else the released package when the
# interpreter has it installed (the project's venv, tests/requirements-torch2.txt).
MSPROF_SRC = os.environ.get("MSPROF_SRC", "") or _installed()
_DEPS = ("click", "ijson", "pandas", "xlsxwriter", "openpyxl", "tqdm", "prettytable",
         "networkx", "jinja2", "sqlalchemy", "yaml")

# The CLI module has no __main__; its advisor sets the "spawn" start method
# at import, so the entry must be guarded.  Debian's XlsxWriter 3.0.2 lacks
# Worksheet.autofit (msprof-analyze wants >= 3.0.6): a no-op stands in.
CLI = """import os, sys
sys.path.insert(0, os.environ["MSPROF_SRC"])
if __name__ == "__main__":
    import xlsxwriter.worksheet as ws
    if not hasattr(ws.Worksheet, "autofit"):
        ws.Worksheet.autofit = lambda self, *a, **k: None
    from msprof_analyze.cli.entrance import msprof_analyze_cli
    msprof_analyze_cli()
"""


def missing():
    """Why msprof-analyze cannot run here, or None."""
    if not MSPROF_SRC:
        return "MSPROF_SRC is not set (an extracted Ascend/msprof-analyze source tree)"
    if not os.path.isfile(os.path.join(MSPROF_SRC, "msprof_analyze", "cli", "entrance.py")):
        return f"MSPROF_SRC={MSPROF_SRC} has no msprof_analyze/cli/entrance.py"
    lacking = [m for m in _DEPS if importlib.util.find_spec(m) is None]
    if lacking:
        return "msprof-analyze needs Python modules that are missing: " + ", ".join(lacking)
    return None


def run(tmp_path, script, *args):
    """Run `script` (CLI, or a probe of the caller's) with args in tmp_path;
    the combined output.  msprof-analyze exits 0 even on failure: callers
    check the output for what went wrong."""
    path = tmp_path / ("wrap.py" if script is CLI else "probe.py")
    path.write_text(script)
    proc = subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True,
                          timeout=600, env=dict(os.environ, MSPROF_SRC=MSPROF_SRC), cwd=tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    return out


# The released msprof-analyze, installed (pip install msprof-analyze): the
# command named by MSPROF_ANALYZE, else the one in the repository's .venv
# (the project's torch 2.13 venv, which has it), else none.
_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INSTALLED = os.environ.get("MSPROF_ANALYZE") or os.path.join(_REPO, ".venv", "bin",
                                                             "msprof-analyze")


def installed_missing():
    """Why the installed msprof-analyze cannot run here, or None."""
    if not os.access(INSTALLED, os.X_OK):
        return (f"no msprof-analyze command at {INSTALLED} (set MSPROF_ANALYZE, or "
                f"pip install msprof-analyze into {_REPO}/.venv)")
    return None


def run_installed(cwd, *args, timeout=600):
    """`msprof-analyze args...` in cwd: its combined output (it exits 0 even
    on failure: callers read the output and the files)."""
    proc = subprocess.run([INSTALLED, *args], capture_output=True, text=True, timeout=timeout,
                          cwd=cwd, env=dict(os.environ, PYTHONPATH=""))
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    return out
