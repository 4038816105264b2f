// Kernels of the GPU multi-scalar multiplication Σ s_i·P_i (Pippenger's
// bucket method with signed digits), for G1 (F = fp_t) and G2 (F = fp2_t).
//
// The host side (api/msm.cu) runs, per MSM:
//  1. classify: scalars out of Montgomery form; zeros are dropped, ones are
//     listed for a plain sum (the witness split), the rest go on;
//  2. digits: each remaining scalar as ceil(256/c) signed c-bit digits
//     d ∈ [−2^(c−1), 2^(c−1)], one (window, |d|) key and (point, sign)
//     value per non-zero digit;
//  3. a radix sort of the keys (CUB), so each bucket's points are adjacent,
//     and a run-length encoding into buckets;
//  4. bucket sums in chunks of at most L points (so one huge bucket, e.g. all
//     scalars equal, still spreads over many threads), then the chunks of
//     each bucket summed;
//  5. per window Σ_b b·B_b by running sums over segments of buckets, and the
//     windows combined by Horner's rule: Σ_w 2^(c·w)·W_w.
#pragma once

#include "../ec/xyzz.cuh"

// Bucket points are P: XYZZ for G1 (cheaper mixed additions), Jacobian for
// G2 (a quarter fewer registers per point, which matters more there).
#include "../ff/bls12_381.cuh"
#include "../ff/fp2.cuh"

namespace c2p {
namespace msm {

// A scalar's class for the witness split.
enum scalar_class : uint8_t { ZERO = 0, ONE = 1, OTHER = 2 };

// A density bitmap selects which scalars take part (bit i of word i / 64);
// the selected scalar i meets point rank(i), the number of selected
// scalars before it. word_prefix[w] is the number of bits set in words < w.
__device__ __forceinline__ uint32_t rank(const uint64_t* density, const uint32_t* word_prefix, uint32_t i) {
    const uint64_t below = density[i >> 6] & ((1ull << (i & 63)) - 1);
    return word_prefix[i >> 6] + (uint32_t)__popcll(below);
}

__global__ void word_popcounts(const uint64_t* density, size_t words, uint32_t* counts) {
    size_t w = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (w < words) counts[w] = (uint32_t)__popcll(density[w]);
}

// Scalar indices to point indices, in place.
__global__ void to_ranks(uint32_t* index, size_t n, const uint64_t* density, const uint32_t* word_prefix) {
    size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j < n) index[j] = rank(density, word_prefix, index[j]);
}

// Scalars `in` (Montgomery form) to canonical form in `out` (which may be
// `in`) and their class; with a density bitmap, scalars whose bit is clear
// count as zero and their `out` is not written (nothing reads it).
__global__ void classify(const fr_t* in, fr_t* out, size_t n, const uint64_t* density, uint8_t* is_one,
                         uint8_t* is_other) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (density && !((density[i >> 6] >> (i & 63)) & 1)) {
        is_one[i] = 0;
        is_other[i] = 0;
        return;
    }
    fr_t s = in[i].from_mont();
    out[i] = s;
    uint32_t high = 0;
#pragma unroll
    for (int k = 1; k < 8; k++) high |= s.l[k];
    bool one = high == 0 && s.l[0] == 1;
    bool zero = high == 0 && s.l[0] == 0;
    is_one[i] = one;
    is_other[i] = !one && !zero;
}

// Bits [bit, bit + c) of a canonical scalar (c ≤ 24).
__device__ __forceinline__ uint32_t window_bits(const fr_t& s, int bit, int c) {
    int limb = bit >> 5, shift = bit & 31;
    uint64_t lo = limb < 8 ? s.l[limb] : 0;
    uint64_t hi = limb + 1 < 8 ? s.l[limb + 1] : 0;
    return (uint32_t)(((hi << 32 | lo) >> shift) & ((1u << c) - 1));
}

