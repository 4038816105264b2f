// Device arrays to and from host memory, through the pinned staging buffers:
// uploads (points, scalars, a circuit's a, b, c), their check below r on the
// way, downloads, and frees. Every array is charged to its device's budget
// (memory.cuh) until c2p_cuda_free.
#include <algorithm>

#include "../common.cuh"
#include "host.cuh"

using c2p::host::stream_t;

// Copies `bytes` of host memory (affine points, scalars, a circuit's a, b,
// c) to a new array of `capacity` bytes (at least `bytes`; the rest zeroed)
// on device `device` through the pinned staging buffers; *out is the
// device array, freed with c2p_cuda_free. With `unreduced` (not NULL), the
// bytes are field elements (a multiple of 32 bytes), checked below r as
// they are copied: *unreduced is the index of the first that is not, or
// SIZE_MAX (the array is made either way).
extern "C" int c2p_cuda_upload(int device, const void* host, size_t bytes, size_t capacity, size_t* unreduced,
                               void** out) {
    *out = nullptr;
    if (unreduced) *unreduced = c2p::host::NONE_UNREDUCED;
    if (device < 0 || device >= c2p::host::MAX_DEVICES || capacity < bytes ||
        (unreduced && bytes % c2p::host::FR_BYTES)) {
        c2p::record_error(cudaErrorInvalidValue,
                          "c2p_cuda_upload arguments (device, capacity >= bytes, whole field elements to check)",
                          __FILE__, __LINE__);
        return (int)cudaErrorInvalidValue;
    }
    auto run = [&]() -> cudaError_t {
        C2P_CUDA_OK(cudaSetDevice(device));
        void* ptr = nullptr;
        C2P_CUDA_OK(c2p::host::device_alloc(&ptr, capacity));
        stream_t stream;
        cudaError_t err = stream.create();
        // The staging buffers are taken piece by piece, so that an MSM's
        // scalar upload can go between the pieces of a points upload running
        // beside it (streamed points upload the next chunk during an MSM;
        // the next circuit's a, b, c go up during this one's MSMs), and an
        // H step's urgent upload of a, b, c before the next piece (lock_piece).
        if (err == cudaSuccess) err = c2p::host::upload_in_pieces(device, ptr, host, bytes, stream.s, unreduced);
        if (err == cudaSuccess && capacity > bytes)
            err = cudaMemsetAsync(static_cast<char*>(ptr) + bytes, 0, capacity - bytes, stream.s);
        if (err == cudaSuccess) err = cudaStreamSynchronize(stream.s);
        if (err != cudaSuccess) {
            (void)c2p::host::device_free(device, ptr, capacity);
            C2P_CUDA_OK(err);
        }
        c2p::host::remember(ptr, capacity);
        *out = ptr;
        return cudaSuccess;
    };
    return (int)run();
}

// The staging copy's check on the host alone (no GPU needed; for tests):
// dst <- src, `bytes` long (whole field elements), through the copy
// workers as an upload's pieces go, with *unreduced the index of the first
// element not below r, or SIZE_MAX.
extern "C" int c2p_cuda_checked_copy(void* dst, const void* src, size_t bytes, size_t* unreduced) {
    if (!unreduced || bytes % c2p::host::FR_BYTES || (bytes && (!dst || !src))) {
        c2p::record_error(cudaErrorInvalidValue, "c2p_cuda_checked_copy arguments (whole field elements)", __FILE__,
                          __LINE__);
        return (int)cudaErrorInvalidValue;
    }
    *unreduced = c2p::host::NONE_UNREDUCED;
    for (size_t off = 0; off < bytes; off += c2p::host::STAGE_BYTES) {
        size_t found = c2p::host::NONE_UNREDUCED;
        c2p::host::parallel_copy(static_cast<char*>(dst) + off, static_cast<const char*>(src) + off,
                                 std::min(c2p::host::STAGE_BYTES, bytes - off), &found);
        c2p::host::keep_first_unreduced(unreduced, off / c2p::host::FR_BYTES, found);
    }
    return 0;
}

