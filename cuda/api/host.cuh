// Host-side helpers shared by the kernel files' entry points: owned device
// buffers and events, and the pinned staging buffers through which large
// host vectors move to and from the device.
#pragma once

#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "../common.cuh"
#include "../ff/bls12_381.cuh"
#include "memory.cuh"

namespace c2p {
namespace host {

// The library's tuning (c2p_cuda_configure; 0 = the built-in choice), read
// where each choice is made. Atomic: a configure call may race with work.
struct tuning_t {
    std::atomic<uint32_t> pool_keep_mib{0}, stage_threads{0}, msm_group_mib{0}, msm_g1_max_window{0},
        msm_min_chunk{0}, ntt_tile_log{0};
};
inline tuning_t tuning;

// A tuned value, or `fallback` where none was set.
inline uint32_t tuned(const std::atomic<uint32_t>& value, uint32_t fallback) {
    const uint32_t v = value.load(std::memory_order_relaxed);
    return v ? v : fallback;
}

// Memory the device's default stream-ordered pool holds for reuse but no
// allocation uses now: free to every allocation here, though the driver
// counts it as taken (see keep_pool_memory).
inline cudaError_t pool_idle_bytes(int device, size_t* idle) {
    cudaMemPool_t pool;
    C2P_CUDA_OK(cudaDeviceGetDefaultMemPool(&pool, device));
    uint64_t reserved = 0, used = 0;
    C2P_CUDA_OK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
    C2P_CUDA_OK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
    *idle = reserved > used ? (size_t)(reserved - used) : 0;
    return cudaSuccess;
}

// Free device memory as this library's allocations see it: the driver's
// free bytes plus the pool's idle ones (an allocation that finds the
// driver short trims the pool and tries again: see retry_short).
inline cudaError_t usable_free(int device, size_t* free, size_t* total) {
    C2P_CUDA_OK(cudaMemGetInfo(free, total));
    size_t idle = 0;
    C2P_CUDA_OK(pool_idle_bytes(device, &idle));
    *free += idle;
    return cudaSuccess;
}

// Runs `allocate`; if the device is out of memory, hands the current
// device's pool memory that no allocation uses back to the driver (without
// waiting for other streams' work: memory whose stream-ordered free is still
// pending stays) and runs it once more.
template <class Allocate>
cudaError_t retry_short(Allocate allocate) {
    cudaError_t err = allocate();
    if (err != cudaErrorMemoryAllocation) return err;
    (void)cudaGetLastError();  // the failure is not sticky; clear it
    int device = 0;
    cudaMemPool_t pool;
    if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetDefaultMemPool(&pool, device) != cudaSuccess ||
        cudaMemPoolTrimTo(pool, 0) != cudaSuccess)
        return err;
    return allocate();
}

// `bytes` of device memory on the current device, charged to its budget
// (refunded by device_free) for the allocation site file:line (the
// caller's).
inline cudaError_t device_alloc(void** ptr, size_t bytes, const char* file = __builtin_FILE(),
                                int line = __builtin_LINE()) {
    int device = 0;
    C2P_CUDA_OK(cudaGetDevice(&device));
    C2P_CUDA_OK(charge(device, bytes, file, line));
    cudaError_t err = retry_short([&] { return cudaMalloc(ptr, bytes ? bytes : 1); });
    if (err != cudaSuccess) refund(device, bytes);
    return err;
}

// Frees a device_alloc of `bytes` on `device`.
inline cudaError_t device_free(int device, void* ptr, size_t bytes) {
    const cudaError_t err = cudaFree(ptr);
    refund(device, bytes);
    return err;
}

// A device buffer freed when it goes out of scope.
template <class T>
struct dev_array {
    T* ptr = nullptr;
    int device = -1;
    size_t bytes = 0;
    dev_array() = default;
    dev_array(const dev_array&) = delete;
    dev_array& operator=(const dev_array&) = delete;
    ~dev_array() {
        if (ptr) (void)device_free(device, ptr, bytes);
    }
    // n elements, for the allocation site file:line (the caller's).
    cudaError_t alloc(size_t n, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
        C2P_CUDA_OK(cudaGetDevice(&device));
        bytes = n * sizeof(T);
        cudaError_t err = device_alloc(reinterpret_cast<void**>(&ptr), bytes, file, line);
        if (err != cudaSuccess) ptr = nullptr;
        return err;
    }
    // Takes over a buffer handed out earlier (by give_up or c2p_cuda_upload)
    // on `on_device`, with its charge.
    void adopt(T* p, int on_device) {
        ptr = p;
        device = on_device;
        bytes = forget(p);
    }
    // Hands the buffer over (to a caller that frees it with c2p_cuda_free).
    T* give_up() {
        if (ptr) remember(ptr, bytes);
        T* p = ptr;
        ptr = nullptr;
        return p;
    }
};

// A device buffer allocated and freed in stream order (cudaMallocAsync /
// cudaFreeAsync on one stream): unlike cudaMalloc / cudaFree these do not
// synchronise the whole device, so an MSM's many buffers neither wait for
// nor stall another stream's work (the next circuit's a, b, c going up).
// Freed memory goes back to the device's pool; see keep_pool_memory.
template <class T>
struct stream_array {
    T* ptr = nullptr;
    cudaStream_t stream = nullptr;
    int device = -1;
    size_t bytes = 0;
    stream_array() = default;
    stream_array(const stream_array&) = delete;
    stream_array& operator=(const stream_array&) = delete;
    ~stream_array() { release(); }
    // n elements on stream s, for the allocation site file:line (the
    // caller's).
    cudaError_t alloc(size_t n, cudaStream_t s, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
        release();
        stream = s;
        C2P_CUDA_OK(cudaGetDevice(&device));
        C2P_CUDA_OK(charge(device, n * sizeof(T), file, line));
        bytes = n * sizeof(T);
        cudaError_t err = retry_short(
            [&] { return cudaMallocAsync(reinterpret_cast<void**>(&ptr), (n ? n : 1) * sizeof(T), s); });
        if (err != cudaSuccess) {
            ptr = nullptr;
            refund(device, bytes);
            bytes = 0;
        }
        return err;
    }
    void release() {
        if (ptr) {
            cudaFreeAsync(ptr, stream);
            refund(device, bytes);
        }
        ptr = nullptr;
        bytes = 0;
    }
};

// Bytes the device's default memory pool keeps for reuse after stream-
// ordered frees: the tuning's pool_keep_mib, else an eighth of the device's memory
// (17.6 GiB on an H200, 2 GiB on a 16 GB card); beyond that, freed memory
// goes back to the driver at the next synchronisation. Set once per device.
// Memory handed back has to be mapped (and cleared by the driver) again by
// the next MSM: with 1 GiB kept, a dense G1 MSM at 2^24 (~5 GB of buffers)
// took 126 ms, with 16 GiB 114 ms (H200). Kept memory is still free to
// every allocation here (usable_free, retry_short).
inline cudaError_t keep_pool_memory(int device) {
    static std::mutex lock;
    static bool done[MAX_DEVICES];
    std::lock_guard<std::mutex> guard(lock);
    if (done[device]) return cudaSuccess;
    size_t free = 0, total = 0;
    C2P_CUDA_OK(cudaMemGetInfo(&free, &total));
    // Within an eighth of the budget too, so that what the pool keeps stays
    // inside what the budget lets the library hold.
    uint64_t budget = 0;
    C2P_CUDA_OK(budget_of(device, &budget));
    const uint64_t keep_mib = tuned(tuning.pool_keep_mib, 0);
    uint64_t keep = keep_mib ? keep_mib << 20 : std::min<uint64_t>(total, budget) / 8;
    cudaMemPool_t pool;
    C2P_CUDA_OK(cudaDeviceGetDefaultMemPool(&pool, device));
    C2P_CUDA_OK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
    done[device] = true;
    return cudaSuccess;
}

struct event_t {
    cudaEvent_t ev = nullptr;
    ~event_t() {
        if (ev) cudaEventDestroy(ev);
    }
};

// A stream of its own (non-blocking: no implicit waits on the legacy
// default stream, so calls on other threads and devices run alongside).
struct stream_t {
    cudaStream_t s = nullptr;
    ~stream_t() {
        if (s) cudaStreamDestroy(s);
    }
    cudaError_t create() { return cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking); }
};

