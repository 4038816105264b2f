// The H step on the GPU: h = (a·b − c)/Z through six NTTs of the domain, with the same roots of unity and coset
// (generator 7) as the CPU backend, so the result is identical to the
// CPU's. As there (src/cpu/h.rs): interpolating back from the coset is
// linear and c's interpolant has degree < m, so h = icoset(A·B / z) −
// ifft(c) / z; c takes one transform instead of two, and it is the last:
// the way back from the coset runs while c uploads.
//
// Device memory per call: three domain-sized vectors (3·32·m bytes), or two
// when c goes up into a's after the way back (a vector less where memory is
// short; the way back then no longer overlaps c's upload), plus the twiddle
// table (16·m bytes, cached per device and domain size) and the coset tables
// ((4 × 2^14 + 1) × 32 bytes). Everything but the cached tables is freed
// before the call returns, on success and on failure. Host: a, b, c are
// uploaded through two 64 MiB pinned staging buffers per device (kept),
// on a stream of their own, so the transforms of a run while b uploads.
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "../common.cuh"
#include "host.cuh"
#include "../ntt/ntt.cuh"

using c2p::fr_t;

// c2p_h_consts (include/c2p_cuda.h) in the device's field type.
struct h_consts {
    fr_t omega, m_inv, g, g_2_14, g_inv, g_inv_2_14, m_inv_z_inv;
};
static_assert(sizeof(h_consts) == sizeof(c2p_h_consts), "c2p_h_consts holds seven elements of Fr");

