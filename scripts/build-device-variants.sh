#!/usr/bin/env bash
# Builds the `c2prover` command of several git refs (and compile-time
# switches) into .device/c2prover-NAME, for A/B benchmarks of them in one
# call on the GPU machine. Each argument is NAME=REF or NAME=REF:NVCC_FLAGS,
# e.g.  main=main  next=wip/next  next-g=wip/next:-G
# The work tree must be clean; it is returned to the current branch after.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
    echo "the work tree has changes: commit or stash them first" >&2
    exit 1
fi
back=$(git rev-parse --abbrev-ref HEAD)
trap 'git checkout -q "$back"' EXIT
export C2P_CUDA_ARCHS=${C2P_CUDA_ARCHS:-90}
mkdir -p .device
for spec in "$@"; do
    name=${spec%%=*}
    rest=${spec#*=}
    ref=${rest%%:*}
    flags=""
    [ "$rest" != "$ref" ] && flags=${rest#*:}
    git checkout -q "$ref"
    NVCC_APPEND_FLAGS="$flags" cargo build --release --features cuda --bin c2prover
    cp target/release/c2prover ".device/c2prover-$name"
    strip ".device/c2prover-$name"
    echo "c2prover-$name: $ref ${flags:+($flags)}"
done
ls -la .device
