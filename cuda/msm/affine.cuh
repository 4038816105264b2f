// Batch-affine bucket sums for G1: each bucket's points are added in pairs,
// level by level, in affine coordinates, where an addition costs one
// inversion and 3 products (λ = (y2 − y1)/(x2 − x1), x3 = λ² − x1 − x2,
// y3 = λ·(x1 − x3) − y1); the inversions of a level are shared by
// Montgomery's trick (3 products per element and one inversion per level),
// so an addition costs about 6 products instead of the 10 of an XYZZ mixed
// addition.
//
// A level takes runs (a bucket's points, contiguous) of counts c_r and
// produces runs of ceil(c_r / 2): element i of run r is the sum of the
// run's elements 2i and 2i + 1, or element 2i alone when it is the last of
// an odd count. Level 0 reads the sorted entries (point index, sign in bit
// 31) through the resident points; each later level reads the one before.
// After ceil(log2(largest run)) levels every run holds its bucket's sum.
//
// The kernels of a level:
//  1. pair_prefix: per element its operands' place and the slope's
//     denominator, multiplied into a running product over the thread's
//     PAIRS_PER_THREAD elements (prefix kept, the thread's total out);
//  2. the totals inverted by the same trick, recursively (batch_inverse);
//  3. pair_finish: back over the thread's elements, each denominator's
//     inverse from the total's inverse and the prefix, and the sum.
#pragma once

#include "../ec/xyzz.cuh"
#include "../ff/bls12_381.cuh"

