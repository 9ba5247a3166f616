//===- MatMulTest.cpp - Batched matmul against a naive triple loop --------===//

#include "TestUtil.h"

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

struct MatmulCase {
  Shape a, b, out;
  bool transA, transB;
};

TEST(MatMulTest, MatchesNaiveLoop) {
  const std::vector<MatmulCase> cases = {
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
  for (DType dt : {DType::F32, DType::F64})
    for (const MatmulCase &c : cases) {
      SCOPED_TRACE(shapeToString(c.a) + " x " + shapeToString(c.b));
      Tensor a = randomTensor(dt, c.a, 1), b = randomTensor(dt, c.b, 2);
      Tensor out(dt, c.out);
      matmul(a.view(), b.view(), out.view(), c.transA, c.transB);
      expectAllNear(values(out), refMatmul(a, b, c.out, c.transA, c.transB),
                    dt == DType::F32 ? 1e-5 : 1e-12);
    }
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
