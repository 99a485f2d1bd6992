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
 * Both sides are compiled and tested on the build machines: Debian's torch
 * 1.13 (`make build`) and pip torch 2.13 in a venv (`make build
 * BUILD=build-t2 PYTHON=.venv/bin/python`), where profile_memory's
 * allocator reports (tests/python/test_memory_categories.py), c10d
 * collectives (test_distributed.py) and torch.compile'd code
 * (test_torch_compile.py) run against the 2.x side.
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