// For the scalars listed in `which` (m of them, indices into `scalars`), the
// signed digits of windows [w0, w0 + nw): entry w_local·m + j gets key
// w_local·(B + 1) + |d| (B = 2^(c−1); key 0 of a window = digit 0, skipped
// later) and value (point index) | (d < 0) << 31. The point index is the
// scalar's, or its rank under a density bitmap.
__global__ void digits(const fr_t* scalars, const uint32_t* which, size_t m, int c, int w0, int nw,
                       const uint64_t* density, const uint32_t* word_prefix, uint32_t* keys, uint32_t* values) {
    size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= m) return;
    const uint32_t idx = which[j];
    const uint32_t point = density ? rank(density, word_prefix, idx) : idx;
    const fr_t s = scalars[idx];
    const uint32_t half = 1u << (c - 1), buckets = half + 1;
    uint32_t carry = 0;
    for (int w = 0; w < w0 + nw; w++) {
        uint32_t v = window_bits(s, w * c, c) + carry;
        // Digits above 2^(c−1) borrow from the next window.
        int32_t d = v > half ? (int32_t)v - (int32_t)(1u << c) : (int32_t)v;
        carry = v > half;
        if (w >= w0) {
            size_t at = (size_t)(w - w0) * m + j;
            keys[at] = (uint32_t)(w - w0) * buckets + (uint32_t)(d < 0 ? -d : d);
            values[at] = point | (d < 0 ? 0x80000000u : 0u);
        }
    }
}

// Chunks per run (entry `runs` is 0, for the exclusive scan's total): runs
// of digit 0 (key ≡ 0 mod B + 1) get none, the others ceil(count / L).
__global__ void count_chunks(const uint32_t* counts, const uint32_t* keys, size_t runs, uint32_t B, uint32_t L,
                             uint32_t* chunks) {
    size_t r = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (r > runs) return;
    chunks[r] = r == runs || keys[r] % (B + 1) == 0 ? 0 : (counts[r] + L - 1) / L;
}

// The chunks of run r (count[r] sorted entries from offset[r]): chunk k of
// the run covers entries [offset + k·L, offset + min((k+1)·L, count)).
struct chunk_t {
    uint32_t run;
    uint32_t len;
    uint32_t start;
};

__global__ void list_chunks(const uint32_t* counts, const uint32_t* run_offsets, const uint32_t* chunk_offsets,
                            size_t runs, uint32_t L, chunk_t* chunks) {
    size_t r = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= runs) return;
    const uint32_t first = chunk_offsets[r], n = chunk_offsets[r + 1] - first;
    const uint32_t count = counts[r];
    for (uint32_t k = 0; k < n; k++) {
        uint32_t len = count - k * L < L ? count - k * L : L;
        chunks[first + k] = chunk_t{(uint32_t)r, len, run_offsets[r] + k * L};
    }
}

// Per chunk, L minus its length (a sort key that puts the longest first)
// and its index, to list the chunks by length: a warp's lanes sum 32
// chunks side by side and run as long as the longest, and in the order of
// the runs full chunks alternate with a run's short remainder (with ~32
// points per bucket, as at 2^24 with c = 20, about half the chunks are
// remainders of 1 to 6 points). Longest first, so that the last blocks
// to run are short ones.
__global__ void chunk_lengths(const chunk_t* chunks, size_t n, uint32_t L, uint32_t* keys, uint32_t* index) {
    const size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    keys[k] = L - chunks[k].len;
    index[k] = (uint32_t)k;
}

// The sum of a chunk kept in shared memory instead of registers (for G1's
// XYZZ points; blocks of SHARED_SUM_THREADS threads). The Fp products are
// calls, and ptxas gives a call only the registers its callers do not hold
// across it: with the sum (48 registers) in registers, ~90 are live across
// each product and the out-of-line product juggles register pairs and saves
// registers to local memory (sm_90: 498 instructions, 93 of them moves, 18
// local loads and stores); with the sum in shared memory, read and written
// where the formulas use it, the product is 396 instructions with 10 moves.
// The additions are add_affine's: the same formulas and exceptional cases,
// so the same bits.
constexpr unsigned SHARED_SUM_THREADS = 128;

template <class F>
struct shared_xyzz {
    F *X, *Y, *ZZ, *ZZZ;

    __device__ void set(const xyzz_t<F>& p) const {
        *X = p.X;
        *Y = p.Y;
        *ZZ = p.ZZ;
        *ZZZ = p.ZZZ;
    }
    __device__ xyzz_t<F> get() const { return {*X, *Y, *ZZ, *ZZZ}; }

