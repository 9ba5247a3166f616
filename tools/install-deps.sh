#!/usr/bin/env bash
# Installs exactly the Debian 12 packages remat needs (DESIGN.md,
# "Dependencies"). Idempotent: when everything is present it only checks and
# returns in a second or two. Run as root (or with sudo available).
set -euo pipefail

PACKAGES=(
  # IR and pass infrastructure; lit and FileCheck come with llvm-19-dev/tools
  libmlir-19-dev mlir-19-tools llvm-19-dev llvm-19-tools
  # ONNX model parsing, checker, shape inference; backend conformance data
  libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata
  # exact planner (MILP)
  coinor-libcbc-dev
  # CPU GEMM
  libopenblas-dev
  # build and tests
  cmake ninja-build g++ clang ccache libgtest-dev python3
  # a virtual environment for the PyPI test material (install-test-data.sh)
  python3-venv
  # headless browser that renders the plan explorer page in the tests
  chromium
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "install-deps: done"
