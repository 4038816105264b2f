#!/usr/bin/env bash
# Builds the `c2prover` command with the feature `bench-supraseal` (ours and
# crates.io supraseal-c2 0.1.2 in one binary, for `bench prove
# --supraseal-params`), stripped, into .device-sup/ for the GPU machine.
# Without the default features: supraseal's C symbols would clash with ours.
set -euo pipefail
cd "$(dirname "$0")/.."
export C2P_CUDA_ARCHS=${C2P_CUDA_ARCHS:-90}
# sppark's build script links a probe program against cudart_static and
# cudadevrt, which the PyPI toolchain keeps in $CUDA_HOME/lib.
if [ -n "${CUDA_HOME:-}" ]; then
    export LIBRARY_PATH="$CUDA_HOME/lib${LIBRARY_PATH:+:$LIBRARY_PATH}"
fi
# sppark builds sm_80 SASS and compute_80 PTX; add the H200's own SASS.
export NVCC_APPEND_FLAGS="${NVCC_APPEND_FLAGS:--gencode arch=compute_90,code=sm_90}"
# No debug info: with the release profile's `debug = 1`, the cc crate hands
# nvcc `-G` for supraseal's CUDA (our build.rs turns that off for ours), and
# device-debug kernels run so slowly that supraseal's first call seemed to
# hang on the H200.
export CARGO_PROFILE_RELEASE_DEBUG=false
cargo build --release --no-default-features --features bench-supraseal --bin c2prover
# Refuse a binary whose supraseal kernels were built for debugging (the
# PTX of `-G` code carries ptxas's --dont-merge-basicblocks).
lib=$(ls -t target/release/build/supraseal-c2-*/out/libgroth16_cuda.a | head -1)
if grep -a -q -- '--dont-merge-basicblocks' "$lib"; then
    echo "supraseal's CUDA in $lib was compiled with -G (device debug): not a benchmark build" >&2
    exit 1
fi
mkdir -p .device-sup
cp target/release/c2prover .device-sup/c2prover-supraseal
strip .device-sup/c2prover-supraseal
ls -la .device-sup
