/*
 * osrt_got.c — pointing the loaded objects' GOT entries of the OS runtime
 * functions at our wrappers, and back.
 *
 * Every call an object makes to a function of another object goes through
 * its Global Offset Table: a JUMP_SLOT entry (the PLT's) or a GLOB_DAT one
 * (calls through the function's address, -fno-plt).  The dynamic section
 * of each object (dl_iterate_phdr) names them: its relocations say which
 * entry holds which symbol.  Rewriting the entries of the functions we
 * watch makes the object call our wrapper, in this process, with no
 * LD_PRELOAD and no restart — what a Python program that only sets
 * host_sys=[OSRT] needs.  Each entry's old value is kept and written back
 * when the trace stops.
 *
 * Left alone: libaiprof itself (its writer's writes are not the program's)
 * and aiprof's other objects (the preload and MPI libraries, the Python
 * extension and the torch adapter),
 * the C library and its companions (their internal calls do not use the
 * GOT, and malloc's mmap must never reach a recorder that allocates), the
 * dynamic loader, the vDSO, and allocators (jemalloc, tcmalloc, mimalloc:
 * their locks must not be taken inside a wrapper).  An entry that holds
 * neither the real function nor the object's own lazy-binding stub belongs
 * to another interposer and is left alone too (counted).  Full RELRO makes
 * the GOT read-only after start-up: the pages are made writable for the
 * patch, and read-only again.  Stripping removes .symtab, not the dynamic
 * symbols used here, so stripped objects are patched like any other.
 */
#include "osrt_int.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#if defined(__x86_64__)
#define R_JUMP_SLOT R_X86_64_JUMP_SLOT
#define R_GLOB_DAT R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define R_JUMP_SLOT R_AARCH64_JUMP_SLOT
#define R_GLOB_DAT R_AARCH64_GLOB_DAT
#elif defined(__i386__)
#define R_JUMP_SLOT R_386_JMP_SLOT
#define R_GLOB_DAT R_386_GLOB_DAT
#else
#define R_JUMP_SLOT (-1)
#define R_GLOB_DAT (-1)
#endif

#if __ELF_NATIVE_CLASS == 64
#define ELF_R_SYM ELF64_R_SYM
#define ELF_R_TYPE ELF64_R_TYPE
#else
#define ELF_R_SYM ELF32_R_SYM
#define ELF_R_TYPE ELF32_R_TYPE
#endif

typedef struct patched_obj {
    uintptr_t base;
    char *name;
    uintptr_t relro_lo, relro_hi; /* its read-only-after-relocation pages */
} patched_obj;

typedef struct slot {
    void **addr;
    void *old;
    uint32_t obj;               /* index in objs */
    uint16_t fn;
    uint8_t relro;              /* in the object's read-only-after-relocation pages */
} slot;

static patched_obj *objs;
static size_t n_objs, cap_objs;
static slot *slots;
static size_t n_slots, cap_slots;

/* Names to function indices: a small open-addressing table, built once,
 * so that a large library's thousands of relocations cost a hash each. */
#define NAME_SLOTS 256
static int16_t by_name[NAME_SLOTS];

static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u;
    while (*s)
        h = (h ^ (uint8_t)*s++) * 16777619u;
    return h;
}

static void build_names(void)
{
    memset(by_name, -1, sizeof by_name);
    for (int i = 0; i < AIP_OSRT_N; i++) {
        uint32_t h = name_hash(aip__osrt_funcs[i].name) % NAME_SLOTS;
        while (by_name[h] >= 0)
            h = (h + 1) % NAME_SLOTS;
        by_name[h] = (int16_t)i;
    }
}

static int find_name(const char *s)
{
    uint32_t h = name_hash(s) % NAME_SLOTS;
    while (by_name[h] >= 0) {
        if (!strcmp(aip__osrt_funcs[by_name[h]].name, s))
            return by_name[h];
        h = (h + 1) % NAME_SLOTS;
    }
    return -1;
}