    // *this += q (affine), as xyzz_t::add_affine.
    __device__ void add_affine(const affine_t<F>& q) const {
        if (q.is_inf()) return;
        const F zz = *ZZ;
        if (zz.is_zero()) return set(xyzz_t<F>::from_affine(q));
        const F P = q.x * zz - *X, R = q.y * *ZZZ - *Y;
        if (P.is_zero()) return set(R.is_zero() ? xyzz_t<F>::dbl_affine(q) : xyzz_t<F>::inf());
        const F PP = P.sqr();
        const F PPP = P * PP;
        const F Q = *X * PP;
        *ZZ = zz * PP;
        *ZZZ = *ZZZ * PPP;
        const F YPPP = *Y * PPP;
        const F X3 = R.sqr() - PPP - (Q + Q);
        *X = X3;
        *Y = R * (Q - X3) - YPPP;
    }

    // *this += q for q in XYZZ (q's fields may live in shared memory too,
    // read where the formulas use them), as xyzz_t's operator+: the same
    // formulas and cases, so the same bits. q must not be *this.
    __device__ void add(const F& qX, const F& qY, const F& qZZ, const F& qZZZ) const {
        if (qZZ.is_zero()) return;
        if (ZZ->is_zero()) return set({qX, qY, qZZ, qZZZ});
        const F U1 = *X * qZZ, S1 = *Y * qZZZ;
        const F P = qX * *ZZ - U1, R = qY * *ZZZ - S1;
        if (P.is_zero()) return set(R.is_zero() ? get().dbl() : xyzz_t<F>::inf());
        const F PP = P.sqr();
        const F PPP = P * PP;
        const F Q = U1 * PP;
        *ZZ = *ZZ * qZZ * PP;
        *ZZZ = *ZZZ * qZZZ * PPP;
        const F X3 = R.sqr() - PPP - (Q + Q);
        *X = X3;
        *Y = R * (Q - X3) - S1 * PPP;
    }

    // *this = p + *this, as xyzz_t's operator+(p, *this) (the operands in
    // that order: swapped, the sum is the same point in other coordinates).
    __device__ void add_to(const xyzz_t<F>& p) const {
        if (p.is_inf()) return;
        if (ZZ->is_zero()) return set(p);
        const F U1 = p.X * *ZZ, S1 = p.Y * *ZZZ;
        const F P = *X * p.ZZ - U1, R = *Y * p.ZZZ - S1;
        if (P.is_zero()) return set(R.is_zero() ? p.dbl() : xyzz_t<F>::inf());
        const F PP = P.sqr();
        const F PPP = P * PP;
        const F Q = U1 * PP;
        *ZZ = p.ZZ * *ZZ * PP;
        *ZZZ = p.ZZZ * *ZZZ * PPP;
        const F X3 = R.sqr() - PPP - (Q + Q);
        *X = X3;
        *Y = R * (Q - X3) - S1 * PPP;
    }

    // *this = 2·*this, as xyzz_t::dbl.
    __device__ void dbl() const {
        if (ZZ->is_zero()) return;
        const F U = *Y + *Y, V = U.sqr(), W = U * V, S = *X * V;
        const F X2 = X->sqr();
        const F M = X2 + X2 + X2;
        const F X3 = M.sqr() - (S + S);
        const F WY = W * *Y;
        *Y = M * (S - X3) - WY;
        *X = X3;
        *ZZ = V * *ZZ;
        *ZZZ = W * *ZZZ;
    }
};

// A chunk's sum (value: point index with the sign in bit 31) as shared_xyzz
// keeps it, with every Fp product's operands and result in shared memory too: the accumulator's four coordinates and four
// scratch values per thread, named by their 32-bit shared addresses, and
// products by F::mul_shared / sqr_shared. Between products only additions,
// subtractions and zero tests hold values in registers, so no value lives
// across a call and a product costs its caller three address registers.
// 8 × SHARED_SUM_THREADS elements: 48 KiB per block.
template <class F>
struct shared_slots {
    static constexpr int SLOTS = 8;
    enum slot : int { X, Y, ZZ, ZZZ, A, B, C, D };
    uint32_t base;  // this thread's element of slot 0

