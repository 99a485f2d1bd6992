/*
 * inference.c — a small OpenCL inference pipeline profiled with libaiprof.
 *
 * A two-layer classifier (matmul -> relu -> matmul -> softmax) runs on the
 * first OpenCL device found, on two queues as a real runtime would use
 * them: a copy queue moves the batch in and the probabilities out, a
 * compute queue runs the four kernels; events order the two.  Each stage
 * is a framework-style op (aip_op_begin/aip_op_end: "infer::layer1", ...),
 * and each batch allocates and releases its logits buffer (device memory),
 * so aiprof's OpenCL back end makes it the parent of the kernels and copies
 * it launches; one aip_session_step() per batch, and the schedule decides
 * which steps are recorded (default wait=1, warmup=1, active=3, repeat=1:
 * steps 2, 3 and 4), exactly like torch.profiler.schedule.
 *
 * The compute queue is created with clCreateCommandQueueWithProperties and
 * the copy queue with clCreateCommandQueue, and neither asks for
 * profiling: the back end turns it on for both APIs.  The last batch's
 * probabilities are checked against the same network computed on the host.
 *
 *   opencl_inference [--steps N] [--dir DIR] [--wait N] [--warmup N]
 *                    [--active N] [--repeat N]
 *
 * Under `aiprof run` the same program is profiled from the outside: its
 * own session calls then only mark the steps (examples/opencl/README.md).
 */
#define CL_TARGET_OPENCL_VERSION 200
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS /* clCreateCommandQueue, on purpose */
#include <CL/cl.h>
#include <aiprof.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BATCH = 64, IN = 256, HIDDEN = 512, OUT = 10 };

static const char KERNELS[] =
    "__kernel void matmul(__global const float *a, __global const float *b,\n"
    "                     __global float *c, int m, int k, int n) {\n"
    "    int col = get_global_id(0), row = get_global_id(1);\n"
    "    if (row >= m || col >= n) return;\n"
    "    float acc = 0.0f;\n"
    "    for (int i = 0; i < k; i++) acc += a[row * k + i] * b[i * n + col];\n"
    "    c[row * n + col] = acc;\n"
    "}\n"
    "__kernel void relu(__global float *x, int n) {\n"
    "    int i = get_global_id(0);\n"
    "    if (i < n) x[i] = fmax(x[i], 0.0f);\n"
    "}\n"
    "__kernel void softmax(__global const float *x, __global float *y, int rows, int cols) {\n"
    "    int r = get_global_id(0);\n"
    "    if (r >= rows) return;\n"
    "    float mx = x[r * cols];\n"
    "    for (int j = 1; j < cols; j++) mx = fmax(mx, x[r * cols + j]);\n"
    "    float sum = 0.0f;\n"
    "    for (int j = 0; j < cols; j++) sum += exp(x[r * cols + j] - mx);\n"
    "    for (int j = 0; j < cols; j++) y[r * cols + j] = exp(x[r * cols + j] - mx) / sum;\n"
    "}\n";

