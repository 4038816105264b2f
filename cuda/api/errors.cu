// Error messages of CUDA failures, per host thread, and device discovery.
#include <stdio.h>

#include <string>

#include "../common.cuh"
#include "host.cuh"

namespace c2p {

static thread_local std::string last_error;
static thread_local std::string budget_detail;

void set_budget_detail(const char* detail) { budget_detail = detail; }

void record_error(cudaError_t err, const char* what, const char* file, int line) {
    char buf[512];
    snprintf(buf, sizeof buf, "CUDA error %d (%s: %s) in %s at %s:%d", (int)err, cudaGetErrorName(err),
             cudaGetErrorString(err), what, file, line);
    last_error = buf;
    if (err == cudaErrorMemoryAllocation && !budget_detail.empty()) last_error += " (" + budget_detail + ")";
    if (err != cudaErrorMemoryAllocation) budget_detail.clear();
    // A failed call also sets the runtime's per-thread "last error", which
    // the next launch check (cudaGetLastError) would report again: clear it
    // (sticky errors stay anyway).
    (void)cudaGetLastError();
}

}  // namespace c2p

// The tuning from the library's configuration (validated there).
extern "C" int c2p_cuda_configure(const c2p_tuning* t) {
    if (!t) {
        c2p::record_error(cudaErrorInvalidValue, "c2p_cuda_configure: no tuning", __FILE__, __LINE__);
        return (int)cudaErrorInvalidValue;
    }
    auto& to = c2p::host::tuning;
    to.pool_keep_mib = t->pool_keep_mib;
    to.stage_threads = t->stage_threads;
    to.msm_group_mib = t->msm_group_mib;
    to.msm_g1_max_window = t->msm_g1_max_window;
    to.msm_min_chunk = t->msm_min_chunk;
    to.ntt_tile_log = t->ntt_tile_log;
    return 0;
}

// The message of the calling thread's last failed c2p_cuda_* call.
extern "C" const char* c2p_cuda_last_error() { return c2p::last_error.c_str(); }

// Number of usable CUDA devices; 0 (and success) when there is no driver or
// no device, so a machine without a GPU simply runs on the CPU.
extern "C" int c2p_cuda_device_count(int* count) {
    *count = 0;
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver) {
        (void)cudaGetLastError();
        return 0;
    }
    C2P_CUDA_OK(err);
    *count = n;
    return 0;
}

// Name, memory and compute capability of a device.
extern "C" int c2p_cuda_device_info(int device, char* name, size_t name_len, size_t* free_bytes,
                                    size_t* total_bytes, int* major, int* minor) {
    cudaDeviceProp prop;
    C2P_CUDA_OK(cudaGetDeviceProperties(&prop, device));
    C2P_CUDA_OK(cudaSetDevice(device));
    // Free as the library's allocations see it: with what the memory pool
    // keeps idle for the next MSM.
    C2P_CUDA_OK(c2p::host::usable_free(device, free_bytes, total_bytes));
    snprintf(name, name_len, "%s", prop.name);
    *major = prop.major;
    *minor = prop.minor;
    return 0;
}

// The device budget of `device` (its default on first use), the bytes of
// the library's allocations live there now, and their peak since the last
// c2p_cuda_reset_peak.
extern "C" int c2p_cuda_device_memory(int device, size_t* budget, size_t* in_use, size_t* peak) {
    if (device < 0 || device >= c2p::host::MAX_DEVICES) {
        c2p::record_error(cudaErrorInvalidValue, "c2p_cuda_device_memory device", __FILE__, __LINE__);
        return (int)cudaErrorInvalidValue;
    }
    uint64_t b = 0;
    C2P_CUDA_OK(c2p::host::budget_of(device, &b));
    *budget = (size_t)b;
    *in_use = (size_t)c2p::host::device_memory[device].in_use.load();
    *peak = (size_t)c2p::host::device_memory[device].peak.load();
    return 0;
}

