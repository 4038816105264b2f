#!/usr/bin/env bash
# Runs bellperson 0.27's own tests that go through the supraseal path (the
# MiMC example: 50 proofs one by one and a batch, each verified) with its
# `cuda-supraseal` feature and supraseal-c2 patched to compat/supraseal-c2:
# exactly how a deployment switches to c2prover. Needs the CUDA toolchain
# (the compat crate builds the GPU backend, as the original needs nvcc);
# without a GPU the proofs are made on the CPU.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
manifest=$(cd "$root" && cargo metadata --format-version 1 \
    | python3 -c 'import json,sys; print(next(p["manifest_path"] for p in json.load(sys.stdin)["packages"] if p["name"] == "bellperson" and p["version"] == "0.27.0"))')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$(dirname "$manifest")" "$work/bellperson"
cd "$work/bellperson"
rm -f rust-toolchain.toml   # pins another toolchain; the installed one builds it
cat >> Cargo.toml <<TOML

[workspace]

[patch.crates-io]
supraseal-c2 = { path = "$root/compat/supraseal-c2" }
TOML
export CARGO_TARGET_DIR="$root/compat/bellperson-tests/target"
cargo test --release --features cuda-supraseal --test mimc -- --nocapture 2>&1 | tee "$work/log" | grep -E "^test |test result|panicked|^error" || true
grep -q "test result: ok. 1 passed" "$work/log"
grep -q "supraseal-c2 v0.1.2 ($root/compat/supraseal-c2)" "$work/log" || {
    # cargo prints the path dependency when it compiles it; a reused build
    # does not, so confirm the patch from the lock file instead.
    grep -A2 'name = "supraseal-c2"' Cargo.lock | grep -q 'version = "0.1.2"' && ! grep -A3 'name = "supraseal-c2"' Cargo.lock | grep -q '^source'
}
echo "bellperson's MiMC test passed through compat/supraseal-c2"
