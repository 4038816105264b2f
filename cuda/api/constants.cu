// The device constants that every translation unit shares: defined once
// here, declared `extern` in the headers (see cuda/ff/bls12_381.cuh).
#include "../ff/bls12_381.cuh"

namespace c2p {

__constant__ uint32_t fr_m0_opaque = 0xffffffff;

}  // namespace c2p
