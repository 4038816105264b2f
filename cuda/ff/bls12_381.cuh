// The two fields of BLS12-381: Fr (the scalars, 255 bits) and Fp (the base
// field, 381 bits). Constants are 32-bit limbs, little-endian.
#pragma once

#include "mont.cuh"

namespace c2p {

// Fr's M0 = 2^32 − 1 for the device's products, from constant memory: with
// the immediate, ptxas knows that each round's multiplier m = E[0]·M0 is
// −E[0] and splits every product m·MOD_k into a low and a high multiply
// (IMAD.X + IMAD.HI.U32.X) instead of one 64-bit multiply-add with carry
// (IMAD.WIDE.U32.X): sm_90, 259 instructions per Fr product against 212.
// One definition for the whole library (cuda/api/constants.cu; the build
// compiles relocatable device code): a `static` copy per translation unit
// lost its initial value in the device link for every copy but the first
// (nvlink laid five 4-byte copies in a 4-byte constant section; the others
// read zero on the H200). Not const, which would let the compiler fold it
// back into an immediate.
extern __constant__ uint32_t fr_m0_opaque;

struct fr_params {
    static constexpr int N = 8;
    __host__ __device__ static constexpr uint32_t MOD(int i) {
        constexpr uint32_t v[8] = {0x00000001, 0xffffffff, 0xfffe5bfe, 0x53bda402,
                                        0x09a1d805, 0x3339d808, 0x299d7d48, 0x73eda753};
        return v[i];
    }
    static constexpr uint32_t M0 = 0xffffffff;
    __host__ __device__ static uint32_t m0() {
#ifdef __CUDA_ARCH__
        return fr_m0_opaque;
#else
        return M0;
#endif
    }
    __host__ __device__ static constexpr uint32_t ONE(int i) {
        constexpr uint32_t v[8] = {0xfffffffe, 0x00000001, 0x00034802, 0x5884b7fa,
                                        0xecbc4ff5, 0x998c4fef, 0xacc5056f, 0x1824b159};
        return v[i];
    }
    __host__ __device__ static constexpr uint32_t RR(int i) {
        constexpr uint32_t v[8] = {0xf3f29c6d, 0xc999e990, 0x87925c23, 0x2b6cedcb,
                                       0x7254398f, 0x05d31496, 0x9f59ff11, 0x0748d9d9};
        return v[i];
    }
};

struct fp_params {
    static constexpr int N = 12;
    __host__ __device__ static constexpr uint32_t MOD(int i) {
        constexpr uint32_t v[12] = {0xffffaaab, 0xb9feffff, 0xb153ffff, 0x1eabfffe,
                                         0xf6b0f624, 0x6730d2a0, 0xf38512bf, 0x64774b84,
                                         0x434bacd7, 0x4b1ba7b6, 0x397fe69a, 0x1a0111ea};
        return v[i];
    }
    static constexpr uint32_t M0 = 0xfffcfffd;
    __host__ __device__ static constexpr uint32_t m0() { return M0; }
    __host__ __device__ static constexpr uint32_t ONE(int i) {
        constexpr uint32_t v[12] = {0x0002fffd, 0x76090000, 0xc40c0002, 0xebf4000b,
                                         0x53c758ba, 0x5f489857, 0x70525745, 0x77ce5853,
                                         0xa256ec6d, 0x5c071a97, 0xfa80e493, 0x15f65ec3};
        return v[i];
    }
    __host__ __device__ static constexpr uint32_t RR(int i) {
        constexpr uint32_t v[12] = {0x1c341746, 0xf4df1f34, 0x09d104f1, 0x0a76e6a6,
                                        0x4c95b6d5, 0x8de5476c, 0x939d83c0, 0x67eb88a9,
                                        0xb519952d, 0x9a793e85, 0x92cae3aa, 0x11988fe5};
        return v[i];
    }
};

using fr_t = mont_t<fr_params>;
using fp_t = mont_t<fp_params>;

static_assert(sizeof(fr_t) == 32, "fr_t is blst_fr");
static_assert(sizeof(fp_t) == 48, "fp_t is blst_fp");

}  // namespace c2p
