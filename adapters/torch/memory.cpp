/*
 * memory.cpp — profile_memory: every CPU tensor allocation and free.
 *
 * A wrapper is put in front of c10's CPU allocator once and stays: it
 * forwards to the allocator it replaced (so torch.profiler's own memory
 * reporting, done inside that allocator, keeps working) and returns the
 * same kind of DataPtr (data == context), so raw_allocate/raw_deallocate
 * users are unaffected.  Its deleter is the only difference: it looks the
 * block up, reports the free, and calls the original deleter.
 *
 * Sizes of the blocks allocated while recording live in a side table
 * (torch's own ProfiledCPUMemoryReporter does the same); blocks allocated
 * while off are not in it and their frees are only forwarded.  Totals
 * count the blocks in the table: "allocated since memory profiling began",
 * the same relative figure torch reports for CPU.
 *
 * The table is on every allocation and free, so it is built for that:
 * one open-addressing table under one spin lock, no allocation per block
 * (a mutex and std::unordered_map's node per block showed in profiles),
 * and the running total under the same lock: one locked instruction per
 * allocation or free, where a lock per shard and an atomic total took two.
 * The table is kept small for the blocks alive (it doubles when half full
 * and halves when an eighth full): a step's few hundred blocks fit in a
 * few KiB, where sixteen shards of a thousand slots each spread them over
 * 256 KiB and every allocation's slot was a cache miss.  A free finds an
 * empty table without the lock.
 */
#include "aiprof_torch.h"
#include "torch_compat.h"

#include <aiprof.h>

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>

#include <atomic>
#include <cstdlib>

#include <pthread.h>
#include <exception>
#include <mutex>
#include <string>

extern "C" void aiprof__torch_set_error(const char *msg);

namespace {

/* Allocators of this priority or lower are replaced (c10's default is 0). */
constexpr uint8_t kPriority = 100;

std::atomic<int> g_on{0};
c10::DeleterFnPtr g_orig_deleter = nullptr;

/* ---- block sizes by address ------------------------------------------- */

struct Block {
    uintptr_t addr; /* 0 = empty */
    size_t size;
};

constexpr uint32_t kMinCap = 256;

struct alignas(64) Table {
    std::atomic<bool> busy{false};
    /* Blocks in the table; written under the lock, read without it by a
     * free (tracked_delete): a block that is in the table was put there
     * before the program could free it, so the freeing thread sees a count
     * of at least one. */
    std::atomic<uint32_t> used{0};
    uint32_t cap = 0;
    Block *slots = nullptr;
    int64_t total = 0; /* bytes of the blocks in the table */
};

Table g_table; /* never freed: frees may come at exit */

uint64_t addr_hash(uintptr_t a) { return (uint64_t)(a >> 4) * 0x9E3779B97F4A7C15ull; }

uint32_t slot_of(uint32_t cap, uintptr_t a) { return (uint32_t)(addr_hash(a) >> 32) & (cap - 1); }

void table_lock()
{
    while (g_table.busy.exchange(true, std::memory_order_acquire))
        while (g_table.busy.load(std::memory_order_relaxed))
            __builtin_ia32_pause();
}

void table_unlock() { g_table.busy.store(false, std::memory_order_release); }

struct TableLock {
    TableLock() { table_lock(); }
    ~TableLock() { table_unlock(); }
};

/* fork() (a DataLoader's workers) while another thread holds the table
 * would leave the child's copy locked forever: it is taken around it. */
void lock_for_fork() { table_lock(); }
void unlock_after_fork() { table_unlock(); }

/* The table with `cap` slots (a power of two, more than twice the blocks
 * in it), the blocks moved; false without memory (nothing changes). */
bool table_resize(Table &t, uint32_t cap)
{
    auto *slots = static_cast<Block *>(calloc(cap, sizeof(Block)));
    if (!slots)
        return false;
    for (uint32_t i = 0; i < t.cap; i++) {
        if (!t.slots[i].addr)
            continue;
        uint32_t j = slot_of(cap, t.slots[i].addr);
        while (slots[j].addr)
            j = (j + 1) & (cap - 1);
        slots[j] = t.slots[i];
    }
    free(t.slots);
    t.slots = slots;
    t.cap = cap;
    return true;
}

/* Puts block `a` of `size` bytes in the table; the total after it, or -1
 * when no memory is left for the table (the block goes untracked). */
int64_t table_put(uintptr_t a, size_t size)
{
    Table &t = g_table;
    TableLock guard;
    uint32_t used = t.used.load(std::memory_order_relaxed);
    if ((used + 1) * 2 > t.cap && !table_resize(t, t.cap ? t.cap * 2 : kMinCap))
        return -1;
    uint32_t i = slot_of(t.cap, a);
    while (t.slots[i].addr && t.slots[i].addr != a)
        i = (i + 1) & (t.cap - 1);
    if (!t.slots[i].addr)
        t.used.store(used + 1, std::memory_order_relaxed);
    t.slots[i] = Block{a, size};
    t.total += (int64_t)size;
    return t.total;
}

/* Takes block `a` out of the table: false if it was not there, else its
 * size and the total after it. */
bool table_take(uintptr_t a, size_t *size, int64_t *total)
{
    Table &t = g_table;
    if (!t.used.load(std::memory_order_relaxed))
        return false; /* nothing tracked: no lock */
    TableLock guard;
    uint32_t used = t.used.load(std::memory_order_relaxed);
    if (!used)
        return false;
    uint32_t mask = t.cap - 1, i = slot_of(t.cap, a);
    while (t.slots[i].addr != a) {
        if (!t.slots[i].addr)
            return false;
        i = (i + 1) & mask;
    }
    *size = t.slots[i].size;
    t.total -= (int64_t)*size;
    *total = t.total;
    t.used.store(used - 1, std::memory_order_relaxed);
    /* Backward-shift deletion: later entries of the probe run move up, so
     * lookups never need tombstones. */
    for (uint32_t j = (i + 1) & mask; t.slots[j].addr; j = (j + 1) & mask) {
        uint32_t home = slot_of(t.cap, t.slots[j].addr);
        if (((j - home) & mask) >= ((j - i) & mask)) {
            t.slots[i] = t.slots[j];
            i = j;
        }
    }
    t.slots[i] = Block{0, 0};
    /* Back to a small table once a burst of blocks is gone (a failed
     * shrink keeps the larger one). */
    if (t.cap > kMinCap && (used - 1) * 8 < t.cap)
        table_resize(t, t.cap / 2);
    return true;
}

void tracked_delete(void *ptr)
{
    size_t size = 0;
    int64_t total = 0;
    if (ptr && table_take((uintptr_t)ptr, &size, &total)) {
        if (AIP_RECORDING())
            aip_memory_event((uint64_t)(uintptr_t)ptr, -(int64_t)size, total, total,
                             AIP_DEVICE_CPU, -1);
    }
    g_orig_deleter(ptr);
}

struct TrackingAllocator final : c10::Allocator {
    c10::Allocator *orig = nullptr;

