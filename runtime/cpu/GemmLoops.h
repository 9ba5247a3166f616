//===- GemmLoops.h - Row-major GEMM as plain loops --------------*- C++ -*-===//
//
// Gemm.h's interface without BLAS (-DREMAT_NO_CBLAS): the GPU bundle builds
// the CPU kernels on machines without OpenBLAS, as references for the CUDA
// kernel tests. Accumulates in double; slow, and only for small tests.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_CPU_GEMMLOOPS_H
#define REMAT_RUNTIME_CPU_GEMMLOOPS_H

#include <cstdint>

namespace remat::rt::cpu {

template <typename T>
void gemmLoops(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
               const T *A, const T *B, T *C, T beta) {
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double sum = 0;
      for (int64_t k = 0; k < K; ++k)
        sum += static_cast<double>(transA ? A[k * M + m] : A[m * K + k]) *
               static_cast<double>(transB ? B[n * K + k] : B[k * N + n]);
      T &c = C[m * N + n];
      c = static_cast<T>(sum + (beta == T(0) ? 0.0 : double(beta) * c));
    }
}

inline void gemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
                 const float *A, const float *B, float *C, float beta = 0) {
  gemmLoops<float>(transA, transB, M, N, K, A, B, C, beta);
}

inline void gemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
                 const double *A, const double *B, double *C,
                 double beta = 0) {
  gemmLoops<double>(transA, transB, M, N, K, A, B, C, beta);
}

} // namespace remat::rt::cpu

#endif // REMAT_RUNTIME_CPU_GEMMLOOPS_H