    __device__ uint32_t at(slot s) const { return base + (uint32_t)s * SHARED_SUM_THREADS * (uint32_t)sizeof(F); }
    __device__ F load(slot s) const { return F::load_shared(at(s)); }
    __device__ void store(slot s, const F& v) const { v.store_shared(at(s)); }
    __device__ void mul(slot out, slot a, slot b) const { F::mul_shared(at(out), at(a), at(b)); }
    __device__ void sqr(slot out, slot a) const { F::sqr_shared(at(out), at(a)); }

    __device__ void set(const xyzz_t<F>& p) const {
        store(X, p.X);
        store(Y, p.Y);
        store(ZZ, p.ZZ);
        store(ZZZ, p.ZZZ);
    }
    __device__ xyzz_t<F> get() const { return {load(X), load(Y), load(ZZ), load(ZZZ)}; }

    // (X, Y, ZZ, ZZZ) += q (affine), as xyzz_t::add_affine: the same
    // formulas and cases, so the same bits.
    __device__ void add_affine(const affine_t<F>& q) const {
        if (q.is_inf()) return;
        if (load(ZZ).is_zero()) return set(xyzz_t<F>::from_affine(q));
        store(A, q.x);
        store(B, q.y);
        mul(C, A, ZZ);   // q.x·ZZ
        mul(D, B, ZZZ);  // q.y·ZZZ
        const F P = load(C) - load(X), R = load(D) - load(Y);
        if (P.is_zero()) return set(R.is_zero() ? xyzz_t<F>::dbl_affine({load(A), load(B)}) : xyzz_t<F>::inf());
        store(C, P);
        store(D, R);
        sqr(A, C);       // PP
        mul(B, C, A);    // PPP
        mul(C, X, A);    // Q = X·PP
        mul(ZZ, ZZ, A);  // ZZ·PP
        mul(ZZZ, ZZZ, B);
        mul(A, Y, B);    // Y·PPP
        sqr(X, D);       // R^2
        const F Q = load(C), X3 = load(X) - load(B) - (Q + Q);
        store(X, X3);
        store(C, Q - X3);
        mul(Y, D, C);  // R·(Q − X3)
        store(Y, load(Y) - load(A));
    }
};

template <class F>
__global__ void __launch_bounds__(SHARED_SUM_THREADS, 4)
    sum_chunks_shared_products(const affine_t<F>* points, const uint32_t* values, const chunk_t* chunks,
                               const uint32_t* order, size_t n_chunks, xyzz_t<F>* partial) {
    __shared__ F slots[shared_slots<F>::SLOTS][SHARED_SUM_THREADS];
    const size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n_chunks) return;
    const size_t k = order[t];
    const shared_slots<F> acc{(uint32_t)__cvta_generic_to_shared(&slots[0][threadIdx.x])};
    const chunk_t ch = chunks[k];
    acc.set(xyzz_t<F>::inf());
    for (uint32_t e = 0; e < ch.len; e++) {
        const uint32_t v = values[ch.start + e];
        affine_t<F> p = points[v & 0x7fffffff];
        if (v >> 31) p.y = -p.y;
        acc.add_affine(p);
    }
    partial[k] = acc.get();
}

// The same for G2's Jacobian points over Fp2 (jacobian_t::add_affine's
// formulas and cases), whose sum in registers (72 of them) left the plain
// kernel at 255 registers with 264 bytes of spills and its Fp product call
// at 500 instructions (99 moves, 16 local loads and stores).
template <class F>
struct shared_jacobian {
    F *X, *Y, *Z;

    __device__ void set(const jacobian_t<F>& p) const {
        *X = p.X;
        *Y = p.Y;
        *Z = p.Z;
    }
    __device__ jacobian_t<F> get() const { return {*X, *Y, *Z}; }

