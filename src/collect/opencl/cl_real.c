/*
 * cl_real.c — finding the real OpenCL functions at run time, and saying why
 * the back end cannot collect (see cl_int.h): in this process (status:
 * nothing when the program has not loaded OpenCL) or on this machine
 * (probe: loads OpenCL and asks for platforms and devices).
 *
 * libaiprof does not link libOpenCL, so that every program can load it and
 * a machine without OpenCL still profiles the host.  The real functions
 * come from the object after libaiprof in the global search order
 * (dlsym(RTLD_NEXT): the program linked libOpenCL, or preloaded us before
 * it); when the program loaded libOpenCL privately (a Python extension
 * opened with RTLD_LOCAL, such as pyopencl's), from dlopen("libOpenCL.so.1"),
 * which returns that same copy.  All pointers come from one source, so two
 * different OpenCL libraries are never mixed.
 */
#include "cl_int.h"

#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static aip__cl_api real;
static pthread_once_t real_once = PTHREAD_ONCE_INIT;
static char load_error[256];

static void resolve_from(void *handle)
{
#define AIP_CL_RESOLVE(f) *(void **)&real.f = dlsym(handle, #f);
    AIP_CL_FUNCS(AIP_CL_RESOLVE)
#undef AIP_CL_RESOLVE
}

static void resolve(void)
{
    if (dlsym(RTLD_NEXT, "clGetPlatformIDs")) {
        resolve_from(RTLD_NEXT);
        return;
    }
    /* RTLD_LOCAL: our lookups need the handle only; the library must not
     * join the global scope where it could shadow our wrappers. */
    void *h = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        h = dlopen("libOpenCL.so", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(load_error, sizeof load_error, "libOpenCL.so.1 cannot be loaded (%s)",
                 e ? e : "not found");
        return;
    }
    resolve_from(h);
    if (!real.clGetPlatformIDs)
        snprintf(load_error, sizeof load_error, "libOpenCL.so.1 has no clGetPlatformIDs");
}

const aip__cl_api *aip__cl_real(void)
{
    pthread_once(&real_once, resolve);
    return &real;
}

static pthread_once_t status_once = PTHREAD_ONCE_INIT;
static char status_text[320];

static void probe(void)
{
    const aip__cl_api *cl = aip__cl_real();
    if (!cl->clGetPlatformIDs) {
        snprintf(status_text, sizeof status_text, "no OpenCL: %s", load_error);
        return;
    }
    cl_uint np = 0;
    cl_int err = cl->clGetPlatformIDs(0, NULL, &np);
    if (err != CL_SUCCESS || np == 0) {
        snprintf(status_text, sizeof status_text,
                 "no OpenCL platform (clGetPlatformIDs: error %d, %u platforms; the ICD loader "
                 "found no driver in /etc/OpenCL/vendors or OCL_ICD_VENDORS)",
                 (int)err, (unsigned)np);
        return;
    }
    cl_platform_id ids[16];
    if (np > 16)
        np = 16;
    if (cl->clGetPlatformIDs(np, ids, NULL) != CL_SUCCESS) {
        snprintf(status_text, sizeof status_text, "no OpenCL platform (clGetPlatformIDs failed)");
        return;
    }
    cl_uint devices = 0;
    for (cl_uint i = 0; i < np; i++) {
        cl_uint nd = 0;
        if (cl->clGetDeviceIDs(ids[i], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) == CL_SUCCESS)
            devices += nd;
    }
    if (devices == 0)
        snprintf(status_text, sizeof status_text,
                 "no OpenCL device (%u platforms, none has a device)", (unsigned)np);
}

const char *aip__cl_probe(void)
{
    pthread_once(&status_once, probe);
    return status_text[0] ? status_text : NULL;
}

/* dl_iterate_phdr callback: 1 when the object is an OpenCL ICD loader. */
static int is_opencl(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size, (void)data;
    const char *name = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
    name = name ? name + 1 : info->dlpi_name;
    return name && !strncmp(name, "libOpenCL.so", 12);
}

static _Atomic int opencl_loaded;

const char *aip__cl_status(void)
{
    /* Only an OpenCL the program loaded itself (linked, or opened by an
     * extension such as pyopencl's): probing would load the ICD loader and
     * every driver (PoCL starts threads) into a host-only program.  The
     * loaded objects are walked in memory (a dlopen with RTLD_NOLOAD of a
     * name not loaded searches the library path: ~30 us at every start). */
    if (!atomic_load_explicit(&opencl_loaded, memory_order_relaxed)) {
        if (!dl_iterate_phdr(is_opencl, NULL))
            return "the program has not loaded OpenCL (libOpenCL.so.1)";
        atomic_store_explicit(&opencl_loaded, 1, memory_order_relaxed); /* never unloaded */
    }
    return aip__cl_probe();
}
