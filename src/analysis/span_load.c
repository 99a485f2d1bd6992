/*
 * span_load.c — the span records of a raw file (OP, ANNOTATION, RANGE,
 * PYFUNC: most of a profile) decoded into their threads, on a second
 * thread while model_load.c reads the file and decodes everything else.
 *
 * On a big profile the load was the longest serial part of the analysis
 * (issue 30: the second core added little).  The loader validates every
 * EVENTS chunk, then hands this worker a copy of its payload; the worker
 * appends the chunk's spans to its own per-thread arrays, in file order,
 * and the loader moves them into the process when the file is done.  So
 * the spans are exactly those of a serial load, and the loader never
 * touches an array the worker is filling (p->threads itself may be
 * reallocated by the loader meanwhile; the worker never reads it).  The
 * queue holds at most QUEUE chunks: memory stays bounded.
 */
#include "analysis_int.h"
#include "error.h"
#include "thread.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t name_id(uint32_t id) { return id <= AIP_NAME_ID_MAX ? id : 0; }

/* Capacity was reserved for the whole chunk (aip__spans_decode_chunk), so
 * this is the per-op hot path: no allocation, no call. */
static inline void add_span(aip__thread *t, const uint8_t *rec, uint8_t kind, uint32_t name,
                            unsigned opflags, const uint64_t *aux, unsigned n_aux)
{
    aip__span *sp = &t->spans[t->n_spans++];
    uint64_t start, end;
    memcpy(&start, rec + 8, 8);
    memcpy(&end, rec + 16, 8);
    sp->start = (int64_t)start; /* ticks until tick_convert.c */
    sp->end = (int64_t)end;
    sp->name = name_id(name);
    sp->unfinished = (rec[1] & AIP_REC_UNFINISHED) != 0; /* the header's flags */
    sp->kind = kind;
    sp->top_op = 0;
    sp->piece = 0;
    sp->aux = 0;
    sp->opflags = kind == AIP_SPAN_OP ? opflags & AIP_OPF_BACKWARD : 0;
    if (n_aux && t->n_aux + n_aux <= t->cap_aux && t->n_aux + n_aux <= AIP_AUX_MAX) {
        memcpy(t->aux + t->n_aux, aux, n_aux * sizeof *aux);
        sp->aux = (uint32_t)t->n_aux + 1;
        sp->opflags = opflags;
        t->n_aux += n_aux;
    }
}

int aip__span_kind(uint8_t kind)
{
    return kind == AIP_REC_ANNOTATION || kind == AIP_REC_RANGE || kind == AIP_REC_OP ||
           kind == AIP_REC_PYFUNC;
}

static void decode_span(aip__thread *t, const uint8_t *r, const aip__rec_header *h)
{
    switch (h->kind) {
    case AIP_REC_ANNOTATION:
        add_span(t, r, AIP_SPAN_ANNOTATION, h->name, 0, NULL, 0);
        return;
    case AIP_REC_RANGE: {
        uint32_t dom;
        memcpy(&dom, r + 24, 4);
        uint64_t w = dom;
        add_span(t, r, AIP_SPAN_RANGE, h->name, 0, &w, 1);
        return;
    }
    case AIP_REC_OP: {
        uint64_t w[5];
        unsigned n = aip__op_words(h->flags);
        memcpy(w, r + 24, n * 8); /* the fields are in flag order, like the words */
        /* 1.7: a record_function scope with an op's context is an annotation */
        add_span(t, r, (h->flags & AIP_OPF_ANNOTATION) ? AIP_SPAN_ANNOTATION : AIP_SPAN_OP,
                 h->name, h->flags & 0x3F, w, n);
        return;
    }
    default: { /* AIP_REC_PYFUNC */
        /* u64 start, u64 end, u32 python_id, u32 parent_id, u32 module_id,
         * u32 reserved: aux word 0 = python_id | parent_id << 32, word 1 =
         * module_id (a string id) */
        uint32_t ids[3];
        memcpy(ids, r + 24, sizeof ids);
        uint64_t w[2] = {ids[0] | (uint64_t)ids[1] << 32, name_id(ids[2])};
        add_span(t, r, AIP_SPAN_PYFUNC, h->name, 0, w, 2);
        return;
    }
    }
}

aip_status aip__spans_decode_chunk(aip__thread *t, const uint8_t *payload, uint32_t size,
                                   size_t spans, size_t aux)
{
    size_t aux_need = t->n_aux + aux;
    if (aux_need > AIP_AUX_MAX)
        aux_need = AIP_AUX_MAX; /* beyond: ops keep their times, lose side fields */
    aip_status s = aip__array_grow((void **)&t->spans, &t->cap_spans, t->n_spans + spans,
                                   sizeof *t->spans);
    if (!s && aux_need > t->n_aux)
        s = aip__array_grow((void **)&t->aux, &t->cap_aux, aux_need, sizeof *t->aux);
    if (s)
        return s;
    for (uint32_t off = 0; off < size;) {
        aip__rec_header h;
        memcpy(&h, payload + off, sizeof h);
        if (aip__span_kind(h.kind))
            decode_span(t, payload + off, &h);
        off += h.size;
    }
    return AIP_OK;
}

/* --- the worker ---------------------------------------------------------- */

#define QUEUE 8