    // *this += q (affine), as jacobian_t::add_affine.
    __device__ void add_affine(const affine_t<F>& q) const {
        if (q.is_inf()) return;
        if (Z->is_zero()) return set(jacobian_t<F>::from_affine(q));
        const F Z1Z1 = Z->sqr();
        const F H = q.x * Z1Z1 - *X;
        F r = q.y * *Z * Z1Z1 - *Y;
        if (H.is_zero()) return set(r.is_zero() ? get().dbl() : jacobian_t<F>::inf());
        const F HH = H.sqr();
        F I = HH + HH;
        I = I + I;
        const F J = H * I;
        r = r + r;
        const F V = *X * I;
        const F YJ = *Y * J;
        const F X3 = r.sqr() - J - (V + V);
        *X = X3;
        *Y = r * (V - X3) - (YJ + YJ);
        *Z = (*Z + H).sqr() - Z1Z1 - HH;
    }
};

template <class F>
__global__ void __launch_bounds__(SHARED_SUM_THREADS)
    sum_chunks_shared_jacobian(const affine_t<F>* points, const uint32_t* values, const chunk_t* chunks,
                               const uint32_t* order, size_t n_chunks, jacobian_t<F>* partial) {
    __shared__ F sums[3][SHARED_SUM_THREADS];
    const size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n_chunks) return;
    const size_t k = order[t];
    const shared_jacobian<F> acc{&sums[0][threadIdx.x], &sums[1][threadIdx.x], &sums[2][threadIdx.x]};
    const chunk_t ch = chunks[k];
    acc.set(jacobian_t<F>::inf());
    for (uint32_t e = 0; e < ch.len; e++) {
        const uint32_t v = values[ch.start + e];
        affine_t<F> p = points[v & 0x7fffffff];
        if (v >> 31) p.y = -p.y;
        acc.add_affine(p);
    }
    partial[k] = acc.get();
}

// Bucket sums: the partial sums of each run's chunks, added to the
// window's dense bucket array at the run's key.
// A thread sums a run of at most LONG_RUN chunks; longer runs (a bucket
// holding a large share of the scalars: all scalars equal, or few distinct
// ones) are summed by a warp each in sum_long_runs. Not fewer: a warp spends 32
// lanes and a shuffle tree on one run, and with 16 the many runs of 16-19
// chunks in the top window of dense MSMs made G2 at 2^24 594 ms instead of
// 471 (H200).
constexpr uint32_t LONG_RUN = 256;

template <class F, class P>
__global__ void sum_runs(const P* partial, const uint32_t* chunk_offsets, const uint32_t* run_keys,
                         size_t runs, P* buckets) {
    size_t r = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= runs) return;
    const uint32_t first = chunk_offsets[r], end = chunk_offsets[r + 1];
    if (first == end || end - first > LONG_RUN) return;
    P acc = partial[first];
    for (uint32_t k = first + 1; k < end; k++) acc = acc + partial[k];
    // Added to the bucket, not stored: a sum carried over chunks holds the
    // earlier chunks' there (one run per bucket in a launch).
    buckets[run_keys[r]] = buckets[run_keys[r]] + acc;
}

// p of lane + offset (the lane's own p where that is beyond the warp), word
// by word.
template <class P>
__device__ __forceinline__ P shuffle_down(const P& p, unsigned offset) {
    static_assert(sizeof(P) % 4 == 0, "points are whole 32-bit words");
    P out;
    const uint32_t* from = reinterpret_cast<const uint32_t*>(&p);
    uint32_t* to = reinterpret_cast<uint32_t*>(&out);
#pragma unroll
    for (unsigned i = 0; i < sizeof(P) / 4; i++) to[i] = __shfl_down_sync(0xffffffffu, from[i], offset);
    return out;
}

