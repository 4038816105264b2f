// Multi-scalar multiplication on the GPU: points resident on the device
// (uploaded once per parameters handle), scalars from the host in the
// caller's Montgomery form, the result back as a Jacobian point in blst's
// layout (blst_p1 / blst_p2). See msm/pippenger.cuh for the method.
//
// Device memory per call, besides the resident points: the scalars (32·n
// bytes; none for device scalars that are consumed, converted in place), two
// flag bytes and two indices per scalar, the per-entry buffers of a group of
// windows (~24 bytes per entry and ~240 per bucket, entries = windows in the
// group × scalars that are not 0 or 1; groups are sized to stay within
// group_bytes, 2..8 GiB by the device's size, or one window), the buckets
// (windows × (2^(c−1) + 1) points). All of it is allocated and freed in the call's stream order (no device-wide
// synchronisation) and freed before the call returns, on success and on
// failure; the device's memory pool keeps up to $C2P_POOL_KEEP_MIB (an
// eighth of the device's memory) of it for the next call. A sum carried over
// chunks (c2p_cuda_msm_sum_*) keeps its buckets and the ones' sum from
// c2p_cuda_msm_sum_new to c2p_cuda_msm_sum_free; each chunk's other buffers
// are freed as c2p_cuda_msm's are.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <new>
#include <type_traits>

#include "../common.cuh"
#include "../msm/pippenger.cuh"
#include "host.cuh"

using c2p::fr_t;
using c2p::host::stream_array;
using c2p::host::stream_t;

namespace {

// The bucket point type per group (see msm/pippenger.cuh).
template <class F>
using bucket_t = std::conditional_t<sizeof(F) == sizeof(c2p::fp_t), c2p::xyzz_t<F>, c2p::jacobian_t<F>>;

constexpr unsigned THREADS = 128;

// Elapsed ms between two events recorded on a stream that has completed.
float elapsed(const c2p::host::event_t& a, const c2p::host::event_t& b) {
    float ms = 0;
    return cudaEventElapsedTime(&ms, a.ev, b.ev) == cudaSuccess ? ms : 0.0f;
}
// The per-entry buffers of a window group on `device`: the tuning's
// msm_group_mib (C2P_MSM_GROUP_MIB), else a sixteenth of the device budget
// within 256 MiB..8 GiB (8 GiB on an H200). Larger groups mean fewer sorts,
// scalar reads, host round trips and kernel tails (with 40 bytes per entry,
// 8 GiB instead of 2 took two groups of windows instead of six at 2^24:
// 112.4 -> 110.7 ms on the H200). A window whose entries alone exceed the
// group is a group of its own.
cudaError_t group_bytes(int device, size_t* bytes) {
    const uint32_t mib = c2p::host::tuned(c2p::host::tuning.msm_group_mib, 0);
    if (mib) {
        *bytes = (size_t)mib << 20;
        return cudaSuccess;
    }
    uint64_t budget = 0;
    C2P_CUDA_OK(c2p::host::budget_of(device, &budget));
    *bytes = std::min<size_t>(std::max<size_t>(budget / 16, (size_t)256 << 20), (size_t)8 << 30);
    return cudaSuccess;
}

unsigned blocks(size_t n) { return (unsigned)((n + THREADS - 1) / THREADS); }

// Window width from the number of scalars m that reach the buckets: each
// of the ceil(256/c) windows costs about m additions into buckets and
// 2·2^(c−1) for their reduction, which log2(m) − 4 balances; at most
// max_bits (G1: g1_window_cap; G2: 16, its buckets are twice the size), at
// least 4.
// Of widths with the same number of windows the narrowest is taken: the
// same additions into half the buckets (c = 17 gives 16 windows as c = 16
// does, the 16th holding only the carries out of bit 255).
int window_bits(size_t m, int max_bits) {
    int log_m = 0;
    while (log_m < 40 && (1ull << (log_m + 1)) <= m) log_m++;
    int c = log_m - 4;
    c = c < 4 ? 4 : (c > max_bits ? max_bits : c);
    auto windows = [](int bits) { return (256 + bits - 1) / bits; };
    while (c > 4 && windows(c - 1) == windows(c)) c--;
    return c;
}

// G1's cap on the window width: the tuning's msm_g1_max_window
// (C2P_MSM_G1_MAX_WINDOW), else 22 with a device budget of 64 GiB or more and
// 20 below, narrower still while the buckets would take more than an eighth
// of the budget. At 22, 2^26 and 2^27 scalars take 12 windows instead of 13
// (8 % fewer additions into buckets) for 12 × 2^21 XYZZ buckets (4.8 GB
// instead of 1.3) and a reduction of 31 ms instead of 11: on the H200 a
// dense 2^27 MSM with the scalars on the device took 743.9 ms against 777.9.
cudaError_t g1_window_cap(int device, int* cap) {
    const uint32_t forced = c2p::host::tuned(c2p::host::tuning.msm_g1_max_window, 0);
    if (forced) {
        *cap = (int)forced;
        return cudaSuccess;
    }
    uint64_t budget = 0;
    C2P_CUDA_OK(c2p::host::budget_of(device, &budget));
    int c = budget >= ((uint64_t)64 << 30) ? 22 : 20;
    auto bucket_bytes = [](int bits) {
        return (uint64_t)((256 + bits - 1) / bits) * ((1ull << (bits - 1)) + 1) * sizeof(bucket_t<c2p::fp_t>);
    };
    while (c > 12 && bucket_bytes(c) > budget / 8) c--;
    *cap = c;
    return cudaSuccess;
}

// The window width of an MSM of m scalars reaching the buckets on device.
template <class F>
cudaError_t msm_window_bits(int device, size_t m, int* c) {
    int cap = 16;
    if constexpr (sizeof(F) == sizeof(c2p::fp_t)) C2P_CUDA_OK(g1_window_cap(device, &cap));
    *c = window_bits(m, cap);
    return cudaSuccess;
}

// The shortest chunk of the bucket sums: the tuning's msm_min_chunk
// (C2P_MSM_MIN_CHUNK), else 128. Longer chunks leave fewer partial sums per
// bucket to add with full additions, at the cost of longer dependent chains
// per thread; with each thread's sum in shared memory 128 was the fastest of
// 32..128 at every dense size (docs/bench-history.md).
uint32_t min_chunk() {
    return c2p::host::tuned(c2p::host::tuning.msm_min_chunk, 128);
}

int bits_for(uint64_t n) {
    int b = 1;
    while (b < 32 && (1ull << b) < n) b++;
    return b;
}

// CUB's scratch beyond the buffers its callers pass (selections, scans,
// reductions, the double-buffer radix sort), for the size query: a few MiB
// at the sizes proved here.
constexpr size_t CUB_SCRATCH = 64ull << 20;

// The Pippenger part of an MSM whose m scalars reach the buckets on
// `device`: window width and count, buckets, reduction segments, the
// window groups sorted at once, and the device bytes all of it takes at
// most. add_to_sums() sizes its buffers by it, and c2p_cuda_msm_bytes and
// c2p_cuda_msm_sum_bytes report it.
template <class F>
struct pippenger_plan {
    using J = bucket_t<F>;
    int c = 0, windows = 0;
    uint32_t B = 0, segments = 0;
    size_t group = 1, cap = 0, run_cap = 0, bytes = 0;