namespace {

using dev_buf = c2p::host::dev_array<fr_t>;
using c2p::host::event_t;
using c2p::host::MAX_DEVICES;
using c2p::host::staging;
using c2p::host::staging_t;
using c2p::host::staging_buffers;
using c2p::host::staged_upload;
using c2p::host::staged_download;

// ω^j (j < m/2) per device and domain size, built on first use and kept for
// the life of the process (never freed while a kernel may read them): at
// most 16·m bytes for each domain size a device has seen.
constexpr int MAX_LOG_M = 32;
const fr_t* twiddles[MAX_DEVICES][MAX_LOG_M];
std::mutex twiddles_lock[MAX_DEVICES];  // per device: GPUs never wait on each other

cudaError_t launch_powers(fr_t* table, uint64_t n, fr_t base, fr_t start, cudaStream_t stream) {
    if (n == 0) return cudaSuccess;
    unsigned blocks = (unsigned)((n + 255) / 256);
    c2p::fill_powers<<<blocks, 256, 0, stream>>>(table, n, base, start);
    return cudaGetLastError();
}

cudaError_t twiddle_table(int device, int log_m, const fr_t& omega, cudaStream_t stream, const fr_t** out) {
    std::lock_guard<std::mutex> guard(twiddles_lock[device]);
    const fr_t*& slot = twiddles[device][log_m];
    if (!slot) {
        uint64_t half = 1ull << (log_m - 1);
        fr_t* table = nullptr;
        // Kept for the process's life (per device and size: 16·m bytes),
        // charged to the budget for good.
        C2P_CUDA_OK(c2p::host::device_alloc(reinterpret_cast<void**>(&table), half * sizeof(fr_t)));
        cudaError_t err = launch_powers(table, half, omega, fr_t::one(), stream);
        if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
        if (err != cudaSuccess) {
            (void)c2p::host::device_free(device, table, half * sizeof(fr_t));
            C2P_CUDA_OK(err);
        }
        slot = table;
    }
    *out = slot;
    return cudaSuccess;
}

// The NTT kernels' 64 KiB of dynamic shared memory must be allowed on each
// device (the attribute is per device); a failure is returned, not cached.
bool shared_limits_set[MAX_DEVICES];
std::mutex shared_limits_lock[MAX_DEVICES];

cudaError_t set_shared_limits(int device) {
    std::lock_guard<std::mutex> guard(shared_limits_lock[device]);
    if (shared_limits_set[device]) return cudaSuccess;
    int bytes = (1 << c2p::NTT_TILE_LOG) * (int)sizeof(fr_t);
    C2P_CUDA_OK(cudaFuncSetAttribute(c2p::ntt_pass<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    C2P_CUDA_OK(cudaFuncSetAttribute(c2p::ntt_pass<false>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    C2P_CUDA_OK(
        cudaFuncSetAttribute(c2p::ntt_pass<true, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    C2P_CUDA_OK(cudaFuncSetAttribute(c2p::ntt_pass<true, false, true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     bytes));
    C2P_CUDA_OK(
        cudaFuncSetAttribute(c2p::ntt_pass<true, true, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    shared_limits_set[device] = true;
    return cudaSuccess;
}

// Elements per shared-memory tile, log2: $C2P_NTT_TILE_LOG (7..11, for
// tuning), else NTT_TILE_LOG.
int tile_log() {
    const int n = (int)c2p::host::tuned(c2p::host::tuning.ntt_tile_log, c2p::NTT_TILE_LOG);
    return n >= 7 && n <= c2p::NTT_TILE_LOG ? n : c2p::NTT_TILE_LOG;
}

unsigned blocks_for(uint64_t n) { return (unsigned)((n + 255) / 256); }

// A whole transform in passes of up to NTT_MAX_STAGES stages.
// DIF: natural in, bit-reversed out. DIT: bit-reversed in, natural out.
// With scale_lo (DIF only), the output is scaled as by scale_bitrev_powers,
// in its last pass (saving four trips through device memory per H step).
// The H step's way back (DIF only): with q_b the first pass transforms
// data·q_b (see ntt_pass), and with bitrev_out the last pass writes
// the scaled output there in natural order.
cudaError_t ntt(fr_t* data, int log_m, bool dif, bool inverse, const fr_t* table, cudaStream_t stream,
                const fr_t* scale_lo = nullptr, const fr_t* scale_hi = nullptr, fr_t* bitrev_out = nullptr,
                const fr_t* q_b = nullptr, bool subtract_out = false) {
    int log_tile = log_m < tile_log() ? log_m : tile_log();
    int max_k = log_tile < c2p::NTT_MAX_STAGES ? log_tile : c2p::NTT_MAX_STAGES;
    unsigned blocks = (unsigned)(1ull << (log_m - log_tile));
    size_t shared = ((size_t)1 << log_tile) * sizeof(fr_t);
    const bool fuse = dif && scale_lo && log_m > 0;  // (no pass at 2^0)
    if ((bitrev_out && !fuse) || (q_b && !(dif && log_m > 0))) {
        c2p::record_error(cudaErrorInvalidValue, "ntt: the fused quotient and bit reversal need fused DIF passes",
                          __FILE__, __LINE__);
        return cudaErrorInvalidValue;
    }
    int done = 0;
    while (done < log_m) {
        int k = log_m - done < max_k ? log_m - done : max_k;
        // DIF: stages done..done+k, stride 2^(log_m - done - k). DIT: half-
        // sizes 2^done .. 2^(done+k-1), stride 2^done.
        const int log_s = dif ? log_m - done - k : done;
        const bool scaled = fuse && done + k == log_m, quotient_in = q_b && done == 0;
        auto pass = !dif                     ? c2p::ntt_pass<false>
                    : scaled && quotient_in  ? c2p::ntt_pass<true, true, true>
                    : scaled                 ? c2p::ntt_pass<true, true>
                    : quotient_in            ? c2p::ntt_pass<true, false, true>
                                             : c2p::ntt_pass<true>;
        pass<<<blocks, c2p::NTT_THREADS, shared, stream>>>(data, log_m, log_tile, log_s, k, table, inverse,
                                                           scaled ? scale_lo : nullptr, scaled ? scale_hi : nullptr,
                                                           scaled ? bitrev_out : nullptr, quotient_in ? q_b : nullptr,
                                                           scaled && subtract_out);
        C2P_CUDA_OK(cudaGetLastError());
        done += k;
    }
    if (scale_lo && !fuse) {
        c2p::scale_bitrev_powers<<<blocks_for(1ull << log_m), 256, 0, stream>>>(data, log_m, scale_lo, scale_hi);
        C2P_CUDA_OK(cudaGetLastError());
    }
    return cudaSuccess;
}

// Coefficients of `v` (natural-order evaluations on the domain) shifted to
// evaluations on the coset g·⟨ω⟩, in natural order.
// g_lo holds m^-1·g^i, so the shift also completes the inverse transform.
cudaError_t to_coset(fr_t* v, int log_m, const fr_t* table, const fr_t* g_lo, const fr_t* g_hi,
                     cudaStream_t stream) {
    C2P_CUDA_OK(ntt(v, log_m, true, true, table, stream, g_lo, g_hi));
    return ntt(v, log_m, false, false, table, stream);
}

using c2p::host::stream_t;

// The H step. a, b, c are uploaded on one stream while the coset transforms
// of those already on the device run on another (`mode` 1 or 2), or all are
// uploaded before any transform starts (0: to time the compute on its own).
// With mode 2 and a, b, c on the host, c goes up into a's buffer once the
// way back has left it. With `in_pieces`, a, b, c on the host go up piece
// by piece, taking turns with other uploads (an MSM's points beside this
// step), instead of holding the staging buffers throughout.
cudaError_t quotient(int device, int log_m, const fr_t* a, const fr_t* b, const fr_t* c, size_t abc_size,
                     fr_t* const* abc_device, const h_consts& k, int mode, bool in_pieces, fr_t* h_out,
                     fr_t** h_device, size_t* unreduced, c2p_h_timing* timing) {
    // a, b, c already on the device are this call's from here on, on every
    // path: freed at the end, or b's buffer handed out as h.
    dev_buf d_a, d_b, d_c;
    if (abc_device) {
        d_a.adopt(abc_device[0], device);
        d_b.adopt(abc_device[1], device);
        d_c.adopt(abc_device[2], device);
    }
    // The coset tables (2 × 2^14 powers) cover exponents below 2^28.
    // (|| short-circuits: the shift only runs with log_m in range.)
    if (device < 0 || device >= MAX_DEVICES || log_m < 1 || log_m > 28 || abc_size > (1ull << log_m) || mode < 0 ||
        mode > 2) {
        c2p::record_error(cudaErrorInvalidValue,
                          "c2p_cuda_quotient arguments (device, log_m <= 28, abc_size <= 2^log_m, overlap 0, 1 or 2)",
                          __FILE__, __LINE__);
        // The arrays are freed on their own device (d_a.. on return).
        if (abc_device && device >= 0 && device < MAX_DEVICES) cudaSetDevice(device);
        return cudaErrorInvalidValue;
    }
    const uint64_t m = 1ull << log_m;
    C2P_CUDA_OK(cudaSetDevice(device));
    C2P_CUDA_OK(set_shared_limits(device));
    stream_t upload, compute;
    C2P_CUDA_OK(upload.create());
    C2P_CUDA_OK(compute.create());
    const fr_t* table = nullptr;
    C2P_CUDA_OK(twiddle_table(device, log_m, k.omega, compute.s, &table));

    dev_buf coset;
    const bool overlap = mode != 0, in_two = mode == 2 && !abc_device;
    if (!abc_device) {
        C2P_CUDA_OK(d_a.alloc(m));
        C2P_CUDA_OK(d_b.alloc(m));
        if (!in_two) C2P_CUDA_OK(d_c.alloc(m));
    }
    fr_t* c_dev = in_two ? d_a.ptr : d_c.ptr;
    C2P_CUDA_OK(coset.alloc((4u << 14) + 1));
    fr_t* g_lo = coset.ptr;
    fr_t* g_hi = g_lo + (1 << 14);
    fr_t* ginv_lo = g_hi + (1 << 14);
    fr_t* ginv_hi = ginv_lo + (1 << 14);
    fr_t* cz = ginv_hi + (1 << 14);  // 1/(m·z): c's scaling, a constant
    // The constant factors ride in the low tables: m^-1 for the inverse
    // transforms, and 1/Z on the coset for the way back, so each shift costs
    // two products per element and the pointwise step one.
    C2P_CUDA_OK(launch_powers(g_lo, 1 << 14, k.g, k.m_inv, compute.s));
    C2P_CUDA_OK(launch_powers(g_hi, 1 << 14, k.g_2_14, fr_t::one(), compute.s));
    C2P_CUDA_OK(launch_powers(ginv_lo, 1 << 14, k.g_inv, k.m_inv_z_inv, compute.s));
    C2P_CUDA_OK(launch_powers(ginv_hi, 1 << 14, k.g_inv_2_14, fr_t::one(), compute.s));
    C2P_CUDA_OK(launch_powers(cz, 1, fr_t::one(), k.m_inv_z_inv, compute.s));
    // a·b on the coset, then back: inverse transform, unshift and divide by
    // Z (in ginv_lo), natural order, into b's buffer. The product is the
    // transform's first pass's load and the reversal its last pass's store.
    auto way_back = [&]() -> cudaError_t {
        return ntt(d_a.ptr, log_m, true, true, table, compute.s, ginv_lo, ginv_hi, d_b.ptr, d_b.ptr);
    };
    // h −= ifft(c)/z: c's inverse transform, scaled by 1/(m·z), subtracted
    // from h in natural order by its last pass's stores.
    auto c_out_of_h = [&]() -> cudaError_t {
        return ntt(c_dev, log_m, true, true, table, compute.s, cz, nullptr, d_b.ptr, nullptr, true);
    };
    // The transforms once vector i is on the device: a's and b's to the
    // coset, the way back as soon as b's are done (while c uploads, unless
    // c goes into a's buffer after it), then c's.
    auto after_upload = [&](int i) -> cudaError_t {
        if (i < 2) C2P_CUDA_OK(to_coset(i == 0 ? d_a.ptr : d_b.ptr, log_m, table, g_lo, g_hi, compute.s));
        if (i == 1) C2P_CUDA_OK(way_back());
        if (i == 2) C2P_CUDA_OK(c_out_of_h());
        return cudaSuccess;
    };

    event_t started, uploaded[3], back, computed;
    C2P_CUDA_OK(cudaEventCreate(&started.ev));
    C2P_CUDA_OK(cudaEventCreate(&back.ev));
    for (event_t& e : uploaded) C2P_CUDA_OK(cudaEventCreate(&e.ev));
    C2P_CUDA_OK(cudaEventCreate(&computed.ev));
    C2P_CUDA_OK(cudaEventRecord(started.ev, upload.s));
    const size_t bytes = abc_size * sizeof(fr_t), pad = (m - abc_size) * sizeof(fr_t);
    fr_t* dev[3] = {d_a.ptr, d_b.ptr, c_dev};
    const fr_t* host[3] = {a, b, c};
    {
        // Uploaded ahead (zero-padded to m), a, b, c are ready at once;
        // otherwise they go up here, holding the staging buffers throughout
        // (or piece by piece).
        staging_t* st = nullptr;
        std::unique_lock<std::mutex> guard;
        if (!abc_device && !in_pieces) {
            guard = c2p::host::lock_urgent(staging[device]);
            C2P_CUDA_OK(staging_buffers(device, &st));
        }
        int slot = 0;
        for (int i = 0; i < 3; i++) {
            if (in_two && i == 2) {
                // c's upload waits for the way back to leave a's buffer;
                // piece by piece, the host waits, so that no piece holds the
                // staging buffers while the GPU gets there.
                C2P_CUDA_OK(cudaEventRecord(back.ev, compute.s));
                if (in_pieces) C2P_CUDA_OK(cudaEventSynchronize(back.ev));
                C2P_CUDA_OK(cudaStreamWaitEvent(upload.s, back.ev, 0));
            }
            size_t* check = unreduced ? &unreduced[i] : nullptr;
            if (!abc_device && in_pieces) {
                C2P_CUDA_OK(c2p::host::upload_in_pieces(device, dev[i], host[i], bytes, upload.s, check));
                if (pad) C2P_CUDA_OK(cudaMemsetAsync(dev[i] + abc_size, 0, pad, upload.s));
            } else if (!abc_device) {
                C2P_CUDA_OK(staged_upload(dev[i], host[i], bytes, *st, slot, upload.s, check));
                if (pad) C2P_CUDA_OK(cudaMemsetAsync(dev[i] + abc_size, 0, pad, upload.s));
            }
            C2P_CUDA_OK(cudaEventRecord(uploaded[i].ev, upload.s));
            if (overlap) {
                // This vector's transforms run while the next one uploads.
                C2P_CUDA_OK(cudaStreamWaitEvent(compute.s, uploaded[i].ev, 0));
                C2P_CUDA_OK(after_upload(i));
            }
        }
        // The staging buffers are free again once the last DMA is done.
        if (st) C2P_CUDA_OK(cudaEventSynchronize(st->done[slot ^ 1]));
    }
    if (!overlap) {
        C2P_CUDA_OK(cudaStreamWaitEvent(compute.s, uploaded[2].ev, 0));
        for (int i = 0; i < 3; i++) C2P_CUDA_OK(after_upload(i));
    }
    C2P_CUDA_OK(cudaEventRecord(computed.ev, compute.s));

    C2P_CUDA_OK(cudaEventSynchronize(computed.ev));
    auto download_start = std::chrono::steady_clock::now();
    if (!h_device) {
        staging_t* st = nullptr;
        std::lock_guard<std::mutex> guard(staging[device].lock);
        C2P_CUDA_OK(staging_buffers(device, &st));
        C2P_CUDA_OK(staged_download(h_out, d_b.ptr, (m - 1) * sizeof(fr_t), *st, compute.s));
    }
    if (timing) {
        C2P_CUDA_OK(cudaEventElapsedTime(&timing->upload_ms, started.ev, uploaded[2].ev));
        C2P_CUDA_OK(cudaEventElapsedTime(&timing->compute_ms, uploaded[2].ev, computed.ev));
        C2P_CUDA_OK(cudaEventElapsedTime(&timing->total_ms, started.ev, computed.ev));
        std::chrono::duration<float, std::milli> download = std::chrono::steady_clock::now() - download_start;
        timing->download_ms = download.count();
    }
    if (h_device) {
        // h stays on the device for the MSM: the caller owns the buffer
        // (handed over last, so no failure above can leak it).
        *h_device = d_b.give_up();
    }
    return cudaSuccess;
}

}  // namespace

// h (m − 1 coefficients, written to h_out, or left in device memory at
// *h_device when h_device is not NULL: m elements, the last unused, freed
// with c2p_cuda_free) of evaluation vectors a, b, c of
// abc_size entries on the domain of size 2^log_m. Returns 0 or a CUDA error
// code (message from c2p_cuda_last_error). `timing` may be NULL.
// With `overlap` 1, uploads overlap the transforms (the prover's mode);
// with 2, too, in two vectors' memory instead of three (c goes up into a's
// once the way back has left it; the upload's time then includes the way
// back); with 0, the compute is timed on its own. With `in_pieces` not 0,
// a, b, c from the host take the staging buffers piece by piece in turn
// with other uploads (a step beside an MSM over streamed points), not ahead
// of them; it does nothing with `abc_device`.
// With `abc_device` (three device arrays of 2^log_m elements from
// c2p_cuda_upload, zero past abc_size), a, b, c are already on the device
// and the host pointers are unused: the call takes the arrays over and frees
// them (or returns b's as h), whether it succeeds or fails.
// With `unreduced` (three entries, not NULL) and a, b, c on the host, their
// values are checked below r as they are copied up: unreduced[i] is the
// index of the first of vector i that is not, or SIZE_MAX. The step runs
// to the end either way (on such values h means nothing: the caller drops
// it).
extern "C" int c2p_cuda_quotient(int device, int log_m, const void* a, const void* b, const void* c,
                                 size_t abc_size, void* const* abc_device, const c2p_h_consts* consts, int overlap,
                                 int in_pieces, void* h_out, void** h_device, size_t* unreduced,
                                 c2p_h_timing* timing) {
    if (unreduced)
        for (int i = 0; i < 3; i++) unreduced[i] = c2p::host::NONE_UNREDUCED;
    // The caller's structure may be only 8-byte aligned; fr_t is 16.
    h_consts k;
    memcpy(&k, consts, sizeof k);
    cudaError_t err = quotient(device, log_m, static_cast<const fr_t*>(a), static_cast<const fr_t*>(b),
                               static_cast<const fr_t*>(c), abc_size, reinterpret_cast<fr_t* const*>(abc_device), k,
                               overlap, in_pieces != 0, static_cast<fr_t*>(h_out),
                               reinterpret_cast<fr_t**>(h_device), unreduced, timing);
    return (int)err;
}

// The device bytes an H step of 2^log_m on `device` allocates: the
// `host_vectors` domain-sized vectors a, b and c go up into from the host
// (3; 2 with c into a's, c2p_cuda_quotient's overlap 2; 0 when they were
// uploaded ahead), the coset tables, and the twiddle table when the device
// has none of that size yet (kept after).
extern "C" int c2p_cuda_h_bytes(int device, int log_m, int host_vectors, size_t* bytes) {
    *bytes = 0;
    if (device < 0 || device >= MAX_DEVICES || log_m < 1 || log_m > 28 ||
        (host_vectors != 0 && host_vectors != 2 && host_vectors != 3)) {
        c2p::record_error(cudaErrorInvalidValue,
                          "c2p_cuda_h_bytes arguments (device, log_m <= 28, host_vectors 0, 2 or 3)", __FILE__,
                          __LINE__);
        return (int)cudaErrorInvalidValue;
    }
    const size_t m = (size_t)1 << log_m;
    bool have_twiddles;
    {
        std::lock_guard<std::mutex> guard(twiddles_lock[device]);
        have_twiddles = twiddles[device][log_m] != nullptr;
    }
    *bytes = (size_t)host_vectors * m * sizeof(fr_t) + ((4u << 14) + 1) * sizeof(fr_t) +
             (have_twiddles ? 0 : m / 2 * sizeof(fr_t));
    return 0;
}

// Forward then inverse NTT of `values` (2^log_m entries, natural order) on
// the device: `forward` receives the evaluations in natural order (for
// tests against the CPU), `values` is restored. Also times `iterations`
// forward transforms of device-resident data (median in *median_ms).
extern "C" int c2p_cuda_ntt(int device, int log_m, const void* omega, const void* m_inv, void* values,
                            void* forward, int iterations, float* median_ms) {
    if (log_m < 1 || log_m >= MAX_LOG_M || device < 0 || device >= MAX_DEVICES) {
        c2p::record_error(cudaErrorInvalidValue, "c2p_cuda_ntt arguments", __FILE__, __LINE__);
        return (int)cudaErrorInvalidValue;
    }
    auto run = [&]() -> cudaError_t {
        const uint64_t m = 1ull << log_m;
        C2P_CUDA_OK(cudaSetDevice(device));
        C2P_CUDA_OK(set_shared_limits(device));
        cudaStream_t stream = nullptr;
        const fr_t* table = nullptr;
        fr_t w, inv_m;  // copied: the caller's values may be only 8-byte aligned
        memcpy(&w, omega, sizeof w);
        memcpy(&inv_m, m_inv, sizeof inv_m);
        C2P_CUDA_OK(twiddle_table(device, log_m, w, stream, &table));
        dev_buf d, tmp;
        C2P_CUDA_OK(d.alloc(m));
        C2P_CUDA_OK(tmp.alloc(m));
        C2P_CUDA_OK(cudaMemcpy(d.ptr, values, m * sizeof(fr_t), cudaMemcpyHostToDevice));
        // Forward: DIF then bit reversal to natural order.
        C2P_CUDA_OK(ntt(d.ptr, log_m, true, false, table, stream));
        c2p::bit_reverse<<<blocks_for(m), 256, 0, stream>>>(tmp.ptr, d.ptr, log_m);
        C2P_CUDA_OK(cudaGetLastError());
        C2P_CUDA_OK(cudaMemcpy(forward, tmp.ptr, m * sizeof(fr_t), cudaMemcpyDeviceToHost));
        // Inverse: DIF with ω^-1 from natural order, scale, reverse.
        C2P_CUDA_OK(ntt(tmp.ptr, log_m, true, true, table, stream));
        c2p::scale<<<blocks_for(m), 256, 0, stream>>>(tmp.ptr, m, inv_m);
        C2P_CUDA_OK(cudaGetLastError());
        c2p::bit_reverse<<<blocks_for(m), 256, 0, stream>>>(d.ptr, tmp.ptr, log_m);
        C2P_CUDA_OK(cudaGetLastError());
        C2P_CUDA_OK(cudaMemcpy(values, d.ptr, m * sizeof(fr_t), cudaMemcpyDeviceToHost));

        if (iterations > 0 && median_ms) {
            event_t start, stop;
            C2P_CUDA_OK(cudaEventCreate(&start.ev));
            C2P_CUDA_OK(cudaEventCreate(&stop.ev));
            float times[64];
            int n = iterations < 64 ? iterations : 64;
            C2P_CUDA_OK(ntt(d.ptr, log_m, true, false, table, stream));  // warm-up
            for (int i = 0; i < n; i++) {
                C2P_CUDA_OK(cudaEventRecord(start.ev, stream));
                C2P_CUDA_OK(ntt(d.ptr, log_m, true, false, table, stream));
                C2P_CUDA_OK(cudaEventRecord(stop.ev, stream));
                C2P_CUDA_OK(cudaEventSynchronize(stop.ev));
                C2P_CUDA_OK(cudaEventElapsedTime(&times[i], start.ev, stop.ev));
            }
            for (int i = 1; i < n; i++)
                for (int j = i; j > 0 && times[j] < times[j - 1]; j--) {
                    float t = times[j];
                    times[j] = times[j - 1];
                    times[j - 1] = t;
                }
            *median_ms = times[n / 2];
        }
        return cudaSuccess;
    };
    return (int)run();
}
