/*
 * nvtx_calls.c — NVTX ranges and marks recorded as mstx ranges and marks.
 * NVTX calls these through the slots nvtx_inject.c fills: pushes and pops
 * become aip_range_push/pop (one stack per thread: NVTX's per-domain stacks
 * nest the same way when the program keeps them balanced), start/end become
 * aip_range_start/end (may end on another thread), marks aip_mark.  The
 * domain is the NVTX domain's name ("default" for NVTX's default domain),
 * so the mstx domain filters and every mstx output (trace_view.json, the
 * msprof_tx tables, the database's MSTX tables) treat them alike.  Domain
 * and registered-string handles are interned string ids, so a call costs
 * one intern of its message at most, and nothing while no trace records.
 */
#include <aiprof.h>

#include <stdint.h>
#include <wchar.h>

#include "nvtx_int.h"
#include "recorder.h"

_Static_assert(offsetof(aip_nvtx_attributes, message) == 40 && sizeof(aip_nvtx_attributes) == 48,
               "nvtxEventAttributes_v2 layout");

/* NVTX's push/pop return the 0-based level of the range they open or close
 * (negative: error).  One count per thread, over all domains. */
static __thread int depth;

static aip_string_id handle_id(aip_nvtx_handle h)
{
    return (aip_string_id)(uintptr_t)h;
}

static aip_nvtx_handle id_handle(aip_string_id id)
{
    return (aip_nvtx_handle)(uintptr_t)id;
}

/* A wide string (UTF-32 on Linux) as UTF-8, cut at a whole character when
 * it does not fit; invalid code points become U+FFFD. */