    static cudaError_t make(int device, size_t m, pippenger_plan* p) {
        int c = 0;
        C2P_CUDA_OK(msm_window_bits<F>(device, m, &c));
        return with_width(device, m, c, p);
    }

    // The plan for m scalars in windows of c bits (a sum carried over
    // chunks keeps the whole's width).
    static cudaError_t with_width(int device, size_t m, int c, pippenger_plan* p) {
        p->c = c;
        p->windows = (256 + p->c - 1) / p->c;
        p->B = 1u << (p->c - 1);
        // Segments per window for the reduction: a power of two, so the tree
        // of segment sums stays within windows; at most 128 buckets each (as
        // at c = 20) when windows are wider.
        p->segments = p->B < 4096 ? p->B : std::max<uint32_t>(4096, p->B / 128);
        const size_t buckets = (size_t)p->windows * (p->B + 1), sums = (size_t)p->windows * p->segments;
        p->bytes = (buckets + 2 * sums) * sizeof(J) + sizeof(c2p::jacobian_t<F>);
        if (m == 0) return cudaSuccess;
        // Per entry: keys and values and the sort's second buffer of each
        // (16 bytes) and a share of the bucket-sum chunks (a chunk, its
        // partial sum and its length-sort slots per `shortest` entries); per
        // bucket the runs' keys, counts and offsets, the chunk offsets, and a
        // chunk of its own at most. The runs are at most the buckets. Entries
        // stay below 2^31 (CUB's and the chunks' 32-bit offsets).
        size_t group_budget = 0;
        C2P_CUDA_OK(group_bytes(device, &group_budget));
        constexpr size_t chunk_bytes = sizeof(c2p::msm::chunk_t) + sizeof(J) + 16;
        const size_t shortest = min_chunk();
        const size_t per_window =
            (16 + (chunk_bytes + shortest - 1) / shortest + 1) * m + (16 + chunk_bytes) * ((size_t)p->B + 1);
        size_t group = std::min(group_budget / per_window, (size_t)INT32_MAX / m);
        p->group = group < 1 ? 1 : (group > (size_t)p->windows ? p->windows : group);
        p->cap = p->group * m;
        p->run_cap = std::min(p->cap, p->group * ((size_t)p->B + 1));
        const size_t chunks = p->cap / shortest + p->run_cap + 1;
        p->bytes += 16 * p->cap + 16 * p->run_cap + 12 + chunks * chunk_bytes;
        return cudaSuccess;
    }
};

// Device bytes an MSM of n scalars (at `where`, with a density bitmap or
// not) allocates at most: the scalars' canonical copy unless consumed in
// place, their flags and index lists, the bitmap and its word ranks, the
// sum of the ones, the Pippenger part as if no scalar were 0 or 1, and CUB's
// scratch.
// With `width_n`, the windows are those of an MSM of width_n scalars (a
// chunk of a carried sum: its buckets counted here too).
template <class F>
cudaError_t msm_bytes(int device, size_t n, c2p_scalars_at where, bool density, size_t* bytes, size_t width_n = 0) {
    using J = bucket_t<F>;
    int c = 0;
    C2P_CUDA_OK(msm_window_bits<F>(device, width_n > n ? width_n : n, &c));
    pippenger_plan<F> plan;
    C2P_CUDA_OK(pippenger_plan<F>::with_width(device, n, c, &plan));
    const size_t words = (n + 63) / 64, parts = (n + 63) / 64;
    *bytes = (where == C2P_SCALARS_ON_DEVICE_CONSUMED ? 0 : sizeof(fr_t) * n) + 10 * n + 8 +
             (density ? 12 * words : 0) + (parts + (parts + 63) / 64 + 1) * sizeof(J) + plan.bytes + CUB_SCRATCH;
    return cudaSuccess;
}

// Runs the CUB algorithm `f(temp, bytes)` twice: to size, then to run. The
// scratch space is charged to the caller's site (file:line).
template <class Fn>
cudaError_t with_temp(stream_array<uint8_t>& temp, size_t& temp_bytes, cudaStream_t s, Fn f,
                      const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    size_t need = 0;
    C2P_CUDA_OK(f(nullptr, need));
    if (need > temp_bytes) {
        temp_bytes = 0;
        C2P_CUDA_OK(temp.alloc(need, s, file, line));
        temp_bytes = need;
    }
    return f(temp.ptr, need);
}

template <class T>
cudaError_t to_host(T* dst, const T* src, cudaStream_t s) {
    C2P_CUDA_OK(cudaMemcpyAsync(dst, src, sizeof(T), cudaMemcpyDeviceToHost, s));
    return cudaStreamSynchronize(s);
}

// Reduces `groups` consecutive groups of `size` points (a power of two) to
// one point each, in place over two buffers: *in ends up holding the sums.
template <class J>
cudaError_t reduce_groups(J*& in, J*& spare, size_t groups, size_t size, cudaStream_t s) {
    while (size > 1) {
        // Chains of at most 8 additions: the last levels have few threads,
        // so their time is a chain's latency, not the work.
        const uint32_t L = size < 8 ? (uint32_t)size : 8;
        const size_t out = groups * (size / L);
        c2p::msm::sum_points<J><<<blocks(out), THREADS, 0, s>>>(in, groups * size, L, spare);
        C2P_CUDA_OK(cudaGetLastError());
        std::swap(in, spare);
        size /= L;
    }
    return cudaSuccess;
}

// Σ points[which[i]] for i < n into *out, by a tree of chunk sums.
template <class F>
cudaError_t sum_listed(const c2p::affine_t<F>* points, const uint32_t* which, size_t n, bucket_t<F>* out,
                       cudaStream_t s) {
    using J = bucket_t<F>;
    constexpr uint32_t L = 64;
    if (n == 0) {
        c2p::msm::fill_infinity<J><<<1, 1, 0, s>>>(out, 1);
        return cudaGetLastError();
    }
    size_t parts = (n + L - 1) / L;
    stream_array<J> a, b;
    C2P_CUDA_OK(a.alloc(parts, s));
    C2P_CUDA_OK(b.alloc((parts + L - 1) / L, s));
    const unsigned shared_blocks =
        (unsigned)((parts + c2p::msm::SHARED_SUM_THREADS - 1) / c2p::msm::SHARED_SUM_THREADS);
    if constexpr (std::is_same_v<J, c2p::jacobian_t<F>>)
        c2p::msm::sum_indexed_shared_jacobian<F>
            <<<shared_blocks, c2p::msm::SHARED_SUM_THREADS, 0, s>>>(points, which, n, L, a.ptr);
    else
        c2p::msm::sum_indexed_shared<F>
            <<<shared_blocks, c2p::msm::SHARED_SUM_THREADS, 0, s>>>(points, which, n, L, a.ptr);
    C2P_CUDA_OK(cudaGetLastError());
    J *in = a.ptr, *next = b.ptr;
    while (parts > 1) {
        size_t fewer = (parts + L - 1) / L;
        c2p::msm::sum_points<J><<<blocks(fewer), THREADS, 0, s>>>(in, parts, L, next);
        C2P_CUDA_OK(cudaGetLastError());
        std::swap(in, next);
        parts = fewer;
    }
    return cudaMemcpyAsync(out, in, sizeof(J), cudaMemcpyDeviceToDevice, s);
}


// What an MSM adds into: every window's buckets and the sum of the points
// whose scalar is one. One MSM makes them for its own scalars; a sum over
// chunks (c2p_cuda_msm_sum_*) keeps them from chunk to chunk, in windows
// as wide as the whole's, and reduces them once.
template <class F>
struct msm_sums {
    using J = bucket_t<F>;
    int c = 0, windows = 0;
    uint32_t B = 0, segments = 0;
    stream_array<J> buckets;
    stream_array<J> ones;  // the sum so far, then room for a chunk's

