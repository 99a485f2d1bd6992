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
 * shards chosen by address, each an open-addressing table under a spin
 * lock, no allocation per block (a mutex and std::unordered_map's node
 * per block showed in profiles).
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
std::atomic<int64_t> g_total{0};
c10::DeleterFnPtr g_orig_deleter = nullptr;

/* ---- block sizes by address ------------------------------------------- */

struct Block {
    uintptr_t addr; /* 0 = empty */
    size_t size;
};

struct alignas(64) Shard {
    std::atomic<bool> busy{false};
    Block *slots = nullptr;
    uint32_t cap = 0, used = 0;
};

constexpr int kShards = 16;
Shard g_shards[kShards]; /* never freed: frees may come at exit */

uint64_t addr_hash(uintptr_t a) { return (uint64_t)(a >> 4) * 0x9E3779B97F4A7C15ull; }

Shard &shard_of(uintptr_t a) { return g_shards[addr_hash(a) >> 60]; }

void shard_lock(Shard &s)
{
    while (s.busy.exchange(true, std::memory_order_acquire))
        while (s.busy.load(std::memory_order_relaxed))
            __builtin_ia32_pause();
}

void shard_unlock(Shard &s) { s.busy.store(false, std::memory_order_release); }

struct ShardLock {
    Shard &s;
    explicit ShardLock(Shard &sh) : s(sh) { shard_lock(s); }
    ~ShardLock() { shard_unlock(s); }
};

/* fork() (a DataLoader's workers) while another thread holds a shard would
 * leave the child's copy locked forever: every shard is taken around it. */
void lock_all_shards()
{
    for (Shard &s : g_shards)
        shard_lock(s);
}

void unlock_all_shards()
{
    for (Shard &s : g_shards)
        shard_unlock(s);
}

uint32_t slot_of(const Shard &s, uintptr_t a) { return (uint32_t)addr_hash(a) & (s.cap - 1); }

bool shard_grow(Shard &s)
{
    uint32_t cap = s.cap ? s.cap * 2 : 1024;
    auto *slots = static_cast<Block *>(calloc(cap, sizeof(Block)));
    if (!slots)
        return false;
    Block *old = s.slots;
    uint32_t old_cap = s.cap;
    s.slots = slots;
    s.cap = cap;
    for (uint32_t i = 0; i < old_cap; i++) {
        if (!old[i].addr)
            continue;
        uint32_t j = slot_of(s, old[i].addr);
        while (slots[j].addr)
            j = (j + 1) & (cap - 1);
        slots[j] = old[i];
    }
    free(old);
    return true;
}

/* False when no memory is left for the table: the block goes untracked. */
bool table_put(uintptr_t a, size_t size)
{
    Shard &s = shard_of(a);
    ShardLock guard(s);
    if ((s.used + 1) * 2 > s.cap && !shard_grow(s))
        return false;
    uint32_t i = slot_of(s, a);
    while (s.slots[i].addr && s.slots[i].addr != a)
        i = (i + 1) & (s.cap - 1);
    if (!s.slots[i].addr)
        s.used++;
    s.slots[i] = Block{a, size};
    return true;
}

/* The block's size, removed from the table; false if it was not there. */
bool table_take(uintptr_t a, size_t *size)
{
    Shard &s = shard_of(a);
    ShardLock guard(s);
    if (!s.used)
        return false;
    uint32_t mask = s.cap - 1, i = slot_of(s, a);
    while (s.slots[i].addr != a) {
        if (!s.slots[i].addr)
            return false;
        i = (i + 1) & mask;
    }
    *size = s.slots[i].size;
    s.used--;
    /* Backward-shift deletion: later entries of the probe run move up, so
     * lookups never need tombstones. */
    for (uint32_t j = (i + 1) & mask; s.slots[j].addr; j = (j + 1) & mask) {
        uint32_t home = slot_of(s, s.slots[j].addr);
        if (((j - home) & mask) >= ((j - i) & mask)) {
            s.slots[i] = s.slots[j];
            i = j;
        }
    }
    s.slots[i] = Block{0, 0};
    return true;
}

void tracked_delete(void *ptr)
{
    size_t size = 0;
    if (ptr && table_take((uintptr_t)ptr, &size)) {
        int64_t total = g_total.fetch_sub((int64_t)size, std::memory_order_relaxed) - (int64_t)size;
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
        if (g_on.load(std::memory_order_relaxed) && AIP_RECORDING() &&
            table_put((uintptr_t)data, n)) {
            int64_t total = g_total.fetch_add((int64_t)n, std::memory_order_relaxed) + (int64_t)n;
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
        pthread_atfork(lock_all_shards, unlock_all_shards, unlock_all_shards);
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