// Pinned staging for uploads: two 64 MiB page-locked buffers per device,
// allocated on first use and kept for the life of the process (128 MiB of
// pinned host memory per device). The caller's pageable vectors are copied
// into one buffer by several host threads while the other buffer's DMA to
// the device runs.
constexpr size_t STAGE_BYTES = 64ull << 20;
struct staging_t {
    void* buf[2] = {nullptr, nullptr};
    cudaEvent_t done[2] = {nullptr, nullptr};
    std::mutex lock;  // one upload at a time per device
    // Uploads the GPU is waiting for (an H step's own a, b, c, unless the
    // step runs beside an MSM) that wait for `lock`; uploads that can wait
    // (a, b, c going up ahead or beside an MSM, aux, points) take it piece
    // by piece and only while there are none (see lock_urgent, lock_piece).
    std::mutex urgent_lock;
    std::condition_variable changed;  // urgent or piece_turn changed
    int urgent = 0;
    // Pieces take the buffers in the order they asked (guarded by
    // urgent_lock): a mutex lets the thread that releases it take it again
    // at once, so two piecewise uploads side by side (an H step's a, b, c
    // beside an MSM's next points) would run one after the other, the MSM
    // waiting for points through the whole of the H step's upload.
    uint64_t next_piece = 0, piece_turn = 0;
};
inline staging_t staging[MAX_DEVICES];