    bool made() const { return buckets.ptr != nullptr; }

    // Empty sums in windows of `plan`, on stream s.
    cudaError_t make(const pippenger_plan<F>& plan, cudaStream_t s) {
        c = plan.c;
        windows = plan.windows;
        B = plan.B;
        segments = plan.segments;
        const size_t n_buckets = (size_t)windows * (B + 1);
        C2P_CUDA_OK(buckets.alloc(n_buckets, s));
        C2P_CUDA_OK(ones.alloc(2, s));
        c2p::msm::fill_infinity<J><<<blocks(n_buckets), THREADS, 0, s>>>(buckets.ptr, n_buckets);
        C2P_CUDA_OK(cudaGetLastError());
        c2p::msm::fill_infinity<J><<<1, 2, 0, s>>>(ones.ptr, 2);
        return cudaGetLastError();
    }

    // The buckets' total with the ones' sum, into *host_out: the buckets
    // reduced per window, the windows combined.
    cudaError_t total(cudaStream_t s, c2p::jacobian_t<F>* host_out) {
        stream_array<J> seg_sums, seg_spare;
        stream_array<c2p::jacobian_t<F>> result;
        C2P_CUDA_OK(seg_sums.alloc((size_t)windows * segments, s));
        C2P_CUDA_OK(seg_spare.alloc((size_t)windows * segments, s));
        C2P_CUDA_OK(result.alloc(1, s));
        if constexpr (std::is_same_v<J, c2p::xyzz_t<c2p::fp_t>>) {
            constexpr unsigned T = c2p::msm::SHARED_SUM_THREADS;
            const unsigned n_blocks = (unsigned)(((size_t)windows * segments + T - 1) / T);
            // 48 KiB of shared memory per block: ask for the largest split
            // of the SM's memory towards it, so that four blocks fit.
            C2P_CUDA_OK(cudaFuncSetAttribute(c2p::msm::reduce_segments_shared<F>,
                                             cudaFuncAttributePreferredSharedMemoryCarveout,
                                             cudaSharedmemCarveoutMaxShared));
            c2p::msm::reduce_segments_shared<F>
                <<<n_blocks, T, 0, s>>>(buckets.ptr, windows, B, segments, seg_sums.ptr);
        } else {
            c2p::msm::reduce_segments<F, J><<<blocks((size_t)windows * segments), THREADS, 0, s>>>(
                buckets.ptr, windows, B, segments, seg_sums.ptr);
        }
        C2P_CUDA_OK(cudaGetLastError());
        J *window_sums = seg_sums.ptr, *spare = seg_spare.ptr;
        C2P_CUDA_OK(reduce_groups<J>(window_sums, spare, windows, segments, s));
        c2p::msm::combine_windows<F, J><<<1, 1, 0, s>>>(window_sums, windows, c, ones.ptr, result.ptr);
        C2P_CUDA_OK(cudaGetLastError());
        C2P_CUDA_OK(cudaMemcpyAsync(host_out, result.ptr, sizeof(*host_out), cudaMemcpyDeviceToHost, s));
        return cudaStreamSynchronize(s);
    }
};

// Adds Σ scalars[i]·points[i] into `sums` on stream s (made here, in the
// windows of the scalars other than 0 and 1, unless they are already),
// the times into t. Returns once its buffers are freed.
template <class F>
cudaError_t add_to_sums(int device, const c2p::affine_t<F>* points, const fr_t* in_scalars, c2p_scalars_at where,
                        const uint64_t* host_density, size_t n, msm_sums<F>& sums, cudaStream_t s,
                        c2p_msm_timing& t) {
    using J = bucket_t<F>;
    c2p::host::event_t ev[6];
    for (auto& e : ev) C2P_CUDA_OK(cudaEventCreate(&e.ev));
    C2P_CUDA_OK(cudaEventRecord(ev[0].ev, s));
    stream_array<uint8_t> temp;
    size_t temp_bytes = 0;

    // 1. Scalars to canonical form, classified.
    // Host scalars are copied into `owned` and converted there; shared
    // device scalars (the witness, read by several MSMs) are converted into
    // `owned` as they are read (a copy first cost 8 GiB of traffic at 2^27);
    // consumed device scalars (the H step's h, given up by the caller) are
    // converted in place.
    const bool in_place = where == C2P_SCALARS_ON_DEVICE_CONSUMED;
    stream_array<fr_t> owned;
    stream_array<uint8_t> is_one, is_other;
    stream_array<uint32_t> ones, others, counts_sel;
    if (!in_place) C2P_CUDA_OK(owned.alloc(n, s));
    fr_t* scalars = in_place ? const_cast<fr_t*>(in_scalars) : owned.ptr;
    C2P_CUDA_OK(is_one.alloc(n, s));
    C2P_CUDA_OK(is_other.alloc(n, s));
    C2P_CUDA_OK(ones.alloc(n, s));
    C2P_CUDA_OK(others.alloc(n, s));
    C2P_CUDA_OK(counts_sel.alloc(2, s));
    if (where == C2P_SCALARS_ON_HOST) {
        c2p::host::staging_t* st = nullptr;
        std::lock_guard<std::mutex> guard(c2p::host::staging[device].lock);
        C2P_CUDA_OK(c2p::host::staging_buffers(device, &st));
        int slot = 0;
        C2P_CUDA_OK(c2p::host::staged_upload(scalars, in_scalars, n * sizeof(fr_t), *st, slot, s));
        C2P_CUDA_OK(cudaEventSynchronize(st->done[slot ^ 1]));
    }
    // A density bitmap and the selected count before each word (for ranks).
    stream_array<uint64_t> density;
    stream_array<uint32_t> word_prefix;
    if (host_density) {
        const size_t words = (n + 63) / 64;
        C2P_CUDA_OK(density.alloc(words, s));
        C2P_CUDA_OK(word_prefix.alloc(words, s));
        C2P_CUDA_OK(cudaMemcpyAsync(density.ptr, host_density, words * sizeof(uint64_t), cudaMemcpyHostToDevice, s));
        c2p::msm::word_popcounts<<<blocks(words), THREADS, 0, s>>>(density.ptr, words, word_prefix.ptr);
        C2P_CUDA_OK(cudaGetLastError());
        C2P_CUDA_OK(with_temp(temp, temp_bytes, s, [&](void* t, size_t& b) {
            return cub::DeviceScan::ExclusiveSum(t, b, word_prefix.ptr, word_prefix.ptr, words, s);
        }));
    }
    C2P_CUDA_OK(cudaEventRecord(ev[1].ev, s));
    c2p::msm::classify<<<blocks(n), THREADS, 0, s>>>(where == C2P_SCALARS_ON_DEVICE_SHARED ? in_scalars : scalars, scalars, n,
                                                      density.ptr, is_one.ptr, is_other.ptr);
    C2P_CUDA_OK(cudaGetLastError());
    thrust::counting_iterator<uint32_t> index(0);
    C2P_CUDA_OK(with_temp(temp, temp_bytes, s, [&](void* t, size_t& b) {
        return cub::DeviceSelect::Flagged(t, b, index, is_one.ptr, ones.ptr, counts_sel.ptr, n, s);
    }));
    C2P_CUDA_OK(with_temp(temp, temp_bytes, s, [&](void* t, size_t& b) {
        return cub::DeviceSelect::Flagged(t, b, index, is_other.ptr, others.ptr, counts_sel.ptr + 1, n, s);
    }));
    uint32_t selected[2];
    C2P_CUDA_OK(cudaMemcpyAsync(selected, counts_sel.ptr, sizeof selected, cudaMemcpyDeviceToHost, s));
    C2P_CUDA_OK(cudaStreamSynchronize(s));
    const size_t n_ones = selected[0], m = selected[1];

    // 2. The ones: a plain sum (of the points they meet).
    if (host_density && n_ones > 0) {
        c2p::msm::to_ranks<<<blocks(n_ones), THREADS, 0, s>>>(ones.ptr, n_ones, density.ptr, word_prefix.ptr);
        C2P_CUDA_OK(cudaGetLastError());
    }
    pippenger_plan<F> plan;
    if (sums.made()) {
        C2P_CUDA_OK(pippenger_plan<F>::with_width(device, m, sums.c, &plan));
    } else {
        C2P_CUDA_OK(pippenger_plan<F>::make(device, m, &plan));
        C2P_CUDA_OK(sums.make(plan, s));
    }
    // The chunk's sum beside the sum so far, then the two added.
    C2P_CUDA_OK(sum_listed<F>(points, ones.ptr, n_ones, sums.ones.ptr + 1, s));
    c2p::msm::sum_points<J><<<1, 1, 0, s>>>(sums.ones.ptr, 2, 2, sums.ones.ptr);
    C2P_CUDA_OK(cudaGetLastError());
    C2P_CUDA_OK(cudaEventRecord(ev[2].ev, s));
    C2P_CUDA_OK(cudaEventSynchronize(ev[2].ev));
    t.upload_ms += elapsed(ev[0], ev[1]);
    t.split_ms += elapsed(ev[1], ev[2]);

    // 3-5. The rest: Pippenger.
    const int c = plan.c, windows = plan.windows;
    const uint32_t B = plan.B;
    J* const buckets = sums.buckets.ptr;
    if (m > 0) {
        const size_t group = plan.group, cap = plan.cap, run_cap = plan.run_cap;
        stream_array<uint32_t> keys, values, keys_alt, values_alt, run_keys, run_counts, run_offsets, chunk_offsets,
            n_runs, max_count;
        C2P_CUDA_OK(keys.alloc(cap, s));
        C2P_CUDA_OK(values.alloc(cap, s));
        C2P_CUDA_OK(keys_alt.alloc(cap, s));
        C2P_CUDA_OK(values_alt.alloc(cap, s));
        C2P_CUDA_OK(run_keys.alloc(run_cap, s));
        C2P_CUDA_OK(run_counts.alloc(run_cap, s));
        C2P_CUDA_OK(run_offsets.alloc(run_cap, s));
        C2P_CUDA_OK(chunk_offsets.alloc(run_cap + 1, s));
        C2P_CUDA_OK(n_runs.alloc(1, s));
        C2P_CUDA_OK(max_count.alloc(1, s));
        for (int w0 = 0; w0 < windows; w0 += (int)group) {
            const int nw = windows - w0 < (int)group ? windows - w0 : (int)group;
            const size_t entries = (size_t)nw * m;
            C2P_CUDA_OK(cudaEventRecord(ev[3].ev, s));
            c2p::msm::digits<<<blocks(m), THREADS, 0, s>>>(scalars, others.ptr, m, c, w0, nw, density.ptr,
                                                            word_prefix.ptr, keys.ptr, values.ptr);
            C2P_CUDA_OK(cudaGetLastError());
            const int end_bit = bits_for((uint64_t)nw * (B + 1));
            // The sorted pairs end up in either buffer of each pair.
            cub::DoubleBuffer<uint32_t> key_buf(keys.ptr, keys_alt.ptr), value_buf(values.ptr, values_alt.ptr);
            C2P_CUDA_OK(with_temp(temp, temp_bytes, s, [&](void* t, size_t& b) {
                return cub::DeviceRadixSort::SortPairs(t, b, key_buf, value_buf, entries, 0, end_bit, s);
            }));
            const uint32_t* keys_sorted = key_buf.Current();
            const uint32_t* values_sorted = value_buf.Current();
            C2P_CUDA_OK(with_temp(temp, temp_bytes, s, [&](void* t, size_t& b) {
                return cub::DeviceRunLengthEncode::Encode(t, b, keys_sorted, run_keys.ptr, run_counts.ptr, n_runs.ptr,
                                                          entries, s);
            }));
            uint32_t runs = 0, largest = 0;
            C2P_CUDA_OK(to_host(&runs, n_runs.ptr, s));
            // The largest run, over the runs written (not the whole array).
            C2P_CUDA_OK(with_temp(temp, temp_bytes, s, [&](void* t, size_t& b) {
                return cub::DeviceReduce::Max(t, b, run_counts.ptr, max_count.ptr, runs, s);
            }));
            C2P_CUDA_OK(cudaEventRecord(ev[4].ev, s));
            C2P_CUDA_OK(to_host(&largest, max_count.ptr, s));
            // Chunks of at most L entries, with L large enough that no bucket
            // has more than ~MAX_CHUNKS chunks to add afterwards (a warp adds
            // those of a long run). A chunk is a chain of dependent additions:
            // with 256 chunks per bucket, the one bucket of a top window that
            // held only carries (c = 17 for the PoRep witness's 2.1 M other
            // values, before window_bits took the narrowest width) took
            // chunks of 4150 points, 55 ms of tail in a 73 ms bucket phase;
            // all scalars equal, or few distinct ones, do the same.
            constexpr uint32_t MAX_CHUNKS = 4096;
            const uint32_t L = std::max<uint32_t>(min_chunk(), (largest + MAX_CHUNKS - 1) / MAX_CHUNKS);
            C2P_CUDA_OK(with_temp(temp, temp_bytes, s, [&](void* t, size_t& b) {
                return cub::DeviceScan::ExclusiveSum(t, b, run_counts.ptr, run_offsets.ptr, runs, s);
            }));
            c2p::msm::count_chunks<<<blocks(runs + 1), THREADS, 0, s>>>(run_counts.ptr, run_keys.ptr, runs, B, L,
                                                                         chunk_offsets.ptr);
            C2P_CUDA_OK(cudaGetLastError());
            C2P_CUDA_OK(with_temp(temp, temp_bytes, s, [&](void* t, size_t& b) {
                return cub::DeviceScan::ExclusiveSum(t, b, chunk_offsets.ptr, chunk_offsets.ptr, runs + 1, s);
            }));
            uint32_t total = 0;
            C2P_CUDA_OK(to_host(&total, chunk_offsets.ptr + runs, s));
            if (total == 0) continue;  // every digit of this group is 0 (small scalars)
            stream_array<c2p::msm::chunk_t> chunks;
            stream_array<J> partial;
            C2P_CUDA_OK(chunks.alloc(total, s));
            C2P_CUDA_OK(partial.alloc(total, s));
            c2p::msm::list_chunks<<<blocks(runs), THREADS, 0, s>>>(run_counts.ptr, run_offsets.ptr,
                                                                    chunk_offsets.ptr, runs, L, chunks.ptr);
            C2P_CUDA_OK(cudaGetLastError());
            // The chunks by length (a sort of `total` pairs on the length's
            // few bits), so that a warp's lanes finish together.
            stream_array<uint32_t> lengths, lengths_sorted, index, order;
            C2P_CUDA_OK(lengths.alloc(total, s));
            C2P_CUDA_OK(lengths_sorted.alloc(total, s));
            C2P_CUDA_OK(index.alloc(total, s));
            C2P_CUDA_OK(order.alloc(total, s));
            c2p::msm::chunk_lengths<<<blocks(total), THREADS, 0, s>>>(chunks.ptr, total, L, lengths.ptr, index.ptr);
            C2P_CUDA_OK(cudaGetLastError());
            C2P_CUDA_OK(with_temp(temp, temp_bytes, s, [&](void* t, size_t& b) {
                return cub::DeviceRadixSort::SortPairs(t, b, lengths.ptr, lengths_sorted.ptr, index.ptr, order.ptr,
                                                       total, 0, bits_for((uint64_t)L + 1), s);
            }));
            // Each thread's sum in shared memory: for G1 with every Fp
            // product's operands there too (shared_slots); for G2 the sum
            // only (shared_jacobian: a second Fp2 point in registers spills).
            constexpr unsigned ct = c2p::msm::SHARED_SUM_THREADS;
            const unsigned chunk_blocks = (unsigned)((total + ct - 1) / ct);
            if constexpr (std::is_same_v<J, c2p::jacobian_t<F>>) {
                c2p::msm::sum_chunks_shared_jacobian<F><<<chunk_blocks, ct, 0, s>>>(
                    points, values_sorted, chunks.ptr, order.ptr, total, partial.ptr);
            } else {
                // 48 KiB of shared memory per block, as reduce_segments_shared.
                C2P_CUDA_OK(cudaFuncSetAttribute(c2p::msm::sum_chunks_shared_products<F>,
                                                 cudaFuncAttributePreferredSharedMemoryCarveout,
                                                 cudaSharedmemCarveoutMaxShared));
                c2p::msm::sum_chunks_shared_products<F><<<chunk_blocks, ct, 0, s>>>(
                    points, values_sorted, chunks.ptr, order.ptr, total, partial.ptr);
            }
            C2P_CUDA_OK(cudaGetLastError());
            c2p::msm::sum_runs<F, J><<<blocks(runs), THREADS, 0, s>>>(partial.ptr, chunk_offsets.ptr, run_keys.ptr,
                                                                    runs, buckets + (size_t)w0 * (B + 1));
            C2P_CUDA_OK(cudaGetLastError());
            // A lane per run to find the long ones; at most 1024 blocks.
            c2p::msm::sum_long_runs<F, J><<<std::min(blocks(runs), 1024u), THREADS, 0, s>>>(
                partial.ptr, chunk_offsets.ptr, run_keys.ptr, runs, buckets + (size_t)w0 * (B + 1));
            C2P_CUDA_OK(cudaGetLastError());
            // chunks and partial are freed here: wait for their kernels.
            C2P_CUDA_OK(cudaEventRecord(ev[5].ev, s));
            C2P_CUDA_OK(cudaStreamSynchronize(s));
            t.sort_ms += elapsed(ev[3], ev[4]);
            t.buckets_ms += elapsed(ev[4], ev[5]);
        }
    }
    return cudaSuccess;
}

// Σ scalars[i]·points[i] into *host_out: one chunk's sums, totalled.
template <class F>
cudaError_t msm(int device, const c2p::affine_t<F>* points, const fr_t* in_scalars, c2p_scalars_at where,
                const uint64_t* host_density, size_t n, c2p::jacobian_t<F>* host_out, c2p_msm_timing* timing) {
    C2P_CUDA_OK(cudaSetDevice(device));
    C2P_CUDA_OK(c2p::host::keep_pool_memory(device));
    stream_t stream;
    C2P_CUDA_OK(stream.create());
    cudaStream_t s = stream.s;
    c2p_msm_timing t{};
    msm_sums<F> sums;
    C2P_CUDA_OK(add_to_sums<F>(device, points, in_scalars, where, host_density, n, sums, s, t));
    c2p::host::event_t ev[2];
    for (auto& e : ev) C2P_CUDA_OK(cudaEventCreate(&e.ev));
    C2P_CUDA_OK(cudaEventRecord(ev[0].ev, s));
    C2P_CUDA_OK(sums.total(s, host_out));
    C2P_CUDA_OK(cudaEventRecord(ev[1].ev, s));
    C2P_CUDA_OK(cudaEventSynchronize(ev[1].ev));
    t.reduce_ms = elapsed(ev[0], ev[1]);
    if (timing) *timing = t;
    return cudaSuccess;
}

bool curve_ok(c2p_curve curve) { return curve == C2P_CURVE_G1 || curve == C2P_CURVE_G2; }

}  // namespace

