//===- MatMulTest.cpp - CUDA batched matmul against the CPU ---------------===//
//
// cuBLAS and OpenBLAS sum in different orders: tolerance() relative to
// 1 + |value| (inputs in [-1, 1], K <= 70).
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtil.h"

using namespace remat::rt;
using namespace remat::rt::cudatest;
namespace rt = remat::rt;

namespace {

using CudaMatMul = CudaTest;

struct MatMulCase {
  Shape a, b, out;
  bool transA, transB;
};

TEST_F(CudaMatMul, MatchesCpuAcrossBroadcastsAndTransposes) {
  const MatMulCase cases[] = {
      {{5, 7}, {7, 3}, {5, 3}, false, false},
      {{7, 5}, {7, 3}, {5, 3}, true, false},
      {{5, 7}, {3, 7}, {5, 3}, false, true},
      {{7, 5}, {3, 7}, {5, 3}, true, true},
      {{2, 4, 6, 70}, {70, 9}, {2, 4, 6, 9}, false, false}, // linear layer
      {{2, 4, 6, 7}, {9, 7}, {2, 4, 6, 9}, false, true},
      {{3, 7, 6}, {7, 9}, {3, 6, 9}, true, false},  // shared b, transA
      {{6, 7}, {3, 7, 9}, {3, 6, 9}, false, false}, // shared a
      {{2, 1, 6, 7}, {1, 4, 7, 9}, {2, 4, 6, 9}, false, false},
      {{4, 1, 6, 7}, {4, 3, 9, 7}, {4, 3, 6, 9}, false, true},
      {{2, 3, 6, 7}, {2, 1, 7, 9}, {2, 3, 6, 9}, false, false},
      {{2, 0, 6, 7}, {7, 9}, {2, 0, 6, 9}, false, false}, // empty batch
      {{3, 6, 0}, {3, 0, 9}, {3, 6, 9}, false, false},    // K = 0: zeros
  };
  unsigned seed = 1;
  for (const MatMulCase &c : cases)
    for (DType dtype : {DType::F32, DType::F64}) {
      Tensor a = randomTensor(dtype, c.a, ++seed);
      Tensor b = randomTensor(dtype, c.b, ++seed);
      Tensor expected(dtype, c.out);
      rt::matmul(a.view(), b.view(), expected.view(), c.transA, c.transB);
      DeviceTensor da(a), db(b), dout(dtype, c.out);
      // Garbage in the output must be overwritten (K = 0 included).
      cuda::fill(dout.view(), 7.0);
      cuda::matmul(da.view(), db.view(), dout.view(), c.transA, c.transB);
      expectNear(dout.host(), expected, tolerance(dtype),
                 shapeToString(c.a) + " x " + shapeToString(c.b));
    }
}

TEST_F(CudaMatMul, RejectsMismatchedShapes) {
  DeviceTensor a(DType::F32, {5, 7}), b(DType::F32, {6, 3}),
      out(DType::F32, {5, 3});
  EXPECT_THROW(cuda::matmul(a.view(), b.view(), out.view(), false, false),
               RuntimeError);
}

} // namespace
