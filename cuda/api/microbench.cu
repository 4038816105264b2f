// Kernel-level timings for tuning (c2prover bench kernels): field
// multiplication throughput, and each NTT pass on its own.
#include "../common.cuh"
#include "../ff/bls12_381.cuh"

namespace {

__global__ void mul_chain(c2p::fr_t* out, int rounds) {
    c2p::fr_t x = c2p::fr_t::one(), y = c2p::fr_t::one();
    x.l[0] ^= threadIdx.x;
    y.l[1] ^= blockIdx.x;
    for (int i = 0; i < rounds; i++) x = x * y;
    if (x.l[0] == 0x12345678) out[0] = x;  // keeps the work
}

__global__ void copy_kernel(c2p::fr_t* out, const c2p::fr_t* in, uint64_t n) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}

// Instruction rates: each probe runs CHAINS independent chains of one
// instruction per thread (or of two, alternating), so that the issue of
// dependent instructions does not limit it; the result is the lanes'
// instructions per clock per SM. They say which pipe a field product's
// instruction mix is bound by (the 64-bit multiply-add with carry, the
// integer adds beside it) and whether the FP64 pipe issues beside the
// integer multiplier (a double-precision limb product would use it).
constexpr int CHAINS = 8;

enum probe : int {
    MAD_LO,      // mad.lo.u32: IMAD
    MAD_HI,      // mad.hi.u32: IMAD.HI.U32
    MAD_WIDE,    // mad.lo.cc / madc.hi pairs: IMAD.WIDE.U32
    ADD,         // add.u32: IADD3 and IMAD.IADD (ptxas spreads adds over both pipes)
    DFMA,        // fma.rn.f64
    WIDE_DFMA,   // MAD_WIDE and DFMA alternating
    WIDE_ADD,    // MAD_WIDE and two ADDs alternating
    PROBES
};

template <int P>
__global__ void rate_probe(uint32_t* out, int rounds) {
    uint32_t x = threadIdx.x | 1, y = blockIdx.x * 2654435761u + 1;
    uint32_t lo[CHAINS], hi[CHAINS];
    double d[CHAINS];
#pragma unroll
    for (int k = 0; k < CHAINS; k++) {
        lo[k] = x + k;
        hi[k] = y ^ k;
        d[k] = 1.0 + k * 1e-3;
    }
    const double dx = 0.999999, dy = 1e-9;
#pragma unroll 4
    for (int i = 0; i < rounds; i++) {
#pragma unroll
        for (int k = 0; k < CHAINS; k++) {
            if (P == MAD_LO) asm volatile("mad.lo.u32 %0, %0, %1, %2;" : "+r"(lo[k]) : "r"(x), "r"(y));
            if (P == MAD_HI) asm volatile("mad.hi.u32 %0, %0, %1, %2;" : "+r"(lo[k]) : "r"(x), "r"(y));
            // The multiplicand comes from the accumulator, so that no
            // product can be hoisted out of the loop; the two halves in one
            // carry chain become one 64-bit multiply-add (as in the field
            // products), where mad.wide.u32 becomes a product and two adds.
            if (P == MAD_WIDE || P == WIDE_DFMA || P == WIDE_ADD)
                asm volatile("mad.lo.cc.u32 %0, %1, %2, %0; madc.hi.u32 %1, %1, %2, %1;"
                             : "+r"(lo[k]), "+r"(hi[k])
                             : "r"(y));
            // Two adds feeding each other: no sum of them folds into one.
            if (P == ADD || P == WIDE_ADD)
                asm volatile("add.u32 %0, %0, %1; add.u32 %1, %1, %0;" : "+r"(lo[k]), "+r"(hi[k]));
            if (P == DFMA || P == WIDE_DFMA) asm volatile("fma.rn.f64 %0, %0, %1, %2;" : "+d"(d[k]) : "d"(dx), "d"(dy));
        }
    }
    // A 32-bit value that may equal the constant, so that the store (and
    // with it every chain) cannot be proven dead.
    uint32_t acc = 0;
#pragma unroll
    for (int k = 0; k < CHAINS; k++) acc ^= lo[k] ^ hi[k] ^ (uint32_t)(d[k] * 1e6);
    if (acc == 0x89abcdefu) out[0] = acc;  // keeps the work
}

// Instructions each probe issues per thread and round (a pair of
// multiply-adds in one carry chain is one 64-bit instruction).
constexpr int per_round(int p) {
    return p == WIDE_DFMA || p == ADD ? 2 * CHAINS : p == WIDE_ADD ? 3 * CHAINS : CHAINS;
}

}  // namespace