// The device bytes an MSM of n scalars on `device` allocates at most (see
// msm_bytes), for the planner (src/gpu/memory.rs).
extern "C" int c2p_cuda_msm_bytes(int device, c2p_curve curve, size_t n, c2p_scalars_at scalars_at, int density,
                                  size_t* bytes) {
    *bytes = 0;
    if (!curve_ok(curve) || device < 0 || device >= c2p::host::MAX_DEVICES) {
        c2p::record_error(cudaErrorInvalidValue, "c2p_cuda_msm_bytes arguments (device, curve 1 or 2)", __FILE__,
                          __LINE__);
        return (int)cudaErrorInvalidValue;
    }
    C2P_CUDA_OK(cudaSetDevice(device));
    if (curve == C2P_CURVE_G1) return (int)msm_bytes<c2p::fp_t>(device, n, scalars_at, density != 0, bytes);
    return (int)msm_bytes<c2p::fp2_t>(device, n, scalars_at, density != 0, bytes);
}

// Σ scalars[i]·points[offset + i] for i < n: points on the device (from
// c2p_cuda_upload), scalars in Montgomery form on the host
// (`scalars_on_device` 0), on the device and consumed (1: converted in
// place), or on the device and left as they are (2: shared), the result
// written to *out as a Jacobian point (blst_p1 / blst_p2 layout).
// With a host `density` bitmap (ceil(n / 64) words) only the scalars whose
// bit is set take part, the k-th of them meeting points[offset + k]: the
// caller checks that offset + (bits set) is within the points.
extern "C" int c2p_cuda_msm(int device, c2p_curve curve, const void* points, size_t offset, const void* scalars,
                            c2p_scalars_at scalars_on_device, const uint64_t* density, size_t n, void* out,
                            c2p_msm_timing* timing) {
    if (!curve_ok(curve) || device < 0 || device >= c2p::host::MAX_DEVICES || n >= (1ull << 31) ||
        scalars_on_device < C2P_SCALARS_ON_HOST || scalars_on_device > C2P_SCALARS_ON_DEVICE_SHARED) {
        c2p::record_error(cudaErrorInvalidValue,
                          "c2p_cuda_msm arguments (curve 1 or 2, n < 2^31, scalars_on_device 0, 1 or 2)", __FILE__,
                          __LINE__);
        return (int)cudaErrorInvalidValue;
    }
    const fr_t* s = static_cast<const fr_t*>(scalars);
    cudaError_t err;
    if (n == 0) {
        // The empty sum: the point at infinity (Z = 0), blst's all zeros.
        memset(out, 0, curve == C2P_CURVE_G1 ? sizeof(c2p::jacobian_t<c2p::fp_t>) : sizeof(c2p::jacobian_t<c2p::fp2_t>));
        if (timing) *timing = c2p_msm_timing{};
        return 0;
    }
    if (curve == C2P_CURVE_G1) {
        c2p::jacobian_t<c2p::fp_t> r;
        err = msm<c2p::fp_t>(device, static_cast<const c2p::affine_t<c2p::fp_t>*>(points) + offset, s,
                             scalars_on_device, density, n, &r, timing);
        if (err == cudaSuccess) memcpy(out, &r, sizeof r);
    } else {
        c2p::jacobian_t<c2p::fp2_t> r;
        err = msm<c2p::fp2_t>(device, static_cast<const c2p::affine_t<c2p::fp2_t>*>(points) + offset, s,
                              scalars_on_device, density, n, &r, timing);
        if (err == cudaSuccess) memcpy(out, &r, sizeof r);
    }
    return (int)err;
}

