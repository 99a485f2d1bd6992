/*
 * toy.h — the toy device back end's calls for its test program
 * (docs/ADD_A_BACKEND.md's walk-through, built by tests/CMakeLists.txt):
 * what a real back end gets from the runtime it interposes (a launch, a
 * fork), the program calls here.
 */
#ifndef AIP_TOY_H
#define AIP_TOY_H

#include <stdint.h>

/* toy_launch() : one kernel `name` launched now on the toy device, which
 * runs it for `us` microseconds right away. */
void toy_launch(const char *name, unsigned us);

/* toy_forks_seen() : how often the collector's fork_child hook ran in
 * this process. */
unsigned toy_forks_seen(void);

#endif
