/*
 * host_cudart.c — a stand-in CUDA runtime for running a CUDA program's host
 * side under AddressSanitizer where no GPU exists
 * (tests/e2e/test_cuda_example_asan.sh, on examples/cuda/cuda_streams.cu).
 * Every allocation, pinned host and device alike, comes from malloc, and
 * copies and fills are memcpy / memset over it, so that ASan sees every
 * byte the host code hands the runtime or reads back (a pinned buffer read
 * after cudaFreeHost is a heap-use-after-free).  Kernels are not run: a
 * launch checks nothing on the device (that is compute-sanitizer's part,
 * on a GPU).  The prototypes are the runtime's (cuda_runtime_api.h and
 * crt/host_runtime.h, CUDA 12-13), with opaque pointers where the caller's
 * types do not matter to a C definition.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int cudaError_t; /* cudaSuccess = 0, cudaErrorMemoryAllocation = 2 */
typedef struct { unsigned x, y, z; } dim3_;

static cudaError_t alloc(void **p, size_t n)
{
    *p = malloc(n ? n : 1);
    return *p ? 0 : 2;
}

cudaError_t cudaGetDeviceCount(int *n) { *n = 1; return 0; }
const char *cudaGetErrorString(cudaError_t e) { return e ? "stand-in runtime error" : "no error"; }
cudaError_t cudaGetLastError(void) { return 0; }
cudaError_t cudaHostAlloc(void **p, size_t n, unsigned flags) { (void)flags; return alloc(p, n); }
cudaError_t cudaMallocHost(void **p, size_t n) { return alloc(p, n); }
cudaError_t cudaMalloc(void **p, size_t n) { return alloc(p, n); }
cudaError_t cudaFree(void *p) { free(p); return 0; }
cudaError_t cudaFreeHost(void *p) { free(p); return 0; }

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, int kind, void *stream)
{
    (void)kind, (void)stream;
    memcpy(dst, src, n);
    return 0;
}

cudaError_t cudaMemsetAsync(void *p, int v, size_t n, void *stream)
{
    (void)stream;
    memset(p, v, n);
    return 0;
}

cudaError_t cudaStreamCreate(void **s) { return alloc(s, 16); }
cudaError_t cudaStreamDestroy(void *s) { free(s); return 0; }
cudaError_t cudaStreamSynchronize(void *s) { (void)s; return 0; }
cudaError_t cudaDeviceSynchronize(void) { return 0; }

/* The registration and launch path nvcc's host code calls. */
static void *fatbin_handle[4];
void **__cudaRegisterFatBinary(void *fatbin) { (void)fatbin; return fatbin_handle; }
void __cudaRegisterFatBinaryEnd(void **h) { (void)h; }
void __cudaUnregisterFatBinary(void **h) { (void)h; }
char __cudaInitModule(void **h) { (void)h; return 1; }
void __cudaRegisterFunction(void **h, const char *host_fun, char *device_fun,
                            const char *device_name, int thread_limit, void *tid, void *bid,
                            void *bdim, void *gdim, int *wsize)
{
    (void)h, (void)host_fun, (void)device_fun, (void)device_name, (void)thread_limit;
    (void)tid, (void)bid, (void)bdim, (void)gdim, (void)wsize;
}
unsigned __cudaPushCallConfiguration(dim3_ grid, dim3_ block, size_t shmem, void *stream)
{
    (void)grid, (void)block, (void)shmem, (void)stream;
    return 0;
}
cudaError_t __cudaPopCallConfiguration(dim3_ *grid, dim3_ *block, size_t *shmem, void **stream)
{
    *grid = *block = (dim3_){1, 1, 1};
    *shmem = 0;
    *stream = NULL;
    return 0;
}
cudaError_t __cudaGetKernel(void **kernel, const void *fun) { *kernel = (void *)fun; return 0; }
cudaError_t __cudaLaunchKernel(void *kernel, dim3_ grid, dim3_ block, void **args, size_t shmem,
                               void *stream)
{
    (void)kernel, (void)grid, (void)block, (void)args, (void)shmem, (void)stream;
    return 0;
}
cudaError_t cudaLaunchKernel(const void *fun, dim3_ grid, dim3_ block, void **args, size_t shmem,
                             void *stream)
{
    (void)fun, (void)grid, (void)block, (void)args, (void)shmem, (void)stream;
    return 0;
}
