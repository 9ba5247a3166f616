//===- MatMul.cu - Batched matrix multiplication on cuBLAS ----------------===//
//
// As runtime/cpu/MatMul.cpp: a shared b with a full-batch, non-transposed a
// (the linear layer) is one tall GEMM; otherwise the output's batch dims are
// walked in runs of constant operand stride, each run one strided-batched
// GEMM (stride 0 for a broadcast operand), so the host issues a single call
// unless the broadcast pattern cannot be expressed with one stride. F16 and
// BF16 operands and results go through cublasGemmStridedBatchedEx with fp32
// compute (tensor cores, fp32 accumulation, one rounding on store); F32 and
// F64 through cublasSgemm/Dgemm under the handle's pedantic math mode
// (Context.cu). A 16-bit product whose K is long against its output
// (a language model head's input gradient: K = vocabulary) is computed into
// an fp32 scratch and rounded by a cast: cuBLAS splits such a K, and with a
// 16-bit output the handle's fp32 split-K reductions made it 7.5x slower
// (34.2 ms against 4.5 ms, bf16 8192 x 768 x 50257 on an H200).
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/cuda/CudaKernels.h"

#include "Blas.cuh"
#include "Common.cuh"
#include "Indexing.cuh"

#include "common/MatMulShape.h"

#include <algorithm>
#include <limits>
#include <type_traits>

