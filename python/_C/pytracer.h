/*
 * pytracer.h — the with_stack tracer's per-thread shadow stacks, shared by
 * its two halves: pytracer.c (the stacks themselves, the profile hook, what
 * the adapter reads, start and stop) and eval_frame.c (the frame evaluator
 * of CPython 3.11).  Internal to those two files.
 */
#ifndef AIPY_PYTRACER_H
#define AIPY_PYTRACER_H

#include "eval_frame.h"
#include "pystack_text.h"

#include <stdint.h>

/* What tracer_hook_state() and aipy_eval_hook_state() return (exported to
 * Python as TRACER_HOOK_*): our hook is in place, no hook at all, another
 * tool's hook. */
enum { AIPY_HOOK_OURS = 0, AIPY_HOOK_NONE = 1, AIPY_HOOK_OTHER = 2 };

/* Frames deeper than this are only counted: they get no entry, no event. */
#define SHADOW_MAX_DEPTH 128

/* How calls are followed (aipy_tracer_mode, shadow.mode). */
enum { TRACER_MODE_PROFILE = 1, TRACER_MODE_EVAL = 2 };

typedef struct frame_entry {
    const void *frame;       /* _PyInterpreterFrame (eval) or PyFrameObject (profile) */
    uint64_t serial;         /* which push this is (see shadow.last_*) */
    const code_info *ci;     /* NULL if it could not be made */
    int caller_lasti;        /* the caller's offset when this frame was called */
    const stack_node *outer; /* node of the frames below, once computed */
    int outer_known;
    aipy_pyfunc_mark pf;     /* its python_function event, gen 0 = none */
} frame_entry;

/* Stack positions this thread used last, in front of the process-wide
 * table (aipy_stack_node), which takes a lock: each step of a training
 * loop pushes its frames anew, and the first op under a new frame asks for
 * its position and those of the frames below.  Nodes are never freed, so
 * an entry stays right across traces. */
#define NODE_CACHE_SLOTS 256

typedef struct node_cache_slot {
    const stack_node *parent;
    const code_info *ci;
    int lasti;
    const stack_node *node; /* NULL: an empty slot */
} node_cache_slot;

typedef struct shadow {
    unsigned epoch;
    int mode;
    int depth; /* may exceed SHADOW_MAX_DEPTH: deeper frames are only counted */
    uint64_t pushes;
    PyThreadState *ts; /* eval mode: whose current frame tells what returned */
    /* The last answer: one Python line often runs several ops (F.linear →
     * aten::linear, aten::t, aten::addmm), which then share a stack. */
    uint64_t last_serial;
    int last_lasti;
    const stack_node *last_node;
    node_cache_slot nodes[NODE_CACHE_SLOTS];
    frame_entry e[SHADOW_MAX_DEPTH];
} shadow;

/* pytracer.c: the tracer's state.  The epoch changes at every start and
 * stop; a thread's shadow stack of another epoch is stale.  The calling
 * thread's stack is NULL until its first call seen. */
extern unsigned aipy_tracer_epoch;
extern int aipy_tracer_on;
extern int aipy_tracer_mode;
extern __thread shadow *aipy_tls_shadow __attribute__((tls_model("initial-exec")));

/* pytracer.c: the calling thread's stack emptied for the current epoch and
 * mode (made at its first use); NULL if out of memory. */
shadow *aipy_shadow_fresh(void);
/* pytracer.c, with the GIL: push `frame` running `code`; `event` makes it a
 * python_function event too (AIPY_EVENT_RUNNING: a replayed frame, which was
 * running before its thread's calls were followed). */
enum { AIPY_EVENT_NONE = 0, AIPY_EVENT = 1, AIPY_EVENT_RUNNING = 2 };
void aipy_shadow_push(shadow *s, const void *frame, PyCodeObject *code, int event);

/* Pop entries [d, depth), ending their python_function events (the first
 * of them that has one was pushed before all the others' events).  Needs
 * no GIL: it touches only this thread's state.  Inline: the frame
 * evaluator pops at every return. */
static inline void aipy_shadow_pop_to(shadow *s, int d)
{
    int top = s->depth < SHADOW_MAX_DEPTH ? s->depth : SHADOW_MAX_DEPTH;
    for (int i = d; i < top; i++)
        if (s->e[i].pf.gen) {
            aipy_pyfunc_pop_to(s->e[i].pf);
            break;
        }
    s->depth = d;
}

#ifdef AIPY_EVAL_FRAME
/* eval_frame.c: drop the entries above `cur`, the thread's running frame
 * (frames replayed at the start return unseen). */
void aipy_eval_sync(shadow *s, const _PyInterpreterFrame *cur);
/* eval_frame.c, with the GIL: push the running frames of `ts`, outermost
 * first, as python_function events that start now. */
void aipy_eval_replay(shadow *s, PyThreadState *ts);
/* eval_frame.c: AIPY_HOOK_OURS our evaluator is installed in `interp`,
 * _NONE the default one, _OTHER someone else's. */
int aipy_eval_hook_state(PyInterpreterState *interp);
#endif

#endif
