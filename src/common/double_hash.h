/*
 * double_hash.h — the group key hash of Ascend's tools.  CANN names a
 * communication group in its outputs by str(double_hash(hcclCommName)), and
 * msprof-analyze maps a group back to profiler_metadata.json's
 * parallel_group_info by hashing that file's keys the same way; aiprof's
 * communication outputs name groups by the hash of their
 * parallel_group_info key for the same reason.
 */
#ifndef AIP_DOUBLE_HASH_H
#define AIP_DOUBLE_HASH_H

#include <stddef.h>

/* aip__double_hash() : msprof-analyze's double_hash() of the n bytes at s
 * (two 32-bit polynomial hashes, primes 29 and 131, of the characters'
 * code points: equal for ASCII keys, which group keys are in practice). */
unsigned long long aip__double_hash(const char *s, size_t n);

#endif
