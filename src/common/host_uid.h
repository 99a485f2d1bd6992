/*
 * host_uid.h — the recording host's id, as torch_npu computes it.
 */
#ifndef AIP_HOST_UID_H
#define AIP_HOST_UID_H

#include <stdint.h>

/* aip__host_uid() : a hash of this machine's link-layer addresses
 * (torch_npu's Utils::GetHostUid); 0 if it has none. */
uint64_t aip__host_uid(void);

#endif