// The runs of more than LONG_RUN chunks, a warp per run: each warp looks at
// 32 runs at a time (a lane each, grid-stride), and for each long one among
// them each lane sums every 32nd partial, then a shuffle tree leaves the
// run's sum in lane 0. Launched with whole warps; the loop bounds are the
// same for all lanes of a warp.
template <class F, class P>
__global__ void sum_long_runs(const P* partial, const uint32_t* chunk_offsets, const uint32_t* run_keys,
                              size_t runs, P* buckets) {
    const size_t warp = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const size_t warps = (size_t)gridDim.x * blockDim.x / 32;
    const unsigned lane = threadIdx.x % 32;
    for (size_t base = warp * 32; base < runs; base += warps * 32) {
        const size_t mine = base + lane;
        const bool is_long = mine < runs && chunk_offsets[mine + 1] - chunk_offsets[mine] > LONG_RUN;
        for (uint32_t pending = __ballot_sync(0xffffffffu, is_long); pending; pending &= pending - 1) {
            const size_t r = base + (unsigned)(__ffs((int)pending) - 1);
            const uint32_t first = chunk_offsets[r], end = chunk_offsets[r + 1];
            P acc = P::inf();
            for (uint32_t k = first + lane; k < end; k += 32) acc = acc + partial[k];
            for (unsigned offset = 16; offset > 0; offset /= 2) {
                const P other = shuffle_down(acc, offset);
                acc = acc + other;
            }
            if (lane == 0) buckets[run_keys[r]] = buckets[run_keys[r]] + acc;  // as sum_runs
        }
    }
}

template <class P>
__global__ void fill_infinity(P* p, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = P::inf();
}

// k·p for a small non-negative k, by double-and-add (k is public: the
// bucket position, not a secret).
template <class P>
__device__ P mul_small(const P& p, uint32_t k) {
    P acc = P::inf();
    for (int bit = 31; bit >= 0; bit--) {
        acc = acc.dbl();
        if ((k >> bit) & 1) acc = acc + p;
    }
    return acc;
}

// Σ_b b·B_b over the buckets b = lo..hi−1 of segment `seg` of window `w`
// (bucket array: B + 1 entries per window, entry 0 unused): running sums give
// Σ (b − lo + 1)·B_b, and (lo − 1)·Σ B_b makes up the rest.
template <class F, class P>
__global__ void reduce_segments(const P* buckets, int windows, uint32_t B, uint32_t segments,
                                P* seg_sums) {
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (size_t)windows * segments) return;
    const uint32_t w = (uint32_t)(t / segments), seg = (uint32_t)(t % segments);
    const uint32_t per = (B + segments - 1) / segments;
    const uint32_t lo = 1 + seg * per;
    const uint32_t hi = lo + per < B + 1 ? lo + per : B + 1;
    const P* bw = buckets + (size_t)w * (B + 1);
    P running = P::inf(), acc = P::inf();
    for (uint32_t b = hi; b-- > lo;) {
        running = running + bw[b];
        acc = acc + running;
    }
    if (lo < hi && lo > 1) acc = acc + mul_small(running, lo - 1);
    seg_sums[t] = acc;
}

// reduce_segments for G1 with the running sum and the accumulator in shared
// memory (blocks of SHARED_SUM_THREADS, at most 128 registers), for the
// reason shared_xyzz keeps a sum there: with both in registers the
// kernel takes 255 registers and spills 400 bytes (sm_90), so only 256
// threads fit on an SM, too few to hide the products' latency.
template <class F>
__global__ void __launch_bounds__(SHARED_SUM_THREADS, 4)
    reduce_segments_shared(const xyzz_t<F>* buckets, int windows, uint32_t B, uint32_t segments,
                           xyzz_t<F>* seg_sums) {
    __shared__ F state[8][SHARED_SUM_THREADS];
    const size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (size_t)windows * segments) return;
    const uint32_t w = (uint32_t)(t / segments), seg = (uint32_t)(t % segments);
    const uint32_t per = (B + segments - 1) / segments;
    const uint32_t lo = 1 + seg * per;
    const uint32_t hi = lo + per < B + 1 ? lo + per : B + 1;
    const xyzz_t<F>* bw = buckets + (size_t)w * (B + 1);
    const unsigned i = threadIdx.x;
    const shared_xyzz<F> running{&state[0][i], &state[1][i], &state[2][i], &state[3][i]};
    const shared_xyzz<F> acc{&state[4][i], &state[5][i], &state[6][i], &state[7][i]};
    running.set(xyzz_t<F>::inf());
    acc.set(xyzz_t<F>::inf());
    for (uint32_t b = hi; b-- > lo;) {
        // The bucket's fields are read where the formulas use them (held in
        // registers across the products, they spilled).
        const xyzz_t<F>& q = bw[b];
        running.add(q.X, q.Y, q.ZZ, q.ZZZ);
        acc.add(*running.X, *running.Y, *running.ZZ, *running.ZZZ);
    }
    seg_sums[t] = acc.get();
    if (lo < hi && lo > 1) {
        // acc + (lo − 1)·running, as mul_small and operator+ do it, in
        // shared memory too (in registers this tail spilled): acc's slot
        // takes the multiple, acc waits in seg_sums[t].
        const uint32_t k = lo - 1;
        const shared_xyzz<F>& multiple = acc;
        multiple.set(running.get());  // mul_small's inf + p at the top bit
        for (int bit = 30 - __clz(k); bit >= 0; bit--) {
            multiple.dbl();
            if ((k >> bit) & 1) multiple.add(*running.X, *running.Y, *running.ZZ, *running.ZZZ);
        }
        multiple.add_to(seg_sums[t]);
        seg_sums[t] = multiple.get();
    }
}