static const char *base_name(const char *path)
{
    const char *b = path ? strrchr(path, '/') : NULL;
    return b ? b + 1 : path ? path : "";
}

/* Objects never patched (see the file comment). */
static int skipped_name(const char *path)
{
    const char *b = base_name(path);
    static const char *const prefixes[] = {"libc.so", "libc-", "libpthread", "libdl.so",
                                           "librt.so", "libm.so", "ld-linux", "ld64.so",
                                           "ld-musl", "linux-vdso", "linux-gate", "libasan",
                                           "libtsan", "libubsan", "liblsan", "libhwasan"};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (!strncmp(b, prefixes[i], strlen(prefixes[i])))
            return 1;
    if (!strncmp(b, "libaiprof", 9)) /* libaiprof_preload, _mpi, _torch: the profiler's */
        return 1;
    if (!strncmp(b, "_C.", 3) && strstr(path, "/aiprof/")) /* the Python extension */
        return 1;
    return strstr(b, "malloc") != NULL; /* jemalloc, tcmalloc, mimalloc */
}

typedef struct walk {
    aip__osrt_patch_stats *st;
    uintptr_t self_fn;          /* an address inside libaiprof */
} walk;

static int push_slot(slot s)
{
    if (n_slots == cap_slots) {
        size_t cap = cap_slots ? 2 * cap_slots : 256;
        slot *v = realloc(slots, cap * sizeof *v);
        if (!v)
            return -1;
        slots = v;
        cap_slots = cap;
    }
    slots[n_slots++] = s;
    return 0;
}

static int already_patched(uintptr_t base, const char *name)
{
    for (size_t i = 0; i < n_objs; i++)
        if (objs[i].base == base && !strcmp(objs[i].name, name))
            return 1;
    return 0;
}

typedef struct dyn_info {
    const ElfW(Sym) *symtab;
    const char *strtab;
    size_t strsz;
    uintptr_t jmprel, relsz_plt, rela, relasz, rel, relsz;
    size_t relacount, relcount; /* leading RELATIVE relocations: skipped */
    int plt_is_rela;
} dyn_info;

static uintptr_t dyn_ptr(uintptr_t base, ElfW(Addr) v)
{
    /* glibc relocates the pointers of a loaded object's dynamic section in
     * place; the vDSO's and some loaders' are left as link-time values. */
    return v < base ? base + v : v;
}

static void read_dynamic(uintptr_t base, const ElfW(Dyn) *d, dyn_info *di)
{
    memset(di, 0, sizeof *di);
    di->plt_is_rela = 1;
    for (; d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_SYMTAB: di->symtab = (const ElfW(Sym) *)dyn_ptr(base, d->d_un.d_ptr); break;
        case DT_STRTAB: di->strtab = (const char *)dyn_ptr(base, d->d_un.d_ptr); break;
        case DT_STRSZ: di->strsz = d->d_un.d_val; break;
        case DT_JMPREL: di->jmprel = dyn_ptr(base, d->d_un.d_ptr); break;
        case DT_PLTRELSZ: di->relsz_plt = d->d_un.d_val; break;
        case DT_PLTREL: di->plt_is_rela = d->d_un.d_val == DT_RELA; break;
        case DT_RELA: di->rela = dyn_ptr(base, d->d_un.d_ptr); break;
        case DT_RELASZ: di->relasz = d->d_un.d_val; break;
        case DT_REL: di->rel = dyn_ptr(base, d->d_un.d_ptr); break;
        case DT_RELSZ: di->relsz = d->d_un.d_val; break;
        case DT_RELACOUNT: di->relacount = d->d_un.d_val; break;
        case DT_RELCOUNT: di->relcount = d->d_un.d_val; break;
        default: break;
        }
    }
}

/* The pages the loader made read-only: as glibc's _dl_protect_relro, both
 * ends rounded down (the last partial page stays writable, and may hold
 * writable data that must stay so). */
static void relro_pages(uintptr_t a, size_t size, uintptr_t *lo, uintptr_t *hi)
{
    uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
    *lo = a & ~(pg - 1);
    *hi = (a + size) & ~(pg - 1);
    if (*hi < *lo)
        *hi = *lo;
}

