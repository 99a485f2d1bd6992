// cuda_streams.cu — a small CUDA program that never heard of aiprof, for
// `aiprof run` and scripts/gpu_check.sh (docs/CUDA.md): a few kernels on
// two streams, copies in every direction, a fill, device allocations and
// frees.  It prints what it launched (kernels per name, copies, fills) so
// that a profile can be checked against it:
//     nvcc -O2 -o cuda_streams examples/cuda/cuda_streams.cu
//     aiprof run -- ./cuda_streams [iterations]
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                       \
    do {                                                                                  \
        cudaError_t e_ = (call);                                                          \
        if (e_ != cudaSuccess) {                                                          \
            std::fprintf(stderr, "cuda_streams: %s: %s\n", #call, cudaGetErrorString(e_)); \
            return 1;                                                                     \
        }                                                                                 \
    } while (0)

__global__ void scale(float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= a;
}

__global__ void add(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

// A 2-D grid, so that Block Num is a product.
__global__ void transpose(const float *in, float *out, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h)
        out[x * h + y] = in[y * w + x];
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? std::atoi(argv[1]) : 10;
    const int n = 1 << 20, w = 1024, h = n / w;
    const size_t bytes = n * sizeof(float);
    int devices = 0;
    CHECK(cudaGetDeviceCount(&devices));
    float *host = nullptr, *da = nullptr, *db = nullptr, *dc = nullptr;
    CHECK(cudaMallocHost(&host, bytes));
    for (int i = 0; i < n; i++)
        host[i] = (float)i;
    CHECK(cudaMalloc(&da, bytes));
    CHECK(cudaMalloc(&db, bytes));
    CHECK(cudaMalloc(&dc, bytes));
    cudaStream_t s1, s2;
    CHECK(cudaStreamCreate(&s1));
    CHECK(cudaStreamCreate(&s2));
    dim3 block(256), grid((n + 255) / 256), tblock(32, 8), tgrid(w / 32, h / 8);
    for (int it = 0; it < iters; it++) {
        CHECK(cudaMemcpyAsync(da, host, bytes, cudaMemcpyHostToDevice, s1));
        CHECK(cudaMemsetAsync(db, 0, bytes, s2));
        scale<<<grid, block, 0, s1>>>(da, 2.0f, n);
        CHECK(cudaGetLastError());
        CHECK(cudaStreamSynchronize(s2));
        add<<<grid, block, 0, s1>>>(da, db, dc, n);
        CHECK(cudaGetLastError());
        transpose<<<tgrid, tblock, 0, s2>>>(da, db, w, h);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpyAsync(dc, db, bytes, cudaMemcpyDeviceToDevice, s2));
        CHECK(cudaMemcpyAsync(host, dc, bytes, cudaMemcpyDeviceToHost, s2));
        CHECK(cudaDeviceSynchronize());
    }
    // A stream of its own allocated and freed (device memory events).
    float *tmp = nullptr;
    CHECK(cudaMalloc(&tmp, bytes / 2));
    CHECK(cudaFree(tmp));
    CHECK(cudaStreamDestroy(s1));
    CHECK(cudaStreamDestroy(s2));
    CHECK(cudaFree(da));
    CHECK(cudaFree(db));
    CHECK(cudaFree(dc));
    // Read the result before the pinned buffer is freed.
    double checksum = (double)host[12345];
    CHECK(cudaFreeHost(host));
    std::printf("launched: scale %d, add %d, transpose %d; memcpy HtoD %d, DtoD %d, DtoH %d; "
                "memset %d\n", iters, iters, iters, iters, iters, iters, iters);
    std::printf("checksum %g\n", checksum);
    return 0;
}