// Σ_w 2^(c·w)·W_w (one thread) plus `extra` (the sum of the ones), in
// Jacobian coordinates (blst's form). Horner's rule from the top window:
// (windows − 1)·c doublings in a row, each a chain of dependent products
// in one thread, so they are done in Jacobian form (dbl-2009-l: 2M + 5S)
// rather than XYZZ (6M + 3S), after one conversion per window sum.
template <class F, class P>
__global__ void combine_windows(const P* window_sums, int windows, int c, const P* extra,
                                jacobian_t<F>* out) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    jacobian_t<F> acc = window_sums[windows - 1].to_jacobian();
    for (int w = windows - 2; w >= 0; w--) {
        for (int k = 0; k < c; k++) acc = acc.dbl();
        acc = acc + window_sums[w].to_jacobian();
    }
    *out = acc + extra->to_jacobian();
}

// Sums of chunks of L points listed by index (the ones of the split), with
// the sum in shared memory (G1's XYZZ points, blocks of SHARED_SUM_THREADS
// threads): see shared_xyzz. 128 registers and no
// spills against the register kernel's 194 for G1 (sm_90).
template <class F>
__global__ void __launch_bounds__(SHARED_SUM_THREADS, 4)
    sum_indexed_shared(const affine_t<F>* points, const uint32_t* which, size_t n, uint32_t L, xyzz_t<F>* partial) {
    __shared__ F sums[4][SHARED_SUM_THREADS];
    const size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t first = k * L;
    if (first >= n) return;
    const size_t last = first + L < n ? first + L : n;
    const shared_xyzz<F> acc{&sums[0][threadIdx.x], &sums[1][threadIdx.x], &sums[2][threadIdx.x],
                             &sums[3][threadIdx.x]};
    acc.set(xyzz_t<F>::inf());
    for (size_t e = first; e < last; e++) acc.add_affine(points[which[e]]);
    partial[k] = acc.get();
}

// The same for G2's Jacobian points: see shared_jacobian.
template <class F>
__global__ void __launch_bounds__(SHARED_SUM_THREADS)
    sum_indexed_shared_jacobian(const affine_t<F>* points, const uint32_t* which, size_t n, uint32_t L,
                                jacobian_t<F>* partial) {
    __shared__ F sums[3][SHARED_SUM_THREADS];
    const size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t first = k * L;
    if (first >= n) return;
    const size_t last = first + L < n ? first + L : n;
    const shared_jacobian<F> acc{&sums[0][threadIdx.x], &sums[1][threadIdx.x], &sums[2][threadIdx.x]};
    acc.set(jacobian_t<F>::inf());
    for (size_t e = first; e < last; e++) acc.add_affine(points[which[e]]);
    partial[k] = acc.get();
}

// Sums of chunks of L points: one level of a reduction tree (chunks of
// a power-of-two L over arrays of power-of-two segments never straddle two).
template <class P>
__global__ void sum_points(const P* in, size_t n, uint32_t L, P* out) {
    size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t first = k * L;
    if (first >= n) return;
    size_t last = first + L < n ? first + L : n;
    P acc = in[first];
    for (size_t e = first + 1; e < last; e++) acc = acc + in[e];
    out[k] = acc;
}

}  // namespace msm
}  // namespace c2p
