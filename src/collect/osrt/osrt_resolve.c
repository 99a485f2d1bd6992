/*
 * osrt_resolve.c — finding the real function each OSRT wrapper calls.
 *
 * dlsym(RTLD_DEFAULT, "fsync") is usually the C library's fsync.  Not
 * when the program is a non-PIE executable that takes the function's
 * address (CPython's posixmodule passes fsync and fdatasync to a helper as
 * function pointers): the linker then makes the program's PLT entry the
 * function's canonical address, the program's dynamic symbol table holds
 * an undefined "fsync" whose value is that entry, and dlsym returns it.
 * That entry jumps through the program's own GOT slot, which osrt_got.c
 * points at the wrapper: a wrapper calling it calls itself until the stack
 * ends (issue 26 §1).  So an answer of dlsym that is such an entry (dladdr1
 * names an undefined symbol at that very address) is kept as the
 * canonical address, and the real function is looked up past the program:
 * the definition the objects after libaiprof provide (RTLD_NEXT), or the
 * C library's own.  A function for which no definition is found is not
 * intercepted (its real pointer is NULL and osrt_got.c leaves it alone).
 */
#include "osrt_int.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

/* p is a PLT entry standing for `name`: an undefined symbol of its object
 * has p as its value. */
static int is_plt_entry(void *p)
{
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    if (!dladdr1(p, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym)
        return 0;
    return sym->st_shndx == SHN_UNDEF && info.dli_saddr == p;
}

static void *definition(void *p) { return p && !is_plt_entry(p) ? p : NULL; }

void *aip__osrt_resolve(const char *name, void **canonical)
{
    *canonical = NULL;
    void *p = dlsym(RTLD_DEFAULT, name);
    if (!p || definition(p))
        return p;
    *canonical = p;
    void *next = definition(dlsym(RTLD_NEXT, name));
    if (next)
        return next;
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    void *own = libc ? definition(dlsym(libc, name)) : NULL;
    if (libc)
        dlclose(libc);
    return own;
}
