// a = A·w, b = B·w, c = C·w on the GPU for a circuit of a common part and
// units of one shape (src/groth16/constraints.rs): the rows of the common
// part and of one unit, unit u reading unit 0's variables moved by u units,
// then bellperson's `input · 0 = 0` row per input. One thread per row: rows
// are short (B's are one term, A's and C's a few), and a unit's variables
// sit together, so neighbouring threads read neighbouring values.
//
// Device memory: the three outputs (3·32·2^log_m bytes), handed to the
// caller (freed with c2p_cuda_free, or taken over by c2p_cuda_quotient as
// on-device a, b, c); nothing else. The rows, coefficients and values are
// the caller's device arrays, only read; their indices were checked on the
// host to stay inside the one-unit circuit (UnitConstraints::new), and the
// sizes here against each other.
#include "../common.cuh"
#include "host.cuh"

using c2p::fr_t;

namespace {

struct term_t {
    uint32_t variable;
    uint32_t coefficient;
};
static_assert(sizeof(term_t) == sizeof(c2p_term), "a term is two 32-bit words");

constexpr uint32_t INPUT = 1u << 31;
constexpr uint32_t ONE = 0, MINUS_ONE = 1;

__global__ void unit_products(const uint32_t* starts, const term_t* terms, const fr_t* coefficients,
                              c2p_unit_shape shape, const fr_t* inputs, const fr_t* aux, bool is_a, fr_t* out) {
    const uint64_t unit_rows = shape.common_constraints + shape.units * shape.unit_constraints;
    const uint64_t rows = unit_rows + shape.inputs;
    for (uint64_t k = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; k < rows;
         k += (uint64_t)gridDim.x * blockDim.x) {
        if (k >= unit_rows) {
            out[k] = is_a ? inputs[k - unit_rows] : fr_t::zero();
            continue;
        }
        uint64_t row = k, u = 0;
        if (k >= shape.common_constraints) {
            const uint64_t j = k - shape.common_constraints;
            u = j / shape.unit_constraints;
            row = shape.common_constraints + (j - u * shape.unit_constraints);
        }
        fr_t sum = fr_t::zero();
        for (uint32_t t = starts[row]; t < starts[row + 1]; t++) {
            const term_t term = terms[t];
            const uint64_t i = term.variable & ~INPUT;
            fr_t x;
            if (term.variable & INPUT)
                x = inputs[i < shape.common_inputs ? i : i + u * shape.unit_inputs];
            else
                x = aux[i < shape.common_aux ? i : i + u * shape.unit_aux];
            if (term.coefficient == ONE)
                sum += x;
            else if (term.coefficient == MINUS_ONE)
                sum = sum - x;
            else
                sum += x * coefficients[term.coefficient];
        }
        out[k] = sum;
    }
}

}  // namespace

// a, b, c of the values `inputs` and `aux` (device arrays of the whole
// circuit's inputs and aux values) over the rows `rows` (device arrays),
// into three new device arrays of 2^log_m elements, zero past the rows,
// at abc_out[0..3] (freed with c2p_cuda_free, or given to
// c2p_cuda_quotient as on-device a, b, c). On failure nothing is left
// allocated and abc_out holds NULLs.
extern "C" int c2p_cuda_unit_products(int device, int log_m, const c2p_unit_rows* rows, const void* inputs,
                                      const void* aux, void** abc_out) {
    if (abc_out != nullptr)
        for (int i = 0; i < 3; i++) abc_out[i] = nullptr;
    if (rows == nullptr || inputs == nullptr || aux == nullptr || abc_out == nullptr ||
        rows->coefficients == nullptr) {
        c2p::record_error(cudaErrorInvalidValue, "c2p_cuda_unit_products: a null pointer", __FILE__, __LINE__);
        return (int)cudaErrorInvalidValue;
    }
    for (int i = 0; i < 3; i++) {
        if (rows->starts[i] == nullptr || rows->terms[i] == nullptr) {
            c2p::record_error(cudaErrorInvalidValue, "c2p_cuda_unit_products: rows without starts or terms",
                              __FILE__, __LINE__);
            return (int)cudaErrorInvalidValue;
        }
    }
    const c2p_unit_shape s = rows->shape;
    const uint64_t m = log_m >= 0 && log_m < 40 ? uint64_t(1) << log_m : 0;
    const uint64_t abc = s.common_constraints + s.units * s.unit_constraints + s.inputs;
    if (device < 0 || device >= c2p::host::MAX_DEVICES || m == 0 || abc > m || s.unit_constraints == 0 ||
        s.inputs != s.common_inputs + s.units * s.unit_inputs) {
        c2p::record_error(cudaErrorInvalidValue,
                          "c2p_cuda_unit_products arguments (device, rows within the domain, one shape)", __FILE__,
                          __LINE__);
        return (int)cudaErrorInvalidValue;
    }
    void* out[3] = {nullptr, nullptr, nullptr};
    const size_t bytes = m * sizeof(fr_t);
    auto run = [&]() -> cudaError_t {
        C2P_CUDA_OK(cudaSetDevice(device));
        c2p::host::stream_t stream;
        C2P_CUDA_OK(stream.create());
        for (int i = 0; i < 3; i++) C2P_CUDA_OK(c2p::host::device_alloc(&out[i], bytes));
        int sms = 0;
        C2P_CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
        for (int i = 0; i < 3; i++) {
            unit_products<<<sms * 8, 256, 0, stream.s>>>(
                static_cast<const uint32_t*>(rows->starts[i]), static_cast<const term_t*>(rows->terms[i]),
                static_cast<const fr_t*>(rows->coefficients), s, static_cast<const fr_t*>(inputs),
                static_cast<const fr_t*>(aux), i == 0, static_cast<fr_t*>(out[i]));
            C2P_CUDA_OK(cudaGetLastError());
            if (m > abc)
                C2P_CUDA_OK(cudaMemsetAsync(static_cast<fr_t*>(out[i]) + abc, 0, (m - abc) * sizeof(fr_t), stream.s));
        }
        return cudaStreamSynchronize(stream.s);
    };
    const cudaError_t err = run();
    if (err != cudaSuccess) {
        for (int i = 0; i < 3; i++)
            if (out[i]) (void)c2p::host::device_free(device, out[i], bytes);
        C2P_CUDA_OK(err);
    }
    for (int i = 0; i < 3; i++) {
        c2p::host::remember(out[i], bytes);
        abc_out[i] = out[i];
    }
    return 0;
}
