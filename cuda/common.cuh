// Shared by every kernel file: error propagation without aborts.
//
// Every CUDA call goes through C2P_CUDA_OK, which returns the error code to
// the caller (and records a message) instead of printing or aborting; the
// extern "C" entry points return that code to Rust, which turns it into
// C2P_ERR_GPU / C2P_ERR_OUT_OF_MEMORY with the message.
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>

#include "include/c2p_cuda.h"

namespace c2p {

// Records the message of the calling thread's last CUDA failure.
void record_error(cudaError_t err, const char* what, const char* file, int line);

// Why the calling thread's last allocation failed when the device budget
// refused it (api/memory.cuh): the out-of-memory messages recorded after it
// end with it, however many C2P_CUDA_OK levels pass the failure up. Empty
// clears it.
void set_budget_detail(const char* detail);

}  // namespace c2p

#define C2P_CUDA_OK(expr)                                                   \
    do {                                                                    \
        cudaError_t c2p_err_ = (expr);                                      \
        if (c2p_err_ != cudaSuccess) {                                      \
            c2p::record_error(c2p_err_, #expr, __FILE__, __LINE__);         \
            return c2p_err_;                                                \
        }                                                                   \
    } while (0)