namespace remat::rt::cuda {
using namespace detail;

namespace detail {

namespace {

int toInt(int64_t v, const char *kernel, const char *what) {
  if (v > std::numeric_limits<int>::max())
    fail(kernel, std::string(what) + " of " + std::to_string(v) +
                     " exceeds cuBLAS's 32-bit range");
  return static_cast<int>(v);
}

cublasStatus_t gemmCall(cublasHandle_t h, cublasOperation_t ta,
                        cublasOperation_t tb, int m, int n, int k,
                        const float *alpha, const float *A, int lda,
                        long long sa, const float *B, int ldb, long long sb,
                        const float *beta, float *C, int ldc, long long sc,
                        int batch) {
  return cublasSgemmStridedBatched(h, ta, tb, m, n, k, alpha, A, lda, sa, B,
                                   ldb, sb, beta, C, ldc, sc, batch);
}

cublasStatus_t gemmCall(cublasHandle_t h, cublasOperation_t ta,
                        cublasOperation_t tb, int m, int n, int k,
                        const double *alpha, const double *A, int lda,
                        long long sa, const double *B, int ldb, long long sb,
                        const double *beta, double *C, int ldc, long long sc,
                        int batch) {
  return cublasDgemmStridedBatched(h, ta, tb, m, n, k, alpha, A, lda, sa, B,
                                   ldb, sb, beta, C, ldc, sc, batch);
}

/// cuBLAS's names of the storage types of the Ex GEMMs.
template <typename T> constexpr cudaDataType_t kBlasType = CUDA_R_32F;
template <> constexpr cudaDataType_t kBlasType<Half> = CUDA_R_16F;
template <> constexpr cudaDataType_t kBlasType<BFloat16> = CUDA_R_16BF;

/// 16-bit A and B, C 16-bit or fp32 (an fp32 accumulator: the filter
/// gradient), fp32 alpha, beta and accumulation. CUBLAS_COMPUTE_32F (not
/// _PEDANTIC) lets cuBLAS use tensor cores, whose products of 16-bit values
/// are exact in fp32; the handle's
/// CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION keeps split-K partial
/// sums in fp32 rather than in a 16-bit output type.
template <typename T, typename Out,
          typename = std::enable_if_t<kIsHalfStorage<T>>>
cublasStatus_t gemmCall(cublasHandle_t h, cublasOperation_t ta,
                        cublasOperation_t tb, int m, int n, int k,
                        const float *alpha, const T *A, int lda, long long sa,
                        const T *B, int ldb, long long sb, const float *beta,
                        Out *C, int ldc, long long sc, int batch) {
  return cublasGemmStridedBatchedEx(
      h, ta, tb, m, n, k, alpha, A, kBlasType<T>, lda, sa, B, kBlasType<T>, ldb,
      sb, beta, C, kBlasType<Out>, ldc, sc, batch, CUBLAS_COMPUTE_32F,
      CUBLAS_GEMM_DEFAULT);
}

} // namespace

template <typename T, typename Out>
void gemmStridedBatched(const char *kernel, bool transA, bool transB, int64_t M,
                        int64_t N, int64_t K, const T *A, int64_t strideA,
                        const T *B, int64_t strideB, Out *C, int64_t strideC,
                        int64_t batch, ComputeType<T> beta) {
  using S = ComputeType<T>; // alpha and beta
  if (M == 0 || N == 0 || batch == 0)
    return;
  Context &ctx = context(kernel);
  if (K == 0) { // cuBLAS rejects lda == 0; the product is empty
    if (beta != S(0))
      return;
    if (strideC == M * N) {
      zeroAsync(C, static_cast<size_t>(batch * M * N) * sizeof(Out), kernel);
    } else {
      for (int64_t b = 0; b < batch; ++b)
        zeroAsync(C + b * strideC, static_cast<size_t>(M * N) * sizeof(Out),
                  kernel);
    }
    return;
  }
  const int m = toInt(M, kernel, "M"), n = toInt(N, kernel, "N");
  const int k = toInt(K, kernel, "K");
  const int lda = transA ? m : k;
  const int ldb = transB ? k : n;
  const S alpha = S(1);
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T.
  constexpr int64_t kMaxBatch = std::numeric_limits<int>::max();
  for (int64_t first = 0; first < batch; first += kMaxBatch) {
    const int count = static_cast<int>(std::min(kMaxBatch, batch - first));
    checkBlas(gemmCall(ctx.blas, transB ? CUBLAS_OP_T : CUBLAS_OP_N,
                       transA ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &alpha,
                       B + first * strideB, ldb, strideB, A + first * strideA,
                       lda, strideA, &beta, C + first * strideC, n, strideC,
                       count),
              kernel);
  }
}

template void gemmStridedBatched<float, float>(
    const char *, bool, bool, int64_t, int64_t, int64_t, const float *,
    int64_t, const float *, int64_t, float *, int64_t, int64_t, float);
template void gemmStridedBatched<double, double>(
    const char *, bool, bool, int64_t, int64_t, int64_t, const double *,
    int64_t, const double *, int64_t, double *, int64_t, int64_t, double);
template void gemmStridedBatched<Half, Half>(const char *, bool, bool, int64_t,
                                             int64_t, int64_t, const Half *,
                                             int64_t, const Half *, int64_t,
                                             Half *, int64_t, int64_t, float);
template void gemmStridedBatched<BFloat16, BFloat16>(
    const char *, bool, bool, int64_t, int64_t, int64_t, const BFloat16 *,
    int64_t, const BFloat16 *, int64_t, BFloat16 *, int64_t, int64_t, float);
template void gemmStridedBatched<Half, float>(const char *, bool, bool,
                                              int64_t, int64_t, int64_t,
                                              const Half *, int64_t,
                                              const Half *, int64_t, float *,
                                              int64_t, int64_t, float);
template void gemmStridedBatched<BFloat16, float>(
    const char *, bool, bool, int64_t, int64_t, int64_t, const BFloat16 *,
    int64_t, const BFloat16 *, int64_t, float *, int64_t, int64_t, float);

} // namespace detail

namespace {

/// Whether a 16-bit GEMM goes through an fp32 result (the file comment):
/// K at least 4x the longer output side, contiguous outputs, and the fp32
/// result fits the scratch (otherwise the direct call, slower but exact).
bool wantsWideResult(int64_t M, int64_t N, int64_t K, int64_t strideC,
                     int64_t batch, size_t scratchBytes) {
  const int64_t count = M * N * batch;
  return K >= 4 * std::max(M, N) && (batch == 1 || strideC == M * N) &&
         Scratch::alignUp(static_cast<size_t>(count) * sizeof(float)) <=
             scratchBytes;
}

/// One strided-batched GEMM of matmul (its scratch is free, unlike a
/// convolution's, whose columns occupy it when it calls the GEMM).
template <typename T>
void matmulGemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
                const T *A, int64_t strideA, const T *B, int64_t strideB, T *C,
                int64_t strideC, int64_t batch) {
  const char *kernel = "matmul";
  if constexpr (kIsHalfStorage<T>) {
    Scratch scratch(kernel);
    if (wantsWideResult(M, N, K, strideC, batch, scratch.available())) {
      const int64_t count = M * N * batch;
      float *wide = scratch.take<float>(static_cast<size_t>(count));
      gemmStridedBatched<T, float>(kernel, transA, transB, M, N, K, A, strideA,
                                   B, strideB, wide, M * N, batch, 0.0f);
      cuda::cast(TensorView(DType::F32, {count}, wide),
                 TensorView(std::is_same_v<T, Half> ? DType::F16 : DType::BF16,
                            {count}, C));
      return;
    }
  }
  gemmStridedBatched<T>(kernel, transA, transB, M, N, K, A, strideA, B, strideB,
                        C, strideC, batch, ComputeType<T>(0));
}

template <typename T>
void matmulImpl(const TensorView &a, const TensorView &b, const TensorView &out,
                bool transA, bool transB) {
  const char *kernel = "matmul";
  const MatMulDims dims = matmulDims(a, b, out, transA, transB);
  const int64_t M = dims.M, K = dims.K, N = dims.N;

  const Shape outBatch = batchDims(out.shape);
  const T *pa = a.as<const T>();
  const T *pb = b.as<const T>();
  T *po = out.as<T>();

  // The linear-layer case [B, S, K] x [K, N]: one tall GEMM.
  if (!transA && numElements(batchDims(b.shape)) == 1 &&
      batchDims(a.shape) == outBatch) {
    matmulGemm<T>(false, transB, numElements(outBatch) * M, N, K, pa, 0, pb, 0,
                  po, 0, 1);
    return;
  }

  // Strides in whole matrices; each run is one strided-batched call.
  std::array<Strides, 3> strides = {
      broadcastStrides(batchDims(a.shape), outBatch, kernel),
      broadcastStrides(batchDims(b.shape), outBatch, kernel),
      contiguousStrides(outBatch)};
  const int64_t sizeA = M * K, sizeB = K * N, sizeO = M * N;
  forEachRun<3>(outBatch, strides,
                [&](const std::array<int64_t, 3> &off,
                    const std::array<int64_t, 3> &st, int64_t count) {
                  matmulGemm<T>(transA, transB, M, N, K, pa + off[0] * sizeA,
                                st[0] * sizeA, pb + off[1] * sizeB,
                                st[1] * sizeB, po + off[2] * sizeO,
                                st[2] * sizeO, count);
                });
}

} // namespace

void matmul(const TensorView &a, const TensorView &b, const TensorView &out,
            bool transA, bool transB) {
  const char *kernel = "matmul";
  checkMatMul(kernel, a, b, out);
  context(kernel);
  dispatchFloatStorage(a.dtype, kernel, [&](auto tag) {
    matmulImpl<typename decltype(tag)::type>(a, b, out, transA, transB);
  });
}

} // namespace remat::rt::cuda
