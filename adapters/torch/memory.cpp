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
 */
#include "aiprof_torch.h"

#include <aiprof.h>

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>

#include <atomic>
#include <exception>
#include <mutex>
#include <string>
#include <unordered_map>

extern "C" void aiprof__torch_set_error(const char *msg);

namespace {

/* Allocators of this priority or lower are replaced (c10's default is 0). */
constexpr uint8_t kPriority = 100;

std::atomic<int> g_on{0};
std::atomic<int64_t> g_total{0};
std::mutex g_table_lock;
std::unordered_map<void *, size_t> *g_table; /* never freed: frees may come at exit */
c10::DeleterFnPtr g_orig_deleter = nullptr;

void tracked_delete(void *ptr)
{
    size_t size = 0;
    bool found = false;
    if (ptr) {
        std::lock_guard<std::mutex> guard(g_table_lock);
        auto it = g_table->find(ptr);
        if (it != g_table->end()) {
            size = it->second;
            found = true;
            g_table->erase(it);
        }
    }
    if (found) {
        int64_t total = g_total.fetch_sub((int64_t)size, std::memory_order_relaxed) - (int64_t)size;
        if (AIP_RECORDING())
            aip_memory_event((uint64_t)(uintptr_t)ptr, -(int64_t)size, total, total,
                             AIP_DEVICE_CPU, -1);
    }
    g_orig_deleter(ptr);
}

struct TrackingAllocator final : c10::Allocator {
    c10::Allocator *orig = nullptr;

    c10::DataPtr allocate(size_t n) const override
    {
        c10::DataPtr p = orig->allocate(n);
        void *data = p.get();
        /* Only blocks of the original's documented shape can be re-wrapped. */
        if (!data || p.get_context() != data || p.get_deleter() != g_orig_deleter)
            return p;
        if (g_on.load(std::memory_order_relaxed) && AIP_RECORDING()) {
            {
                std::lock_guard<std::mutex> guard(g_table_lock);
                (*g_table)[data] = n;
            }
            int64_t total = g_total.fetch_add((int64_t)n, std::memory_order_relaxed) + (int64_t)n;
            aip_memory_event((uint64_t)(uintptr_t)data, (int64_t)n, total, total,
                             AIP_DEVICE_CPU, -1);
        }
        c10::Device device = p.device();
        p.release_context();
        return c10::DataPtr(data, data, &tracked_delete, device);
    }

    c10::DeleterFnPtr raw_deleter() const override { return &tracked_delete; }
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
        g_table = new std::unordered_map<void *, size_t>();
        g_orig_deleter = orig->raw_deleter();
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
