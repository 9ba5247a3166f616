//===- Gemm.h - Row-major GEMM on OpenBLAS -----------------------*- C++ -*-===//
//
// C[M,N] = A[M,K] * B[K,N] (+ beta * C), with A/B optionally transposed in
// storage. Overloaded on float/double so MatMul and Conv stay templates.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_CPU_GEMM_H
#define REMAT_RUNTIME_CPU_GEMM_H

#ifdef REMAT_NO_CBLAS
// No BLAS where the GPU bundle builds the CPU kernels (tools/gpu): they only
// serve as references for the CUDA kernel tests there, so plain loops do.
#include "cpu/GemmLoops.h"
#else
#include <cblas.h>
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#include "common/Check.h"

namespace remat::rt::cpu {

using namespace common;

#ifndef REMAT_NO_CBLAS
inline blasint toBlasInt(int64_t v) {
  if (v > std::numeric_limits<blasint>::max())
    fail("gemm", "dimension exceeds the BLAS integer range");
  return static_cast<blasint>(v);
}

template <typename T, typename Gemm>
void gemmImpl(Gemm blasGemm, bool transA, bool transB, int64_t M, int64_t N,
              int64_t K, const T *A, const T *B, T *C, T beta) {
  if (M == 0 || N == 0)
    return;
  if (K == 0) { // BLAS rejects lda == 0; the product is empty.
    if (beta == T(0))
      std::fill(C, C + M * N, T(0));
    else
      std::for_each(C, C + M * N, [beta](T &c) { c *= beta; });
    return;
  }
  const int64_t lda = transA ? M : K;
  const int64_t ldb = transB ? K : N;
  blasGemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
           transB ? CblasTrans : CblasNoTrans, toBlasInt(M), toBlasInt(N),
           toBlasInt(K), T(1), A, toBlasInt(lda), B, toBlasInt(ldb), beta, C,
           toBlasInt(N));
}

inline void gemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
                 const float *A, const float *B, float *C, float beta = 0) {
  gemmImpl<float>(cblas_sgemm, transA, transB, M, N, K, A, B, C, beta);
}

inline void gemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
                 const double *A, const double *B, double *C,
                 double beta = 0) {
  gemmImpl<double>(cblas_dgemm, transA, transB, M, N, K, A, B, C, beta);
}
#endif // REMAT_NO_CBLAS

} // namespace remat::rt::cpu

#endif // REMAT_RUNTIME_CPU_GEMM_H
