/*
 * trace_reader.c — read_trace(): a finished trace_view.json as columns.
 *
 * key_averages(), events() and export_stacks() need every op and
 * annotation with torch's nesting, self times and memory attribution.
 * Doing that over json.load() objects cost ~20 us per event in Python;
 * here the file is scanned once in C (json_scan.h), the nesting built per
 * thread, and the result returned as packed columns (bytes for
 * array.array) plus one list of distinct strings.
 *
 * Both forms of trace_view.json are read (docs/RESULT_LAYOUT.md):
 * torch_npu's array, whose `ts` are strings of absolute epoch µs, and
 * Kineto's object, whose numeric `ts` are relative to baseTimeNanoseconds.
 * Times are kept as integer ns (a float64 of absolute epoch µs cannot hold
 * them: nesting would go wrong by up to 0.25 µs) and returned as µs
 * relative to a base: Kineto's, or for the array the earliest ts rounded
 * down to a whole second, which is the base aiprof's Kineto form has.
 *
 * Rules (the same as torch.autograd.profiler_util, see _results.py):
 *  - slices of category cpu_op and user_annotation, minus the names given
 *    in `filtered` (torch's _filter_name list);
 *  - per thread, an event is a child of the innermost open event that
 *    ends no earlier than it does (sorted by start, longer first);
 *  - an event that is the only child of an event of the same name is
 *    folded into it (EventList._remove_dup_nodes);
 *  - self time = duration − children's durations;
 *  - a [memory] instant counts for the innermost event around it on its
 *    thread and all that event's ancestors; one outside every event
 *    becomes a top-level "[memory]" event of duration 0.
 */
#include "aiprof_C.h"
#include "json_scan.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum { CAT_OP = 0, CAT_ANNOTATION = 1, CAT_MEMORY = 2 };

typedef struct ev {
    int32_t name, shapes, types, stack, module;
    int32_t parent;  /* index into the sorted array, -1 none */
    int32_t nchild;
    int8_t cat, removed;
    int64_t tid, seq, fwd, mem, self_mem, flops;
    int64_t ts, dur, self; /* ns */
} ev;

typedef struct mem_rec {
    int64_t tid, bytes;
    int64_t ts; /* ns */
} mem_rec;

/* ---- distinct strings → indices (into a Python list) ------------------- */

typedef struct strtab {
    PyObject *list;
    PyObject *index; /* {str: int} */
} strtab;

static int32_t str_id(strtab *t, const js_buf *b)
{
    PyObject *s = PyUnicode_DecodeUTF8(b->data, (Py_ssize_t)b->len, "replace");
    if (!s)
        return -2;
    PyObject *found = PyDict_GetItemWithError(t->index, s);
    if (found) {
        Py_DECREF(s);
        return (int32_t)PyLong_AsLong(found);
    }
    if (PyErr_Occurred()) {
        Py_DECREF(s);
        return -2;
    }
    Py_ssize_t n = PyList_GET_SIZE(t->list);
    PyObject *num = PyLong_FromSsize_t(n);
    int bad = !num || PyDict_SetItem(t->index, s, num) < 0 || PyList_Append(t->list, s) < 0;
    Py_XDECREF(num);
    Py_DECREF(s);
    return bad ? -2 : (int32_t)n;
}

/* ---- one traceEvents element ---------------------------------------------- */

typedef struct reader {
    js s;
    js_buf key, val;
    strtab strings;
    PyObject *filtered; /* frozenset of names */
    int8_t *name_filtered; /* by string id: -1 unknown, 0 kept, 1 filtered */
    size_t cap_filtered;
    ev *evs;
    size_t nev, cap_ev;
    mem_rec *mem;
    size_t nmem, cap_mem;
    int64_t min_ts;     /* earliest ts of any event, ns */
    int any_ts;
    int relative;       /* Kineto's object form: ts relative to its base */
} reader;

static int grow(void **arr, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 4096;
    while (c < need)
        c *= 2;
    void *p = realloc(*arr, c * size);
    if (!p)
        return -1;
    *arr = p;
    *cap = c;
    return 0;
}

/* Whether the name with this string id is one torch leaves out; asked of
 * the Python set once per distinct name. */
