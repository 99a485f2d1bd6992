/*
 * osrt.h — what the session asks of the OS runtime collector
 * (src/collect/osrt, docs/OSRT.md): host_sys OSRT records the program's
 * blocking libc / libpthread calls by patching the GOT entries of the
 * loaded objects while a trace records.
 */
#ifndef AIP_OSRT_H
#define AIP_OSRT_H

/* aip__osrt_trace_started() : a trace that records OSRT began (recording
 * is on): patch the loaded objects and start recording their calls.
 * Problems (a statically linked program) are logged once per process. */
void aip__osrt_trace_started(void);

/* aip__osrt_trace_stopping() : before the trace ends, while recording is
 * still on: stop recording and restore every patched entry.  A no-op when
 * nothing was patched. */
void aip__osrt_trace_stopping(void);

#endif
