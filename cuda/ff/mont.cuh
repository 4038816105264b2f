// Montgomery arithmetic modulo an odd prime of N 32-bit limbs, for BLS12-381's
// Fr (N = 8) and Fp (N = 12). Limbs are little-endian and in Montgomery form
// with R = 2^(32N): exactly the memory layout of blst's blst_fr / blst_fp,
// so host data is copied to the device unchanged.
//
// A field is `mont_t<P>` where P supplies N, MOD (the modulus), M0
// (-MOD^-1 mod 2^32), m0() (M0 as the products read it), and limb
// accessors MOD(i), ONE(i) (R mod MOD) and RR(i) (R^2 mod MOD) that fold to
// immediates in unrolled loops.
#pragma once

#include <stdint.h>

// Loops unrolled on the device; host compilers (the host emulation below)
// do not know the pragma.
#ifdef __CUDA_ARCH__
#define C2P_UNROLL _Pragma("unroll")
#else
#define C2P_UNROLL
#endif

namespace c2p {

// PTX integer instructions with the carry flag (CC.CF). Each is its own
// volatile asm statement; the compiler keeps their order and emits no
// flag-setting code of its own between them, so chains of them carry.
// Host code gets the same operations on an emulated carry flag (one per
// host thread), so the arithmetic below can be checked on a machine without
// a GPU, instruction for instruction.
namespace ptx {
#ifndef __CUDA_ARCH__
inline thread_local uint32_t host_carry = 0;
#endif
#ifdef __CUDA_ARCH__
#define C2P_PTX_OP3(name, op, host)                                                   \
    __host__ __device__ __forceinline__ uint32_t name(uint32_t a, uint32_t b, uint32_t c) { \
        uint32_t r;                                                                   \
        asm volatile(op " %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));       \
        return r;                                                                     \
    }
#define C2P_PTX_OP2(name, op, host)                                                   \
    __host__ __device__ __forceinline__ uint32_t name(uint32_t a, uint32_t b) {       \
        uint32_t r;                                                                   \
        asm volatile(op " %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));                   \
        return r;                                                                     \
    }
#else
// s: the 64-bit result; cf_out: whether it sets the flag; the value is its
// low 32 bits (sub: a borrow is bit 32 of the wrapped difference).
#define C2P_PTX_OP3(name, op, host)                                                   \
    __host__ __device__ __forceinline__ uint32_t name(uint32_t a, uint32_t b, uint32_t c) { \
        const uint64_t cf = host_carry;                                               \
        (void)cf;                                                                     \
        host                                                                          \
    }
#define C2P_PTX_OP2(name, op, host)                                                   \
    __host__ __device__ __forceinline__ uint32_t name(uint32_t a, uint32_t b) {       \
        const uint64_t cf = host_carry;                                               \
        (void)cf;                                                                     \
        host                                                                          \
    }
#endif
#define C2P_SET(expr) const uint64_t s = (expr); host_carry = (uint32_t)(s >> 32) & 1; return (uint32_t)s;
#define C2P_KEEP(expr) return (uint32_t)(expr);
#define C2P_PROD(a, b) ((uint64_t)(a) * (uint64_t)(b))
C2P_PTX_OP3(mad_lo_cc, "mad.lo.cc.u32", C2P_SET((uint64_t)(uint32_t)C2P_PROD(a, b) + c))
C2P_PTX_OP3(madc_lo_cc, "madc.lo.cc.u32", C2P_SET((uint64_t)(uint32_t)C2P_PROD(a, b) + c + cf))
C2P_PTX_OP3(mad_hi_cc, "mad.hi.cc.u32", C2P_SET((C2P_PROD(a, b) >> 32) + c))
C2P_PTX_OP3(madc_hi_cc, "madc.hi.cc.u32", C2P_SET((C2P_PROD(a, b) >> 32) + c + cf))
C2P_PTX_OP2(add_cc, "add.cc.u32", C2P_SET((uint64_t)a + b))
C2P_PTX_OP2(addc_cc, "addc.cc.u32", C2P_SET((uint64_t)a + b + cf))
C2P_PTX_OP2(addc, "addc.u32", C2P_KEEP((uint64_t)a + b + cf))
C2P_PTX_OP2(sub_cc, "sub.cc.u32", C2P_SET((uint64_t)a - b))
C2P_PTX_OP2(subc_cc, "subc.cc.u32", C2P_SET((uint64_t)a - b - cf))
C2P_PTX_OP2(subc, "subc.u32", C2P_KEEP((uint64_t)a - b - cf))
#undef C2P_PTX_OP3
#undef C2P_PTX_OP2
#undef C2P_SET
#undef C2P_KEEP

// Both halves of one 32x32-bit product added to two adjacent limbs in one
// carry chain: (hi:lo) += a*b (+ CF with madc_pair), CF out. In one asm
// statement the pair becomes a single 64-bit multiply-add with carry
// (IMAD.WIDE.U32.X on sm_70 and later) instead of two products and two
// additions. lo and hi are read-write operands ("+r"), so neither can share
// a register with a or b, which the second instruction still reads.
#ifdef __CUDA_ARCH__
__host__ __device__ __forceinline__ void mad_pair(uint32_t& lo, uint32_t& hi, uint32_t a, uint32_t b) {
    asm volatile("mad.lo.cc.u32 %0, %2, %3, %0; madc.hi.cc.u32 %1, %2, %3, %1;" : "+r"(lo), "+r"(hi) : "r"(a), "r"(b));
}
__host__ __device__ __forceinline__ void madc_pair(uint32_t& lo, uint32_t& hi, uint32_t a, uint32_t b) {
    asm volatile("madc.lo.cc.u32 %0, %2, %3, %0; madc.hi.cc.u32 %1, %2, %3, %1;" : "+r"(lo), "+r"(hi) : "r"(a), "r"(b));
}
// (hi:lo) = a*b, no flags: one 64-bit product.
__host__ __device__ __forceinline__ void mul_pair(uint32_t& lo, uint32_t& hi, uint32_t a, uint32_t b) {
    uint64_t p;
    asm("mul.wide.u32 %0, %1, %2;" : "=l"(p) : "r"(a), "r"(b));
    lo = (uint32_t)p;
    hi = (uint32_t)(p >> 32);
}
#else
__host__ __device__ __forceinline__ void mad_pair(uint32_t& lo, uint32_t& hi, uint32_t a, uint32_t b) {
    lo = mad_lo_cc(a, b, lo);
    hi = madc_hi_cc(a, b, hi);
}
__host__ __device__ __forceinline__ void madc_pair(uint32_t& lo, uint32_t& hi, uint32_t a, uint32_t b) {
    lo = madc_lo_cc(a, b, lo);
    hi = madc_hi_cc(a, b, hi);
}
__host__ __device__ __forceinline__ void mul_pair(uint32_t& lo, uint32_t& hi, uint32_t a, uint32_t b) {
    lo = (uint32_t)C2P_PROD(a, b);
    hi = (uint32_t)(C2P_PROD(a, b) >> 32);
}
#endif
#undef C2P_PROD
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

    __host__ __device__ bool is_zero() const {
        uint32_t acc = 0;
C2P_UNROLL
        for (int i = 0; i < N; i++) acc |= l[i];
        return acc == 0;
    }

    __host__ __device__ bool operator==(const mont_t& b) const {
        uint32_t acc = 0;
C2P_UNROLL
        for (int i = 0; i < N; i++) acc |= l[i] ^ b.l[i];
        return acc == 0;
    }

    // t (N limbs plus a top word) minus MOD when t >= MOD: the final step of
    // every operation, keeping results below the modulus.
    __host__ __device__ static __forceinline__ mont_t reduce_once(const uint32_t* t, uint32_t top) {
        mont_t r;
        uint32_t s[N];
        s[0] = ptx::sub_cc(t[0], P::MOD(0));
C2P_UNROLL
        for (int i = 1; i < N; i++) s[i] = ptx::subc_cc(t[i], P::MOD(i));
        // t >= MOD exactly when the subtraction did not borrow past `top`:
        // top - borrow is then >= 0, i.e. its sign bit stays clear.
        uint32_t keep_t = ptx::subc(top, 0) >> 31;
C2P_UNROLL
        for (int i = 0; i < N; i++) r.l[i] = keep_t ? t[i] : s[i];
        return r;
    }

    __host__ __device__ friend mont_t operator+(const mont_t& a, const mont_t& b) {
        uint32_t t[N];
        t[0] = ptx::add_cc(a.l[0], b.l[0]);
C2P_UNROLL
        for (int i = 1; i < N; i++) t[i] = ptx::addc_cc(a.l[i], b.l[i]);
        return reduce_once(t, ptx::addc(0, 0));
    }

    __host__ __device__ friend mont_t operator-(const mont_t& a, const mont_t& b) {
        mont_t r;
        r.l[0] = ptx::sub_cc(a.l[0], b.l[0]);
C2P_UNROLL
        for (int i = 1; i < N; i++) r.l[i] = ptx::subc_cc(a.l[i], b.l[i]);
        // On borrow, add MOD back (a - b + MOD < MOD).
        uint32_t mask = ptx::subc(0, 0);
        r.l[0] = ptx::add_cc(r.l[0], P::MOD(0) & mask);
C2P_UNROLL
        for (int i = 1; i < N - 1; i++) r.l[i] = ptx::addc_cc(r.l[i], P::MOD(i) & mask);
        r.l[N - 1] = ptx::addc(r.l[N - 1], P::MOD(N - 1) & mask);
        return r;
    }

    __host__ __device__ mont_t operator-() const { return zero() - *this; }

    // Fr products are inlined (the NTT's inner loop); Fp products are calls,
    // which keeps the curve kernels (dozens of Fp products per point
    // addition) small enough to compile quickly for five architectures.
    // The call takes its operands by value, in registers: by reference the
    // caller had to keep every operand in local memory to take its address
    // (ptxas, sm_90: the G1 bucket kernel went from 142 registers and a
    // 768-byte stack frame to 150 registers and none).
    __host__ __device__ friend mont_t operator*(const mont_t& a, const mont_t& b) {
#ifdef __CUDA_ARCH__
        if constexpr (N <= 8)
            return mul_inline(a, b);
        else
            return mul_call(a, b);
#else
        return mul_inline(a, b);
#endif
    }

    __device__ static __noinline__ mont_t mul_call(mont_t a, mont_t b) { return mul_inline(a, b); }

    // Montgomery product a·b·2^(-32N) (CIOS: per limb b_i, add a·b_i, then
    // the multiple m·MOD that clears the low limb, and shift down a limb),
    // for a, b < MOD < 2^(32N−1) with N even. The running sum T is kept as
    // two accumulators: E (limb k at position k) and O (limb k at position
    // k + 1). The products of even limbs go to E and those of odd limbs to
    // O, so each product's two halves land in two adjacent limbs of one
    // accumulator in one carry chain: one 64-bit multiply-add with carry
    // per product (IMAD.WIDE.U32.X), where separate chains of low and high
    // halves cost four instructions per product (sm_90: 1280 instructions
    // per Fp product before, 456 after; 648 and 296 for Fr).
    __host__ __device__ static __forceinline__ mont_t mul_inline(const mont_t& a, const mont_t& b) {
        static_assert(N % 2 == 0, "the even/odd split needs an even number of limbs");
        uint32_t E[N + 1], O[N + 1];
        // Round 0: T = a·b_0, nothing to add to.
C2P_UNROLL
        for (int k = 0; k < N; k += 2) ptx::mul_pair(E[k], E[k + 1], a.l[k], b.l[0]);
C2P_UNROLL
        for (int k = 1; k < N; k += 2) ptx::mul_pair(O[k - 1], O[k], a.l[k], b.l[0]);
        E[N] = 0;
        O[N] = 0;
C2P_UNROLL
        for (int i = 0; i < N; i++) {
            if (i > 0) {
                // T / 2^32 (E[0] is zero here) plus a·b_i: the new E is O
                // with E[1] added to its limb 0, whose carry belongs to
                // position 1, i.e. to the new O's chain; the new O is E two
                // limbs down, added to on the way.
                uint32_t En[N + 1], On[N + 1];
                En[0] = ptx::add_cc(O[0], E[1]);
C2P_UNROLL
                for (int j = 0; j < N - 2; j += 2) {
                    On[j] = E[j + 2];
                    On[j + 1] = E[j + 3];
                    ptx::madc_pair(On[j], On[j + 1], a.l[j + 1], b.l[i]);
                }
                On[N - 2] = E[N];
                On[N - 1] = 0;
                ptx::madc_pair(On[N - 2], On[N - 1], a.l[N - 1], b.l[i]);
                On[N] = ptx::addc(0, 0);
C2P_UNROLL
                for (int k = 1; k <= N; k++) En[k] = O[k];
                ptx::mad_pair(En[0], En[1], a.l[0], b.l[i]);
C2P_UNROLL
                for (int k = 2; k < N; k += 2) ptx::madc_pair(En[k], En[k + 1], a.l[k], b.l[i]);
                En[N] = ptx::addc(En[N], 0);
C2P_UNROLL
                for (int k = 0; k <= N; k++) {
                    E[k] = En[k];
                    O[k] = On[k];
                }
            }
            // T += m·MOD, m chosen so that position 0 becomes zero.
            const uint32_t m = E[0] * P::m0();
            ptx::mad_pair(E[0], E[1], P::MOD(0), m);
C2P_UNROLL
            for (int k = 2; k < N; k += 2) ptx::madc_pair(E[k], E[k + 1], P::MOD(k), m);
            E[N] = ptx::addc(E[N], 0);
            ptx::mad_pair(O[0], O[1], P::MOD(1), m);
C2P_UNROLL
            for (int k = 3; k < N; k += 2) ptx::madc_pair(O[k - 1], O[k], P::MOD(k), m);
            O[N] = ptx::addc(O[N], 0);
        }
        // The last shift: limb j of T / 2^32 is E[j + 1] + O[j].
        uint32_t t[N];
        t[0] = ptx::add_cc(E[1], O[0]);
C2P_UNROLL
        for (int j = 1; j < N; j++) t[j] = ptx::addc_cc(E[j + 1], O[j]);
        return reduce_once(t, ptx::addc(O[N], 0));
    }

    // a^2. On the device Fp squares are calls of sqr_inline (as products
    // are calls), Fr squares products a·a (the NTT's and H's kernels have
    // none worth a second inlined routine). With its rows in even/odd limb
    // arrays the Fp square is 464 instructions, 206 of them 64-bit
    // multiply-adds, against the product's 424 and 276 (docs/decisions.md:
    // squares by products). The host emulation takes sqr_inline too, so the
    // tests check it against blst without a GPU.
    __host__ __device__ mont_t sqr() const {
#ifdef __CUDA_ARCH__
        if constexpr (N <= 8)
            return *this * *this;
        else
            return sqr_call(*this);
#else
        return sqr_inline(*this);
#endif
    }

    __device__ static __noinline__ mont_t sqr_call(mont_t a) { return sqr_inline(a); }

#ifdef __CUDA_ARCH__
    // Elements in shared memory by 32-bit shared-window address (16-byte
    // aligned), for kernels that keep all of a point addition's values
    // there (msm/pippenger.cuh, shared_slots). The asm's memory clobber
    // keeps these in order with each other and with other memory accesses.
    __device__ static __forceinline__ mont_t load_shared(uint32_t at) {
        static_assert(N % 4 == 0, "elements move as 128-bit words");
        mont_t r;
C2P_UNROLL
        for (int i = 0; i < N; i += 4)
            asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                         : "=r"(r.l[i]), "=r"(r.l[i + 1]), "=r"(r.l[i + 2]), "=r"(r.l[i + 3])
                         : "r"(at + 4 * i)
                         : "memory");
        return r;
    }
    __device__ __forceinline__ void store_shared(uint32_t at) const {
C2P_UNROLL
        for (int i = 0; i < N; i += 4)
            asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(at + 4 * i), "r"(l[i]), "r"(l[i + 1]),
                         "r"(l[i + 2]), "r"(l[i + 3])
                         : "memory");
    }

    // [out] = [a]·[b] and [out] = [a]^2, all three in shared memory (out may
    // be a or b). A call passing three 32-bit addresses and returning
    // nothing: the caller moves no operand into the parameter registers and
    // stores none to the stack, the callee loads its operands straight into
    // the registers it computes in (by value, mul_call costs the G1 bucket
    // kernel ~35 more instructions per product in moves and stack traffic).
    __device__ static __noinline__ void mul_shared(uint32_t out, uint32_t a, uint32_t b) {
        mul_inline(load_shared(a), load_shared(b)).store_shared(out);
    }
    // The square is sqr's call between the caller's load and store: with
    // its loads and stores inside, ptxas kept 47 of its carries in
    // predicates (sm_90: 560 instructions against the call's 464).
    __device__ static __forceinline__ void sqr_shared(uint32_t out, uint32_t a) {
        load_shared(a).sqr().store_shared(out);
    }
#endif

    // Products a_i·a_j with i < j once, doubled, plus the squares a_i^2,
    // then a Montgomery reduction: N(N+1)/2 + N^2 wide products against a
    // product's 2N^2 (Fp: 222 instead of 288).
    // The square as 2N limbs T, then REDC(T). Each row i of products
    // a_i·a_j is added as two chains of 64-bit multiply-adds, j of one
    // parity each, whose (lo, hi) halves fill adjacent limbs without
    // overlap: j = i + 1, i + 3, ... into pairs from odd limbs (O), j = i + 2,
    // i + 4, ... into pairs from even limbs (E), as in redc below. Each
    // chain's carry out goes to K instead of rippling through the limbs
    // above it, added in once at the end.
    __host__ __device__ static __forceinline__ mont_t sqr_inline(const mont_t& a) {
        static_assert(N % 2 == 0, "the pairing of limbs needs an even number of limbs");
        uint32_t E[2 * N], O[2 * N], K[2 * N + 1];
C2P_UNROLL
        for (int k = 0; k < 2 * N; k++) {
            E[k] = 0;
            O[k] = 0;
        }
C2P_UNROLL
        for (int k = 0; k <= 2 * N; k++) K[k] = 0;
        // 1. Σ_{i<j} a_i·a_j·2^(32(i+j)) (= E + O + K).
C2P_UNROLL
        for (int i = 0; i < N - 1; i++) {
C2P_UNROLL
            for (int first = i + 1; first <= i + 2 && first < N; first++) {
                uint32_t* X = first == i + 1 ? O : E;
                ptx::mad_pair(X[i + first], X[i + first + 1], a.l[i], a.l[first]);
                int last = first;
C2P_UNROLL
                for (int j = first + 2; j < N; j += 2) {
                    ptx::madc_pair(X[i + j], X[i + j + 1], a.l[i], a.l[j]);
                    last = j;
                }
                K[i + last + 2] = ptx::addc(K[i + last + 2], 0);
            }
        }
        // 2. Doubled, plus Σ a_i^2·2^(64i): the whole square (< 2^(64N)).
        uint32_t T[2 * N];
        T[0] = ptx::add_cc(E[0], O[0]);
C2P_UNROLL
        for (int k = 1; k < 2 * N; k++) T[k] = ptx::addc_cc(E[k], O[k]);
        T[0] = ptx::add_cc(T[0], K[0]);
C2P_UNROLL
        for (int k = 1; k < 2 * N; k++) T[k] = ptx::addc_cc(T[k], K[k]);
        T[0] = ptx::add_cc(T[0], T[0]);
C2P_UNROLL
        for (int k = 1; k < 2 * N; k++) T[k] = ptx::addc_cc(T[k], T[k]);
        ptx::mad_pair(T[0], T[1], a.l[0], a.l[0]);
C2P_UNROLL
        for (int i = 1; i < N; i++) ptx::madc_pair(T[2 * i], T[2 * i + 1], a.l[i], a.l[i]);
        // 3. REDC.
        return redc(T);
    }

    // A sum kept in two arrays of limbs, E and O, each indexed by position
    // (limb p of the value is E[p] + O[p], plus carries kept apart): each
    // row of 64-bit multiply-adds writes adjacent limbs (p, p + 1) of
    // one parity of p per chain, E for even p, O for odd p. So a limb is
    // always the low (or always the high) half of the pairs it is in, and
    // ptxas keeps every pair in an aligned register pair without moves
    // (in one array the rows alternate: a limb is the high half of one
    // row's pair and the low half of the next row's, and each such limb
    // costs a move).

    // T·2^(-32N) mod MOD for T < MOD·2^(32N) (2N limbs): per limb i,
    // T += m·MOD·2^(32i) with m clearing limb i. Limb i's two entries and
    // the carry out of the limbs below are first added into the entry
    // that the row's even chain starts on; each chain's carry out goes to
    // K (limbs N and above, which no m reads) and is added in at the end.
    __host__ __device__ static __forceinline__ mont_t redc(const uint32_t (&T)[2 * N]) {
        uint32_t E[2 * N], O[2 * N], K[2 * N + 1];
C2P_UNROLL
        for (int p = 0; p < 2 * N; p++) {
            E[p] = T[p];
            O[p] = 0;
        }
C2P_UNROLL
        for (int p = N; p <= 2 * N; p++) K[p] = 0;
        uint32_t below = 0;  // the carry into limb i
C2P_UNROLL
        for (int i = 0; i < N; i++) {
            uint32_t* X = i % 2 == 0 ? E : O;  // pairs from limb i
            uint32_t* Y = i % 2 == 0 ? O : E;  // pairs from limb i + 1
            if (i == 1) {
                X[i] = ptx::add_cc(X[i], Y[i]);
                below = ptx::addc(0, 0);
            } else if (i > 1) {
                X[i] = ptx::add_cc(X[i], Y[i]);
                const uint32_t carry = ptx::addc(0, 0);
                X[i] = ptx::add_cc(X[i], below);
                below = ptx::addc(carry, 0);
            }
            const uint32_t m = X[i] * P::m0();
            ptx::mad_pair(X[i], X[i + 1], P::MOD(0), m);
C2P_UNROLL
            for (int k = 2; k < N; k += 2) ptx::madc_pair(X[i + k], X[i + k + 1], P::MOD(k), m);
            K[i + N] = ptx::addc(K[i + N], 0);
            ptx::mad_pair(Y[i + 1], Y[i + 2], P::MOD(1), m);
C2P_UNROLL
            for (int k = 3; k < N; k += 2) ptx::madc_pair(Y[i + k], Y[i + k + 1], P::MOD(k), m);
            K[i + N + 1] = ptx::addc(K[i + N + 1], 0);
        }
        K[N] += below;  // (each at most 2)
        // The upper half: (T + Σ m_i·MOD·2^(32i)) / 2^(32N) < 2·MOD.
        uint32_t t[N];
        t[0] = ptx::add_cc(E[N], O[N]);
C2P_UNROLL
        for (int j = 1; j < N; j++) t[j] = ptx::addc_cc(E[N + j], O[N + j]);
        uint32_t top = ptx::addc(K[2 * N], 0);
        t[0] = ptx::add_cc(t[0], K[N]);
C2P_UNROLL
        for (int j = 1; j < N; j++) t[j] = ptx::addc_cc(t[j], K[N + j]);
        return reduce_once(t, ptx::addc(top, 0));
    }

    // 1/x by Fermat: x^(MOD − 2), left to right over the exponent's bits
    // (0 for x = 0). Slow (a product per bit and one per set bit) and
    // therefore rare: batch inversions invert one element per batch.
    __host__ __device__ mont_t inverse() const {
        uint32_t e[N];
        uint32_t borrow = 2;
        for (int i = 0; i < N; i++) {
            const uint32_t m = P::MOD(i);
            e[i] = m - borrow;
            borrow = m < borrow ? 1 : 0;
        }
        mont_t acc = one();
        for (int i = N - 1; i >= 0; i--)
            for (int bit = 31; bit >= 0; bit--) {
                acc = acc.sqr();
                if ((e[i] >> bit) & 1) acc = acc * *this;
            }
        return acc;
    }

    __host__ __device__ mont_t& operator*=(const mont_t& b) { return *this = *this * b; }
    __host__ __device__ mont_t& operator+=(const mont_t& b) { return *this = *this + b; }
    __host__ __device__ mont_t& operator-=(const mont_t& b) { return *this = *this - b; }

    // Into Montgomery form from a canonical integer, and back.
    __host__ __device__ static mont_t to_mont(const mont_t& canonical) {
        mont_t rr;
C2P_UNROLL
        for (int i = 0; i < N; i++) rr.l[i] = P::RR(i);
        return canonical * rr;
    }

    __host__ __device__ mont_t from_mont() const {
        mont_t unit = zero();
        unit.l[0] = 1;
        return *this * unit;
    }
};

}  // namespace c2p