    /* torch >= 2.3: not const (torch_compat.h; the 2.x side is not
     * compiled on the build machines) */
    c10::DataPtr allocate(size_t n) AIP_ALLOCATE_CONST override
    {
        c10::DataPtr p = orig->allocate(n);
        void *data = p.get();
        /* Only blocks of the original's documented shape can be re-wrapped. */
        if (!data || p.get_context() != data || p.get_deleter() != g_orig_deleter)
            return p;
        int64_t total;
        if (g_on.load(std::memory_order_relaxed) && AIP_RECORDING() &&
            (total = table_put((uintptr_t)data, n)) >= 0) {
            aip_memory_event((uint64_t)(uintptr_t)data, (int64_t)n, total, total,
                             AIP_DEVICE_CPU, -1);
        }
        c10::Device device = p.device();
        p.release_context();
        return c10::DataPtr(data, data, &tracked_delete, device);
    }

    c10::DeleterFnPtr raw_deleter() const override { return &tracked_delete; }

#if AIP_ALLOCATOR_HAS_COPY_DATA /* torch >= 2.3 (torch_compat.h): not compiled here */
    void copy_data(void *dest, const void *src, size_t count) const override
    {
        orig->copy_data(dest, src, count);
    }
#endif
};

TrackingAllocator g_wrapper;
std::mutex g_install_lock;
int g_installed = 0;

} // namespace

extern "C" {

int aiprof_torch_memory_install(void)
{
    std::lock_guard<std::mutex> guard(g_install_lock);
    if (g_installed)
        return 0;
    try {
        c10::Allocator *orig = c10::GetCPUAllocator();
        if (!orig || !orig->raw_deleter()) {
            aiprof__torch_set_error("the CPU allocator in use has no raw deleter; "
                                    "profile_memory cannot follow its blocks");
            return -1;
        }
        g_orig_deleter = orig->raw_deleter();
        pthread_atfork(lock_for_fork, unlock_after_fork, unlock_after_fork);
        g_wrapper.orig = orig;
        c10::SetCPUAllocator(&g_wrapper, kPriority);
        if (c10::GetCPUAllocator() != &g_wrapper) {
            aiprof__torch_set_error("another CPU allocator has a higher priority; "
                                    "profile_memory cannot be installed");
            return -1;
        }
    } catch (const std::exception &e) {
        aiprof__torch_set_error(e.what());
        return -1;
    }
    g_installed = 1;
    return 0;
}

void aiprof_torch_memory_enable(int on) { g_on.store(on ? 1 : 0); }

} // extern "C"
