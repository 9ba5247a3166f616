//===- BenchSupport.h - What the GPU benches share ------------------------===//
//
// attention_bench.cpp and gemm_bench.cpp: error checks that name the bench,
// the runtime started as a GPU-target program starts it, device tensors
// from host values, and event timing. Each function takes the bench's name
// (the prefix of its error messages).
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TOOLS_GPU_BENCHSUPPORT_H
#define REMAT_TOOLS_GPU_BENCHSUPPORT_H

#include "remat/runtime/cuda/CudaKernels.h"

#include "common/Float16.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace bench {

/// Exits with the bench's name and CUDA's message on an error.
inline void check(cudaError_t error, const char *what, const char *bench) {
  if (error != cudaSuccess) {
    std::fprintf(stderr, "%s: %s: %s\n", bench, what,
                 cudaGetErrorString(error));
    std::exit(1);
  }
}

/// A stream, and the runtime bound to it with the 64 MiB workspace of a
/// GPU-target plan (cuBLAS gets its share of it, as in a program).
inline cudaStream_t startRuntime(const char *bench) {
  cudaStream_t stream;
  check(cudaStreamCreate(&stream), "cudaStreamCreate", bench);
  const size_t workspaceBytes = size_t(64) << 20;
  void *workspace = nullptr;
  check(cudaMalloc(&workspace, workspaceBytes), "cudaMalloc", bench);
  remat::rt::cuda::initialize(stream, workspace, workspaceBytes);
  return stream;
}

/// A device tensor (bf16 or f32) holding `values`.
inline remat::rt::TensorView upload(remat::rt::DType dtype,
                                    const remat::rt::Shape &shape,
                                    const std::vector<float> &values,
                                    const char *bench) {
  std::vector<uint16_t> bf16;
  const void *host = values.data();
  if (dtype == remat::rt::DType::BF16) {
    for (float x : values)
      bf16.push_back(remat::rt::common::floatToBfloat16Bits(x));
    host = bf16.data();
  }
  remat::rt::TensorView view(dtype, shape, nullptr);
  check(cudaMalloc(&view.data, view.bytes()), "cudaMalloc", bench);
  check(cudaMemcpy(view.data, host, view.bytes(), cudaMemcpyHostToDevice),
        "cudaMemcpy", bench);
  return view;
}

/// Mean milliseconds of `f` over `iters` runs after three warm-up runs,
/// between two events on `stream`.
template <typename F>
double timeMs(cudaStream_t stream, int iters, const char *bench, F &&f) {
  for (int i = 0; i < 3; ++i)
    f();
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate", bench);
  check(cudaEventCreate(&stop), "cudaEventCreate", bench);
  check(cudaEventRecord(start, stream), "cudaEventRecord", bench);
  for (int i = 0; i < iters; ++i)
    f();
  check(cudaEventRecord(stop, stream), "cudaEventRecord", bench);
  check(cudaEventSynchronize(stop), "cudaEventSynchronize", bench);
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime", bench);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms / iters;
}

} // namespace bench

#endif // REMAT_TOOLS_GPU_BENCHSUPPORT_H