namespace c2p {
namespace msm {
namespace affine {

using point = affine_t<fp_t>;

constexpr uint32_t PAIRS_PER_THREAD = 8;
constexpr uint32_t INVERSES_PER_THREAD = 32;

// Where a level's operands are: level 0 reads the sorted entries through the
// points (negated where the digit is), later levels the previous sums.
struct level_input {
    const point* points;
    const uint32_t* entries;  // null after level 0
    __device__ point load(uint32_t k) const {
        if (!entries) return points[k];
        const uint32_t v = entries[k];
        point p = points[v & 0x7fffffff];
        if (v >> 31) p.y = -p.y;
        return p;
    }
};

// How a + b is formed (b absent when the element is a run's odd last one).
enum pair_kind : int { KEEP_A, KEEP_B, AT_INFINITY, SLOPE };

// The kind of a + b and, for SLOPE, the slope's denominator: x_b − x_a, or
// 2·y_a when a = b (a doubling). P + (−P), and a doubling of a point with
// y = 0, give infinity (affine (0, 0)).
__device__ __forceinline__ int kind_of(const point& a, const point& b, bool paired, fp_t& den) {
    if (!paired || b.is_inf()) return KEEP_A;
    if (a.is_inf()) return KEEP_B;
    if (a.x == b.x) {
        if (!(a.y == b.y) || a.y.is_zero()) return AT_INFINITY;
        den = a.y + a.y;
        return SLOPE;
    }
    den = b.x - a.x;
    return SLOPE;
}

// a + b with `inv` = 1/den for SLOPE.
__device__ __forceinline__ point sum_of(const point& a, const point& b, int kind, const fp_t& inv) {
    if (kind == KEEP_A) return a;
    if (kind == KEEP_B) return b;
    if (kind == AT_INFINITY) return point{fp_t::zero(), fp_t::zero()};
    fp_t num;
    if (a.x == b.x) {  // doubling: λ = 3x² / 2y
        const fp_t x2 = a.x.sqr();
        num = x2 + x2 + x2;
    } else {
        num = b.y - a.y;
    }
    const fp_t lambda = num * inv;
    const fp_t x3 = lambda.sqr() - a.x - b.x;
    return point{x3, lambda * (a.x - x3) - a.y};
}

// The run holding output element j: the last r with out_offset[r] <= j
// (out_offset: runs + 1 ascending entries, the last one the total).
__device__ __forceinline__ uint32_t run_of(const uint32_t* out_offset, uint32_t runs, uint32_t j) {
    uint32_t lo = 0, hi = runs;  // out_offset[lo] <= j < out_offset[hi]
    while (hi - lo > 1) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (out_offset[mid] <= j) lo = mid;
        else hi = mid;
    }
    return lo;
}

// Level counts: level 0's from the runs (digit-0 runs are not buckets and
// count 0), later ones halved, rounding up; entry `runs` is 0 for the
// exclusive scan's total.
__global__ void first_counts(const uint32_t* counts, const uint32_t* keys, uint32_t runs, uint32_t B, uint32_t* out) {
    const size_t r = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (r > runs) return;
    out[r] = r == runs || keys[r] % (B + 1) == 0 ? 0 : counts[r];
}

__global__ void halve_counts(const uint32_t* in, uint32_t runs, uint32_t* out) {
    const size_t r = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (r > runs) return;
    out[r] = r == runs ? 0 : (in[r] + 1) / 2;
}

// Step 1 of a level (M output elements): src[j] = place of a | paired << 31,
// prefix[j] = the product of the SLOPE denominators of the thread's
// elements up to j, totals[thread] = all of them.
__global__ void pair_prefix(level_input in, const uint32_t* in_count, const uint32_t* in_offset,
                            const uint32_t* out_offset, uint32_t runs, uint32_t M, uint32_t* src, fp_t* prefix,
                            fp_t* totals) {
    const size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t first = t * PAIRS_PER_THREAD;
    if (first >= M) return;
    const uint32_t last = (uint32_t)(first + PAIRS_PER_THREAD < M ? first + PAIRS_PER_THREAD : M);
    uint32_t r = run_of(out_offset, runs, (uint32_t)first);
    fp_t acc = fp_t::one();
    for (uint32_t j = (uint32_t)first; j < last; j++) {
        while (out_offset[r + 1] <= j) r++;  // runs of count 0 have no elements
        const uint32_t i = j - out_offset[r];
        const uint32_t a_at = in_offset[r] + 2 * i;
        const bool paired = 2 * i + 1 < in_count[r];
        src[j] = a_at | (paired ? 0x80000000u : 0u);
        const point a = in.load(a_at);
        const point b = paired ? in.load(a_at + 1) : a;
        fp_t den = fp_t::one();
        if (kind_of(a, b, paired, den) == SLOPE) acc = acc * den;
        prefix[j] = acc;
    }
    totals[t] = acc;
}

// Step 3 of a level: with totals[thread] now inverted, the sums.
__global__ void pair_finish(level_input in, uint32_t M, const uint32_t* src, const fp_t* prefix,
                            const fp_t* totals, point* out) {
    const size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t first = t * PAIRS_PER_THREAD;
    if (first >= M) return;
    const uint32_t last = (uint32_t)(first + PAIRS_PER_THREAD < M ? first + PAIRS_PER_THREAD : M);
    // The inverse of the product of the denominators of elements first..j.
    fp_t inv_upto = totals[t];
    for (uint32_t j = last; j-- > (uint32_t)first;) {
        const uint32_t s = src[j];
        const uint32_t a_at = s & 0x7fffffff;
        const bool paired = s >> 31;
        const point a = in.load(a_at);
        const point b = paired ? in.load(a_at + 1) : a;
        fp_t den = fp_t::one(), inv = fp_t::one();
        const int kind = kind_of(a, b, paired, den);
        if (kind == SLOPE) {
            inv = j > first ? inv_upto * prefix[j - 1] : inv_upto;
            inv_upto = inv_upto * den;
        }
        out[j] = sum_of(a, b, kind, inv);
    }
}

// The runs' sums (count 1 after the last level) into the window's buckets.
__global__ void write_buckets(level_input in, const uint32_t* count, const uint32_t* offset,
                              const uint32_t* run_keys, uint32_t runs, xyzz_t<fp_t>* buckets) {
    const size_t r = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= runs || count[r] == 0) return;
    buckets[run_keys[r]] = xyzz_t<fp_t>::from_affine(in.load(offset[r]));
}

// Batch inversion of n non-zero values, in place: prefix products per
// thread, the totals inverted (recursively), then back over each thread's
// values.
__global__ void prefix_products(const fp_t* v, size_t n, fp_t* prefix, fp_t* totals) {
    const size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t first = t * INVERSES_PER_THREAD;
    if (first >= n) return;
    const size_t last = first + INVERSES_PER_THREAD < n ? first + INVERSES_PER_THREAD : n;
    fp_t acc = fp_t::one();
    for (size_t j = first; j < last; j++) {
        acc = acc * v[j];
        prefix[j] = acc;
    }
    totals[t] = acc;
}

__global__ void invert_from_prefix(fp_t* v, size_t n, const fp_t* prefix, const fp_t* totals) {
    const size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t first = t * INVERSES_PER_THREAD;
    if (first >= n) return;
    const size_t last = first + INVERSES_PER_THREAD < n ? first + INVERSES_PER_THREAD : n;
    fp_t inv_upto = totals[t];
    for (size_t j = last; j-- > first;) {
        const fp_t x = v[j];
        v[j] = j > first ? inv_upto * prefix[j - 1] : inv_upto;
        inv_upto = inv_upto * x;
    }
}

__global__ void invert_one(fp_t* v) {
    if (blockIdx.x == 0 && threadIdx.x == 0) *v = v->inverse();
}

}  // namespace affine
}  // namespace msm
}  // namespace c2p