static int name_filtered(reader *r, int32_t id)
{
    size_t old = r->cap_filtered;
    if (grow((void **)&r->name_filtered, &r->cap_filtered, (size_t)id + 1, 1))
        return -1;
    if (r->cap_filtered > old)
        memset(r->name_filtered + old, -1, r->cap_filtered - old);
    if (r->name_filtered[id] < 0) {
        int c = PySet_Contains(r->filtered, PyList_GET_ITEM(r->strings.list, id));
        if (c < 0)
            return -1;
        r->name_filtered[id] = (int8_t)c;
    }
    return r->name_filtered[id];
}

static int read_int(js *s, int64_t *out)
{
    double d;
    if (js_peek(s) == '"') { /* pid/tid may be strings in some traces */
        js_buf b = {0};
        int r = js_string(s, &b);
        *out = r ? 0 : strtoll(b.data, NULL, 10);
        js_buf_free(&b);
        return r;
    }
    if (js_number(s, &d))
        return -1;
    *out = (int64_t)d;
    return 0;
}

/* "123.456" (µs with up to 3 decimals, as both forms print them) → ns,
 * exactly; -1 for any other spelling. */
static int us_text_ns(const char *p, size_t n, int64_t *out)
{
    const char *end = p + n;
    int neg = p < end && *p == '-';
    p += neg;
    if (p == end || *p < '0' || *p > '9')
        return -1;
    int64_t v = 0;
    for (; p < end && *p >= '0' && *p <= '9'; p++) {
        if (v > (INT64_MAX / 1000 - 9) / 10)
            return -1;
        v = v * 10 + (*p - '0');
    }
    int64_t frac = 0;
    int digits = 0;
    if (p < end && *p == '.')
        for (p++; p < end && *p >= '0' && *p <= '9'; p++, digits++)
            if (digits < 3)
                frac = frac * 10 + (*p - '0');
    if (p != end)
        return -1;
    for (int d = digits; d < 3; d++)
        frac *= 10;
    *out = neg ? -(v * 1000 + frac) : v * 1000 + frac;
    return 0;
}

static int64_t round_ns(double us)
{
    double ns = us * 1000.0;
    if (!(ns > -9.2e18 && ns < 9.2e18))
        return 0; /* NaN or out of range: no meaningful time */
    return (int64_t)(ns + (ns >= 0 ? 0.5 : -0.5));
}

/* A time in µs, as a string (torch_npu's ts) or a number, → integer ns. */
static int read_us(js *s, js_buf *tmp, int64_t *out)
{
    if (js_peek(s) == '"') {
        if (js_string(s, tmp))
            return -1;
        if (!us_text_ns(tmp->data, tmp->len, out))
            return 0;
        char *end;
        double d = strtod(tmp->data, &end);
        if (end == tmp->data || *end) {
            s->error = "a time that is not a number";
            return -1;
        }
        *out = round_ns(d);
        return 0;
    }
    const char *start = s->p, *p = start;
    while (p < s->end && ((*p >= '0' && *p <= '9') || *p == '-' || *p == '.'))
        p++;
    if (p < s->end && (*p == 'e' || *p == 'E' || *p == '+'))
        p = start; /* an exponent: read it as a double below */
    if (p > start && !us_text_ns(start, (size_t)(p - start), out)) {
        s->p = p;
        return 0;
    }
    double d;
    if (js_number(s, &d))
        return -1;
    *out = round_ns(d);
    return 0;
}

static int read_args(reader *r, ev *e, int64_t *bytes)
{
    js *s = &r->s;
    if (!js_eat(s, '{'))
        return js_skip(s);
    int k, first = 1;
    while ((k = js_next_key(s, &r->key, first)) == 1) {
        first = 0;
        const char *key = r->key.data;
        int32_t *slot = !strcmp(key, "Input Dims")       ? &e->shapes
                        : !strcmp(key, "Input type")       ? &e->types
                        : !strcmp(key, "Call stack")       ? &e->stack
                        : !strcmp(key, "Module Hierarchy") ? &e->module
                                                           : NULL;
        if (slot && js_peek(s) == '"') {
            if (js_string(s, &r->val) || (*slot = str_id(&r->strings, &r->val)) == -2)
                return -1;
        } else if (!strcmp(key, "Sequence number")) {
            if (read_int(s, &e->seq))
                return -1;
        } else if (!strcmp(key, "Fwd thread id")) {
            if (read_int(s, &e->fwd))
                return -1;
        } else if (!strcmp(key, "flops")) {
            if (read_int(s, &e->flops))
                return -1;
        } else if (!strcmp(key, "Bytes") && bytes) {
            if (read_int(s, bytes))
                return -1;
        } else if (js_skip(s)) {
            return -1;
        }
    }
    return k;
}

