#!/usr/bin/env bash
# Builds libc2prover.a for the Go package and writes go/c2prover.pc (cgo
# finds both through ${SRCDIR}, as filecoin-ffi does with filcrypto.pc),
# plus a small test fixture in go/testdata/. The library always has the
# whole C2 job (feature porep: SealCommitPhase2); C2P_FEATURES=cuda adds the
# GPU backend (needs nvcc; see scripts/install-cuda.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
features=porep${C2P_FEATURES:+,$C2P_FEATURES}
cargo build --release --lib ${features:+--features "$features"}
cargo build --release --bin c2prover ${features:+--features "$features"}
# The system libraries the static library needs, as rustc reports them.
native=$(cargo rustc --release --lib --crate-type staticlib ${features:+--features "$features"} -- --print native-static-libs 2>&1 \
    | sed -n 's/.*native-static-libs: //p' | tail -1)
cat > go/c2prover.pc <<PC
# Written by scripts/build-go.sh; not checked in.
Name: c2prover
Description: Groth16 prover for Filecoin (c2prover, static library)
Version: $(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
Cflags: -I$root/include
Libs: $root/target/release/libc2prover.a $native
PC
mkdir -p go/testdata
target/release/c2prover gen-srs --log2 10 --circuits 3 \
    --params-out go/testdata/small.params --witness-out go/testdata/small.wit >/dev/null
echo "go/c2prover.pc and go/testdata written; now: cd go && go test ./... (add -a after switching C2P_FEATURES: Go does not see the library change)"
