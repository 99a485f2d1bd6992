/*
 * fork_handlers.c — see fork_handlers.h: a fixed table of per-subsystem
 * fork handlers behind one pthread_atfork().
 */
#include "fork_handlers.h"

#include <pthread.h>

typedef struct fork_slot_handlers {
    void (*prepare)(void);
    void (*parent)(void);
    void (*child)(void);
} fork_slot_handlers;

static fork_slot_handlers slots[AIP_FORK_SLOTS];
static pthread_once_t install_once = PTHREAD_ONCE_INIT;

void aip__fork_register(aip__fork_slot slot, void (*prepare)(void), void (*parent)(void),
                        void (*child)(void))
{
    if ((unsigned)slot >= AIP_FORK_SLOTS)
        return;
    slots[slot] = (fork_slot_handlers){prepare, parent, child};
}

/* Locks in lock order... */
static void run_prepare(void)
{
    for (int i = 0; i < AIP_FORK_SLOTS; i++)
        if (slots[i].prepare)
            slots[i].prepare();
}

/* ...and released in reverse, on both sides. */
static void run_parent(void)
{
    for (int i = AIP_FORK_SLOTS - 1; i >= 0; i--)
        if (slots[i].parent)
            slots[i].parent();
}

static void run_child(void)
{
    for (int i = AIP_FORK_SLOTS - 1; i >= 0; i--)
        if (slots[i].child)
            slots[i].child();
}

static void install(void) { pthread_atfork(run_prepare, run_parent, run_child); }

void aip__fork_install(void) { pthread_once(&install_once, install); }
