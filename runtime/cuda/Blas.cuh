//===- Blas.cuh - Row-major strided-batched GEMM on cuBLAS ------*- CUDA
//-*-===//
//
// C[b] = A[b] * B[b] (+ beta * C[b]) for row-major matrices, A/B optionally
// transposed in storage, b < batch at the given element strides (0 shares
// one operand across the batch). Used by matmul and the convolutions; cuBLAS
// is column-major, so the call computes C^T = B^T A^T.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_CUDA_BLAS_CUH
#define REMAT_RUNTIME_CUDA_BLAS_CUH

#include "Common.cuh"

namespace remat::rt::cuda::detail {

/// T is float, double, Half or BFloat16 (fp32 accumulation for the 16-bit
/// types); C is T, or float for 16-bit A and B (an fp32 accumulator); beta
/// (in T's compute type) is 0 or 1. Empty problems are no-ops (K == 0 with
/// beta 0 zeroes C). Issues one cuBLAS call per 2^31 - 1 batch entries.
template <typename T, typename Out = T>
void gemmStridedBatched(const char *kernel, bool transA, bool transB, int64_t M,
                        int64_t N, int64_t K, const T *A, int64_t strideA,
                        const T *B, int64_t strideB, Out *C, int64_t strideC,
                        int64_t batch, ComputeType<T> beta);

} // namespace remat::rt::cuda::detail

#endif // REMAT_RUNTIME_CUDA_BLAS_CUH
