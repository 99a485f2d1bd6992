/*
 * pystack_text.c — code object names and call-stack texts (pystack_text.h).
 *
 * An op's call stack is a chain of stack_nodes: its text is built once per
 * distinct position, so an op deep in a model costs one table lookup, not
 * a walk and a format of every frame.  Only immutable data is read when a
 * node is made (the code's line table, code_info strings, the parent's
 * text), which lets threads that released the GIL make nodes.
 */
#include "pystack_text.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NODE_BYTES (256u << 20) /* stop making new stack texts beyond this */

static size_t ptr_hash(const void *p)
{
    uintptr_t x = (uintptr_t)p;
    x ^= x >> 17;
    x *= 0xed5ad4bbu;
    x ^= x >> 11;
    return (size_t)x;
}

/* ---- code objects → names (GIL held) ---------------------------------- */

static code_info **code_tab;
static size_t code_cap, code_n;

static char *utf8_dup(PyObject *s)
{
    const char *u = s && PyUnicode_Check(s) ? PyUnicode_AsUTF8(s) : NULL;
    if (!u) {
        PyErr_Clear();
        u = "?";
    }
    return strdup(u);
}

/* The chained tables below double when half full; `rehash` moves every
 * entry of `old` into `t` (cap a power of two).  Entries are found through
 * their `next` field at `next_off`. */
static void rehash(void **t, size_t cap, void **old, size_t old_cap, size_t next_off,
                   size_t (*hash)(const void *entry))
{
    for (size_t i = 0; i < old_cap; i++)
        for (void *e = old[i], *nx; e; e = nx) {
            void **next = (void **)((char *)e + next_off);
            nx = *next;
            size_t h = hash(e) & (cap - 1);
            *next = t[h];
            t[h] = e;
        }
}

static size_t code_entry_hash(const void *e) { return ptr_hash(((const code_info *)e)->code); }

static int code_grow(void)
{
    size_t cap = code_cap ? code_cap * 2 : 1024;
    code_info **t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    rehash((void **)t, cap, (void **)code_tab, code_cap, offsetof(code_info, next),
           code_entry_hash);
    free(code_tab);
    code_tab = t;
    code_cap = cap;
    return 0;
}

static PyObject *own_dir; /* str: aiprof's package directory, or NULL */

int aipy_set_own_dir(PyObject *dir)
{
    if (!PyUnicode_Check(dir)) {
        PyErr_SetString(PyExc_TypeError, "tracer_own_dir: a str path is needed");
        return -1;
    }
    Py_INCREF(dir);
    Py_XSETREF(own_dir, dir);
    return 0;
}

static int is_own(PyCodeObject *code)
{
    if (!own_dir)
        return 0;
    Py_ssize_t r = PyUnicode_Tailmatch(code->co_filename, own_dir, 0, PY_SSIZE_T_MAX, -1);
    if (r < 0)
        PyErr_Clear();
    return r > 0;
}

const code_info *aipy_code_info(PyCodeObject *code)
{
    if (code_cap) {
        for (code_info *c = code_tab[ptr_hash(code) & (code_cap - 1)]; c; c = c->next)
            if (c->code == (PyObject *)code)
                return c;
    }
    if (code_n * 2 >= code_cap && code_grow())
        return NULL;
    code_info *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->filename = utf8_dup(code->co_filename);
    c->name = utf8_dup(code->co_name);
    if (!c->filename || !c->name) {
        free(c->filename);
        free(c->name);
        free(c);
        return NULL;
    }
    c->own = is_own(code);
    Py_INCREF(code);
    c->code = (PyObject *)code;
    size_t h = ptr_hash(code) & (code_cap - 1);
    c->next = code_tab[h];
    code_tab[h] = c;
    code_n++;
    return c;
}

aip_string_id aipy_code_func_id(const code_info *ci)
{
    code_info *c = (code_info *)ci; /* func_id is filled lazily, under the GIL */
    if (!c->func_id) {
        int line = ((PyCodeObject *)c->code)->co_firstlineno;
        size_t cap = strlen(c->filename) + strlen(c->name) + 32;
        char *text = malloc(cap);
        if (!text)
            return 0;
        snprintf(text, cap, "%s(%d): %s", c->filename, line, c->name);
        c->func_id = aip_intern(text);
        free(text);
    }
    return c->func_id;
}

/* ---- stack positions (any thread, node_lock) --------------------------- */

static pthread_mutex_t node_lock = PTHREAD_MUTEX_INITIALIZER;
static stack_node **node_tab;
static size_t node_cap, node_n, node_bytes;
static int node_full;

static size_t node_hash(const stack_node *parent, const code_info *ci, int lasti)
{
    return ptr_hash(parent) * 31u + ptr_hash(ci) * 7u + (size_t)lasti;
}

static size_t node_entry_hash(const void *e)
{
    const stack_node *n = e;
    return node_hash(n->parent, n->ci, n->lasti);
}

static int node_grow(void)
{
    size_t cap = node_cap ? node_cap * 2 : 4096;
    stack_node **t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    rehash((void **)t, cap, (void **)node_tab, node_cap, offsetof(stack_node, next),
           node_entry_hash);
    free(node_tab);
    node_tab = t;
    node_cap = cap;
    return 0;
}

static const stack_node *node_make(const stack_node *parent, const code_info *ci, int lasti)
{
    if (node_bytes >= MAX_NODE_BYTES) {
        node_full = 1;
        return NULL;
    }
    if (node_n * 2 >= node_cap && node_grow())
        return NULL;
    int line = PyCode_Addr2Line((PyCodeObject *)ci->code, lasti);
    size_t plen = parent ? strlen(parent->text) : 0;
    size_t cap = strlen(ci->filename) + strlen(ci->name) + 32 + plen;
    stack_node *n = malloc(sizeof *n + cap);
    if (!n)
        return NULL;
    n->text = (char *)(n + 1);
    int k = snprintf(n->text, cap, "%s(%d): %s", ci->filename, line, ci->name);
    if (parent && k > 0 && (size_t)k + 2 + plen < cap) {
        memcpy(n->text + k, ";\n", 2);
        memcpy(n->text + k + 2, parent->text, plen + 1);
    }
    n->parent = parent;
    n->ci = ci;
    n->lasti = lasti;
    n->id = aip_intern(n->text);
    size_t h = node_hash(parent, ci, lasti) & (node_cap - 1);
    n->next = node_tab[h];
    node_tab[h] = n;
    node_n++;
    node_bytes += sizeof *n + cap;
    return n;
}

const stack_node *aipy_stack_node(const stack_node *parent, const code_info *ci, int lasti)
{
    const stack_node *found = NULL;
    pthread_mutex_lock(&node_lock);
    if (node_cap)
        for (stack_node *n = node_tab[node_hash(parent, ci, lasti) & (node_cap - 1)]; n;
             n = n->next)
            if (n->parent == parent && n->ci == ci && n->lasti == lasti) {
                found = n;
                break;
            }
    if (!found)
        found = node_make(parent, ci, lasti);
    pthread_mutex_unlock(&node_lock);
    return found;
}

PyObject *aipy_stack_text_stats(void)
{
    pthread_mutex_lock(&node_lock);
    size_t nodes = node_n, bytes = node_bytes;
    int full = node_full;
    pthread_mutex_unlock(&node_lock);
    return Py_BuildValue("{s:n,s:n,s:n,s:O}", "code_objects", (Py_ssize_t)code_n, "stack_nodes",
                         (Py_ssize_t)nodes, "stack_bytes", (Py_ssize_t)bytes, "full",
                         full ? Py_True : Py_False);
}
