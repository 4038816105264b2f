// Element-wise curve operations on the device, for tests that compare the
// CUDA point arithmetic with blst.
#include "../common.cuh"
#include "../ec/jacobian.cuh"
#include "../ff/fp2.cuh"

namespace {

template <class F>
__global__ void curve_op(int op, const c2p::jacobian_t<F>* p, const void* q, c2p::jacobian_t<F>* out, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    switch (op) {
        case C2P_CURVE_DBL: out[i] = p[i].dbl(); break;
        case C2P_CURVE_ADD: out[i] = p[i] + static_cast<const c2p::jacobian_t<F>*>(q)[i]; break;
        case C2P_CURVE_ADD_AFFINE: out[i] = p[i].add_affine(static_cast<const c2p::affine_t<F>*>(q)[i]); break;
        default: out[i] = -p[i]; break;
    }
}

template <class F>
cudaError_t run(int device, int op, const void* p, const void* q, void* out, size_t n) {
    using J = c2p::jacobian_t<F>;
    C2P_CUDA_OK(cudaSetDevice(device));
    size_t pbytes = n * sizeof(J);
    size_t qbytes = op == C2P_CURVE_ADD_AFFINE ? n * sizeof(c2p::affine_t<F>) : pbytes;
    J *dp = nullptr, *dout = nullptr;
    void* dq = nullptr;
    cudaError_t err = cudaMalloc(&dp, pbytes);
    if (err == cudaSuccess) err = cudaMalloc(&dq, qbytes);
    if (err == cudaSuccess) err = cudaMalloc(&dout, pbytes);
    if (err == cudaSuccess) err = cudaMemcpy(dp, p, pbytes, cudaMemcpyHostToDevice);
    if (err == cudaSuccess) err = cudaMemcpy(dq, q, qbytes, cudaMemcpyHostToDevice);
    if (err == cudaSuccess && n) {
        curve_op<F><<<(unsigned)((n + 127) / 128), 128>>>(op, dp, dq, dout, n);
        err = cudaGetLastError();
    }
    if (err == cudaSuccess) err = cudaMemcpy(out, dout, pbytes, cudaMemcpyDeviceToHost);
    cudaFree(dp);
    cudaFree(dq);
    cudaFree(dout);
    C2P_CUDA_OK(err);
    return cudaSuccess;
}

}  // namespace

// out[i] = p[i] op q[i] on G1 (curve 1) or G2 (curve 2); p and out are
// Jacobian (blst_p1 / blst_p2 layout), q Jacobian or, for C2P_CURVE_ADD_AFFINE, affine.
extern "C" int c2p_cuda_curve_op(int device, c2p_curve curve, c2p_curve_op op, const void* p, const void* q, void* out,
                                 size_t n) {
    cudaError_t err = curve == C2P_CURVE_G1 ? run<c2p::fp_t>(device, op, p, q, out, n) : run<c2p::fp2_t>(device, op, p, q, out, n);
    return (int)err;
}