typedef struct obj_ctx {
    uintptr_t base, lo, hi;     /* the object's mapped range */
    uintptr_t relro_lo, relro_hi;
    uint32_t obj;
    size_t patched, foreign;
    int writable;               /* relro pages made writable */
    int refused;
} obj_ctx;

static void consider(obj_ctx *o, const dyn_info *di, uintptr_t offset, uintptr_t info)
{
    unsigned type = (unsigned)ELF_R_TYPE(info);
    if ((int)type != R_JUMP_SLOT && (int)type != R_GLOB_DAT)
        return;
    const ElfW(Sym) *sym = &di->symtab[ELF_R_SYM(info)];
    if (sym->st_shndx != SHN_UNDEF || (di->strsz && sym->st_name >= di->strsz))
        return; /* the object defines it: not a call to the C library */
    const char *nm = di->strtab + sym->st_name;
    if (nm[0] == '_' && nm[1] == 'Z')
        return; /* a C++ symbol (most of a C++ library's imports): none of ours */
    int fn = find_name(nm);
    if (fn < 0 || !aip__osrt_funcs[fn].real || !aip__osrt_funcs[fn].wrapper)
        return; /* not here, or only looked up (pthread_mutex_trylock) */
    void **addr = (void **)(o->base + offset);
    void *cur = *addr;
    if (cur == aip__osrt_funcs[fn].wrapper || cur == aip__osrt_funcs[fn].canonical)
        return; /* patched, or through the program's PLT entry, whose slot is patched */
    uintptr_t c = (uintptr_t)cur;
    if (cur != aip__osrt_funcs[fn].real && !(c >= o->lo && c < o->hi)) {
        o->foreign++;
        return;
    }
    int relro = (uintptr_t)addr >= o->relro_lo && (uintptr_t)addr < o->relro_hi;
    if (relro && !o->writable) {
        if (o->refused)
            return;
        if (mprotect((void *)o->relro_lo, o->relro_hi - o->relro_lo, PROT_READ | PROT_WRITE)) {
            o->refused = 1;
            return;
        }
        o->writable = 1;
    }
    if (push_slot((slot){addr, cur, o->obj, (uint16_t)fn, (uint8_t)relro}))
        return;
    __atomic_store_n(addr, aip__osrt_funcs[fn].wrapper, __ATOMIC_RELEASE);
    o->patched++;
}

static void scan_relocs(obj_ctx *o, const dyn_info *di, uintptr_t at, size_t size, int rela)
{
    if (!at || !size)
        return;
    if (rela) {
        const ElfW(Rela) *r = (const ElfW(Rela) *)at;
        for (size_t i = 0; i < size / sizeof *r; i++)
            consider(o, di, r[i].r_offset, r[i].r_info);
    } else {
        const ElfW(Rel) *r = (const ElfW(Rel) *)at;
        for (size_t i = 0; i < size / sizeof *r; i++)
            consider(o, di, r[i].r_offset, r[i].r_info);
    }
}

static void relro_protect(const obj_ctx *o)
{
    mprotect((void *)o->relro_lo, o->relro_hi - o->relro_lo, PROT_READ);
}

