// Fp2 = Fp[u] / (u^2 + 1): c0 + c1·u, the field of G2's coordinates. Memory
// layout c0 then c1, as blst's blst_fp2.
#pragma once

#include "bls12_381.cuh"

namespace c2p {

struct fp2_t {
    fp_t c0, c1;

    __host__ __device__ static constexpr fp2_t zero() { return fp2_t{fp_t::zero(), fp_t::zero()}; }
    __host__ __device__ static constexpr fp2_t one() { return fp2_t{fp_t::one(), fp_t::zero()}; }

    __device__ bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
    __device__ bool operator==(const fp2_t& b) const { return c0 == b.c0 && c1 == b.c1; }

    __device__ friend fp2_t operator+(const fp2_t& a, const fp2_t& b) { return {a.c0 + b.c0, a.c1 + b.c1}; }
    __device__ friend fp2_t operator-(const fp2_t& a, const fp2_t& b) { return {a.c0 - b.c0, a.c1 - b.c1}; }
    __device__ fp2_t operator-() const { return {-c0, -c1}; }

    // Karatsuba: three Fp products.
    __device__ friend fp2_t operator*(const fp2_t& a, const fp2_t& b) {
        fp_t t0 = a.c0 * b.c0, t1 = a.c1 * b.c1;
        fp_t s = (a.c0 + a.c1) * (b.c0 + b.c1);
        return {t0 - t1, s - t0 - t1};
    }

    // (c0 + c1·u)^2 = (c0 + c1)(c0 − c1) + 2·c0·c1·u: two Fp products.
    __device__ fp2_t sqr() const {
        fp_t p = c0 * c1;
        return {(c0 + c1) * (c0 - c1), p + p};
    }

    __device__ fp2_t& operator*=(const fp2_t& b) { return *this = *this * b; }
    __device__ fp2_t& operator+=(const fp2_t& b) { return *this = *this + b; }
    __device__ fp2_t& operator-=(const fp2_t& b) { return *this = *this - b; }
};

static_assert(sizeof(fp2_t) == 96, "fp2_t is blst_fp2");

}  // namespace c2p