// Copies `bytes` of device memory at `ptr` (from c2p_cuda_upload or
// c2p_cuda_quotient) on device `device` to `host`, through the pinned
// staging buffers (for tests and checks: h as the H step left it).
extern "C" int c2p_cuda_download(int device, const void* ptr, size_t bytes, void* host) {
    if (device < 0 || device >= c2p::host::MAX_DEVICES) {
        c2p::record_error(cudaErrorInvalidValue, "c2p_cuda_download device", __FILE__, __LINE__);
        return (int)cudaErrorInvalidValue;
    }
    auto run = [&]() -> cudaError_t {
        C2P_CUDA_OK(cudaSetDevice(device));
        stream_t stream;
        C2P_CUDA_OK(stream.create());
        c2p::host::staging_t* st = nullptr;
        std::lock_guard<std::mutex> guard(c2p::host::staging[device].lock);
        C2P_CUDA_OK(c2p::host::staging_buffers(device, &st));
        C2P_CUDA_OK(c2p::host::staged_download(host, ptr, bytes, *st, stream.s));
        return cudaStreamSynchronize(stream.s);
    };
    return (int)run();
}

// Frees device memory handed out by c2p_cuda_upload or left by
// c2p_cuda_quotient.
extern "C" int c2p_cuda_free(int device, void* ptr) {
    if (device < 0 || device >= c2p::host::MAX_DEVICES) {
        c2p::record_error(cudaErrorInvalidValue, "c2p_cuda_free device", __FILE__, __LINE__);
        return (int)cudaErrorInvalidValue;
    }
    C2P_CUDA_OK(cudaSetDevice(device));
    C2P_CUDA_OK(c2p::host::device_free(device, ptr, c2p::host::forget(ptr)));
    return 0;
}

// Page-locks `bytes` of host memory at `host` for every device
// (cudaHostRegister, portable; registered from `device`'s context, so that
// no other GPU gets one): uploads from inside it then go up by DMA straight
// from it (upload_in_pieces). The memory must stay allocated until
// c2p_cuda_host_unregister. A failure (the pages cannot be locked, or are
// already) leaves nothing registered and no CUDA error pending.
extern "C" int c2p_cuda_host_register(int device, const void* host, size_t bytes) {
    if (device < 0 || device >= c2p::host::MAX_DEVICES || host == nullptr || bytes == 0) {
        c2p::record_error(cudaErrorInvalidValue, "c2p_cuda_host_register arguments (device, memory)", __FILE__,
                          __LINE__);
        return (int)cudaErrorInvalidValue;
    }
    C2P_CUDA_OK(cudaSetDevice(device));
    const cudaError_t err = cudaHostRegister(const_cast<void*>(host), bytes, cudaHostRegisterPortable);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();  // not sticky: later checks must not see it
        C2P_CUDA_OK(err);
    }
    std::lock_guard<std::mutex> guard(c2p::host::pinned_ranges.lock);
    c2p::host::pinned_ranges.ranges.emplace_back(static_cast<const char*>(host), bytes);
    return 0;
}

// Unlocks memory registered by c2p_cuda_host_register at `host`, once no
// upload reads it: no upload may start from it after this is called.
extern "C" int c2p_cuda_host_unregister(const void* host) {
    {
        std::lock_guard<std::mutex> guard(c2p::host::pinned_ranges.lock);
        auto& ranges = c2p::host::pinned_ranges.ranges;
        const auto at = std::find_if(ranges.begin(), ranges.end(), [&](const auto& r) { return r.first == host; });
        if (at == ranges.end()) {
            c2p::record_error(cudaErrorInvalidValue, "c2p_cuda_host_unregister: memory not registered here",
                              __FILE__, __LINE__);
            return (int)cudaErrorInvalidValue;
        }
        ranges.erase(at);
    }
    const cudaError_t err = cudaHostUnregister(const_cast<void*>(host));
    if (err != cudaSuccess) (void)cudaGetLastError();
    C2P_CUDA_OK(err);
    return 0;
}
