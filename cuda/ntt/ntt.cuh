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

// ω^e for e < m/2 from the table, or ω^-e when `inverse`.
__device__ __forceinline__ fr_t twiddle(const fr_t* table, uint64_t e, uint64_t half_m, bool inverse) {
    if (!inverse || e == 0) return table[e];
    return -table[half_m - e];
}

// One pass of `k` stages over groups of 2^k elements with stride S = 2^log_s
// inside blocks of 2^k·S elements. DIF stages run with half-sizes
// 2^(k-1)·S down to S; DIT stages with S up to 2^(k-1)·S.
template <bool DIF>
__global__ void ntt_pass(fr_t* data, int log_m, int log_tile, int log_s, int k, const fr_t* table,
                         bool inverse) {
    extern __shared__ fr_t tile[];
    const uint64_t m = 1ull << log_m;
    const uint64_t half_m = m >> 1;
    const uint64_t s = 1ull << log_s;
    const int log_groups = log_tile - k;  // groups per tile
    const uint32_t tile_size = 1u << log_tile;
    const uint64_t first_group = (uint64_t)blockIdx.x << log_groups;

    // Element e of the tile: group g = first_group + (e mod groups),
    // position t = e / groups, at block(g)·2^k·S + t·S + base(g).
    auto address = [&](uint32_t e) {
        uint64_t g = first_group + (e & ((1u << log_groups) - 1));
        uint64_t t = e >> log_groups;
        uint64_t block = g >> log_s, base = g & (s - 1);
        return (block << (log_s + k)) + (t << log_s) + base;
    };
    for (uint32_t e = threadIdx.x; e < tile_size; e += blockDim.x) tile[e] = data[address(e)];
    __syncthreads();

    for (int st = 0; st < k; st++) {
        // Local half-size: 2^(k-1-st) for DIF, 2^st for DIT.
        const int log_hl = DIF ? (k - 1 - st) : st;
        const uint32_t hl = 1u << log_hl;
        // Global half-size h = hl·S; twiddle ω_{2h}^j = ω^(j·m/(2h)).
        const int log_step = log_m - 1 - (log_hl + log_s);
        for (uint32_t q = threadIdx.x; q < tile_size / 2; q += blockDim.x) {
            uint32_t gl = q & ((1u << log_groups) - 1);  // group within the tile
            uint32_t p = q >> log_groups;                 // butterfly within the group
            uint32_t t0 = ((p >> log_hl) << (log_hl + 1)) + (p & (hl - 1));
            uint32_t t1 = t0 + hl;
            uint64_t base = (first_group + gl) & (s - 1);
            uint64_t j = base + ((uint64_t)(t0 & (hl - 1)) << log_s);
            fr_t w = twiddle(table, j << log_step, half_m, inverse);
            fr_t& x0 = tile[(t0 << log_groups) + gl];
            fr_t& x1 = tile[(t1 << log_groups) + gl];
            if (DIF) {
                fr_t sum = x0 + x1;
                x1 = (x0 - x1) * w;
                x0 = sum;
            } else {
                fr_t wx1 = x1 * w;
                x1 = x0 - wx1;
                x0 = x0 + wx1;
            }
        }
        __syncthreads();
    }
    for (uint32_t e = threadIdx.x; e < tile_size; e += blockDim.x) data[address(e)] = tile[e];
}

// values[p] *= scale · base^(bitrev(p)), with base^i from two tables
// (lo: base^i, hi: base^(i·2^14), i < 2^14): the coset shift of
// coefficients held in bit-reversed order.
__global__ void scale_bitrev_powers(fr_t* values, int log_m, const fr_t* lo, const fr_t* hi, fr_t scale) {
    uint64_t p = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >> log_m) return;
    uint64_t i = log_m ? (__brevll(p) >> (64 - log_m)) : 0;
    fr_t f = lo[i & 0x3fff] * hi[i >> 14];
    values[p] = values[p] * f * scale;
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

// a = (a·b − c)·z_inv pointwise.
__global__ void quotient_pointwise(fr_t* a, const fr_t* b, const fr_t* c, uint64_t n, fr_t z_inv) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    a[i] = (a[i] * b[i] - c[i]) * z_inv;
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