static int patch_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    walk *w = data;
    const ElfW(Dyn) *dyn = NULL;
    obj_ctx o = {.base = info->dlpi_addr, .lo = UINTPTR_MAX, .obj = (uint32_t)n_objs};
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD) {
            if (a < o.lo)
                o.lo = a;
            if (a + ph->p_memsz > o.hi)
                o.hi = a + ph->p_memsz;
        } else if (ph->p_type == PT_DYNAMIC) {
            dyn = (const ElfW(Dyn) *)a;
        } else if (ph->p_type == PT_GNU_RELRO) {
            relro_pages(a, ph->p_memsz, &o.relro_lo, &o.relro_hi);
        }
    }
    int is_self = w->self_fn >= o.lo && w->self_fn < o.hi;
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    if (is_self && !*name)
        w->st->self_in_program = 1;
    if (!dyn || is_self || skipped_name(name) || already_patched(o.base, name))
        return 0;
    dyn_info di;
    read_dynamic(o.base, dyn, &di);
    if (!di.symtab || !di.strtab)
        return 0;
    if (n_objs == cap_objs) {
        size_t cap = cap_objs ? 2 * cap_objs : 64;
        patched_obj *v = realloc(objs, cap * sizeof *v);
        if (!v)
            return 0;
        objs = v;
        cap_objs = cap;
    }
    char *copy = strdup(name);
    if (!copy)
        return 0;
    objs[n_objs++] = (patched_obj){o.base, copy, o.relro_lo, o.relro_hi};
    scan_relocs(&o, &di, di.jmprel, di.relsz_plt, di.plt_is_rela);
    /* .rela.dyn of a large library is mostly RELATIVE relocations, which
     * the linker sorts first and counts (DT_RELACOUNT): skip them. */
    size_t skip = di.relacount * sizeof(ElfW(Rela));
    if (skip < di.relasz)
        scan_relocs(&o, &di, di.rela + skip, di.relasz - skip, 1);
    skip = di.relcount * sizeof(ElfW(Rel));
    if (skip < di.relsz)
        scan_relocs(&o, &di, di.rel + skip, di.relsz - skip, 0);
    if (o.writable)
        relro_protect(&o);
    if (o.patched)
        w->st->objects++;
    w->st->slots += o.patched;
    w->st->foreign += o.foreign;
    w->st->refused += o.refused;
    return 0;
}

static int count_dynamic(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) {
            ++*(size_t *)data;
            break;
        }
    return 0;
}

void aip__osrt_patch_all(aip__osrt_patch_stats *st)
{
    static int names_built;
    if (!names_built) {
        build_names();
        names_built = 1;
    }
    size_t dynamic = 0;
    dl_iterate_phdr(count_dynamic, &dynamic);
    st->no_dynamic = dynamic == 0;
    walk w = {.st = st, .self_fn = (uintptr_t)(void *)patch_object};
    dl_iterate_phdr(patch_object, &w);
}

/* ---- restoring ---------------------------------------------------------- */

typedef struct live_set {
    uint8_t *live;              /* per patched object: still loaded */
} live_set;

static int mark_live(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    live_set *ls = data;
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    for (size_t i = 0; i < n_objs; i++)
        if (objs[i].base == info->dlpi_addr && !strcmp(objs[i].name, name))
            ls->live[i] = 1;
    return 0;
}

size_t aip__osrt_restore_all(void)
{
    size_t restored = 0;
    live_set ls = {calloc(n_objs ? n_objs : 1, 1)};
    if (!ls.live)
        return 0; /* the entries keep our wrappers, which call the real functions */
    dl_iterate_phdr(mark_live, &ls);
    size_t next = 0;
    for (size_t oi = 0; oi < n_objs; oi++) {
        if (!ls.live[oi])
            continue; /* unloaded meanwhile: its entries are gone with it */
        uintptr_t lo = objs[oi].relro_lo, hi = objs[oi].relro_hi;
        int writable = 0;
        /* an object's slots are contiguous: they were pushed as it was patched */
        while (next < n_slots && slots[next].obj < oi)
            next++;
        for (size_t i = next; i < n_slots && slots[i].obj == oi; i++) {
            slot *s = &slots[i];
            if (*s->addr != aip__osrt_funcs[s->fn].wrapper)
                continue;
            if (s->relro && !writable) {
                if (mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE))
                    break;
                writable = 1;
            }
            __atomic_store_n(s->addr, s->old, __ATOMIC_RELEASE);
            restored++;
        }
        if (writable)
            mprotect((void *)lo, hi - lo, PROT_READ);
    }
    free(ls.live);
    for (size_t i = 0; i < n_objs; i++)
        free(objs[i].name);
    n_objs = 0;
    n_slots = 0;
    return restored;
}
