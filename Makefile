# aiprof — top-level entry points.  CMake does the building underneath.
#   make          build build/lib/libaiprof.{so,a} and build/bin/aiprof
#   make demo     install missing packages (as root, OpenCL/PoCL included), build,
#                 profile the examples (examples/opencl's pipeline too)
#   make check    the inner loop: build, then the unit, golden and fast e2e
#                 tests (ctest labels; no slow, Python, libFuzzer or sanitizer
#                 runs): about a minute
#   make test     install missing packages (as root), build and run every test,
#                 including ASan+UBSan and TSan builds
#   make bench    print the benchmark figures
#   PYTHON=...    the Python to build aiprof._C and the PyTorch adapter for (its
#                 torch's headers, libraries and ABI; default /usr/bin/python3)
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BUILD ?= build
PYTHON ?=
PY_FLAG = $(if $(PYTHON),-DPython3_EXECUTABLE=$(shell command -v $(PYTHON)))

.PHONY: all deps build demo check test bench clean

all: build

deps:
	@bash scripts/install_deps.sh

build:
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(PY_FLAG) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) -- --no-print-directory

demo:
	@bash scripts/install_deps.sh demo
	@$(MAKE) --no-print-directory build
	@bash scripts/demo.sh $(BUILD)

# Labels: tests/CMakeLists.txt.  -L/-LE take regular expressions.
check: build
	@cd $(BUILD) && ctest -j $(JOBS) --output-on-failure -L '^(unit|golden|e2e)$$' \
	  -LE '^(slow|python|libfuzzer|fixture)$$'

test:
	@bash scripts/install_deps.sh test
	@bash scripts/run_tests.sh

bench: deps build
	@bash scripts/bench.sh $(BUILD)

clean:
	rm -rf build build-asan build-tsan build-asan-py
