#!/usr/bin/env bash
# Runs the GPU test suite and GPU benchmarks on the GPU machine from binaries
# built here (see scripts/build-device.sh); logs go to $OUT.
set -u
cd "$(dirname "$0")/.."
if [ -f .device-pack/bins.tar.xz ]; then mkdir -p .device && tar -C .device -xJf .device-pack/bins.tar.xz; fi
cd .device
OUT=${OUT:-/tmp/c2p-out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
nproc >> "$OUT/gpu.txt"
run() { local name=$1; shift; local t0=$SECONDS; "$@" > "$OUT/$name.log" 2>&1; local rc=$?; echo "$name rc=$rc $((SECONDS - t0)) s: $(grep -E "test result|SKIPPED" "$OUT/$name.log" | tail -1)"; }
for t in ${TESTS:-unit gpu gpu_budget gpu_faults bellperson_identity products engine c_abi params prover_errors}; do
    run "$t" ./"$t" --include-ignored --test-threads="${THREADS:-1}"
done
# The identity suite again with the points streamed instead of resident.
run streamed env C2P_PARAMS_ON_GPU=never ./bellperson_identity --test-threads="${THREADS:-1}"
run products-streamed env C2P_PARAMS_ON_GPU=never ./products --include-ignored --test-threads="${THREADS:-1}"
if [ -n "${BENCH-1}" ]; then  # BENCH= (empty) skips the benchmarks
    run bench-ntt ./c2prover bench ntt --log2 "${NTT_SIZES:-20,24,26,27}" --runs 7
    run bench-h ./c2prover bench h --log2 "${H_SIZES:-24,26,27}" --runs 5
    cat "$OUT/bench-ntt.log" "$OUT/bench-h.log" | grep -E "^(ntt|h) "
fi
