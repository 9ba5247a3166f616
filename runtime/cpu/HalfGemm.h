//===- HalfGemm.h - GEMM on 16-bit operands through fp32 panels --*- C++ -*-===//
//
// BLAS multiplies float and double only (OpenBLAS's sbgemm takes bf16 but
// not fp16, and runs a plain C kernel on CPUs without AVX512-BF16), so a
// GEMM on F16/BF16 operands converts them to fp32 and calls sgemm, as
// Gemm.h does for float, then rounds the fp32 result into C once.
//
// The conversion works on panels, so that the scratch does not grow with
// the operands: C is computed block by block, each block of at most
// kPanelRows x kPanelCols in an fp32 panel, accumulating over chunks of at
// most kPanelDepth of the shared dimension (sgemm with beta = 1 after the
// first chunk), each chunk's A and B blocks converted to fp32 panels first.
// Three panels of at most 2 + 4 + 2 MiB are the whole scratch, whatever the
// operand sizes. The blocks are a fixed function of M, N and K, so the
// result is too: the same sgemm calls in the same order give the same bits,
// in the interpreter and in generated code alike. When K fits one chunk the
// B panel of a column block is converted once for all its row blocks.
//
// GemmFor<T> names the GEMM a kernel on storage type T runs: BlasGemm
// (Gemm.h itself, no scratch) for float and double, HalfGemm for the
// 16-bit types. Both are called as gemm(transA, transB, M, N, K, A, B, C,
// accumulate) with row-major operands as Gemm.h's.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_CPU_HALFGEMM_H
#define REMAT_RUNTIME_CPU_HALFGEMM_H

#include "Gemm.h"
#include "Scratch.h"

#include "common/FloatStorage.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace remat::rt::cpu {

/// The largest block of C and chunk of K one sgemm call of a HalfGemm
/// covers: large enough that sgemm runs at speed and that converting the
/// operands costs little next to the multiplication (each A element is
/// converted once per column block, each B element once per row block, or
/// once when K fits a chunk).
inline constexpr int64_t kPanelRows = 512;
inline constexpr int64_t kPanelCols = 1024;
inline constexpr int64_t kPanelDepth = 1024;

/// The panel extents of GEMMs of at most M x N x K.
struct GemmPanels {
  int64_t rows, cols, depth;
};

inline GemmPanels gemmPanels(int64_t M, int64_t N, int64_t K) {
  return {std::min(M, kPanelRows), std::min(N, kPanelCols),
          std::min(K, kPanelDepth)};
}

/// Scratch bytes of a HalfGemm for GEMMs of at most M x N x K: the A, B and
/// C panels.
inline size_t halfGemmScratchBytes(int64_t M, int64_t N, int64_t K) {
  const GemmPanels p = gemmPanels(M, N, K);
  return scratchPiece<float>(p.rows * p.depth) +
         scratchPiece<float>(p.depth * p.cols) +
         scratchPiece<float>(p.rows * p.cols);
}

/// Scratch bytes of GemmFor<T> for a storage dtype: 0 for F32 and F64.
inline size_t gemmScratchBytes(DType dtype, int64_t M, int64_t N, int64_t K) {
  return dtype == DType::F16 || dtype == DType::BF16
             ? halfGemmScratchBytes(M, N, K)
             : 0;
}

/// Float and double: BLAS on the operands themselves.
template <typename T> class BlasGemm {
public:
  BlasGemm(Scratch &, int64_t, int64_t, int64_t) {}

  /// C [M, N] = op(A) op(B) (+ C if accumulate).
  void operator()(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
                  const T *A, const T *B, T *C, bool accumulate = false) {
    gemm(transA, transB, M, N, K, A, B, C, accumulate ? T(1) : T(0));
  }
};