typedef struct slot {
    uint8_t *buf;
    size_t cap;
    uint32_t size, ti;
    size_t spans, aux;
} slot;

struct aip__span_loader {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    slot q[QUEUE];
    size_t head, count;       /* under mu; the loader fills q[(head + count) % QUEUE] */
    int done;                 /* under mu: nothing more will come */
    aip_status status;        /* under mu: the worker's first failure */
    char error[512];
    aip__thread *t;           /* the worker's: spans by thread index */
    size_t n_t;
};

static aip_status thread_of(aip__span_loader *L, uint32_t ti, aip__thread **out)
{
    if (ti >= L->n_t) {
        size_t n = (size_t)ti + 1 > 2 * L->n_t ? (size_t)ti + 1 : 2 * L->n_t;
        aip__thread *v = realloc(L->t, n * sizeof *v);
        if (!v)
            return aip__fail(AIP_ERR_NOMEM, "no memory for the span loader");
        memset(v + L->n_t, 0, (n - L->n_t) * sizeof *v);
        L->t = v;
        L->n_t = n;
    }
    *out = &L->t[ti];
    return AIP_OK;
}

static void *worker_main(void *arg)
{
    aip__span_loader *L = arg;
    pthread_mutex_lock(&L->mu);
    for (;;) {
        while (!L->count && !L->done)
            pthread_cond_wait(&L->cv, &L->mu);
        if (!L->count)
            break;
        slot *q = &L->q[L->head];
        int failed = L->status != AIP_OK;
        pthread_mutex_unlock(&L->mu);
        aip__thread *t = NULL;
        aip_status s = AIP_OK;
        if (!failed && !(s = thread_of(L, q->ti, &t)))
            s = aip__spans_decode_chunk(t, q->buf, q->size, q->spans, q->aux);
        pthread_mutex_lock(&L->mu);
        if (s && !L->status) {
            L->status = s;
            snprintf(L->error, sizeof L->error, "%s", aip_last_error());
        }
        L->head = (L->head + 1) % QUEUE;
        L->count--;
        pthread_cond_broadcast(&L->cv);
    }
    pthread_mutex_unlock(&L->mu);
    return NULL;
}

aip__span_loader *aip__span_loader_start(void)
{
    if (aip__cpus_usable() < 2)
        return NULL; /* one CPU: the worker would only take turns with the loader */
    aip__span_loader *L = calloc(1, sizeof *L);
    if (!L)
        return NULL;
    pthread_mutex_init(&L->mu, NULL);
    pthread_cond_init(&L->cv, NULL);
    if (aip__thread_create(&L->th, NULL, worker_main, L) != 0) {
        pthread_cond_destroy(&L->cv);
        pthread_mutex_destroy(&L->mu);
        free(L);
        return NULL; /* no thread to be had: the loader decodes them itself */
    }
    return L;
}

aip_status aip__span_loader_put(aip__span_loader *L, uint32_t ti, const uint8_t *payload,
                                uint32_t size, size_t spans, size_t aux)
{
    pthread_mutex_lock(&L->mu);
    while (L->count == QUEUE && !L->status)
        pthread_cond_wait(&L->cv, &L->mu);
    aip_status s = L->status;
    if (s)
        s = aip__fail(s, "%s", L->error);
    /* Only this thread adds: the slot past the queued ones is its own
     * until counted, wherever the worker moves the head meanwhile. */
    slot *q = &L->q[(L->head + L->count) % QUEUE];
    pthread_mutex_unlock(&L->mu);
    if (s)
        return s;
    if (q->cap < size) {
        uint8_t *b = realloc(q->buf, size);
        if (!b)
            return aip__fail(AIP_ERR_NOMEM, "no memory for the span loader's queue");
        q->buf = b;
        q->cap = size;
    }
    memcpy(q->buf, payload, size);
    q->size = size;
    q->ti = ti;
    q->spans = spans;
    q->aux = aux;
    pthread_mutex_lock(&L->mu);
    L->count++;
    pthread_cond_broadcast(&L->cv);
    pthread_mutex_unlock(&L->mu);
    return AIP_OK;
}

aip_status aip__span_loader_finish(aip__span_loader *L, aip__process *p, aip_status s)
{
    if (!L)
        return s;
    pthread_mutex_lock(&L->mu);
    L->done = 1;
    pthread_cond_broadcast(&L->cv);
    pthread_mutex_unlock(&L->mu);
    pthread_join(L->th, NULL);
    if (!s && L->status)
        s = aip__fail(L->status, "%s", L->error);
    for (size_t i = 0; i < L->n_t; i++) {
        aip__thread *w = &L->t[i];
        if (!s && i < p->n_threads) { /* the loader's arrays for it are empty */
            aip__thread *t = &p->threads[i];
            t->spans = w->spans;
            t->n_spans = w->n_spans;
            t->cap_spans = w->cap_spans;
            t->aux = w->aux;
            t->n_aux = w->n_aux;
            t->cap_aux = w->cap_aux;
        } else {
            aip__array_free(w->spans);
            aip__array_free(w->aux);
        }
    }
    for (size_t i = 0; i < QUEUE; i++)
        free(L->q[i].buf);
    free(L->t);
    pthread_cond_destroy(&L->cv);
    pthread_mutex_destroy(&L->mu);
    free(L);
    return s;
}
