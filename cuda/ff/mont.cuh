// Montgomery arithmetic modulo an odd prime of N 32-bit limbs, for BLS12-381's
// Fr (N = 8) and Fp (N = 12). Limbs are little-endian and in Montgomery form
// with R = 2^(32N): exactly the memory layout of blst's blst_fr / blst_fp,
// so host data is copied to the device unchanged.
//
// A field is `mont_t<P>` where P supplies N, MOD (the modulus), M0
// (-MOD^-1 mod 2^32), and limb accessors MOD(i), ONE(i) (R mod MOD) and
// RR(i) (R^2 mod MOD) that fold to immediates in unrolled loops.
#pragma once

#include <stdint.h>

namespace c2p {

template <class P>
struct mont_t {
    static constexpr int N = P::N;
    uint32_t l[N];

    __host__ __device__ static constexpr mont_t zero() {
        mont_t r{};
        return r;
    }

    __host__ __device__ static constexpr mont_t one() {
        mont_t r{};
        for (int i = 0; i < N; i++) r.l[i] = P::ONE(i);
        return r;
    }

    __device__ bool is_zero() const {
        uint32_t acc = 0;
#pragma unroll
        for (int i = 0; i < N; i++) acc |= l[i];
        return acc == 0;
    }

    __device__ bool operator==(const mont_t& b) const {
        uint32_t acc = 0;
#pragma unroll
        for (int i = 0; i < N; i++) acc |= l[i] ^ b.l[i];
        return acc == 0;
    }

    // t (N limbs plus a top word) minus MOD when t >= MOD: the final step of
    // every operation, keeping results below the modulus.
    __device__ static mont_t reduce_once(const uint32_t* t, uint32_t top) {
        mont_t r;
        uint32_t s[N];
        uint64_t borrow = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            uint64_t d = (uint64_t)t[i] - P::MOD(i) - borrow;
            s[i] = (uint32_t)d;
            borrow = (d >> 32) & 1;
        }
        // t >= MOD exactly when the subtraction did not borrow past `top`.
        bool keep_t = borrow > top;
#pragma unroll
        for (int i = 0; i < N; i++) r.l[i] = keep_t ? t[i] : s[i];
        return r;
    }

    __device__ friend mont_t operator+(const mont_t& a, const mont_t& b) {
        uint32_t t[N];
        uint64_t carry = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            carry += (uint64_t)a.l[i] + b.l[i];
            t[i] = (uint32_t)carry;
            carry >>= 32;
        }
        return reduce_once(t, (uint32_t)carry);
    }

    __device__ friend mont_t operator-(const mont_t& a, const mont_t& b) {
        mont_t r;
        uint64_t borrow = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            uint64_t d = (uint64_t)a.l[i] - b.l[i] - borrow;
            r.l[i] = (uint32_t)d;
            borrow = (d >> 32) & 1;
        }
        // On borrow, add MOD back (a - b + MOD < MOD).
        uint32_t mask = 0u - (uint32_t)borrow;
        uint64_t carry = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            carry += (uint64_t)r.l[i] + (P::MOD(i) & mask);
            r.l[i] = (uint32_t)carry;
            carry >>= 32;
        }
        return r;
    }

    __device__ mont_t operator-() const { return zero() - *this; }

    // Fr products are inlined (the NTT's inner loop); Fp products are calls,
    // which keeps the curve kernels (dozens of Fp products per point
    // addition) small enough to compile quickly for five architectures.
    __device__ friend mont_t operator*(const mont_t& a, const mont_t& b) {
        if constexpr (N <= 8)
            return mul_inline(a, b);
        else
            return mul_call(a, b);
    }

    __device__ static __noinline__ mont_t mul_call(const mont_t& a, const mont_t& b) { return mul_inline(a, b); }

    // Montgomery product a·b·R^-1 (CIOS). Each step accumulates a 32x32-bit
    // product with a 64-bit carry: the compiler emits wide multiply-adds
    // with carry chains (IMAD.WIDE / IADD3.X), no branches.
    __device__ static __forceinline__ mont_t mul_inline(const mont_t& a, const mont_t& b) {
        uint32_t t[N + 2];
#pragma unroll
        for (int i = 0; i < N + 2; i++) t[i] = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            uint64_t c = 0;
#pragma unroll
            for (int j = 0; j < N; j++) {
                c += (uint64_t)a.l[j] * b.l[i] + t[j];
                t[j] = (uint32_t)c;
                c >>= 32;
            }
            c += t[N];
            t[N] = (uint32_t)c;
            t[N + 1] = (uint32_t)(c >> 32);

            uint32_t m = t[0] * P::M0;
            c = ((uint64_t)m * P::MOD(0) + t[0]) >> 32;
#pragma unroll
            for (int j = 1; j < N; j++) {
                c += (uint64_t)m * P::MOD(j) + t[j];
                t[j - 1] = (uint32_t)c;
                c >>= 32;
            }
            c += t[N];
            t[N - 1] = (uint32_t)c;
            t[N] = t[N + 1] + (uint32_t)(c >> 32);
        }
        return reduce_once(t, t[N]);
    }

    __device__ mont_t sqr() const { return *this * *this; }

    __device__ mont_t& operator*=(const mont_t& b) { return *this = *this * b; }
    __device__ mont_t& operator+=(const mont_t& b) { return *this = *this + b; }
    __device__ mont_t& operator-=(const mont_t& b) { return *this = *this - b; }

    // Into Montgomery form from a canonical integer, and back.
    __device__ static mont_t to_mont(const mont_t& canonical) {
        mont_t rr;
#pragma unroll
        for (int i = 0; i < N; i++) rr.l[i] = P::RR(i);
        return canonical * rr;
    }

    __device__ mont_t from_mont() const {
        mont_t unit = zero();
        unit.l[0] = 1;
        return *this * unit;
    }
};

}  // namespace c2p
