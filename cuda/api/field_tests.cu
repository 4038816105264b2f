// Element-wise field operations on the device, for tests that compare the
// CUDA arithmetic with blst on many random inputs.
#include <string.h>

#include "../common.cuh"
#include "../ff/bls12_381.cuh"

namespace {

template <class F>
__host__ __device__ F apply(int op, const F& x, const F& y) {
    switch (op) {
        case C2P_FIELD_MUL: return x * y;
        case C2P_FIELD_ADD: return x + y;
        case C2P_FIELD_SUB: return x - y;
        case C2P_FIELD_SQR: return x.sqr();
        case C2P_FIELD_TO_MONT: return F::to_mont(x);
        case C2P_FIELD_FROM_MONT: return x.from_mont();
        case C2P_FIELD_INV: return x.inverse();
        default: return -x;
    }
}

template <class F>
__global__ void field_op(int op, const F* a, const F* b, F* out, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = apply(op, a[i], b[i]);
}

template <class F>
cudaError_t run(int device, int op, const void* a, const void* b, void* out, size_t n) {
    C2P_CUDA_OK(cudaSetDevice(device));
    F *da = nullptr, *db = nullptr, *dout = nullptr;
    size_t bytes = n * sizeof(F);
    cudaError_t err = cudaMalloc(&da, bytes);
    if (err == cudaSuccess) err = cudaMalloc(&db, bytes);
    if (err == cudaSuccess) err = cudaMalloc(&dout, bytes);
    if (err == cudaSuccess) err = cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice);
    if (err == cudaSuccess) err = cudaMemcpy(db, b, bytes, cudaMemcpyHostToDevice);
    if (err == cudaSuccess && n) {
        field_op<F><<<(unsigned)((n + 255) / 256), 256>>>(op, da, db, dout, n);
        err = cudaGetLastError();
    }
    if (err == cudaSuccess) err = cudaMemcpy(out, dout, bytes, cudaMemcpyDeviceToHost);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dout);
    C2P_CUDA_OK(err);
    return cudaSuccess;
}

// (Elements are copied in and out: the caller's arrays need only 8-byte
// alignment, F wants 16.)
template <class F>
void on_host(int op, const void* a, const void* b, void* out, size_t n) {
    for (size_t i = 0; i < n; i++) {
        F x, y;
        memcpy(&x, static_cast<const char*>(a) + i * sizeof(F), sizeof(F));
        memcpy(&y, static_cast<const char*>(b) + i * sizeof(F), sizeof(F));
        const F r = apply(op, x, y);
        memcpy(static_cast<char*>(out) + i * sizeof(F), &r, sizeof(F));
    }
}

}  // namespace

// out[i] = a[i] op b[i] for n elements of Fr (field 0) or Fp (field 1), on
// GPU `device`, or for a negative `device` on the host through the CUDA
// arithmetic's host emulation (the PTX carry-flag instructions emulated one
// by one): checks the device code's algorithms on a machine without a GPU.
extern "C" int c2p_cuda_field_op(int device, c2p_field field, c2p_field_op op, const void* a, const void* b, void* out,
                                 size_t n) {
    if (device < 0) {
        if (field == C2P_FIELD_FR) on_host<c2p::fr_t>(op, a, b, out, n);
        else on_host<c2p::fp_t>(op, a, b, out, n);
        return 0;
    }
    cudaError_t err = field == C2P_FIELD_FR ? run<c2p::fr_t>(device, op, a, b, out, n) : run<c2p::fp_t>(device, op, a, b, out, n);
    return (int)err;
}