// ---- A sum carried over chunks of one MSM ----

// The buckets of one MSM whose scalars come in chunks (H's MSM over
// streamed points): each chunk adds into them, and they are reduced once
// at the end, where separate MSMs per chunk reduce theirs each time.
struct c2p_msm_sum {
    c2p::host::stream_t stream;  // first: destroyed after the sums' frees
    int device = -1;
    c2p_curve curve = C2P_CURVE_G1;
    bool failed = false;  // a chunk that failed may have added part of itself
    msm_sums<c2p::fp_t> g1;
    msm_sums<c2p::fp2_t> g2;
};

namespace {

template <class F>
cudaError_t sum_new(int device, size_t n, msm_sums<F>& sums, cudaStream_t s) {
    pippenger_plan<F> plan;
    int c = 0;
    C2P_CUDA_OK(msm_window_bits<F>(device, n, &c));
    C2P_CUDA_OK(pippenger_plan<F>::with_width(device, 0, c, &plan));
    C2P_CUDA_OK(sums.make(plan, s));
    return cudaStreamSynchronize(s);
}

}  // namespace

// An empty sum on `device` for an MSM of n scalars in all (its windows'
// width), into *out; free it with c2p_cuda_msm_sum_free.
extern "C" int c2p_cuda_msm_sum_new(int device, c2p_curve curve, size_t n, c2p_msm_sum** out) {
    *out = nullptr;
    if (!curve_ok(curve) || device < 0 || device >= c2p::host::MAX_DEVICES || n >= (1ull << 31)) {
        c2p::record_error(cudaErrorInvalidValue, "c2p_cuda_msm_sum_new arguments (curve 1 or 2, n < 2^31)",
                          __FILE__, __LINE__);
        return (int)cudaErrorInvalidValue;
    }
    c2p_msm_sum* sum = new (std::nothrow) c2p_msm_sum;
    if (sum == nullptr) {
        c2p::record_error(cudaErrorMemoryAllocation, "c2p_cuda_msm_sum_new: host memory", __FILE__, __LINE__);
        return (int)cudaErrorMemoryAllocation;
    }
    sum->device = device;
    sum->curve = curve;
    // Each failure recorded with its call (C2P_CUDA_OK), the sum deleted.
    auto make = [&]() -> cudaError_t {
        C2P_CUDA_OK(cudaSetDevice(device));
        C2P_CUDA_OK(c2p::host::keep_pool_memory(device));
        C2P_CUDA_OK(sum->stream.create());
        if (curve == C2P_CURVE_G1) return sum_new<c2p::fp_t>(device, n, sum->g1, sum->stream.s);
        return sum_new<c2p::fp2_t>(device, n, sum->g2, sum->stream.s);
    };
    const cudaError_t err = make();
    if (err != cudaSuccess) {
        delete sum;
        return (int)err;
    }
    *out = sum;
    return 0;
}

