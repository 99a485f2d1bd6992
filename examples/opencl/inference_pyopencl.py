"""inference_pyopencl.py — the OpenCL inference pipeline of inference.c in
Python (pyopencl + numpy), profiled with aiprof's torch_npu-style API.

A two-layer classifier (matmul -> relu -> matmul -> softmax) runs on the
first OpenCL device: a copy queue moves each batch in and the
probabilities out, a compute queue runs the four kernels, events order the
two.  Each stage is a record_function ("infer::layer1", ...), which
aiprof's OpenCL back end makes the parent of the kernels and copies it
launches; prof.step() ends each batch and the schedule (wait=1, warmup=1,
active=3, repeat=1) decides which batches are recorded, as in
torch_npu.profiler.  The last batch is checked against numpy.

    python3 inference_pyopencl.py [--steps N] [--dir DIR]

Then: aiprof summary DIR/*_ascend_pt (the handler has analysed it already).
Under `aiprof run` the program needs no aiprof code at all; this one is
the in-process way (examples/opencl/README.md).
"""
import argparse
import sys

import numpy as np
import pyopencl as cl

import aiprof as torch_npu  # the drop-in: the same code runs with torch_npu

BATCH, IN, HIDDEN, OUT = 64, 256, 512, 10

KERNELS = """
__kernel void matmul(__global const float *a, __global const float *b,
                     __global float *c, int m, int k, int n) {
    int col = get_global_id(0), row = get_global_id(1);
    if (row >= m || col >= n) return;
    float acc = 0.0f;
    for (int i = 0; i < k; i++) acc += a[row * k + i] * b[i * n + col];
    c[row * n + col] = acc;
}
__kernel void relu(__global float *x, int n) {
    int i = get_global_id(0);
    if (i < n) x[i] = fmax(x[i], 0.0f);
}
__kernel void softmax(__global const float *x, __global float *y, int rows, int cols) {
    int r = get_global_id(0);
    if (r >= rows) return;
    float mx = x[r * cols];
    for (int j = 1; j < cols; j++) mx = fmax(mx, x[r * cols + j]);
    float sum = 0.0f;
    for (int j = 0; j < cols; j++) sum += exp(x[r * cols + j] - mx);
    for (int j = 0; j < cols; j++) y[r * cols + j] = exp(x[r * cols + j] - mx) / sum;
}
"""


def first_device():
    for platform in cl.get_platforms():
        devices = platform.get_devices()
        if devices:
            return devices[0]
    sys.exit("inference_pyopencl: no OpenCL device (install an ICD, e.g. pocl-opencl-icd)")


class Pipeline:
    def __init__(self, w1, w2):
        dev = first_device()
        print(f"device: {dev.name}")
        self.ctx = cl.Context([dev])
        self.compute = cl.CommandQueue(self.ctx)
        self.copy = cl.CommandQueue(self.ctx)
        prog = cl.Program(self.ctx, KERNELS).build()
        self.matmul, self.relu, self.softmax = prog.matmul, prog.relu, prog.softmax
        mf = cl.mem_flags
        self.x = cl.Buffer(self.ctx, mf.READ_ONLY, BATCH * IN * 4)
        self.w1 = cl.Buffer(self.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=w1)
        self.h = cl.Buffer(self.ctx, mf.READ_WRITE, BATCH * HIDDEN * 4)
        self.w2 = cl.Buffer(self.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=w2)
        self.probs = cl.Buffer(self.ctx, mf.WRITE_ONLY, BATCH * OUT * 4)

    def infer(self, x, out):
        rf = torch_npu.profiler.record_function
        with rf("infer::load_input"):
            in_done = cl.enqueue_copy(self.copy, self.x, x, is_blocking=False)
            self.copy.flush()
        with rf("infer::layer1"):
            self.matmul(self.compute, (HIDDEN, BATCH), None, self.x, self.w1, self.h,
                        np.int32(BATCH), np.int32(IN), np.int32(HIDDEN), wait_for=[in_done])
        with rf("infer::relu"):
            self.relu(self.compute, (BATCH * HIDDEN,), None, self.h, np.int32(BATCH * HIDDEN))
        with rf("infer::layer2"):
            # per batch: device memory allocated and released in each step
            logits = cl.Buffer(self.ctx, cl.mem_flags.READ_WRITE, BATCH * OUT * 4)
            self.matmul(self.compute, (OUT, BATCH), None, self.h, self.w2, logits,
                        np.int32(BATCH), np.int32(HIDDEN), np.int32(OUT))
        with rf("infer::softmax"):
            out_ready = self.softmax(self.compute, (BATCH,), None, logits, self.probs,
                                     np.int32(BATCH), np.int32(OUT))
            self.compute.flush()
        with rf("infer::read_output"):
            cl.enqueue_copy(self.copy, out, self.probs, is_blocking=False, wait_for=[out_ready])
            self.copy.finish()
        logits.release()


def host_result(x, w1, w2):
    h = np.maximum(x @ w1, 0)
    logits = h @ w2
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--dir", default="./opencl_result_py")
    args = ap.parse_args()
    rng = np.random.default_rng(7)
    w1 = (rng.standard_normal((IN, HIDDEN)) * 0.05).astype(np.float32)
    w2 = (rng.standard_normal((HIDDEN, OUT)) * 0.05).astype(np.float32)
    out = np.empty((BATCH, OUT), np.float32)
    P = torch_npu.profiler
    with P.profile(activities=[P.ProfilerActivity.CPU, P.ProfilerActivity.NPU],
                   schedule=P.schedule(wait=1, warmup=1, active=3, repeat=1),
                   on_trace_ready=P.tensorboard_trace_handler(args.dir),
                   record_shapes=True, profile_memory=True) as prof:
        with P.record_function("infer::setup"):
            pipe = Pipeline(w1, w2)
        for _ in range(args.steps):
            x = rng.standard_normal((BATCH, IN)).astype(np.float32)
            pipe.infer(x, out)
            prof.step()
    err = float(np.abs(out - host_result(x, w1, w2)).max()) if args.steps else 0.0
    print(f"{args.steps} batches of {BATCH}; largest difference from numpy's result: {err:.2e}")
    print(f"results under {args.dir}/ (aiprof summary {args.dir}/*_ascend_pt)")
    return 0 if err < 1e-4 else 1


if __name__ == "__main__":
    sys.exit(main())
