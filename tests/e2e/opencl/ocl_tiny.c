/*
 * ocl_tiny.c — many tiny OpenCL kernels per step, linked with libaiprof
 * (-laiprof before -lOpenCL), for `aiprof advise`'s small_kernels rule
 * (tests/e2e/test_advise_opencl.sh): per step, inside op "model::forward",
 * 200 one-work-item kernels on an in-order queue, then a blocking read of
 * one value (not a clFinish: the planted problem is the launches, not a
 * synchronisation call).  schedule(warmup=1, active=5).
 *
 * Usage: ocl_tiny DIR   (prints "result DIR"; "no platform" and exit 0
 * without a usable OpenCL device)
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <aiprof.h>

#include <stdio.h>
#include <string.h>

#define STEPS 5
#define KERNELS 200

static const char *source = "__kernel void bump(__global int *x) { x[0] += 1; }\n";

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    cl_platform_id plat;
    cl_device_id dev;
    cl_uint n = 0;
    if (clGetPlatformIDs(1, &plat, &n) != CL_SUCCESS || !n ||
        clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS) {
        printf("no platform\n");
        return 0;
    }
    aip_config cfg;
    aip_config_init(&cfg);
    cfg.dir_name = argv[1];
    cfg.worker_name = "tiny";
    cfg.activities = AIP_ACTIVITY_CPU | AIP_ACTIVITY_NPU;
    cfg.has_schedule = 1;
    cfg.schedule = (aip_schedule){.wait = 0, .warmup = 1, .active = STEPS, .repeat = 1};
    aip_session *s;
    if (aip_session_create(&cfg, &s) || aip_session_start(s)) {
        fprintf(stderr, "ocl_tiny: %s\n", aip_last_error());
        return 1;
    }
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
    if (err || clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS) {
        fprintf(stderr, "ocl_tiny: cannot build the kernel\n");
        return 1;
    }
    cl_kernel k = clCreateKernel(prog, "bump", &err);
    int zero = 0, got = 0;
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zero, &zero,
                                &err);
    clSetKernelArg(k, 0, sizeof buf, &buf);
    size_t one = 1;
    for (int step = 0; step < STEPS + 1; step++) {
        aip_op_info fwd = {.name = "model::forward", .sequence_number = -1};
        aip_op_begin(&fwd);
        for (int i = 0; i < KERNELS; i++)
            if (clEnqueueNDRangeKernel(q, k, 1, NULL, &one, &one, 0, NULL, NULL) != CL_SUCCESS)
                return 1;
        clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof got, &got, 0, NULL, NULL);
        aip_op_end();
        aip_session_step(s);
    }
    aip_session_stop(s);
    printf("result %s\nchecksum %d\n", aip_session_result_dir(s), got);
    aip_session_destroy(s);
    clReleaseMemObject(buf);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return got == (STEPS + 1) * KERNELS ? 0 : 1;
}
