#!/usr/bin/env bash
# Installs the pinned CUDA 13.0 compiler from PyPI into DIR (default
# .cuda-toolchain in the repository) and prints the two exports that make
# `cargo build --features cuda` find it. All five wheels are pinned: the nvcc
# wheel names its companions without versions, and newer nvvm/crt wheels
# break compilation.
set -euo pipefail
DIR=${1:-"$(cd "$(dirname "$0")/.." && pwd)/.cuda-toolchain"}
if [ ! -x "$DIR/nvidia/cu13/bin/nvcc" ]; then
    python3 -m pip install --quiet --disable-pip-version-check --target "$DIR" \
        nvidia-cuda-nvcc==13.0.88 nvidia-cuda-crt==13.0.88 nvidia-nvvm==13.0.88 \
        nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85 >&2
fi
"$DIR/nvidia/cu13/bin/nvcc" --version | tail -1 >&2
echo "export CUDA_HOME=$DIR/nvidia/cu13 PATH=$DIR/nvidia/cu13/bin:\$PATH"