namespace {

// Device memory and events freed on every path.
struct resources {
    c2p::fr_t *a = nullptr, *b = nullptr;
    cudaEvent_t e0 = nullptr, e1 = nullptr;
    ~resources() {
        if (e0) cudaEventDestroy(e0);
        if (e1) cudaEventDestroy(e1);
        if (a) cudaFree(a);
        if (b) cudaFree(b);
    }
};

// Milliseconds of `launch` (queued between two events), second of two runs.
template <class F>
cudaError_t timed(resources& r, F launch, float* ms) {
    for (int rep = 0; rep < 2; rep++) {
        C2P_CUDA_OK(cudaEventRecord(r.e0));
        launch();
        C2P_CUDA_OK(cudaGetLastError());
        C2P_CUDA_OK(cudaEventRecord(r.e1));
        C2P_CUDA_OK(cudaEventSynchronize(r.e1));
        C2P_CUDA_OK(cudaEventElapsedTime(ms, r.e0, r.e1));
    }
    return cudaSuccess;
}

}  // namespace

// results[0]: G Fr multiplications per second; results[1]: GB/s of an
// element-wise device copy of 2^log_m elements (read + write).
extern "C" int c2p_cuda_microbench(int device, int log_m, float* results) {
    auto run = [&]() -> cudaError_t {
        C2P_CUDA_OK(cudaSetDevice(device));
        resources r;
        uint64_t m = 1ull << log_m;
        C2P_CUDA_OK(cudaMalloc(&r.a, m * sizeof(c2p::fr_t)));
        C2P_CUDA_OK(cudaMalloc(&r.b, m * sizeof(c2p::fr_t)));
        C2P_CUDA_OK(cudaEventCreate(&r.e0));
        C2P_CUDA_OK(cudaEventCreate(&r.e1));
        const int blocks = 132 * 16, threads = 256, rounds = 2000;
        float ms = 0;
        C2P_CUDA_OK(timed(r, [&] { mul_chain<<<blocks, threads>>>(r.a, rounds); }, &ms));
        results[0] = (float)blocks * threads * rounds / (ms * 1e6f);
        C2P_CUDA_OK(timed(r, [&] { copy_kernel<<<(unsigned)((m + 255) / 256), 256>>>(r.b, r.a, m); }, &ms));
        results[1] = 2.0f * m * sizeof(c2p::fr_t) / (ms * 1e6f);
        return cudaSuccess;
    };
    return (int)run();
}

// rates[p] for each probe p < `count` (at most the number of probes, 7):
// lanes' instructions per clock per SM at the device's maximum SM clock.
extern "C" int c2p_cuda_instruction_rates(int device, float* rates, int count) {
    auto run = [&]() -> cudaError_t {
        if (count < 0 || count > PROBES) {
            c2p::record_error(cudaErrorInvalidValue, "c2p_cuda_instruction_rates count (0 to 7)", __FILE__,
                              __LINE__);
            return cudaErrorInvalidValue;
        }
        C2P_CUDA_OK(cudaSetDevice(device));
        resources r;
        C2P_CUDA_OK(cudaMalloc(&r.a, sizeof(c2p::fr_t)));
        C2P_CUDA_OK(cudaEventCreate(&r.e0));
        C2P_CUDA_OK(cudaEventCreate(&r.e1));
        int sms = 0, khz = 0;
        C2P_CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
        C2P_CUDA_OK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device));
        uint32_t* out = reinterpret_cast<uint32_t*>(r.a);
        const int blocks = sms * 8, threads = 256, rounds = 16384;
        using kernel = void (*)(uint32_t*, int);
        const kernel probes[PROBES] = {rate_probe<MAD_LO>, rate_probe<MAD_HI>,    rate_probe<MAD_WIDE>,
                                       rate_probe<ADD>,    rate_probe<DFMA>,      rate_probe<WIDE_DFMA>,
                                       rate_probe<WIDE_ADD>};
        for (int p = 0; p < count; p++) {
            float ms = 0;
            C2P_CUDA_OK(timed(r, [&] { probes[p]<<<blocks, threads>>>(out, rounds); }, &ms));
            const double instructions = (double)blocks * threads * rounds * per_round(p);
            rates[p] = (float)(instructions / ((double)ms * 1e-3 * sms * khz * 1e3));
        }
        return cudaSuccess;
    };
    return (int)run();
}
