//===- BenchTiming.h - Error checks and event timing for the GPU benches --===//
//
// Shared by attention_bench.cpp and gemm_bench.cpp: each sets kBenchName
// (the prefix of its error messages) before including this header.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TOOLS_GPU_BENCHTIMING_H
#define REMAT_TOOLS_GPU_BENCHTIMING_H

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>

namespace bench {

/// Exits with the bench's name and CUDA's message on an error.
inline void check(cudaError_t error, const char *what, const char *bench) {
  if (error != cudaSuccess) {
    std::fprintf(stderr, "%s: %s: %s\n", bench, what,
                 cudaGetErrorString(error));
    std::exit(1);
  }
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

#endif // REMAT_TOOLS_GPU_BENCHTIMING_H
