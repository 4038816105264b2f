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

// PTX integer instructions with the carry flag (CC.CF). Each is its own
// volatile asm statement; the compiler keeps their order and emits no
// flag-setting code of its own between them, so chains of them carry.
namespace ptx {
#define C2P_PTX_OP3(name, op)                                                         \
    __device__ __forceinline__ uint32_t name(uint32_t a, uint32_t b, uint32_t c) {    \
        uint32_t r;                                                                   \
        asm volatile(op " %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));       \
        return r;                                                                     \
    }
#define C2P_PTX_OP2(name, op)                                                         \
    __device__ __forceinline__ uint32_t name(uint32_t a, uint32_t b) {                \
        uint32_t r;                                                                   \
        asm volatile(op " %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));                   \
        return r;                                                                     \
    }
C2P_PTX_OP3(mad_lo_cc, "mad.lo.cc.u32")
C2P_PTX_OP3(madc_lo_cc, "madc.lo.cc.u32")
C2P_PTX_OP3(mad_hi_cc, "mad.hi.cc.u32")
C2P_PTX_OP3(madc_hi_cc, "madc.hi.cc.u32")
C2P_PTX_OP2(add_cc, "add.cc.u32")
C2P_PTX_OP2(addc_cc, "addc.cc.u32")
C2P_PTX_OP2(addc, "addc.u32")
C2P_PTX_OP2(sub_cc, "sub.cc.u32")
C2P_PTX_OP2(subc_cc, "subc.cc.u32")
C2P_PTX_OP2(subc, "subc.u32")
#undef C2P_PTX_OP3
#undef C2P_PTX_OP2
}  // namespace ptx

// 16-byte aligned so that elements move as 128-bit loads and stores.
template <class P>
struct alignas(16) mont_t {
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
    __device__ static __forceinline__ mont_t reduce_once(const uint32_t* t, uint32_t top) {
        mont_t r;
        uint32_t s[N];
        s[0] = ptx::sub_cc(t[0], P::MOD(0));
#pragma unroll
        for (int i = 1; i < N; i++) s[i] = ptx::subc_cc(t[i], P::MOD(i));
        // t >= MOD exactly when the subtraction did not borrow past `top`:
        // top - borrow is then >= 0, i.e. its sign bit stays clear.
        uint32_t keep_t = ptx::subc(top, 0) >> 31;
#pragma unroll
        for (int i = 0; i < N; i++) r.l[i] = keep_t ? t[i] : s[i];
        return r;
    }

    __device__ friend mont_t operator+(const mont_t& a, const mont_t& b) {
        uint32_t t[N];
        t[0] = ptx::add_cc(a.l[0], b.l[0]);
#pragma unroll
        for (int i = 1; i < N; i++) t[i] = ptx::addc_cc(a.l[i], b.l[i]);
        return reduce_once(t, ptx::addc(0, 0));
    }

    __device__ friend mont_t operator-(const mont_t& a, const mont_t& b) {
        mont_t r;
        r.l[0] = ptx::sub_cc(a.l[0], b.l[0]);
#pragma unroll
        for (int i = 1; i < N; i++) r.l[i] = ptx::subc_cc(a.l[i], b.l[i]);
        // On borrow, add MOD back (a - b + MOD < MOD).
        uint32_t mask = ptx::subc(0, 0);
        r.l[0] = ptx::add_cc(r.l[0], P::MOD(0) & mask);
#pragma unroll
        for (int i = 1; i < N - 1; i++) r.l[i] = ptx::addc_cc(r.l[i], P::MOD(i) & mask);
        r.l[N - 1] = ptx::addc(r.l[N - 1], P::MOD(N - 1) & mask);
        return r;
    }

    __device__ mont_t operator-() const { return zero() - *this; }

    // Fr products are inlined (the NTT's inner loop); Fp products are calls,
    // which keeps the curve kernels (dozens of Fp products per point
    // addition) small enough to compile quickly for five architectures.
    // The call takes its operands by value, in registers: by reference the
    // caller had to keep every operand in local memory to take its address
    // (ptxas, sm_90: the G1 bucket kernel went from 142 registers and a
    // 768-byte stack frame to 150 registers and none).
    __device__ friend mont_t operator*(const mont_t& a, const mont_t& b) {
        if constexpr (N <= 8)
            return mul_inline(a, b);
        else
            return mul_call(a, b);
    }

    __device__ static __noinline__ mont_t mul_call(mont_t a, mont_t b) { return mul_inline(a, b); }

    // t[0..N+1] += x·y (x of N limbs, y one limb): the low halves of the
    // partial products in one carry chain, the high halves (one limb up) in
    // a second, so every step is a single multiply-add with carry.
    __device__ static __forceinline__ void mul_add_row(uint32_t* t, const uint32_t* x, uint32_t y) {
        t[0] = ptx::mad_lo_cc(x[0], y, t[0]);
#pragma unroll
        for (int j = 1; j < N; j++) t[j] = ptx::madc_lo_cc(x[j], y, t[j]);
        t[N] = ptx::addc_cc(t[N], 0);
        t[N + 1] = ptx::addc(t[N + 1], 0);
        t[1] = ptx::mad_hi_cc(x[0], y, t[1]);
#pragma unroll
        for (int j = 1; j < N; j++) t[j + 1] = ptx::madc_hi_cc(x[j], y, t[j + 1]);
        t[N + 1] = ptx::addc(t[N + 1], 0);
    }

    // Montgomery product a·b·R^-1 (CIOS, one limb of b per round): add
    // a·b_i, add the multiple m·MOD that clears the low limb, shift down.
    __device__ static __forceinline__ mont_t mul_inline(const mont_t& a, const mont_t& b) {
        uint32_t t[N + 2];
        uint32_t mod[N];
#pragma unroll
        for (int i = 0; i < N; i++) mod[i] = P::MOD(i);
#pragma unroll
        for (int i = 0; i < N + 2; i++) t[i] = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            mul_add_row(t, a.l, b.l[i]);
            mul_add_row(t, mod, t[0] * P::M0);
            // t[0] is now zero: divide by 2^32.
#pragma unroll
            for (int j = 0; j < N + 1; j++) t[j] = t[j + 1];
            t[N + 1] = 0;
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
