#!/usr/bin/env bash
# Builds the release test binaries and the c2prover command with the CUDA
# backend and the whole C2 job (porep), stripped, into .device/ for the GPU
# machine (which has no Rust).
set -euo pipefail
cd "$(dirname "$0")/.."
export C2P_CUDA_ARCHS=${C2P_CUDA_ARCHS:-90}  # the H200; smaller binaries
cargo test --release --features cuda,porep --no-run --message-format=json 2>/dev/null \
    | python3 -c '
import json, sys, shutil, os
os.makedirs(".device", exist_ok=True)
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        kind = m["target"]["kind"]
        if kind == ["bin"]:
            continue
        name = "unit" if "rlib" in kind or "lib" in kind else m["target"]["name"]
        shutil.copy(m["executable"], ".device/" + name)
'
cargo build --release --features cuda,porep
cp target/release/c2prover .device/c2prover
strip .device/*
ls -la .device
# The device tool carries at most 64 MiB: the GPU suite's binaries, packed
# (carry .device-pack; scripts/device-run.sh unpacks it).
mkdir -p .device-pack
tar -C .device -cJf .device-pack/bins.tar.xz unit gpu gpu_budget gpu_faults bellperson_identity products engine c_abi params prover_errors seal c2prover
ls -la .device-pack