static int read_event(reader *r)
{
    js *s = &r->s;
    if (!js_eat(s, '{'))
        return js_skip(s);
    ev e = {.name = -1, .shapes = -1, .types = -1, .stack = -1, .module = -1, .seq = -1};
    char ph = 0;
    int cat = -1, is_memory = 0, filtered = 0;
    int64_t bytes = 0;
    int k, first = 1;
    while ((k = js_next_key(s, &r->key, first)) == 1) {
        first = 0;
        const char *key = r->key.data;
        if (!strcmp(key, "ph")) {
            if (js_string(s, &r->val))
                return -1;
            ph = r->val.data[0];
        } else if (!strcmp(key, "cat")) {
            if (js_string(s, &r->val))
                return -1;
            cat = !strcmp(r->val.data, "cpu_op")            ? CAT_OP
                  : !strcmp(r->val.data, "user_annotation") ? CAT_ANNOTATION
                                                            : -1;
        } else if (!strcmp(key, "name") && js_peek(s) == '"') {
            if (js_string(s, &r->val))
                return -1;
            is_memory = !strcmp(r->val.data, "[memory]");
            if ((e.name = str_id(&r->strings, &r->val)) == -2 ||
                (filtered = name_filtered(r, e.name)) < 0)
                return -1;
        } else if (!strcmp(key, "tid")) {
            if (read_int(s, &e.tid))
                return -1;
        } else if (!strcmp(key, "ts")) {
            if (read_us(s, &r->val, &e.ts))
                return -1;
            if (!r->any_ts || e.ts < r->min_ts)
                r->min_ts = e.ts;
            r->any_ts = 1;
        } else if (!strcmp(key, "dur")) {
            if (read_us(s, &r->val, &e.dur))
                return -1;
        } else if (!strcmp(key, "args")) {
            if (read_args(r, &e, &bytes) < 0)
                return -1;
        } else if (js_skip(s)) {
            return -1;
        }
    }
    if (k < 0)
        return -1;
    if (ph == 'X' && cat >= 0 && !filtered && e.name >= 0) {
        if (grow((void **)&r->evs, &r->cap_ev, r->nev + 1, sizeof *r->evs))
            return -1;
        e.cat = (int8_t)cat;
        e.parent = -1;
        r->evs[r->nev++] = e;
    } else if (ph == 'i' && is_memory) {
        if (grow((void **)&r->mem, &r->cap_mem, r->nmem + 1, sizeof *r->mem))
            return -1;
        r->mem[r->nmem++] = (mem_rec){e.tid, bytes, e.ts};
    }
    return 0;
}

/* After '[': every event of the array. */
static int read_events(reader *r)
{
    int first_elem = 1, more;
    while ((more = js_next_elem(&r->s, first_elem)) == 1) {
        first_elem = 0;
        if (read_event(r))
            return -1;
    }
    return more;
}

static int read_file(reader *r)
{
    js *s = &r->s;
    if (js_eat(s, '[')) { /* torch_npu's form */
        if (read_events(r) < 0)
            return -1;
        return js_peek(s) ? (s->error = "text after the trace", -1) : 0;
    }
    if (!js_eat(s, '{'))
        return -1;
    r->relative = 1;
    int k, first = 1;
    while ((k = js_next_key(s, &r->key, first)) == 1) {
        first = 0;
        if (strcmp(r->key.data, "traceEvents")) {
            if (js_skip(s))
                return -1;
            continue;
        }
        if (!js_eat(s, '[') || read_events(r) < 0)
            return -1;
    }
    return k;
}

/* ---- nesting ------------------------------------------------------------- */

static int by_tid_start(const void *a, const void *b)
{
    const ev *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->dur > y->dur ? -1 : x->dur < y->dur;
}