// The staging buffers of a device for an upload the GPU is waiting for:
// uploads that can wait step aside at their next piece. (A mutex is not
// fair: a call's first H step, uploading its a, b, c, lost the buffers to
// the pieces of the next circuit's and its own aux uploads, and took
// ~370-420 ms instead of ~275 at 2^27.)
inline std::unique_lock<std::mutex> lock_urgent(staging_t& st) {
    {
        std::lock_guard<std::mutex> guard(st.urgent_lock);
        st.urgent++;
    }
    std::unique_lock<std::mutex> held(st.lock);
    {
        std::lock_guard<std::mutex> guard(st.urgent_lock);
        st.urgent--;
    }
    st.changed.notify_all();
    return held;
}

// One piece's hold on a device's staging buffers: their lock, and the turn
// it hands to the next piece in line when released.
class piece_hold {
    staging_t* st_;
    std::unique_lock<std::mutex> held_;

public:
    piece_hold(staging_t& st, std::unique_lock<std::mutex> held) : st_(&st), held_(std::move(held)) {}
    piece_hold(const piece_hold&) = delete;
    piece_hold& operator=(const piece_hold&) = delete;
    ~piece_hold() {
        held_.unlock();
        {
            std::lock_guard<std::mutex> guard(st_->urgent_lock);
            st_->piece_turn++;
        }
        st_->changed.notify_all();
    }
};

// The staging buffers of a device for one piece of an upload that can
// wait: once no urgent upload waits for them, and the pieces that asked
// before this one have had theirs.
inline piece_hold lock_piece(staging_t& st) {
    {
        std::unique_lock<std::mutex> guard(st.urgent_lock);
        const uint64_t mine = st.next_piece++;
        st.changed.wait(guard, [&] { return st.urgent == 0 && st.piece_turn == mine; });
    }
    return piece_hold(st, std::unique_lock<std::mutex>(st.lock));
}

inline cudaError_t staging_buffers(int device, staging_t** out) {
    staging_t& st = staging[device];
    for (int i = 0; i < 2; i++) {
        if (!st.buf[i]) C2P_CUDA_OK(cudaHostAlloc(&st.buf[i], STAGE_BYTES, cudaHostAllocDefault));
        if (!st.done[i]) C2P_CUDA_OK(cudaEventCreateWithFlags(&st.done[i], cudaEventDisableTiming));
    }
    *out = &st;
    return cudaSuccess;
}

// Host threads per staging copy: the tuning's stage_threads, else up to 16
// (one thread moves pageable to pinned memory at ~5-10 GB/s).
inline unsigned stage_threads() {
    return tuned(tuning.stage_threads, std::min(16u, std::max(1u, std::thread::hardware_concurrency())));
}

