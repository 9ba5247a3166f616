//===- MatMulTest.cpp - Batched matmul against a naive triple loop --------===//
//
// F16/BF16 results are checked by the rule in TestUtil.h, with n = K and M
// the sum of |a_ik b_kj| (the same loop over |a| and |b|).
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <array>
#include <cstring>

using namespace remat::rt;
using namespace remat::rt::test;

namespace {

/// Naive float64 batched matmul with numpy broadcasting of batch dims.
std::vector<double> refMatmul(const Tensor &a, const Tensor &b,
                              const Shape &outShape, bool transA,
                              bool transB) {
  const Shape &as = a.shape(), &bs = b.shape();
  const size_t ra = as.size(), ro = outShape.size();
  const int64_t M = outShape[ro - 2], N = outShape[ro - 1];
  const int64_t K = transA ? as[ra - 2] : as[ra - 1];
  const Shape aBatch(as.begin(), as.end() - 2), bBatch(bs.begin(), bs.end() - 2);
  const Shape oBatch(outShape.begin(), outShape.end() - 2);
  std::vector<double> av = values(a), bv = values(b);
  std::vector<double> out(numElements(outShape));
  for (int64_t batch = 0; batch < numElements(oBatch); ++batch) {
    std::vector<int64_t> idx = unravel(batch, oBatch);
    const double *pa = av.data() + broadcastSource(idx, aBatch) * M * K;
    const double *pb = bv.data() + broadcastSource(idx, bBatch) * K * N;
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double sum = 0;
        for (int64_t k = 0; k < K; ++k)
          sum += (transA ? pa[k * M + m] : pa[m * K + k]) *
                 (transB ? pb[n * K + k] : pb[k * N + n]);
        out[(batch * M + m) * N + n] = sum;
      }
  }
  return out;
}

/// The tensor of |t| in F64.
Tensor absolute(const Tensor &t) {
  std::vector<double> v = values(t);
  for (double &x : v)
    x = std::abs(x);
  return make(DType::F64, t.shape(), v);
}

struct MatmulCase {
  Shape a, b, out;
  bool transA, transB;
};

/// Checks a 16-bit matmul of random a and b (in [lo, hi)) against the
/// float64 loop over the same (widened) values.
void expectHalfMatmul(DType dt, const MatmulCase &c, double lo = -1,
                      double hi = 1) {
  SCOPED_TRACE(std::string(dtypeName(dt)) + " " + shapeToString(c.a) + " x " +
               shapeToString(c.b));
  Tensor a = randomTensor(dt, c.a, 1, lo, hi);
  Tensor b = randomTensor(dt, c.b, 2, lo, hi);
  Tensor out(dt, c.out);
  matmul(a.view(), b.view(), out.view(), c.transA, c.transB);
  const int64_t K = c.transA ? c.a[c.a.size() - 2] : c.a.back();
  expectHalfNear(values(out), refMatmul(a, b, c.out, c.transA, c.transB), dt,
                 K,
                 refMatmul(absolute(a), absolute(b), c.out, c.transA,
                           c.transB));
}

const std::vector<MatmulCase> &matmulCases() {
  static const std::vector<MatmulCase> cases = {
      {{5, 7}, {7, 3}, {5, 3}, false, false},
      {{7, 5}, {7, 3}, {5, 3}, true, false},
      {{5, 7}, {3, 7}, {5, 3}, false, true},
      {{7, 5}, {3, 7}, {5, 3}, true, true},
      {{32, 784}, {784, 16}, {32, 16}, false, false}, // MLP layer shape
      {{2, 4, 6}, {6, 5}, {2, 4, 5}, false, false},   // folded into one GEMM
      {{2, 4, 6}, {5, 6}, {2, 4, 5}, false, true},    // linear with W^T
      {{2, 3, 4, 6}, {2, 3, 6, 5}, {2, 3, 4, 5}, false, false},
      {{2, 1, 4, 6}, {3, 6, 5}, {2, 3, 4, 5}, false, false}, // broadcast both
      {{4, 6}, {2, 3, 6, 5}, {2, 3, 4, 5}, false, false},    // unbatched a
      {{2, 1, 6, 4}, {1, 3, 5, 6}, {2, 3, 4, 5}, true, true},
      {{3, 4, 6}, {1, 6, 5}, {3, 4, 5}, false, false},       // batch-1 b
      {{3, 6, 4}, {6, 5}, {3, 4, 5}, true, false},           // transA, shared b
  };
  return cases;
}

