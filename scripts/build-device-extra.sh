#!/usr/bin/env bash
# Builds, with the CUDA backend, what scripts/build-device.sh leaves out, into
# .device-extra/ for the GPU machine: the Go package's test binary (cgo over
# libc2prover.a; run it from go/ so it finds go/testdata, and carry
# go/testdata too) and the bellperson-through-supraseal-c2 drop-in tests
# (compat/bellperson-tests).
set -euo pipefail
cd "$(dirname "$0")/.."
export C2P_CUDA_ARCHS=${C2P_CUDA_ARCHS:-90}
mkdir -p .device-extra
C2P_FEATURES=cuda scripts/build-go.sh
# -a: the Go build cache does not notice that libc2prover.a and its link
# flags changed (e.g. after a build without the CUDA backend).
(cd go && go test -a -c -o ../.device-extra/go.test .)
cargo test --release --manifest-path compat/bellperson-tests/Cargo.toml --no-run --message-format=json 2>/dev/null \
    | python3 -c '
import json, sys, shutil
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"] \
            and m["target"]["kind"] == ["test"]:
        shutil.copy(m["executable"], ".device-extra/compat-" + m["target"]["name"])
'
strip .device-extra/*
ls -la .device-extra