// Witness values as the caller hands them over: field elements of 32 bytes,
// four little-endian 64-bit limbs (Montgomery or canonical form, below r
// either way). Limb l of r, from fr_params' 32-bit limbs.
inline constexpr size_t FR_BYTES = sizeof(fr_t);
inline constexpr uint64_t fr_modulus_limb(int l) {
    return (uint64_t)fr_params::MOD(2 * l + 1) << 32 | fr_params::MOD(2 * l);
}
inline constexpr size_t NONE_UNREDUCED = ~(size_t)0;

// *first = base + found, unless found is NONE_UNREDUCED or *first already
// holds one: pieces of a copy checked in order, the first piece with one
// holds the first.
inline void keep_first_unreduced(size_t* first, size_t base, size_t found) {
    if (*first == NONE_UNREDUCED && found != NONE_UNREDUCED) *first = base + found;
}

// The index of the first of the `n` field elements at `values` (32 bytes
// each, limbs as above) that is not below r, or NONE_UNREDUCED. Values in
// range differ from r in the top limb all but never, so the loop is one
// compare per element.
inline size_t first_unreduced(const unsigned char* values, size_t n) {
    for (size_t i = 0; i < n; i++) {
        uint64_t limbs[4];
        memcpy(limbs, values + i * FR_BYTES, FR_BYTES);  // the caller's bytes may be unaligned
        if (limbs[3] < fr_modulus_limb(3)) continue;
        for (int l = 3; l >= 0; l--) {
            if (limbs[l] != fr_modulus_limb(l)) {
                if (limbs[l] > fr_modulus_limb(l)) return i;
                break;
            }
            if (l == 0) return i;  // equal to r
        }
    }
    return NONE_UNREDUCED;
}

// Host threads that copy between pageable memory and the pinned staging
// buffers, started once (stage_threads() − 1 of them; the caller copies
// too) and kept for the life of the process. Starting and joining 15
// threads for every 64 MiB piece, as before, made 32 threads slower than 16
// on a 16-core host (H200 host: the upload of a 2^27 a, b, c 427 against
// 336 ms). A copy is cut into parts that the workers and the caller take in
// turn, so copies from several callers (uploads to two GPUs, a download
// beside an upload) share the workers and none waits for another's to end.
class copy_workers {
  public:
    // memcpy(dst, src, n) over the workers and the calling thread. With
    // `unreduced`, src holds field elements (n a multiple of FR_BYTES) and
    // *unreduced becomes the index of the first not below r, or
    // NONE_UNREDUCED: checked as they are copied, so the check costs no
    // second pass over host memory.
    void copy(void* dst, const void* src, size_t n, size_t* unreduced = nullptr) {
        if (unreduced) *unreduced = NONE_UNREDUCED;
        if (n == 0) return;  // a job without parts would stay queued
        job j{static_cast<char*>(dst), static_cast<const char*>(src), n, (unsigned)((n + PART - 1) / PART),
              unreduced != nullptr};
        std::unique_lock<std::mutex> guard(lock_);
        start_workers();
        queue_.push_back(&j);
        work_.notify_all();
        // Take parts until none is left, then wait for those the workers took.
        while (j.next < j.parts) {
            const unsigned part = take(&j);
            guard.unlock();
            copy_part(j, part);
            guard.lock();
            j.done++;
        }
        done_.wait(guard, [&] { return j.done == j.parts; });
        if (unreduced) *unreduced = j.unreduced.load();
    }

  private:
    static constexpr size_t PART = 2u << 20;  // a multiple of FR_BYTES
    // A checked part is checked then copied in pieces of this size, so the
    // copy reads the piece from cache.
    static constexpr size_t CHECK_PIECE = 64u << 10;
    struct job {
        char* dst;
        const char* src;
        size_t n;
        unsigned parts;
        bool check;
        unsigned next = 0;  // the next part to take (under lock_)
        unsigned done = 0;  // parts copied (under lock_)
        // The first element not below r that any part has found.
        std::atomic<size_t> unreduced{NONE_UNREDUCED};
    };

    // The next part of `j`, which leaves the queue when it has no more:
    // after that no worker can reach it, so its owner may return once its
    // parts are done. Called with lock_ held.
    unsigned take(job* j) {
        const unsigned part = j->next++;
        if (j->next == j->parts) queue_.erase(std::find(queue_.begin(), queue_.end(), j));
        return part;
    }

