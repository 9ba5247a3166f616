#!/usr/bin/env bash
# Installs cuobjdump, with which the CUDA checks read the compiled kernels
# (ctest cuda-binaries/*: f64 arithmetic, registers and spills), where the
# CUDA toolkit lacks it: a toolkit assembled from NVIDIA's PyPI wheels has
# nvcc and ptxas but no cuobjdump, which NVIDIA ships as the wheel
# nvidia-cuda-cuobjdump. Installed into a virtual environment in
# .cache/cuda-tools (ignored by git). Pinned: 13.2.51, the oldest CUDA 13
# release on PyPI, reads the objects of nvcc 13.0. Does nothing without
# nvcc or when the toolkit has cuobjdump. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=.cache/cuda-tools
VERSION=13.2.51
NVCC=$(command -v nvcc || true)
if [ -z "$NVCC" ] && [ -x /usr/local/cuda/bin/nvcc ]; then NVCC=/usr/local/cuda/bin/nvcc; fi
if [ -z "$NVCC" ]; then
  echo "install-cuda-tools: no nvcc, nothing to do (the CUDA backend is not built)"
  exit 0
fi
if [ -x "$(dirname "$(readlink -f "$NVCC")")/cuobjdump" ]; then
  echo "install-cuda-tools: the CUDA toolkit has cuobjdump"
  exit 0
fi
if [ -x "$VENV/bin/pip" ] &&
   "$VENV/bin/pip" show nvidia-cuda-cuobjdump 2>/dev/null | grep -qx "Version: $VERSION"; then
  echo "install-cuda-tools: cuobjdump $VERSION present in $VENV"
  exit 0
fi
python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check --only-binary :all: \
  "nvidia-cuda-cuobjdump==$VERSION"
echo "install-cuda-tools: cuobjdump $VERSION installed in $VENV"
