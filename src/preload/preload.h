/*
 * preload.h — what the two files of libaiprof_preload.so share: preload.c
 * (the trace of the program `aiprof run` started) and preload_exec.c (the
 * exec wrappers that let that program's next image take over).
 */
#ifndef AIP_PRELOAD_H
#define AIP_PRELOAD_H

/* aip__preload_exec() : this image is about to be replaced by an exec
 * that can succeed: end its trace (kept if it marked steps, else removed)
 * and stop profiling it; the next image profiles from its start.  Does
 * nothing in a child process or an image that is not profiled. */
void aip__preload_exec(void);

#endif