static aip_string_id intern_wide(const wchar_t *w)
{
    char buf[1024];
    size_t n = 0;
    for (; w && *w; w++) {
        uint32_t c = (uint32_t)*w;
        if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
            c = 0xFFFD;
        unsigned char enc[4];
        size_t len;
        if (c < 0x80) {
            enc[0] = (unsigned char)c;
            len = 1;
        } else if (c < 0x800) {
            enc[0] = (unsigned char)(0xC0 | (c >> 6));
            enc[1] = (unsigned char)(0x80 | (c & 0x3F));
            len = 2;
        } else if (c < 0x10000) {
            enc[0] = (unsigned char)(0xE0 | (c >> 12));
            enc[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
            enc[2] = (unsigned char)(0x80 | (c & 0x3F));
            len = 3;
        } else {
            enc[0] = (unsigned char)(0xF0 | (c >> 18));
            enc[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
            enc[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
            enc[3] = (unsigned char)(0x80 | (c & 0x3F));
            len = 4;
        }
        if (n + len >= sizeof buf)
            break;
        for (size_t i = 0; i < len; i++)
            buf[n++] = (char)enc[i];
    }
    buf[n] = 0;
    return aip_intern(buf);
}

/* The message of an event-attributes structure; 0 (no text) for a missing
 * or unknown one — payload-extension message types among them. */
static aip_string_id attr_message(const aip_nvtx_attributes *a)
{
    if (!a || a->size < offsetof(aip_nvtx_attributes, message) + sizeof a->message)
        return 0;
    switch (a->message_type) {
    case AIP_NVTX_MSG_ASCII:
        return aip_intern(a->message.ascii);
    case AIP_NVTX_MSG_UNICODE:
        return intern_wide(a->message.unicode);
    case AIP_NVTX_MSG_REGISTERED:
        return handle_id(a->message.registered);
    default:
        return 0;
    }
}

/* ---- named domains (CORE2); the default domain is the NULL handle ------ */

static void domain_mark_ex(aip_nvtx_handle d, const aip_nvtx_attributes *a)
{
    if (aip_is_recording())
        aip_mark_id(handle_id(d), attr_message(a));
}

static int domain_push_ex(aip_nvtx_handle d, const aip_nvtx_attributes *a)
{
    if (aip_is_recording())
        aip_range_push_id(handle_id(d), attr_message(a));
    return depth++;
}

static int domain_pop(aip_nvtx_handle d)
{
    (void)d;
    aip_range_pop();
    return depth > 0 ? --depth : -1;
}

static uint64_t domain_start_ex(aip_nvtx_handle d, const aip_nvtx_attributes *a)
{
    return aip_is_recording() ? aip__range_start_id(handle_id(d), attr_message(a)) : 0;
}

static void domain_end(aip_nvtx_handle d, uint64_t id)
{
    (void)d;
    aip_range_end(id);
}

static aip_nvtx_handle domain_create_a(const char *name)
{
    return id_handle(aip_intern(name));
}

static aip_nvtx_handle domain_create_w(const wchar_t *name)
{
    return id_handle(intern_wide(name));
}

static void domain_destroy(aip_nvtx_handle d)
{
    (void)d; /* interned names live as long as the process */
}

static aip_nvtx_handle register_string_a(aip_nvtx_handle d, const char *s)
{
    (void)d;
    return id_handle(aip_intern(s));
}

static aip_nvtx_handle register_string_w(aip_nvtx_handle d, const wchar_t *s)
{
    (void)d;
    return id_handle(intern_wide(s));
}

/* ---- the default domain (CORE) ------------------------------------------ */

static void mark_ex(const aip_nvtx_attributes *a) { domain_mark_ex(NULL, a); }

static void mark_a(const char *m)
{
    if (aip_is_recording())
        aip_mark_id(0, aip_intern(m));
}

static void mark_w(const wchar_t *m)
{
    if (aip_is_recording())
        aip_mark_id(0, intern_wide(m));
}

static uint64_t start_ex(const aip_nvtx_attributes *a) { return domain_start_ex(NULL, a); }

static uint64_t start_a(const char *m)
{
    return aip_is_recording() ? aip__range_start_id(0, aip_intern(m)) : 0;
}

static uint64_t start_w(const wchar_t *m)
{
    return aip_is_recording() ? aip__range_start_id(0, intern_wide(m)) : 0;
}

static void end(uint64_t id) { aip_range_end(id); }

static int push_ex(const aip_nvtx_attributes *a) { return domain_push_ex(NULL, a); }

static int push_a(const char *m)
{
    if (aip_is_recording())
        aip_range_push_id(0, aip_intern(m));
    return depth++;
}

static int push_w(const wchar_t *m)
{
    if (aip_is_recording())
        aip_range_push_id(0, intern_wide(m));
    return depth++;
}

static int pop(void) { return domain_pop(NULL); }

#define SLOT(id, fn) { id, (aip_nvtx_fn)(fn) }

const aip__nvtx_slot aip__nvtx_core_slots[] = {
    SLOT(AIP_NVTX_CORE_MarkEx, mark_ex),         SLOT(AIP_NVTX_CORE_MarkA, mark_a),
    SLOT(AIP_NVTX_CORE_MarkW, mark_w),           SLOT(AIP_NVTX_CORE_RangeStartEx, start_ex),
    SLOT(AIP_NVTX_CORE_RangeStartA, start_a),    SLOT(AIP_NVTX_CORE_RangeStartW, start_w),
    SLOT(AIP_NVTX_CORE_RangeEnd, end),           SLOT(AIP_NVTX_CORE_RangePushEx, push_ex),
    SLOT(AIP_NVTX_CORE_RangePushA, push_a),      SLOT(AIP_NVTX_CORE_RangePushW, push_w),
    SLOT(AIP_NVTX_CORE_RangePop, pop),
};
const size_t aip__nvtx_core_count = sizeof aip__nvtx_core_slots / sizeof aip__nvtx_core_slots[0];

const aip__nvtx_slot aip__nvtx_core2_slots[] = {
    SLOT(AIP_NVTX_CORE2_DomainMarkEx, domain_mark_ex),
    SLOT(AIP_NVTX_CORE2_DomainRangeStartEx, domain_start_ex),
    SLOT(AIP_NVTX_CORE2_DomainRangeEnd, domain_end),
    SLOT(AIP_NVTX_CORE2_DomainRangePushEx, domain_push_ex),
    SLOT(AIP_NVTX_CORE2_DomainRangePop, domain_pop),
    SLOT(AIP_NVTX_CORE2_DomainRegisterStringA, register_string_a),
    SLOT(AIP_NVTX_CORE2_DomainRegisterStringW, register_string_w),
    SLOT(AIP_NVTX_CORE2_DomainCreateA, domain_create_a),
    SLOT(AIP_NVTX_CORE2_DomainCreateW, domain_create_w),
    SLOT(AIP_NVTX_CORE2_DomainDestroy, domain_destroy),
};
const size_t aip__nvtx_core2_count = sizeof aip__nvtx_core2_slots / sizeof aip__nvtx_core2_slots[0];