/// F16 and BF16 operands through fp32 panels (see the file comment).
template <typename T> class HalfGemm {
  static_assert(kIsHalfStorage<T>);

public:
  /// Takes the panels for GEMMs of at most M x N x K from `scratch`
  /// (halfGemmScratchBytes(M, N, K) bytes).
  HalfGemm(Scratch &scratch, int64_t M, int64_t N, int64_t K)
      : max_(gemmPanels(M, N, K)),
        a_(scratch.take<float>(max_.rows * max_.depth)),
        b_(scratch.take<float>(max_.depth * max_.cols)),
        c_(scratch.take<float>(max_.rows * max_.cols)) {}

  /// C [M, N] = op(A) op(B) (+ C if accumulate), C of T (rounded once per
  /// element) or float (not rounded: a caller's fp32 accumulator).
  template <typename Out>
  void operator()(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
                  const T *A, const T *B, Out *C, bool accumulate = false) {
    static_assert(std::is_same_v<Out, T> || std::is_same_v<Out, float>);
    const GemmPanels p = gemmPanels(M, N, K);
    if (p.rows > max_.rows || p.cols > max_.cols || p.depth > max_.depth)
      fail("gemm", "internal error: a GEMM larger than its panels");
    const bool oneChunk = K <= p.depth;
    for (int64_t n0 = 0; n0 < N; n0 += p.cols) {
      const int64_t cols = std::min(p.cols, N - n0);
      if (oneChunk)
        packB(transB, K, N, B, 0, K, n0, cols);
      for (int64_t m0 = 0; m0 < M; m0 += p.rows) {
        const int64_t rows = std::min(p.rows, M - m0);
        if (accumulate)
          loadC(C, N, m0, rows, n0, cols);
        else if (K == 0)
          std::fill(c_, c_ + rows * cols, 0.0f);
        for (int64_t k0 = 0; k0 < K; k0 += p.depth) {
          const int64_t depth = std::min(p.depth, K - k0);
          if (!oneChunk)
            packB(transB, K, N, B, k0, depth, n0, cols);
          packA(transA, M, K, A, m0, rows, k0, depth);
          gemm(transA, transB, rows, cols, depth, a_, b_, c_,
               accumulate || k0 > 0 ? 1.0f : 0.0f);
        }
        storeC(C, N, m0, rows, n0, cols);
      }
    }
  }

private:
  /// A's block [m0, m0 + rows) x [k0, k0 + depth) as a contiguous fp32
  /// matrix in A's own orientation (A is [M, K], or [K, M] if transA).
  void packA(bool transA, int64_t M, int64_t K, const T *A, int64_t m0,
             int64_t rows, int64_t k0, int64_t depth) {
    if (transA)
      convertBlock(A, M, k0, depth, m0, rows, a_);
    else
      convertBlock(A, K, m0, rows, k0, depth, a_);
  }

  /// B's block [k0, k0 + depth) x [n0, n0 + cols), likewise (B is [K, N],
  /// or [N, K] if transB).
  void packB(bool transB, int64_t K, int64_t N, const T *B, int64_t k0,
             int64_t depth, int64_t n0, int64_t cols) {
    if (transB)
      convertBlock(B, K, n0, cols, k0, depth, b_);
    else
      convertBlock(B, N, k0, depth, n0, cols, b_);
  }

  /// dst [rows, cols] = src[r0 + r, c0 + c] widened, src row-major with
  /// `ld` elements per row.
  static void convertBlock(const T *src, int64_t ld, int64_t r0, int64_t rows,
                           int64_t c0, int64_t cols, float *dst) {
    for (int64_t r = 0; r < rows; ++r) {
      const T *in = src + (r0 + r) * ld + c0;
      float *out = dst + r * cols;
      for (int64_t c = 0; c < cols; ++c)
        out[c] = toCompute(in[c]);
    }
  }

  template <typename Out>
  void loadC(const Out *C, int64_t N, int64_t m0, int64_t rows, int64_t n0,
             int64_t cols) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        c_[r * cols + c] = toCompute(C[(m0 + r) * N + n0 + c]);
  }

  template <typename Out>
  void storeC(Out *C, int64_t N, int64_t m0, int64_t rows, int64_t n0,
              int64_t cols) const {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        C[(m0 + r) * N + n0 + c] = fromCompute<Out>(c_[r * cols + c]);
  }

  GemmPanels max_;
  float *a_, *b_, *c_;
};

template <typename T>
using GemmFor =
    std::conditional_t<kIsHalfStorage<T>, HalfGemm<T>, BlasGemm<T>>;

} // namespace remat::rt::cpu

#endif // REMAT_RUNTIME_CPU_HALFGEMM_H