/* An OpenCL error ends the program with the call and the code. */
#define CL_CHECK(call)                                                           \
    do {                                                                         \
        cl_int cl_err_ = (call);                                                 \
        if (cl_err_ != CL_SUCCESS) {                                             \
            fprintf(stderr, "opencl_inference: %s failed: OpenCL error %d\n",    \
                    #call, cl_err_);                                             \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

#define AIP_CHECK(call)                                                          \
    do {                                                                         \
        aip_status aip_st_ = (call);                                             \
        if (aip_st_ != AIP_OK) {                                                 \
            fprintf(stderr, "opencl_inference: %s failed: %s: %s\n", #call,      \
                    aip_strerror(aip_st_), aip_last_error());                    \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

typedef struct net {
    cl_context ctx;
    cl_command_queue compute, copy;
    cl_kernel matmul, relu, softmax;
    cl_mem x, w1, h, w2, probs;
    cl_mem logits;              /* allocated and released by each batch */
} net;

/* A framework-style op around what follows (aip_op_end() closes it). */
static void op(const char *name, const char *shapes)
{
    aip_op_info info = {.name = name, .sequence_number = -1, .input_shapes = shapes};
    aip_op_begin(&info);
}

static float frand(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return (float)((*seed >> 8) & 0xffff) / 65536.0f - 0.5f;
}

static cl_device_id first_device(void)
{
    cl_platform_id platforms[8];
    cl_uint np = 0;
    if (clGetPlatformIDs(8, platforms, &np) != CL_SUCCESS || !np) {
        fprintf(stderr, "opencl_inference: no OpenCL platform (install an ICD, e.g. "
                        "pocl-opencl-icd; `clinfo -l` lists them)\n");
        exit(1);
    }
    for (cl_uint i = 0; i < np && i < 8; i++) {
        cl_device_id d;
        cl_uint nd = 0;
        if (clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, 1, &d, &nd) == CL_SUCCESS && nd)
            return d;
    }
    fprintf(stderr, "opencl_inference: no OpenCL device on any platform\n");
    exit(1);
}

static cl_kernel kernel(cl_program prog, const char *name)
{
    cl_int err;
    cl_kernel k = clCreateKernel(prog, name, &err);
    CL_CHECK(err);
    return k;
}

static cl_mem buffer(cl_context ctx, cl_mem_flags flags, size_t floats)
{
    cl_int err;
    cl_mem m = clCreateBuffer(ctx, flags, floats * sizeof(float), NULL, &err);
    CL_CHECK(err);
    return m;
}

static void setup(net *n, const float *w1, const float *w2)
{
    cl_device_id dev = first_device();
    char name[256] = "";
    clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL);
    printf("device: %s\n", name);
    cl_int err;
    n->ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CL_CHECK(err);
    n->compute = clCreateCommandQueueWithProperties(n->ctx, dev, NULL, &err);
    CL_CHECK(err);
    n->copy = clCreateCommandQueue(n->ctx, dev, 0, &err);
    CL_CHECK(err);
    const char *src = KERNELS;
    cl_program prog = clCreateProgramWithSource(n->ctx, 1, &src, NULL, &err);
    CL_CHECK(err);
    if (clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS) {
        char log[4096] = "";
        clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "opencl_inference: kernel build failed:\n%s\n", log);
        exit(1);
    }
    n->matmul = kernel(prog, "matmul");
    n->relu = kernel(prog, "relu");
    n->softmax = kernel(prog, "softmax");
    clReleaseProgram(prog);
    n->x = buffer(n->ctx, CL_MEM_READ_ONLY, BATCH * IN);
    n->w1 = buffer(n->ctx, CL_MEM_READ_ONLY, IN * HIDDEN);
    n->h = buffer(n->ctx, CL_MEM_READ_WRITE, BATCH * HIDDEN);
    n->w2 = buffer(n->ctx, CL_MEM_READ_ONLY, HIDDEN * OUT);
    n->probs = buffer(n->ctx, CL_MEM_WRITE_ONLY, BATCH * OUT);
    CL_CHECK(clEnqueueWriteBuffer(n->copy, n->w1, CL_TRUE, 0, IN * HIDDEN * sizeof(float), w1, 0,
                                  NULL, NULL));
    CL_CHECK(clEnqueueWriteBuffer(n->copy, n->w2, CL_TRUE, 0, HIDDEN * OUT * sizeof(float), w2,
                                  0, NULL, NULL));
}

static void matmul(net *n, cl_mem a, cl_mem b, cl_mem c, int m, int k, int cols,
                   cl_uint n_wait, const cl_event *wait)
{
    CL_CHECK(clSetKernelArg(n->matmul, 0, sizeof a, &a));
    CL_CHECK(clSetKernelArg(n->matmul, 1, sizeof b, &b));
    CL_CHECK(clSetKernelArg(n->matmul, 2, sizeof c, &c));
    CL_CHECK(clSetKernelArg(n->matmul, 3, sizeof m, &m));
    CL_CHECK(clSetKernelArg(n->matmul, 4, sizeof k, &k));
    CL_CHECK(clSetKernelArg(n->matmul, 5, sizeof cols, &cols));
    size_t global[2] = {(size_t)cols, (size_t)m};
    CL_CHECK(clEnqueueNDRangeKernel(n->compute, n->matmul, 2, NULL, global, NULL, n_wait, wait,
                                    NULL));
}

/* One batch: input in on the copy queue, four kernels on the compute
 * queue, probabilities out on the copy queue. */
static void infer(net *n, const float *x, float *probs)
{
    cl_event in_done, out_ready;
    op("infer::load_input", "[[64, 256]]");
    CL_CHECK(clEnqueueWriteBuffer(n->copy, n->x, CL_FALSE, 0, BATCH * IN * sizeof(float), x, 0,
                                  NULL, &in_done));
    CL_CHECK(clFlush(n->copy));
    aip_op_end();

    op("infer::layer1", "[[64, 256], [256, 512]]");
    matmul(n, n->x, n->w1, n->h, BATCH, IN, HIDDEN, 1, &in_done);
    aip_op_end();

    op("infer::relu", "[[64, 512]]");
    int count = BATCH * HIDDEN;
    CL_CHECK(clSetKernelArg(n->relu, 0, sizeof n->h, &n->h));
    CL_CHECK(clSetKernelArg(n->relu, 1, sizeof count, &count));
    size_t g1 = (size_t)count;
    CL_CHECK(clEnqueueNDRangeKernel(n->compute, n->relu, 1, NULL, &g1, NULL, 0, NULL, NULL));
    aip_op_end();

    op("infer::layer2", "[[64, 512], [512, 10]]");
    n->logits = buffer(n->ctx, CL_MEM_READ_WRITE, BATCH * OUT); /* per batch: device memory */
    matmul(n, n->h, n->w2, n->logits, BATCH, HIDDEN, OUT, 0, NULL);
    aip_op_end();

    op("infer::softmax", "[[64, 10]]");
    int rows = BATCH, cols = OUT;
    CL_CHECK(clSetKernelArg(n->softmax, 0, sizeof n->logits, &n->logits));
    CL_CHECK(clSetKernelArg(n->softmax, 1, sizeof n->probs, &n->probs));
    CL_CHECK(clSetKernelArg(n->softmax, 2, sizeof rows, &rows));
    CL_CHECK(clSetKernelArg(n->softmax, 3, sizeof cols, &cols));
    size_t gr = BATCH;
    CL_CHECK(clEnqueueNDRangeKernel(n->compute, n->softmax, 1, NULL, &gr, NULL, 0, NULL,
                                    &out_ready));
    CL_CHECK(clFlush(n->compute));
    aip_op_end();

    op("infer::read_output", "[[64, 10]]");
    CL_CHECK(clEnqueueReadBuffer(n->copy, n->probs, CL_FALSE, 0, BATCH * OUT * sizeof(float),
                                 probs, 1, &out_ready, NULL));
    CL_CHECK(clFinish(n->copy));
    aip_op_end();
    clReleaseEvent(in_done);
    clReleaseEvent(out_ready);
    clReleaseMemObject(n->logits);
}

static void teardown(net *n)
{
    CL_CHECK(clFinish(n->compute));
    cl_mem bufs[] = {n->x, n->w1, n->h, n->w2, n->probs};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        clReleaseMemObject(bufs[i]);
    clReleaseKernel(n->matmul);
    clReleaseKernel(n->relu);
    clReleaseKernel(n->softmax);
    clReleaseCommandQueue(n->compute);
    clReleaseCommandQueue(n->copy);
    clReleaseContext(n->ctx);
}

/* The same network on the host: the largest difference from `probs`. */
static double host_check(const float *x, const float *w1, const float *w2, const float *probs)
{
    static float h[BATCH * HIDDEN];
    double worst = 0;
    for (int r = 0; r < BATCH; r++) {
        for (int c = 0; c < HIDDEN; c++) {
            float acc = 0;
            for (int i = 0; i < IN; i++)
                acc += x[r * IN + i] * w1[i * HIDDEN + c];
            h[r * HIDDEN + c] = acc > 0 ? acc : 0;
        }
        float logit[OUT], mx = -INFINITY, sum = 0;
        for (int c = 0; c < OUT; c++) {
            float acc = 0;
            for (int i = 0; i < HIDDEN; i++)
                acc += h[r * HIDDEN + i] * w2[i * OUT + c];
            logit[c] = acc;
            mx = acc > mx ? acc : mx;
        }
        for (int c = 0; c < OUT; c++)
            sum += expf(logit[c] - mx);
        for (int c = 0; c < OUT; c++) {
            double d = fabs(expf(logit[c] - mx) / sum - probs[r * OUT + c]);
            worst = d > worst ? d : worst;
        }
    }
    return worst;
}

static long arg_long(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) {
        fprintf(stderr, "opencl_inference: %s needs a value\n", argv[*i]);
        exit(2);
    }
    char *end;
    long v = strtol(argv[++*i], &end, 10);
    if (*end || v < 0) {
        fprintf(stderr, "opencl_inference: %s: bad value '%s'\n", argv[*i - 1], argv[*i]);
        exit(2);
    }
    return v;
}

/* on_trace_ready: count the result directories this session wrote, so
 * that the program only announces one that exists. */
static void count_trace(aip_session *session, const char *result_dir, void *user_data)
{
    (void)session;
    (void)result_dir;
    ++*(int *)user_data;
}

int main(int argc, char **argv)
{
    long steps = 8;
    const char *dir = "opencl_result";
    aip_schedule sched = {.skip_first = 0, .wait = 1, .warmup = 1, .active = 3, .repeat = 1};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--steps"))
            steps = arg_long(argc, argv, &i);
        else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
            dir = argv[++i];
        else if (!strcmp(argv[i], "--wait"))
            sched.wait = arg_long(argc, argv, &i);
        else if (!strcmp(argv[i], "--warmup"))
            sched.warmup = arg_long(argc, argv, &i);
        else if (!strcmp(argv[i], "--active"))
            sched.active = arg_long(argc, argv, &i);
        else if (!strcmp(argv[i], "--repeat"))
            sched.repeat = arg_long(argc, argv, &i);
        else {
            fprintf(stderr, "usage: opencl_inference [--steps N] [--dir DIR] [--wait N] "
                            "[--warmup N] [--active N] [--repeat N]\n");
            return 2;
        }
    }
    static float w1[IN * HIDDEN], w2[HIDDEN * OUT], x[BATCH * IN], probs[BATCH * OUT];
    unsigned seed = 7;
    for (size_t i = 0; i < IN * HIDDEN; i++)
        w1[i] = frand(&seed) * 0.2f;
    for (size_t i = 0; i < HIDDEN * OUT; i++)
        w2[i] = frand(&seed) * 0.2f;

    aip_config c;
    aip_config_init(&c);
    c.activities = AIP_ACTIVITY_CPU | AIP_ACTIVITY_NPU; /* host and device */
    c.has_schedule = 1;
    c.schedule = sched;
    c.record_shapes = 1;
    c.profile_memory = 1;
    c.dir_name = dir;
    c.worker_name = "opencl_inference";
    int traces = 0; /* under `aiprof run` this session writes none */
    c.on_trace_ready = count_trace;
    c.on_trace_ready_data = &traces;
    aip_session *s;
    AIP_CHECK(aip_session_create(&c, &s));
    char why[512];
    if (!aip_device_status(why, sizeof why))
        printf("aiprof: no device data will be recorded here (%s)\n", why);
    AIP_CHECK(aip_session_start(s));

    net n;
    op("infer::setup", NULL); /* buffers and weights: device memory and copies */
    setup(&n, w1, w2);
    aip_op_end();
    for (long step = 0; step < steps; step++) {
        for (size_t i = 0; i < BATCH * IN; i++)
            x[i] = frand(&seed);
        infer(&n, x, probs);
        AIP_CHECK(aip_session_step(s));
    }
    double err = steps ? host_check(x, w1, w2, probs) : 0;
    teardown(&n);
    AIP_CHECK(aip_session_stop(s));
    printf("%ld batches of %d; largest difference from the host's result: %.2e\n", steps,
           BATCH, err);
    if (traces)
        printf("results under %s/ (aiprof analyse %s)\n", dir, dir);
    else /* aiprof run's session recorded the steps and says where */
        printf("no result directory from this program's session (its steps were marked "
               "for the session that records them)\n");
    aip_session_destroy(s);
    return err < 1e-4 ? 0 : 1;
}
