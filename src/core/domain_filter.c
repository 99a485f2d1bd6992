/*
 * domain_filter.c — see domain_filter.h.
 */
#include "domain_filter.h"
#include "fork_handlers.h"
#include "intern.h"
#include "strlist.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

_Atomic uint64_t aip__domain_cache[AIP_DOMAIN_CACHE];

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char **include_list, **exclude_list;

/* fork() holds the filter lock (fork_handlers.h). */
static void fork_lock(void) { pthread_mutex_lock(&lock); }
static void fork_unlock(void) { pthread_mutex_unlock(&lock); }

__attribute__((constructor)) static void register_fork_handlers(void)
{
    aip__fork_register(AIP_FORK_DOMAIN, fork_lock, fork_unlock, fork_unlock);
}

int aip__domain_filter_set(const char *const *include, const char *const *exclude)
{
    pthread_mutex_lock(&lock);
    aip__strlist_free(include_list);
    aip__strlist_free(exclude_list);
    include_list = aip__strlist_copy(include);
    /* Include wins: with an include list the exclude list is ignored. */
    exclude_list = include_list ? NULL : aip__strlist_copy(exclude);
    for (size_t i = 0; i < AIP_DOMAIN_CACHE; i++)
        atomic_store_explicit(&aip__domain_cache[i], 0, memory_order_relaxed);
    int active = include_list || exclude_list;
    pthread_mutex_unlock(&lock);
    return active;
}

static int in_list(char **l, const char *text)
{
    for (char **p = l; p && *p; p++)
        if (strcmp(*p, text) == 0)
            return 1;
    return 0;
}

int aip__domain_allowed_slow(uint32_t domain)
{
    const char *text = aip__string_text(domain, NULL);
    if (!text)
        text = "";
    pthread_mutex_lock(&lock);
    int allowed;
    if (include_list)
        allowed = in_list(include_list, text);
    else
        allowed = !in_list(exclude_list, text);
    pthread_mutex_unlock(&lock);
    uint64_t e = (1ull << 63) | ((uint64_t)(allowed & 1) << 32) | domain;
    atomic_store_explicit(&aip__domain_cache[domain & (AIP_DOMAIN_CACHE - 1)], e,
                          memory_order_relaxed);
    return allowed;
}
