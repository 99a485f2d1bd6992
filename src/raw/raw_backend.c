/*
 * raw_backend.c — what the outputs say of a device back end, by the
 * number its DEVICE records carry (raw_format.h's enum aip__dev_backend,
 * docs/RAW_FORMAT.md).  A raw file outlives the build that recorded it: a
 * build without the CUDA back end still analyses a CUDA profile, so these
 * properties belong to the number, here, not to the collector
 * (src/collect/<name>, docs/ADD_A_BACKEND.md).  A number not listed (a
 * back end from the private range, a newer recorder) gets the defaults.
 */
#include "raw.h"

static const aip__backend_desc unknown = {"other", AIP_DEVICE_NPU};

static const struct {
    uint8_t id;
    aip__backend_desc d;
} known[] = {
    {AIP_BACKEND_OPENCL, {"opencl", AIP_DEVICE_NPU}},
    /* torch.profiler's own device type: memory rows read "CUDA:<id>" */
    {AIP_BACKEND_CUDA, {"cuda", AIP_DEVICE_CUDA}},
};

const aip__backend_desc *aip__raw_backend(uint8_t backend)
{
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (known[i].id == backend)
            return &known[i].d;
    return &unknown;
}