static int mem_by_tid_ts(const void *a, const void *b)
{
    const mem_rec *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static void build_tree(ev *v, size_t n)
{
    int32_t *stack = malloc((n ? n : 1) * sizeof *stack);
    size_t depth = 0;
    for (size_t i = 0; i < n && stack; i++) {
        if (i && v[i].tid != v[i - 1].tid)
            depth = 0;
        int64_t end = v[i].ts + v[i].dur;
        while (depth && v[stack[depth - 1]].ts + v[stack[depth - 1]].dur < end)
            depth--;
        if (depth) {
            v[i].parent = stack[depth - 1];
            v[stack[depth - 1]].nchild++;
        }
        stack[depth++] = (int32_t)i;
    }
    free(stack);
    /* torch's _remove_dup_nodes; parents precede children in this order. */
    for (size_t i = 0; i < n; i++) {
        int32_t p = v[i].parent;
        while (p >= 0 && v[p].removed)
            p = v[p].parent;
        v[i].parent = p;
        if (p >= 0 && v[p].name == v[i].name && v[p].nchild == 1) {
            v[i].removed = 1;
            v[p].nchild = v[i].nchild;
        }
    }
    for (size_t i = 0; i < n; i++)
        v[i].self = v[i].dur;
    for (size_t i = 0; i < n; i++)
        if (!v[i].removed && v[i].parent >= 0)
            v[v[i].parent].self -= v[i].dur;
}

/* Attribute memory records; returns the number of top-level ones, which
 * are appended to v (capacity ensured by the caller). */
static size_t attach_memory(ev *v, size_t n, mem_rec *m, size_t nm, int32_t memory_name)
{
    if (!nm)
        return 0; /* and m may be NULL, which qsort must not get */
    qsort(m, nm, sizeof *m, mem_by_tid_ts);
    size_t top = 0, i = 0;
    for (size_t j = 0; j < nm; j++) {
        /* The last kept event of this thread starting no later. */
        while (i < n && (v[i].tid < m[j].tid || (v[i].tid == m[j].tid && v[i].ts <= m[j].ts)))
            i++;
        int32_t inner = -1;
        for (size_t k = i; k-- > 0 && v[k].tid == m[j].tid;)
            if (!v[k].removed) {
                inner = (int32_t)k;
                break;
            }
        while (inner >= 0 && v[inner].ts + v[inner].dur < m[j].ts)
            inner = v[inner].parent;
        if (inner < 0) {
            ev *e = &v[n + top++];
            memset(e, 0, sizeof *e);
            *e = (ev){.name = memory_name, .shapes = -1, .types = -1, .stack = -1, .module = -1,
                      .parent = -1, .cat = CAT_MEMORY, .tid = m[j].tid, .seq = -1,
                      .mem = m[j].bytes, .self_mem = m[j].bytes, .ts = m[j].ts};
            continue;
        }
        v[inner].self_mem += m[j].bytes;
        for (int32_t p = inner; p >= 0; p = v[p].parent)
            v[p].mem += m[j].bytes;
    }
    return top;
}

/* ---- columns out ---------------------------------------------------------- */

static int by_start_end(const void *a, const void *b)
{
    const ev *x = *(ev *const *)a, *y = *(ev *const *)b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    int64_t ex = x->ts + x->dur, ey = y->ts + y->dur;
    return ex > ey ? -1 : ex < ey;
}

#define COLUMN(dict, key, type, expr)                                                 \
    do {                                                                              \
        PyObject *b_ = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(nout * sizeof(type))); \
        if (!b_)                                                                      \
            goto fail;                                                                \
        type *c_ = (type *)PyBytes_AS_STRING(b_);                                     \
        for (size_t i = 0; i < nout; i++) {                                           \
            const ev *e = out[i];                                                     \
            c_[i] = (type)(expr);                                                     \
        }                                                                             \
        int rc_ = PyDict_SetItemString(dict, key, b_);                                \
        Py_DECREF(b_);                                                                \
        if (rc_ < 0)                                                                  \
            goto fail;                                                                \
    } while (0)