// Sets the device budget of `device` (0: the default). Allocations live
// beyond a lowered budget stay; new ones wait for room below it.
extern "C" int c2p_cuda_set_device_budget(int device, size_t bytes) {
    if (device < 0 || device >= c2p::host::MAX_DEVICES) {
        c2p::record_error(cudaErrorInvalidValue, "c2p_cuda_set_device_budget device", __FILE__, __LINE__);
        return (int)cudaErrorInvalidValue;
    }
    uint64_t b = bytes;
    if (b == 0) C2P_CUDA_OK(c2p::host::default_budget(device, &b));
    c2p::host::device_memory[device].budget.store(b);
    return 0;
}

// Restarts the peak of `device` from what is live now.
extern "C" int c2p_cuda_reset_peak(int device) {
    if (device < 0 || device >= c2p::host::MAX_DEVICES) {
        c2p::record_error(cudaErrorInvalidValue, "c2p_cuda_reset_peak device", __FILE__, __LINE__);
        return (int)cudaErrorInvalidValue;
    }
    auto& m = c2p::host::device_memory[device];
    m.peak.store(m.in_use.load());
    return 0;
}

// Bytes the device's memory pool keeps idle for the next MSM (counted as
// free by c2p_cuda_device_info, as taken by the driver).
extern "C" int c2p_cuda_pool_idle(int device, size_t* idle_bytes) {
    *idle_bytes = 0;
    C2P_CUDA_OK(cudaSetDevice(device));
    C2P_CUDA_OK(c2p::host::pool_idle_bytes(device, idle_bytes));
    return 0;
}

// Takes `bytes` of device memory until c2p_cuda_release: lets tests run the
// GPU steps with the device (nearly) full.
extern "C" int c2p_cuda_reserve(int device, size_t bytes, void** out) {
    *out = nullptr;
    C2P_CUDA_OK(cudaSetDevice(device));
    C2P_CUDA_OK(c2p::host::retry_short([&] { return cudaMalloc(out, bytes); }));
    return 0;
}

// Hands the memory the device's stream-ordered pool keeps for the next MSM
// back to the driver (after the device's work is done), so that free memory
// is what a cudaMalloc can get: tests that fill the device call it first.
extern "C" int c2p_cuda_trim_pool(int device) {
    C2P_CUDA_OK(cudaSetDevice(device));
    C2P_CUDA_OK(cudaDeviceSynchronize());
    cudaMemPool_t pool;
    C2P_CUDA_OK(cudaDeviceGetDefaultMemPool(&pool, device));
    C2P_CUDA_OK(cudaMemPoolTrimTo(pool, 0));
    return 0;
}

extern "C" int c2p_cuda_release(int device, void* ptr) {
    C2P_CUDA_OK(cudaSetDevice(device));
    C2P_CUDA_OK(cudaFree(ptr));
    return 0;
}

// ---- Canaries (tests) ----
//
// Device memory taken outside the library's pool and budget, each 32-bit
// word filled with pattern ^ index, and checked later. The pool's freed
// memory goes back to the driver first (without waiting for the device's
// work), so a canary can get the very memory the library freed: a kernel of
// the library still writing a buffer it had given back shows as a changed
// word (or as a fault the next CUDA call reports).

namespace {

__global__ void canary_fill(uint32_t* words, size_t n, uint32_t pattern) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        words[i] = pattern ^ (uint32_t)i;
}

__global__ void canary_count(const uint32_t* words, size_t n, uint32_t pattern, unsigned long long* changed) {
    unsigned long long mine = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        mine += words[i] != (pattern ^ (uint32_t)i);
    if (mine) atomicAdd(changed, mine);
}

constexpr unsigned CANARY_BLOCKS = 1024, CANARY_THREADS = 256;

}  // namespace