// Adds Σ scalars[i]·points[offset + i] for i < n into `sum` (the arguments
// as c2p_cuda_msm's). After a failure the sum only takes c2p_cuda_msm_sum_free.
extern "C" int c2p_cuda_msm_sum_add(c2p_msm_sum* sum, const void* points, size_t offset, const void* scalars,
                                    c2p_scalars_at scalars_on_device, const uint64_t* density, size_t n,
                                    c2p_msm_timing* timing) {
    if (sum == nullptr || sum->failed || n >= (1ull << 31) || scalars_on_device < C2P_SCALARS_ON_HOST ||
        scalars_on_device > C2P_SCALARS_ON_DEVICE_SHARED) {
        c2p::record_error(cudaErrorInvalidValue,
                          "c2p_cuda_msm_sum_add arguments (a live sum, n < 2^31, scalars_on_device 0, 1 or 2)",
                          __FILE__, __LINE__);
        return (int)cudaErrorInvalidValue;
    }
    c2p_msm_timing t{};
    auto add = [&]() -> cudaError_t {
        if (n == 0) return cudaSuccess;
        C2P_CUDA_OK(cudaSetDevice(sum->device));
        const fr_t* s = static_cast<const fr_t*>(scalars);
        if (sum->curve == C2P_CURVE_G1)
            return add_to_sums<c2p::fp_t>(sum->device, static_cast<const c2p::affine_t<c2p::fp_t>*>(points) + offset,
                                          s, scalars_on_device, density, n, sum->g1, sum->stream.s, t);
        return add_to_sums<c2p::fp2_t>(sum->device, static_cast<const c2p::affine_t<c2p::fp2_t>*>(points) + offset,
                                       s, scalars_on_device, density, n, sum->g2, sum->stream.s, t);
    };
    const cudaError_t err = add();
    sum->failed = err != cudaSuccess;
    if (timing && err == cudaSuccess) *timing = t;
    return (int)err;
}

