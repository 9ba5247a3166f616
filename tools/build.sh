#!/usr/bin/env bash
# Configures and builds remat into ./build (Release, Ninja, ccache if present).
# Usage: tools/build.sh [extra cmake args...]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}
export CCACHE_BASEDIR=$PWD
start=$(date +%s)
cmake -G Ninja -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-Release} "$@" >/dev/null
ninja -C "$BUILD_DIR" -j"$JOBS"
echo "build: done in $(( $(date +%s) - start )) s ($BUILD_DIR)"
