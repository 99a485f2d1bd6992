/*
 * session_control.h — what src/dynamic may know of a session beyond the
 * public API: the boundary between the dynamic-profiling layer and
 * src/core.  Everything else the dynamic layer does with a session goes
 * through include/aiprof.h; session_int.h (the session's layout) stays
 * private to src/core.
 */
#ifndef AIP_SESSION_CONTROL_H
#define AIP_SESSION_CONTROL_H

#include "aiprof.h"

/* aip__session_mark_controller() : the session belongs to the controller
 * (dynamic profiling): it records even when a framework adapter has taken
 * over stepping, because sessions of the dynamic-profiling layer are never
 * adopted. */
void aip__session_mark_controller(aip_session *s);

#endif
