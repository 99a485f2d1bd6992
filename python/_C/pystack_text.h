/*
 * pystack_text.h — names of Python code objects and texts of call stacks,
 * for the tracer (pytracer.c).
 *
 * code_info: a code object's file and function name as UTF-8, made once
 * under the GIL and never changed, so that threads without the GIL can
 * read them.  stack_node: one position in a call stack (outer node, code,
 * instruction offset), hash-consed, whose text "file.py(line): f;\n..."
 * (innermost first, the aip_op_info.call_stack convention) is built and
 * interned once.
 */
#ifndef AIPROF_PYSTACK_TEXT_H
#define AIPROF_PYSTACK_TEXT_H

#include "aiprof_C.h"

typedef struct code_info {
    PyObject *code; /* strong: keeps the address from being reused */
    char *filename, *name;
    aip_string_id func_id; /* "file.py(first line): name", 0 until first needed */
    int own;               /* aiprof's own code: its calls are no events */
    struct code_info *next;
} code_info;

typedef struct stack_node {
    const struct stack_node *parent; /* outer frames, NULL at the root */
    const code_info *ci;
    int lasti;                       /* byte offset of the call in ci's code */
    aip_string_id id;                /* the text, interned once */
    char *text;
    struct stack_node *next;
} stack_node;

/* With the GIL: the code object's names, NULL if out of memory. */
const code_info *aipy_code_info(PyCodeObject *code);
/* With the GIL: the python_function name of a code object, 0 on failure. */
aip_string_id aipy_code_func_id(const code_info *ci);
/* Any thread, no GIL: the node for (parent, ci, lasti), made if new; NULL
 * past the memory bound or out of memory. */
const stack_node *aipy_stack_node(const stack_node *parent, const code_info *ci, int lasti);
/* With the GIL: code under `dir` (a path prefix) is aiprof's own; for code
 * met from now on.  0, or -1 with an exception set. */
int aipy_set_own_dir(PyObject *dir);
/* tracer_stats() numbers, as a new dict. */
PyObject *aipy_stack_text_stats(void);

#endif
