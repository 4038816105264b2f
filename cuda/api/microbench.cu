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