TEST(MatMulTest, MatchesNaiveLoop) {
  for (DType dt : {DType::F32, DType::F64})
    for (const MatmulCase &c : matmulCases()) {
      SCOPED_TRACE(shapeToString(c.a) + " x " + shapeToString(c.b));
      Tensor a = randomTensor(dt, c.a, 1), b = randomTensor(dt, c.b, 2);
      Tensor out(dt, c.out);
      matmul(a.view(), b.view(), out.view(), c.transA, c.transB);
      expectAllNear(values(out), refMatmul(a, b, c.out, c.transA, c.transB),
                    dt == DType::F32 ? 1e-5 : 1e-12);
    }
}

TEST(MatMulTest, HalfStorageMatchesNaiveLoop) {
  for (DType dt : kHalfTypes)
    for (const MatmulCase &c : matmulCases())
      expectHalfMatmul(dt, c);
}

TEST(MatMulTest, HalfStorageAcrossPanelEdges) {
  // Beyond one panel of rows (512), columns (1024) or depth (1024) of
  // cpu/HalfGemm.h, in every orientation; the last case crosses all three.
  for (DType dt : kHalfTypes)
    for (bool transA : {false, true})
      for (bool transB : {false, true}) {
        const auto shape = [](bool trans, int64_t rows, int64_t cols) {
          return trans ? Shape{cols, rows} : Shape{rows, cols};
        };
        for (auto [M, N, K] : {std::array<int64_t, 3>{1030, 3, 5},
                               std::array<int64_t, 3>{3, 2050, 5},
                               std::array<int64_t, 3>{600, 1100, 9}})
          expectHalfMatmul(dt, {shape(transA, M, K), shape(transB, K, N),
                                {M, N}, transA, transB});
      }
  expectHalfMatmul(DType::BF16,
                   {{1025, 513}, {1030, 1025}, {513, 1030}, true, true});
}

TEST(MatMulTest, HalfStorageAccumulatesLongSumsInFloat) {
  // K = 5000 positive products (five depth chunks): each output is about
  // 1250, where a BF16 ulp is 8, so a sum kept in 16 bits would stall far
  // below it; an fp32 sum rounded once stays within 2^-8 of it.
  for (DType dt : kHalfTypes) {
    expectHalfMatmul(dt, {{3, 5000}, {5000, 5}, {3, 5}, false, false}, 0, 1);
    expectHalfMatmul(dt, {{2, 5000, 3}, {5000, 4}, {2, 3, 4}, true, false},
                     0, 1);
  }
}

TEST(MatMulTest, HalfStorageIsDeterministic) {
  // The interpreter and generated code call the same kernel: the same
  // shapes must give the same bits, call after call.
  Tensor a = randomTensor(DType::BF16, {700, 300}, 5);
  Tensor b = randomTensor(DType::BF16, {300, 1200}, 6);
  Tensor first(DType::BF16, {700, 1200}), second(DType::BF16, {700, 1200});
  matmul(a.view(), b.view(), first.view(), false, false);
  matmul(a.view(), b.view(), second.view(), false, false);
  EXPECT_EQ(std::memcmp(first.data(), second.data(), first.bytes()), 0);
}

TEST(MatMulTest, EmptyContractionGivesZeros) {
  Tensor a(DType::F32, {3, 0}), b(DType::F32, {0, 2});
  Tensor out = make(DType::F32, {3, 2}, {1, 1, 1, 1, 1, 1});
  matmul(a.view(), b.view(), out.view(), false, false);
  EXPECT_EQ(values(out), std::vector<double>(6, 0));
}

TEST(MatMulTest, RejectsMismatches) {
  Tensor a(DType::F32, {3, 4}), b(DType::F32, {5, 2}), out(DType::F32, {3, 2});
  EXPECT_THROW(matmul(a.view(), b.view(), out.view(), false, false),
               RuntimeError);
  Tensor i(DType::I64, {2, 2});
  EXPECT_THROW(matmul(i.view(), i.view(), i.view(), false, false),
               RuntimeError);
  Tensor a3(DType::F32, {2, 3, 4}), b3(DType::F32, {3, 4, 2}),
      o3(DType::F32, {2, 3, 2});
  EXPECT_THROW(matmul(a3.view(), b3.view(), o3.view(), false, false),
               RuntimeError)
      << "batch dims 2 and 3 do not broadcast";
}

} // namespace