    static void copy_part(job& j, unsigned part) {
        const size_t off = (size_t)part * PART, len = std::min(PART, j.n - off);
        if (!j.check) {
            memcpy(j.dst + off, j.src + off, len);
            return;
        }
        for (size_t piece = 0; piece < len; piece += CHECK_PIECE) {
            const size_t at = off + piece, bytes = std::min(CHECK_PIECE, len - piece);
            const size_t i = first_unreduced(reinterpret_cast<const unsigned char*>(j.src + at), bytes / FR_BYTES);
            if (i != NONE_UNREDUCED) {
                // The smallest index any part found (parts run in any order).
                const size_t found = at / FR_BYTES + i;
                size_t seen = j.unreduced.load();
                while (found < seen && !j.unreduced.compare_exchange_weak(seen, found)) {
                }
            }
            memcpy(j.dst + at, j.src + at, bytes);
        }
    }

    // Starts the workers on first use; if a thread cannot start, the copies
    // run on the ones that did (at worst on the callers alone).
    void start_workers() {
        if (started_) return;
        started_ = true;
        for (unsigned i = 1; i < stage_threads(); i++) {
            try {
                std::thread([this] { work(); }).detach();
            } catch (...) {
                break;
            }
        }
    }

    void work() {
        std::unique_lock<std::mutex> guard(lock_);
        for (;;) {
            work_.wait(guard, [&] { return !queue_.empty(); });
            job* j = queue_.front();
            const unsigned part = take(j);
            guard.unlock();
            copy_part(*j, part);
            guard.lock();
            if (++j->done == j->parts) done_.notify_all();
        }
    }

    std::mutex lock_;
    std::condition_variable work_, done_;
    std::deque<job*> queue_;
    bool started_ = false;
};

// memcpy over the staging copy workers (small copies on the caller alone);
// with `unreduced`, checked as copy_workers::copy says.
inline void parallel_copy(void* dst, const void* src, size_t n, size_t* unreduced = nullptr) {
    // Never destroyed: its detached workers wait on it until the process
    // ends, and no destructor at exit has to stop them (as rayon's global
    // pool: the library is not made to be unloaded).
    static copy_workers* const workers = new copy_workers;
    if (n < (4u << 20) || stage_threads() == 1) {
        if (unreduced) *unreduced = first_unreduced(static_cast<const unsigned char*>(src), n / FR_BYTES);
        memcpy(dst, src, n);
        return;
    }
    workers->copy(dst, src, n, unreduced);
}

// dst (device) <- src (pageable host), `bytes` long, through the staging
// buffers on `stream`; `slot` alternates between the two buffers. With
// `unreduced`, src holds field elements and *unreduced becomes the index of
// the first not below r, or NONE_UNREDUCED (see copy_workers::copy); the
// whole copy goes up either way.
inline cudaError_t staged_upload(void* dst, const void* src, size_t bytes, staging_t& st, int& slot, cudaStream_t stream,
                                 size_t* unreduced = nullptr) {
    if (unreduced) *unreduced = NONE_UNREDUCED;
    for (size_t off = 0; off < bytes; off += STAGE_BYTES) {
        size_t len = std::min(STAGE_BYTES, bytes - off);
        C2P_CUDA_OK(cudaEventSynchronize(st.done[slot]));  // the buffer's last DMA is over
        size_t found = NONE_UNREDUCED;
        parallel_copy(st.buf[slot], (const char*)src + off, len, unreduced ? &found : nullptr);
        if (unreduced) keep_first_unreduced(unreduced, off / FR_BYTES, found);
        C2P_CUDA_OK(cudaMemcpyAsync((char*)dst + off, st.buf[slot], len, cudaMemcpyHostToDevice, stream));
        C2P_CUDA_OK(cudaEventRecord(st.done[slot], stream));
        slot ^= 1;
    }
    return cudaSuccess;
}

// Host ranges page-locked by c2p_cuda_host_register (the parameters' points
// while they stream): uploads from inside one go up by DMA straight from
// the caller's memory, without the staging copy.
struct pinned_ranges_t {
    std::mutex lock;
    std::vector<std::pair<const char*, size_t>> ranges;  // start, bytes
};
inline pinned_ranges_t pinned_ranges;