static PyObject *columns(reader *r, size_t ntop, int64_t base)
{
    size_t total = r->nev + ntop, nout = 0;
    ev **out = malloc((total ? total : 1) * sizeof *out);
    int32_t *pos = malloc((total ? total : 1) * sizeof *pos);
    PyObject *d = NULL;
    if (!out || !pos) {
        PyErr_NoMemory();
        goto fail;
    }
    for (size_t i = 0; i < total; i++)
        if (!r->evs[i].removed)
            out[nout++] = &r->evs[i];
    qsort(out, nout, sizeof *out, by_start_end);
    for (size_t i = 0; i < nout; i++)
        pos[out[i] - r->evs] = (int32_t)i;
    d = PyDict_New();
    if (!d)
        goto fail;
    COLUMN(d, "name", int32_t, e->name);
    COLUMN(d, "cat", int8_t, e->cat);
    COLUMN(d, "tid", int64_t, e->tid);
    COLUMN(d, "start", double, (double)(e->ts - base) / 1000.0);
    COLUMN(d, "dur", double, (double)e->dur / 1000.0);
    COLUMN(d, "self", double, (double)e->self / 1000.0);
    COLUMN(d, "parent", int32_t, e->parent >= 0 ? pos[e->parent] : -1);
    COLUMN(d, "shapes", int32_t, e->shapes);
    COLUMN(d, "types", int32_t, e->types);
    COLUMN(d, "stack", int32_t, e->stack);
    COLUMN(d, "module", int32_t, e->module);
    COLUMN(d, "seq", int64_t, e->seq);
    COLUMN(d, "fwd", int64_t, e->fwd);
    COLUMN(d, "flops", int64_t, e->flops);
    COLUMN(d, "mem", int64_t, e->mem);
    COLUMN(d, "self_mem", int64_t, e->self_mem);
    if (PyDict_SetItemString(d, "strings", r->strings.list) < 0)
        goto fail;
    /* What `start` counts from, in ns: readers that need absolute times
     * (aiprof.mindspore's host_info) add it back. */
    PyObject *base_obj = PyLong_FromLongLong((long long)base);
    if (!base_obj || PyDict_SetItemString(d, "base_ns", base_obj) < 0) {
        Py_XDECREF(base_obj);
        goto fail;
    }
    Py_DECREF(base_obj);
    free(out);
    free(pos);
    return d;
fail:
    free(out);
    free(pos);
    Py_XDECREF(d);
    return NULL;
}

/* read_trace(path, filtered) -> dict of columns (see the top of the file). */
static PyObject *py_read_trace(PyObject *self, PyObject *args)
{
    PyObject *path_obj, *filtered;
    if (!PyArg_ParseTuple(args, "O&O!:read_trace", PyUnicode_FSConverter, &path_obj,
                          &PyFrozenSet_Type, &filtered))
        return NULL;
    int fd = open(PyBytes_AS_STRING(path_obj), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, path_obj);
        Py_DECREF(path_obj);
        return NULL;
    }
    struct stat st;
    void *map = NULL;
    if (fstat(fd, &st) == 0 && st.st_size > 0)
        map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED || !map) {
        PyErr_Format(PyExc_ValueError, "%s: empty or unreadable trace",
                     PyBytes_AS_STRING(path_obj));
        Py_DECREF(path_obj);
        return NULL;
    }
    reader r = {.s = {map, (const char *)map + st.st_size, NULL}, .filtered = filtered};
    r.strings.list = PyList_New(0);
    r.strings.index = PyDict_New();
    PyObject *result = NULL;
    if (!r.strings.list || !r.strings.index)
        goto done;
    if (read_file(&r) < 0) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_ValueError, "%s: not a trace JSON file (%s at byte %zd)",
                         PyBytes_AS_STRING(path_obj), r.s.error ? r.s.error : "bad structure",
                         (Py_ssize_t)(r.s.p - (const char *)map));
        goto done;
    }
    if (r.nev) /* qsort wants a non-NULL array even for zero items */
        qsort(r.evs, r.nev, sizeof *r.evs, by_tid_start);
    build_tree(r.evs, r.nev);
    js_buf memory_name = {.data = "[memory]", .len = 8};
    int32_t mem_id = r.nmem ? str_id(&r.strings, &memory_name) : -1;
    if (mem_id == -2 || grow((void **)&r.evs, &r.cap_ev, r.nev + r.nmem + 1, sizeof *r.evs)) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto done;
    }
    size_t ntop = attach_memory(r.evs, r.nev, r.mem, r.nmem, mem_id);
    /* Kineto's ts are relative already; the array's absolute ones get the
     * whole second below the earliest (see the top of the file). */
    int64_t base = r.relative || !r.any_ts ? 0 : r.min_ts - r.min_ts % 1000000000;
    result = columns(&r, ntop, base);
done:
    munmap(map, (size_t)st.st_size);
    Py_DECREF(path_obj);
    js_buf_free(&r.key);
    js_buf_free(&r.val);
    free(r.evs);
    free(r.mem);
    free(r.name_filtered);
    Py_XDECREF(r.strings.list);
    Py_XDECREF(r.strings.index);
    return result;
}

static PyMethodDef methods[] = {
    {"read_trace", py_read_trace, METH_VARARGS,
     "read_trace(path, filtered_names: frozenset) -> dict of packed columns."},
    {NULL, NULL, 0, NULL},
};

int aipy_trace_reader_init(PyObject *module) { return PyModule_AddFunctions(module, methods); }
