// Radix-2 NTT passes over Fr in device memory.
//
// A transform of size m = 2^L is a sequence of passes; each pass performs up
// to K consecutive radix-2 stages in shared memory, so the data crosses
// device memory once per pass instead of once per stage (3 passes at 2^27).
//
// Forward transforms are decimation-in-frequency (DIF: natural order in,
// bit-reversed out) and inverse ones decimation-in-time (DIT: bit-reversed
// in, natural out), so no bit-reversal permutation is needed between them.
// Both directions take either ω or ω^-1 twiddles from one table of ω^j,
// j < m/2 (ω^-j = -ω^(m/2 - j)).
#pragma once

#include "../ff/bls12_381.cuh"

namespace c2p {

// Elements per tile: at most 2^11 Fr = 64 KiB of shared memory per block
// (smaller domains use one tile of their own size).
constexpr int NTT_TILE_LOG = 11;
constexpr int NTT_THREADS = 256;
// Stages per pass: tiles hold 2^(11-9) = 4 groups, so every load and store
// moves runs of at least 4 consecutive elements (128 bytes).
constexpr int NTT_MAX_STAGES = 9;

// A tile of Fr elements in shared memory, stored as two arrays of 16-byte
// halves: a warp reading consecutive elements then touches consecutive
// 16-byte words (no bank conflicts), where whole 32-byte elements would
// put two threads of every quarter-warp on the same banks.
struct fr_tile {
    uint4* words;
    uint32_t size;
    __device__ fr_t get(uint32_t e) const {
        fr_t v;
        uint4 lo = words[e], hi = words[size + e];
        v.l[0] = lo.x, v.l[1] = lo.y, v.l[2] = lo.z, v.l[3] = lo.w;
        v.l[4] = hi.x, v.l[5] = hi.y, v.l[6] = hi.z, v.l[7] = hi.w;
        return v;
    }
    __device__ void set(uint32_t e, const fr_t& v) const {
        words[e] = make_uint4(v.l[0], v.l[1], v.l[2], v.l[3]);
        words[size + e] = make_uint4(v.l[4], v.l[5], v.l[6], v.l[7]);
    }
};

// One butterfly of a stage: (x0, x1) with the twiddle ω_{2h}^j = ω^e,
// e = j·2^log_step, taken from the table of ω^e (e < m/2); ω^-e = −ω^(m/2−e)
// for the inverse, its sign folded into the butterfly. ω^0 = 1 costs no
// product (all of the last DIF stage, the first DIT stage).
template <bool DIF>
__device__ __forceinline__ void butterfly(fr_t& x0, fr_t& x1, uint32_t j, int log_step, const fr_t* table,
                                          uint32_t half_m, bool inverse) {
    const uint32_t e = j << log_step;
    if (j) {
        // One product per butterfly whatever the direction: the twiddle
        // and the operand are chosen first, so the product is inlined once
        // (two product sites, one per direction, made the NTT 2^27 50.5 ms
        // on the H200; one site 43.5 ms).
        const fr_t w = table[inverse ? half_m - e : e];
        if (DIF) {
            const fr_t sum = x0 + x1;
            const fr_t d = inverse ? x1 - x0 : x0 - x1;
            x1 = d * w;
            x0 = sum;
        } else {
            const fr_t y = x1 * w;
            // x0 ± ω^e·x1; with the negated twiddle the signs swap.
            const fr_t plus = x0 + y, minus = x0 - y;
            x0 = inverse ? minus : plus;
            x1 = inverse ? plus : minus;
        }
    } else {
        const fr_t sum = x0 + x1;
        x1 = x0 - x1;
        x0 = sum;
    }
}

// c·base^(bitrev(p)) for position p of a transform of 2^log_m elements,
// from the two tables of scale_bitrev_powers (below); without `hi`, the
// constant lo[0] (a scaling by a constant costs no second product).
__device__ __forceinline__ fr_t bitrev_power(uint64_t p, int log_m, const fr_t* lo, const fr_t* hi) {
    if (!hi) return lo[0];
    const uint64_t i = log_m ? (__brevll(p) >> (64 - log_m)) : 0;
    return lo[i & 0x3fff] * hi[i >> 14];
}

// One pass of `k` stages over groups of 2^k elements with stride S = 2^log_s
// inside blocks of 2^k·S elements. DIF stages run with half-sizes
// 2^(k-1)·S down to S; DIT stages with S up to 2^(k-1)·S. SCALED (a DIF
// transform's last pass): each element leaves multiplied by
// bitrev_power(its position, scale_lo, scale_hi), the work of a
// scale_bitrev_powers kernel without its trip through device memory.
//
// QUOTIENT (a DIF transform's first pass, the H step's way back from the
// coset): the pass loads data[p]·q_b[p] instead of data[p], the work of a
// pointwise product kernel without writing the product to device memory and reading it back. With
// bitrev_out (SCALED only), the pass stores position p at
// bitrev_out[bitrev(p)] instead of data[p], or with subtract_out
// subtracts it from what is there: the output leaves in natural order, the
// work of a bit-reversal kernel without its trip through
// device memory (bitrev_out must not overlap data; it may be q_b, which
// only the first pass reads: a single pass is a single block, which loads
// its whole tile before it stores).
//
// Stages run two at a time where two remain (four elements per thread in
// registers), each block held to 80 registers per thread so that three
// blocks (their 64 KiB tiles) fit on an SM: NTT 2^27 41.82 ms on the H200,
// against 43.00 with one stage per step (the same 32-bit index work) and
// 45.6 without the register cap (~100 registers, two blocks per SM).
template <bool DIF, bool SCALED = false, bool QUOTIENT = false>
__global__ void __launch_bounds__(NTT_THREADS, 3)
    ntt_pass(fr_t* data, int log_m, int log_tile, int log_s, int k, const fr_t* table, bool inverse,
             const fr_t* scale_lo = nullptr, const fr_t* scale_hi = nullptr, fr_t* bitrev_out = nullptr,
             const fr_t* q_b = nullptr, bool subtract_out = false) {
    // Positions, group numbers and twiddle exponents are below m ≤ 2^28,
    // so 32-bit arithmetic holds them (a quarter of the butterfly loop's
    // instructions were index work in 64 bits).
    extern __shared__ uint4 shared_words[];
    const uint32_t half_m = 1u << (log_m - 1);
    const uint32_t s = 1u << log_s;
    const int log_groups = log_tile - k;  // groups per tile
    const uint32_t tile_size = 1u << log_tile;
    const uint32_t first_group = blockIdx.x << log_groups;
    const fr_tile tile{shared_words, tile_size};

    // Element e of the tile: group g = first_group + (e mod groups),
    // position t = e / groups, at block(g)·2^k·S + t·S + base(g).
    auto address = [&](uint32_t e) {
        uint32_t g = first_group + (e & ((1u << log_groups) - 1));
        uint32_t t = e >> log_groups;
        uint32_t block = g >> log_s, base = g & (s - 1);
        return (block << (log_s + k)) + (t << log_s) + base;
    };
    for (uint32_t e = threadIdx.x; e < tile_size; e += blockDim.x) {
        const uint32_t p = address(e);
        if (QUOTIENT)
            tile.set(e, data[p] * q_b[p]);
        else
            tile.set(e, data[p]);
    }
    __syncthreads();

    // Two stages per step where two remain: each thread takes four
    // elements through both in registers, so an element crosses shared
    // memory and a barrier once per two stages instead of once per stage
    // (the products are the same). A last odd stage runs alone.
    const uint32_t group_mask = (1u << log_groups) - 1;
    int st = 0;
    for (; st + 2 <= k; st += 2) {
        // DIF: half-sizes hl then hl/2 (hl = 2^(k-1-st)); the four elements
        // t0 + {0, 1, 2, 3}·hl/2. DIT: half-sizes hl then 2·hl (hl = 2^st);
        // the four t0 + {0, 1, 2, 3}·hl. Global half-size = local·S.
        const int log_hl = DIF ? (k - 1 - st) : st;
        const int log_gap = DIF ? log_hl - 1 : log_hl;  // between the four
        const uint32_t gap = 1u << log_gap;
        const int log_step = log_m - 1 - (log_hl + log_s);  // of half-size hl
        for (uint32_t q = threadIdx.x; q < tile_size / 4; q += blockDim.x) {
            const uint32_t gl = q & group_mask;
            const uint32_t p = q >> log_groups;
            const uint32_t t0 = ((p >> log_gap) << (log_gap + 2)) + (p & (gap - 1));
            const uint32_t base = (first_group + gl) & (s - 1);
            // Twiddle index of t0 in both stages (t0 < gap within its block).
            const uint32_t j = base + ((p & (gap - 1)) << log_s);
            uint32_t i[4];
#pragma unroll
            for (int r = 0; r < 4; r++) i[r] = ((t0 + r * gap) << log_groups) + gl;
            fr_t x0 = tile.get(i[0]), x1 = tile.get(i[1]), x2 = tile.get(i[2]), x3 = tile.get(i[3]);
            if (DIF) {
                butterfly<DIF>(x0, x2, j, log_step, table, half_m, inverse);
                butterfly<DIF>(x1, x3, j + (gap << log_s), log_step, table, half_m, inverse);
                butterfly<DIF>(x0, x1, j, log_step + 1, table, half_m, inverse);
                butterfly<DIF>(x2, x3, j, log_step + 1, table, half_m, inverse);
            } else {
                butterfly<DIF>(x0, x1, j, log_step, table, half_m, inverse);
                butterfly<DIF>(x2, x3, j, log_step, table, half_m, inverse);
                butterfly<DIF>(x0, x2, j, log_step - 1, table, half_m, inverse);
                butterfly<DIF>(x1, x3, j + (gap << log_s), log_step - 1, table, half_m, inverse);
            }
            tile.set(i[0], x0);
            tile.set(i[1], x1);
            tile.set(i[2], x2);
            tile.set(i[3], x3);
        }
        __syncthreads();
    }
    if (st < k) {
        // Local half-size: 2^(k-1-st) for DIF, 2^st for DIT.
        const int log_hl = DIF ? (k - 1 - st) : st;
        const uint32_t hl = 1u << log_hl;
        // Global half-size h = hl·S; twiddle ω_{2h}^j = ω^(j·m/(2h)).
        const int log_step = log_m - 1 - (log_hl + log_s);
        for (uint32_t q = threadIdx.x; q < tile_size / 2; q += blockDim.x) {
            const uint32_t gl = q & group_mask;     // group within the tile
            const uint32_t p = q >> log_groups;      // butterfly within the group
            const uint32_t t0 = ((p >> log_hl) << (log_hl + 1)) + (p & (hl - 1));
            const uint32_t t1 = t0 + hl;
            const uint32_t base = (first_group + gl) & (s - 1);
            const uint32_t j = base + ((t0 & (hl - 1)) << log_s);
            const uint32_t i0 = (t0 << log_groups) + gl, i1 = (t1 << log_groups) + gl;
            fr_t x0 = tile.get(i0), x1 = tile.get(i1);
            butterfly<DIF>(x0, x1, j, log_step, table, half_m, inverse);
            tile.set(i0, x0);
            tile.set(i1, x1);
        }
        __syncthreads();
    }
    for (uint32_t e = threadIdx.x; e < tile_size; e += blockDim.x) {
        const uint32_t p = address(e);
        if (SCALED) {
            const fr_t v = tile.get(e) * bitrev_power(p, log_m, scale_lo, scale_hi);
            if (bitrev_out) {
                fr_t& out = bitrev_out[__brev(p) >> (32 - log_m)];
                out = subtract_out ? out - v : v;
            } else
                data[p] = v;
        } else {
            data[p] = tile.get(e);
        }
    }
}

// values[p] *= c · base^(bitrev(p)), with c·base^i from two tables
// (lo: c·base^i, hi: base^(i·2^14), i < 2^14): the coset shift (and a
// constant factor) of coefficients held in bit-reversed order; without
// `hi`, values[p] *= lo[0].
__global__ void scale_bitrev_powers(fr_t* values, int log_m, const fr_t* lo, const fr_t* hi) {
    uint64_t p = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >> log_m) return;
    values[p] = values[p] * bitrev_power(p, log_m, lo, hi);
}

// values[i] *= factor.
__global__ void scale(fr_t* values, uint64_t n, fr_t factor) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) values[i] = values[i] * factor;
}

// out[bitrev(p)] = in[p].
__global__ void bit_reverse(fr_t* out, const fr_t* in, int log_m) {
    uint64_t p = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >> log_m) return;
    uint64_t r = log_m ? (__brevll(p) >> (64 - log_m)) : 0;
    out[r] = in[p];
}

// table[i] = start · base^i for i < n (n a multiple of the block size):
// each thread raises to its own index by square-and-multiply.
__global__ void fill_powers(fr_t* table, uint64_t n, fr_t base, fr_t start) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    fr_t acc = start, b = base;
    for (uint64_t e = i; e; e >>= 1) {
        if (e & 1) acc *= b;
        b = b.sqr();
    }
    table[i] = acc;
}

}  // namespace c2p