// The sum's total into *out (a Jacobian point, blst's layout); the sum
// stays to be freed.
extern "C" int c2p_cuda_msm_sum_total(c2p_msm_sum* sum, void* out) {
    if (sum == nullptr || sum->failed) {
        c2p::record_error(cudaErrorInvalidValue, "c2p_cuda_msm_sum_total of a sum that failed", __FILE__, __LINE__);
        return (int)cudaErrorInvalidValue;
    }
    auto total = [&]() -> cudaError_t {
        C2P_CUDA_OK(cudaSetDevice(sum->device));
        if (sum->curve == C2P_CURVE_G1) {
            c2p::jacobian_t<c2p::fp_t> r;
            C2P_CUDA_OK(sum->g1.total(sum->stream.s, &r));
            memcpy(out, &r, sizeof r);
        } else {
            c2p::jacobian_t<c2p::fp2_t> r;
            C2P_CUDA_OK(sum->g2.total(sum->stream.s, &r));
            memcpy(out, &r, sizeof r);
        }
        return cudaSuccess;
    };
    const cudaError_t err = total();
    sum->failed = err != cudaSuccess;
    return (int)err;
}

// Frees the sum's device memory (in its stream's order) and the sum, on
// every path (a failure to select its device is returned after).
extern "C" int c2p_cuda_msm_sum_free(c2p_msm_sum* sum) {
    if (sum == nullptr) return 0;
    const cudaError_t err = cudaSetDevice(sum->device);
    if (err != cudaSuccess) c2p::record_error(err, "cudaSetDevice before freeing an MSM sum", __FILE__, __LINE__);
    delete sum;
    return (int)err;
}

// Device bytes of a sum for an MSM of n scalars in all and one of its
// chunks of `chunk` scalars at a time (as c2p_cuda_msm_bytes: as if none
// were 0 or 1).
extern "C" int c2p_cuda_msm_sum_bytes(int device, c2p_curve curve, size_t n, size_t chunk,
                                      c2p_scalars_at scalars_at, int density, size_t* bytes) {
    *bytes = 0;
    if (!curve_ok(curve) || device < 0 || device >= c2p::host::MAX_DEVICES) {
        c2p::record_error(cudaErrorInvalidValue, "c2p_cuda_msm_sum_bytes arguments (device, curve 1 or 2)",
                          __FILE__, __LINE__);
        return (int)cudaErrorInvalidValue;
    }
    C2P_CUDA_OK(cudaSetDevice(device));
    if (curve == C2P_CURVE_G1) return (int)msm_bytes<c2p::fp_t>(device, chunk, scalars_at, density != 0, bytes, n);
    return (int)msm_bytes<c2p::fp2_t>(device, chunk, scalars_at, density != 0, bytes, n);
}
