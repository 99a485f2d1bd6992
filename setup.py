"""setup.py: the compiled half of `pip install .` (pyproject.toml has the
metadata).

aiprof._C (python/_C), the PyTorch adapter libaiprof_torch.so (adapters/
torch) and the libaiprof.so.0 both link are built by the project's own
CMake, the one build description there is, into setuptools' build_temp,
and copied into the package: the extension and the adapter load the
library from beside them (-DAIP_PY_PACKAGE=ON: run path $ORIGIN only), so
the installed package needs no LD_LIBRARY_PATH and one copy of the
recording state is shared, as in the build tree.

The adapter needs libtorch's headers and libraries: those of the torch
package the installing interpreter sees (torch/include, torch/lib; Debian's
python3-torch links them to libtorch-dev's), else whatever CMake finds.
Without them the package is installed without the adapter, as the build
tree would be, and says so.

setuptools' own build directory is build-python/, not build/, which is the
CMake build tree of `make`.
"""
import glob
import importlib.util
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build import build as _build
from setuptools.command.build_ext import build_ext as _build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class build(_build):
    def initialize_options(self):
        super().initialize_options()
        self.build_base = "build-python"


def _torch_hints():
    """CMake cache entries pointing the adapter at the torch package's
    headers and libraries, when it has them (found without importing torch)."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return []
    tdir = list(spec.submodule_search_locations)[0]
    hints = []
    inc = os.path.join(tdir, "include")
    if os.path.exists(os.path.join(inc, "ATen", "record_function.h")):
        hints.append(f"-DAIP_TORCH_INCLUDE={inc}")
    for var, name in (("AIP_TORCH_CPU_LIB", "libtorch_cpu.so"), ("AIP_C10_LIB", "libc10.so")):
        lib = os.path.join(tdir, "lib", name)
        if os.path.exists(lib):
            hints.append(f"-D{var}={lib}")
    return hints


class build_ext(_build_ext):
    """Builds aiprof._C and the adapter with CMake instead of compiling
    sources itself."""

    def build_extension(self, ext):
        tmp = os.path.abspath(os.path.join(self.build_temp, "cmake"))
        os.makedirs(tmp, exist_ok=True)
        parallel = self.parallel if isinstance(self.parallel, int) and \
            not isinstance(self.parallel, bool) else 0
        jobs = str(parallel or os.cpu_count() or 2)
        subprocess.check_call(
            ["cmake", "-S", ROOT, "-B", tmp, "-DCMAKE_BUILD_TYPE=Release",
             f"-DPython3_EXECUTABLE={sys.executable}", "-DAIP_PY_PACKAGE=ON"]
            + _torch_hints())
        targets = ["aiprof_py_C"]
        help_text = subprocess.run(["cmake", "--build", tmp, "--target", "help"],
                                   capture_output=True, text=True).stdout
        if "aiprof_torch" in help_text:
            targets.append("aiprof_torch")
        else:
            print("aiprof: libtorch headers or libraries not found: installing without the "
                  "PyTorch adapter (the torch ops of a profile are not recorded)",
                  file=sys.stderr)
        subprocess.check_call(["cmake", "--build", tmp, "-j", jobs, "--target"] + targets)
        dest = os.path.dirname(os.path.abspath(self.get_ext_fullpath(ext.name)))
        os.makedirs(dest, exist_ok=True)
        built = glob.glob(os.path.join(tmp, "python", "aiprof", "_C*.so"))
        if len(built) != 1:
            raise RuntimeError(f"aiprof: the CMake build made no single aiprof._C: {built}")
        shutil.copyfile(built[0], self.get_ext_fullpath(ext.name))
        # The library under its SONAME, which is what the two modules ask for.
        shutil.copyfile(os.path.join(tmp, "lib", "libaiprof.so.0"),
                        os.path.join(dest, "libaiprof.so.0"))
        adapter = os.path.join(tmp, "python", "aiprof", "libaiprof_torch.so")
        if "aiprof_torch" in targets:
            shutil.copyfile(adapter, os.path.join(dest, "libaiprof_torch.so"))


setup(
    ext_modules=[Extension("aiprof._C", sources=[])],
    cmdclass={"build": build, "build_ext": build_ext},
)
