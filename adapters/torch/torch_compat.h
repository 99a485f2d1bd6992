/*
 * torch_compat.h — where the libtorch C++ API the adapter uses differs
 * between Debian's torch 1.13 and a pip torch 2.x, one source builds with
 * both: AIP_TORCH_AT_LEAST(major, minor) from torch's own version.h.
 *
 * The differences met (the RecordFunction observer API — name(), seqNr(),
 * inputs(), outputs(), scope(), forwardThreadId(), needsInputs(),
 * addGlobalCallback / disableCallback / reenableCallback — is the same in
 * 1.13 and 2.x; getStepCallbacksUnlessEmpty returns std::optional in 2.x,
 * which ops.cpp discards either way):
 *   - c10::Allocator (memory.cpp): from torch 2.3, allocate() is no longer
 *     const and copy_data() is a pure virtual every allocator defines.
 * Only the 1.13 side is compiled on the build machines (no torch 2.x
 * headers there); the 2.x side is checked where a pip torch 2.x is at hand
 * (scripts/gpu_check.sh builds the adapter against it).
 */
#ifndef AIPROF_TORCH_COMPAT_H
#define AIPROF_TORCH_COMPAT_H

#include <torch/csrc/api/include/torch/version.h>

#define AIP_TORCH_AT_LEAST(major, minor)                                                    \
    (TORCH_VERSION_MAJOR > (major) ||                                                       \
     (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

/* c10::Allocator::allocate's qualifier (see above). */
#if AIP_TORCH_AT_LEAST(2, 3)
#define AIP_ALLOCATE_CONST
#define AIP_ALLOCATOR_HAS_COPY_DATA 1
#else
#define AIP_ALLOCATE_CONST const
#define AIP_ALLOCATOR_HAS_COPY_DATA 0
#endif

#endif