// Takes `bytes` (a multiple of 4) of device memory after handing the pool's
// idle memory to the driver, and fills it; free with c2p_cuda_release.
extern "C" int c2p_cuda_canary(int device, size_t bytes, uint32_t pattern, void** out) {
    *out = nullptr;
    if (bytes % 4) {
        c2p::record_error(cudaErrorInvalidValue, "c2p_cuda_canary: bytes not a multiple of 4", __FILE__, __LINE__);
        return (int)cudaErrorInvalidValue;
    }
    C2P_CUDA_OK(cudaSetDevice(device));
    cudaMemPool_t pool;
    C2P_CUDA_OK(cudaDeviceGetDefaultMemPool(&pool, device));
    C2P_CUDA_OK(cudaMemPoolTrimTo(pool, 0));
    void* ptr = nullptr;
    C2P_CUDA_OK(cudaMalloc(&ptr, bytes));
    c2p::host::stream_t stream;
    cudaError_t err = stream.create();
    if (err == cudaSuccess) {
        canary_fill<<<CANARY_BLOCKS, CANARY_THREADS, 0, stream.s>>>(static_cast<uint32_t*>(ptr), bytes / 4, pattern);
        err = cudaGetLastError();
    }
    if (err == cudaSuccess) err = cudaStreamSynchronize(stream.s);
    if (err != cudaSuccess) {
        (void)cudaFree(ptr);
        C2P_CUDA_OK(err);
    }
    *out = ptr;
    return 0;
}

// *changed = the words of a canary of `bytes` no longer pattern ^ index.
extern "C" int c2p_cuda_canary_changed(int device, const void* ptr, size_t bytes, uint32_t pattern,
                                       unsigned long long* changed) {
    *changed = 0;
    C2P_CUDA_OK(cudaSetDevice(device));
    c2p::host::stream_t stream;
    C2P_CUDA_OK(stream.create());
    unsigned long long* count = nullptr;
    C2P_CUDA_OK(cudaMalloc(&count, sizeof *count));
    cudaError_t err = cudaMemsetAsync(count, 0, sizeof *count, stream.s);
    if (err == cudaSuccess) {
        canary_count<<<CANARY_BLOCKS, CANARY_THREADS, 0, stream.s>>>(static_cast<const uint32_t*>(ptr), bytes / 4,
                                                                     pattern, count);
        err = cudaGetLastError();
    }
    if (err == cudaSuccess) err = cudaMemcpyAsync(changed, count, sizeof *count, cudaMemcpyDeviceToHost, stream.s);
    if (err == cudaSuccess) err = cudaStreamSynchronize(stream.s);
    (void)cudaFree(count);
    C2P_CUDA_OK(err);
    return 0;
}

// ---- Injected allocation failures (tests) ----
//
// See c2p::host::injected_t: sites are recorded while the library runs, and
// the next allocations at one of them fail as a full device would.

namespace {

void set_injection_on() {
    auto& inj = c2p::host::injected;
    inj.on.store(inj.recording || inj.failures_left > 0);
}

}  // namespace

// Starts (clearing what was recorded) or stops recording the allocation
// sites the library charges.
extern "C" int c2p_cuda_record_allocation_sites(int on) {
    auto& inj = c2p::host::injected;
    std::lock_guard<std::mutex> guard(inj.lock);
    inj.recording = on != 0;
    if (on) inj.seen.clear();
    set_injection_on();
    return 0;
}

// The sites recorded, "file:line" each, one per line, first seen first, as
// a NUL-terminated string into `out` (`len` bytes, truncated to fit);
// *needed = the bytes the whole string takes with its NUL.
extern "C" int c2p_cuda_allocation_sites(char* out, size_t len, size_t* needed) {
    auto& inj = c2p::host::injected;
    std::string all;
    {
        std::lock_guard<std::mutex> guard(inj.lock);
        for (const std::string& site : inj.seen) all += site + "\n";
    }
    *needed = all.size() + 1;
    if (len > 0) snprintf(out, len, "%s", all.c_str());
    return 0;
}

// After `skip` allocations at `site` ("file:line" as recorded) go through,
// the next `count` fail with cudaErrorMemoryAllocation (a site used several
// times in a call is failed at each use in turn by raising `skip`); *left =
// the failures of the previous call's still not injected (count 0 disarms
// and tells).
extern "C" int c2p_cuda_fail_allocation(const char* site, int skip, int count, int* left) {
    auto& inj = c2p::host::injected;
    std::lock_guard<std::mutex> guard(inj.lock);
    *left = inj.failures_left;
    inj.fail_site = site ? site : "";
    inj.skips_left = skip > 0 ? skip : 0;
    inj.failures_left = count > 0 ? count : 0;
    set_injection_on();
    return 0;
}
