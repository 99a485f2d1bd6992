/*
 * nvtx_abi.h — the part of NVTX's tool-injection interface that libaiprof
 * implements, written from NVTX v3's public specification (NVIDIA's
 * nvToolsExt.h and nvtxDetail/nvtxTypes.h describe it; no header of theirs
 * is copied or needed to build).  An NVTX user — the header-only NVTX v3 in a
 * C/C++ program, the `nvtx` Python package, NCCL, Megatron, PyTorch's
 * torch.cuda.nvtx — loads the library named by NVTX_INJECTION64_PATH at its
 * first NVTX call and calls its InitializeInjectionNvtx2(getExportTable).  The
 * tool asks the export table for the function tables of each callback module
 * and writes its own functions into the slots it handles; NVTX turns every
 * slot left alone into a no-op.  The numbers below are part of that ABI and
 * never change (new ids are only appended).
 */
#ifndef AIP_NVTX_ABI_H
#define AIP_NVTX_ABI_H

#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

/* Export tables handed to the tool (NvtxExportTableID). */
enum { AIP_NVTX_ETID_CALLBACKS = 1, AIP_NVTX_ETID_VERSIONINFO = 3 };

/* Callback modules (NvtxCallbackModule). */
enum { AIP_NVTX_MODULE_CORE = 1, AIP_NVTX_MODULE_CORE2 = 5 };

/* Slots of the CORE module (NvtxCallbackIdCore): the default domain. */
enum {
    AIP_NVTX_CORE_MarkEx = 1,
    AIP_NVTX_CORE_MarkA = 2,
    AIP_NVTX_CORE_MarkW = 3,
    AIP_NVTX_CORE_RangeStartEx = 4,
    AIP_NVTX_CORE_RangeStartA = 5,
    AIP_NVTX_CORE_RangeStartW = 6,
    AIP_NVTX_CORE_RangeEnd = 7,
    AIP_NVTX_CORE_RangePushEx = 8,
    AIP_NVTX_CORE_RangePushA = 9,
    AIP_NVTX_CORE_RangePushW = 10,
    AIP_NVTX_CORE_RangePop = 11
};

/* Slots of the CORE2 module (NvtxCallbackIdCore2): named domains. */
enum {
    AIP_NVTX_CORE2_DomainMarkEx = 1,
    AIP_NVTX_CORE2_DomainRangeStartEx = 2,
    AIP_NVTX_CORE2_DomainRangeEnd = 3,
    AIP_NVTX_CORE2_DomainRangePushEx = 4,
    AIP_NVTX_CORE2_DomainRangePop = 5,
    AIP_NVTX_CORE2_DomainRegisterStringA = 10,
    AIP_NVTX_CORE2_DomainRegisterStringW = 11,
    AIP_NVTX_CORE2_DomainCreateA = 12,
    AIP_NVTX_CORE2_DomainCreateW = 13,
    AIP_NVTX_CORE2_DomainDestroy = 14
};

typedef void (*aip_nvtx_fn)(void);
/* An array of pointers to NVTX's function-pointer slots. */
typedef aip_nvtx_fn **aip_nvtx_table;

typedef const void *(*aip_nvtx_get_export_table)(uint32_t table_id);

typedef struct aip_nvtx_callbacks_table { /* NvtxExportTableCallbacks */
    size_t struct_size;
    int (*get_module_function_table)(int module, aip_nvtx_table *out_table,
                                     unsigned int *out_size);
} aip_nvtx_callbacks_table;

typedef struct aip_nvtx_version_table { /* NvtxExportTableVersionInfo */
    size_t struct_size;
    uint32_t version;
    uint32_t reserved0;
    void (*set_injection_version)(uint32_t version);
} aip_nvtx_version_table;

/* nvtxEventAttributes_v2: only the message is read; category, colour and
 * payload have no place in an mstx range. */
enum { AIP_NVTX_MSG_ASCII = 1, AIP_NVTX_MSG_UNICODE = 2, AIP_NVTX_MSG_REGISTERED = 3 };

typedef struct aip_nvtx_attributes {
    uint16_t version;
    uint16_t size;
    uint32_t category;
    int32_t color_type;
    uint32_t color;
    int32_t payload_type;
    int32_t reserved0;
    uint64_t payload;
    int32_t message_type;
    union {
        const char *ascii;
        const wchar_t *unicode;
        const void *registered; /* what our RegisterString returned */
    } message;
} aip_nvtx_attributes;

/* Handles NVTX passes back to us are what our functions returned: the
 * interned id of the domain's name or of the registered string (0 — NULL —
 * is the default domain / the empty string). */
typedef const void *aip_nvtx_handle;

#endif
