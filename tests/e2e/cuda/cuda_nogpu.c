/*
 * cuda_nogpu.c — a CUDA program that never heard of aiprof, for
 * tests/e2e/test_cuda_nogpu.sh on a machine without a GPU or driver: it
 * asks the runtime for devices (linked with libcudart), does some host
 * work, and says whether libcupti was loaded into it.  Built a second time
 * with -DNO_CUDA (cuda_nogpu_host): a host-only program, into which aiprof
 * must load no CUDA library at all.
 */
#ifndef NO_CUDA
#include <cuda_runtime_api.h>
#endif
#include <stdio.h>
#include <string.h>

static int mapped(const char *lib)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    int found = 0;
    while (f && fgets(line, sizeof line, f))
        found |= strstr(line, lib) != NULL;
    if (f)
        fclose(f);
    return found;
}

int main(void)
{
#ifndef NO_CUDA
    int n = -1;
    cudaError_t e = cudaGetDeviceCount(&n);
    printf("cudaGetDeviceCount: error %d (%s), %d devices\n", (int)e, cudaGetErrorString(e), n);
#endif
    volatile double x = 0;
    for (int i = 0; i < 1000000; i++)
        x += i * 0.5;
    printf("host work done (%g)\n", (double)x);
    printf("libcupti loaded: %s\n", mapped("libcupti") ? "yes" : "no");
    printf("libcuda loaded: %s\n", mapped("libcuda.so") ? "yes" : "no");
    return 0;
}