// Whether [src, src + bytes) lies inside one registered range.
inline bool is_pinned(const void* src, size_t bytes) {
    const char* p = static_cast<const char*>(src);
    std::lock_guard<std::mutex> guard(pinned_ranges.lock);
    for (const auto& r : pinned_ranges.ranges)
        if (p >= r.first && bytes <= r.second && (size_t)(p - r.first) <= r.second - bytes) return true;
    return false;
}

// dst (device) <- src (pageable host) through device `device`'s staging
// buffers taken piece by piece (lock_piece), so that other uploads that can
// wait take turns with this one and an urgent one goes first; on `stream`
// (synchronize it before reading dst). With `unreduced`, the values are
// checked below r as in staged_upload. From a registered range (and
// unchecked), each piece goes up by DMA from src itself, in the same turns;
// the piece's DMA ends before the turn passes on, so the next piece in line
// does not queue behind it.
inline cudaError_t upload_in_pieces(int device, void* dst, const void* src, size_t bytes, cudaStream_t stream,
                                    size_t* unreduced = nullptr) {
    if (unreduced) *unreduced = NONE_UNREDUCED;
    const size_t piece = 4 * STAGE_BYTES;
    if (!unreduced && is_pinned(src, bytes)) {
        event_t sent;
        C2P_CUDA_OK(cudaEventCreateWithFlags(&sent.ev, cudaEventDisableTiming));
        for (size_t off = 0; off < bytes; off += piece) {
            piece_hold hold = lock_piece(staging[device]);
            C2P_CUDA_OK(cudaMemcpyAsync(static_cast<char*>(dst) + off, static_cast<const char*>(src) + off,
                                        std::min(piece, bytes - off), cudaMemcpyHostToDevice, stream));
            C2P_CUDA_OK(cudaEventRecord(sent.ev, stream));
            C2P_CUDA_OK(cudaEventSynchronize(sent.ev));
        }
        return cudaSuccess;
    }
    for (size_t off = 0; off < bytes; off += piece) {
        piece_hold hold = lock_piece(staging[device]);
        staging_t* st = nullptr;
        C2P_CUDA_OK(staging_buffers(device, &st));
        int slot = 0;
        size_t found = NONE_UNREDUCED;
        C2P_CUDA_OK(staged_upload(static_cast<char*>(dst) + off, static_cast<const char*>(src) + off,
                                  std::min(piece, bytes - off), *st, slot, stream, unreduced ? &found : nullptr));
        if (unreduced) keep_first_unreduced(unreduced, off / FR_BYTES, found);
    }
    return cudaSuccess;
}

// dst (pageable host) <- src (device), `bytes` long, through the staging
// buffers: the DMA of one chunk runs while host threads copy the previous
// one out (which also spreads the page faults of a fresh destination over
// those threads; a single cudaMemcpy to fresh pageable memory faults them
// in one at a time, ~1 GB/s).
inline cudaError_t staged_download(void* dst, const void* src, size_t bytes, staging_t& st, cudaStream_t stream) {
    const size_t chunks = (bytes + STAGE_BYTES - 1) / STAGE_BYTES;
    auto len = [&](size_t i) { return std::min(STAGE_BYTES, bytes - i * STAGE_BYTES); };
    for (size_t i = 0; i <= chunks; i++) {
        if (i < chunks) {
            const int slot = (int)(i & 1);
            C2P_CUDA_OK(cudaEventSynchronize(st.done[slot]));
            C2P_CUDA_OK(cudaMemcpyAsync(st.buf[slot], (const char*)src + i * STAGE_BYTES, len(i),
                                        cudaMemcpyDeviceToHost, stream));
            C2P_CUDA_OK(cudaEventRecord(st.done[slot], stream));
        }
        if (i > 0) {
            const int prev = (int)((i - 1) & 1);
            C2P_CUDA_OK(cudaEventSynchronize(st.done[prev]));
            parallel_copy((char*)dst + (i - 1) * STAGE_BYTES, st.buf[prev], len(i - 1));
        }
    }
    return cudaSuccess;
}

}  // namespace host
}  // namespace c2p
