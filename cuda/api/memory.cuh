// The device memory budget: every device allocation the library makes is
// charged to its device's budget before it is made and refunded after it is
// freed, so the library's device memory as a whole has a bound the planner
// (src/gpu/memory.rs) can rely on. An allocation that would pass the budget
// fails with cudaErrorMemoryAllocation, as a full device does, and takes the
// same out-of-memory paths.
//
// Stream-ordered frees are refunded when they are enqueued: the memory goes
// back to the stream's pool then, and later allocations on that stream reuse
// it. The peak is the largest sum of live charges.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "../common.cuh"

namespace c2p {
namespace host {

constexpr int MAX_DEVICES = 64;

struct device_memory_t {
    std::atomic<uint64_t> budget{0};  // 0 until the default is set
    std::atomic<uint64_t> in_use{0};
    std::atomic<uint64_t> peak{0};
};
inline device_memory_t device_memory[MAX_DEVICES];

// The default budget: the device's memory less a margin for the CUDA
// context, the display and other processes' small allocations
// (max(1 GiB, 1/32 of the device)).
inline cudaError_t default_budget(int device, uint64_t* bytes) {
    cudaDeviceProp prop;
    C2P_CUDA_OK(cudaGetDeviceProperties(&prop, device));
    const uint64_t total = prop.totalGlobalMem;
    const uint64_t margin = std::max<uint64_t>(1ull << 30, total / 32);
    *bytes = total > margin ? total - margin : total / 2;
    return cudaSuccess;
}

// Device `device`'s budget (set to the default on first use).
inline cudaError_t budget_of(int device, uint64_t* bytes) {
    uint64_t b = device_memory[device].budget.load();
    if (b == 0) {
        C2P_CUDA_OK(default_budget(device, &b));
        uint64_t unset = 0;
        if (!device_memory[device].budget.compare_exchange_strong(unset, b)) b = unset;
    }
    *bytes = b;
    return cudaSuccess;
}

// Allocation failures injected on purpose, for the tests that a failure
// at each allocation site comes back to the caller as an error and leaves
// nothing allocated (c2p_cuda_fail_allocation). A site is the file and line
// of the call that allocates (device_alloc and the arrays' alloc take their
// caller's as default arguments). Off, an allocation pays one relaxed load.
struct injected_t {
    std::atomic<bool> on{false};  // recording or failures to inject
    std::mutex lock;
    bool recording = false;
    std::vector<std::string> seen;  // sites charged while recording, first seen first
    std::string fail_site;
    int skips_left = 0;  // uses of fail_site to let through first
    int failures_left = 0;
};
inline injected_t injected;

// "file:line", the file without its directories.
inline std::string site_name(const char* file, int line) {
    const char* slash = strrchr(file, '/');
    return std::string(slash ? slash + 1 : file) + ":" + std::to_string(line);
}

// Whether the allocation at file:line is to fail (recorded on the way when
// sites are being recorded).
inline bool injected_failure(const char* file, int line) {
    if (!injected.on.load(std::memory_order_relaxed)) return false;
    std::lock_guard<std::mutex> guard(injected.lock);
    const std::string site = site_name(file, line);
    if (injected.recording && std::find(injected.seen.begin(), injected.seen.end(), site) == injected.seen.end())
        injected.seen.push_back(site);
    if (injected.failures_left > 0 && site == injected.fail_site) {
        if (injected.skips_left > 0) {
            injected.skips_left--;
            return false;
        }
        injected.failures_left--;
        return true;
    }
    return false;
}

// Charges `bytes` to `device`'s budget for an allocation at file:line, or
// fails as an allocation would.
inline cudaError_t charge(int device, size_t bytes, const char* file, int line) {
    if (device < 0 || device >= MAX_DEVICES) return cudaErrorInvalidDevice;
    if (injected_failure(file, line)) {
        set_budget_detail("injected for a test");
        record_error(cudaErrorMemoryAllocation, "an allocation", file, line);
        return cudaErrorMemoryAllocation;
    }
    uint64_t budget = 0;
    C2P_CUDA_OK(budget_of(device, &budget));
    device_memory_t& m = device_memory[device];
    uint64_t used = m.in_use.load();
    do {
        if (used + bytes > budget) {
            char what[200];
            snprintf(what, sizeof what, "the device budget of GPU %d: %llu MiB in use + %llu MiB asked > %llu MiB",
                     device, (unsigned long long)(used >> 20), (unsigned long long)(bytes >> 20),
                     (unsigned long long)(budget >> 20));
            set_budget_detail(what);
            record_error(cudaErrorMemoryAllocation, "charge", __FILE__, __LINE__);
            return cudaErrorMemoryAllocation;
        }
    } while (!m.in_use.compare_exchange_weak(used, used + bytes));
    set_budget_detail("");
    uint64_t peak = m.peak.load();
    while (used + bytes > peak && !m.peak.compare_exchange_weak(peak, used + bytes)) {
    }
    return cudaSuccess;
}

inline void refund(int device, size_t bytes) {
    if (device >= 0 && device < MAX_DEVICES) device_memory[device].in_use.fetch_sub(bytes);
}

// Room for more allocations on `device` as the budget sees it.
inline cudaError_t budget_room(int device, size_t* room) {
    uint64_t budget = 0;
    C2P_CUDA_OK(budget_of(device, &budget));
    const uint64_t used = device_memory[device].in_use.load();
    *room = used < budget ? (size_t)(budget - used) : 0;
    return cudaSuccess;
}

// The current device.
inline cudaError_t current_device(int* device) { return cudaGetDevice(device); }

// Allocations handed out by address (c2p_cuda_upload's arrays, freed later
// by c2p_cuda_free): their sizes, for the refund.
struct handed_out_t {
    std::mutex lock;
    std::unordered_map<const void*, size_t> bytes;
};
inline handed_out_t handed_out;

inline void remember(const void* ptr, size_t bytes) {
    std::lock_guard<std::mutex> guard(handed_out.lock);
    handed_out.bytes[ptr] = bytes;
}

// The size remembered for `ptr` (0 if unknown), forgotten.
inline size_t forget(const void* ptr) {
    std::lock_guard<std::mutex> guard(handed_out.lock);
    auto it = handed_out.bytes.find(ptr);
    if (it == handed_out.bytes.end()) return 0;
    const size_t bytes = it->second;
    handed_out.bytes.erase(it);
    return bytes;
}

}  // namespace host
}  // namespace c2p
