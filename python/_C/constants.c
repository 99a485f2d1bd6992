/*
 * constants.c — every number of libaiprof's headers that the Python
 * package passes to or reads from the C side, as module constants of
 * aiprof._C taken from the headers themselves (aiprof.h,
 * aiprof_integration.h, the PyTorch adapter's aiprof_torch.h).
 *
 * Python used to copy these by hand (trace formats, export bits, levels,
 * activity bits...); a renumbering in C would then have passed every
 * value to the wrong switch silently.  Python now reads them from here,
 * and tests/python/test_c_constants.py checks both that the table below
 * matches the headers' text and that no Python table holds a copy.
 */
#include "aiprof_C.h"
#include "aiprof_torch.h"
#include "op_context.h"
#include "pytracer.h"

typedef struct {
    const char *name;
    long value;
} aipy_const;

#define C(py, c) {py, (long)(c)}

static const aipy_const table[] = {
    /* aip_action: torch.profiler.ProfilerAction */
    C("ACTION_NONE", AIP_ACTION_NONE), C("ACTION_WARMUP", AIP_ACTION_WARMUP),
    C("ACTION_RECORD", AIP_ACTION_RECORD),
    C("ACTION_RECORD_AND_SAVE", AIP_ACTION_RECORD_AND_SAVE),
    /* aip_activity bits: ProfilerActivity */
    C("ACTIVITY_CPU", AIP_ACTIVITY_CPU), C("ACTIVITY_NPU", AIP_ACTIVITY_NPU),
    C("ACTIVITY_CUDA", AIP_ACTIVITY_CUDA), C("ACTIVITY_XPU", AIP_ACTIVITY_XPU),
    C("ACTIVITY_DEVICES", AIP_ACTIVITY_DEVICES),
    /* aip_profiler_level, aip_aic_metrics */
    C("LEVEL_NONE", AIP_LEVEL_NONE), C("LEVEL0", AIP_LEVEL0), C("LEVEL1", AIP_LEVEL1),
    C("LEVEL2", AIP_LEVEL2),
    C("AIC_DEFAULT", AIP_AIC_DEFAULT), C("AIC_NONE", AIP_AIC_NONE),
    C("AIC_PIPE_UTILIZATION", AIP_AIC_PIPE_UTILIZATION),
    C("AIC_ARITHMETIC_UTILIZATION", AIP_AIC_ARITHMETIC_UTILIZATION),
    C("AIC_MEMORY", AIP_AIC_MEMORY), C("AIC_MEMORY_L0", AIP_AIC_MEMORY_L0),
    C("AIC_RESOURCE_CONFLICT_RATIO", AIP_AIC_RESOURCE_CONFLICT_RATIO),
    C("AIC_MEMORY_UB", AIP_AIC_MEMORY_UB), C("AIC_L2_CACHE", AIP_AIC_L2_CACHE),
    C("AIC_MEMORY_ACCESS", AIP_AIC_MEMORY_ACCESS),
    /* aip_export_type, aip_host_sys bits */
    C("EXPORT_TEXT", AIP_EXPORT_TEXT), C("EXPORT_DB", AIP_EXPORT_DB),
    C("HOST_SYS_CPU", AIP_HOST_SYS_CPU), C("HOST_SYS_MEM", AIP_HOST_SYS_MEM),
    C("HOST_SYS_DISK", AIP_HOST_SYS_DISK), C("HOST_SYS_NETWORK", AIP_HOST_SYS_NETWORK),
    C("HOST_SYS_OSRT", AIP_HOST_SYS_OSRT),
    /* aip_analyse_outputs, aip_trace_format */
    C("OUTPUTS_ALL", AIP_OUTPUTS_ALL), C("OUTPUTS_TRACE_VIEW", AIP_OUTPUTS_TRACE_VIEW),
    C("TRACE_TORCH_NPU", AIP_TRACE_TORCH_NPU), C("TRACE_KINETO", AIP_TRACE_KINETO),
    C("TRACE_PERFETTO", AIP_TRACE_PERFETTO),
    /* aip_device_type, aip_memory_category */
    C("DEVICE_CPU", AIP_DEVICE_CPU), C("DEVICE_CUDA", AIP_DEVICE_CUDA),
    C("DEVICE_NPU", AIP_DEVICE_NPU),
    C("MEM_PARAMETER", AIP_MEM_PARAMETER), C("MEM_OPTIMIZER_STATE", AIP_MEM_OPTIMIZER_STATE),
    C("MEM_INPUT", AIP_MEM_INPUT), C("MEM_TEMPORARY", AIP_MEM_TEMPORARY),
    C("MEM_ACTIVATION", AIP_MEM_ACTIVATION), C("MEM_GRADIENT", AIP_MEM_GRADIENT),
    C("MEM_AUTOGRAD_DETAIL", AIP_MEM_AUTOGRAD_DETAIL), C("MEM_UNKNOWN", AIP_MEM_UNKNOWN),
    /* aip_dynamic_state */
    C("DYN_UNINITIALIZED", AIP_DYN_UNINITIALIZED), C("DYN_IDLE", AIP_DYN_IDLE),
    C("DYN_RUNNING", AIP_DYN_RUNNING), C("DYN_READY", AIP_DYN_READY),
    /* aip_comm_op_info.kind and .lib */
    C("COMM_OP_COLLECTIVE", AIP_COMM_OP_COLLECTIVE), C("COMM_OP_SEND", AIP_COMM_OP_SEND),
    C("COMM_OP_RECV", AIP_COMM_OP_RECV), C("COMM_OP_SENDRECV", AIP_COMM_OP_SENDRECV),
    C("COMM_LIB_OTHER", AIP_COMM_LIB_OTHER), C("COMM_LIB_MPI", AIP_COMM_LIB_MPI),
    C("COMM_LIB_GLOO", AIP_COMM_LIB_GLOO), C("COMM_LIB_NCCL", AIP_COMM_LIB_NCCL),
    C("COMM_LIB_HCCL", AIP_COMM_LIB_HCCL),
    /* tracer_hook_state() (pytracer.h) */
    C("TRACER_HOOK_OURS", AIPY_HOOK_OURS), C("TRACER_HOOK_NONE", AIPY_HOOK_NONE),
    C("TRACER_HOOK_OTHER", AIPY_HOOK_OTHER),
    /* the ABIs of the contracts with the PyTorch adapter */
    C("OP_CONTEXT_ABI", AIPROF_OP_CONTEXT_ABI), C("TORCH_ABI", AIPROF_TORCH_ABI),
};
#undef C

int aipy_constants_init(PyObject *module)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (PyModule_AddIntConstant(module, table[i].name, table[i].value) < 0)
            return -1;
    return 0;
}
