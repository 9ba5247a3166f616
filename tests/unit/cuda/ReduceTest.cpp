//===- ReduceTest.cpp - CUDA ReduceSum / Mean / Max against the CPU -------===//
//
// Max and integer reductions are exact. Float sums accumulate in double on
// the CPU and in compensated fp32 on the GPU for F32 (double for F64), in
// different orders, so after rounding to f32 they agree to tolerance().
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtil.h"

#include <limits>

using namespace remat::rt;
using namespace remat::rt::cudatest;
namespace rt = remat::rt;

namespace {

using CudaReduce = CudaTest;

void checkReduce(ReduceOp op, const Tensor &x, const std::vector<int64_t> &axes,
                 const std::string &what) {
  Shape outShape = x.shape();
  for (int64_t a : axes)
    outShape[a] = 1;
  Tensor expected(x.dtype(), outShape);
  rt::reduce(op, x.view(), expected.view(), axes);
  DeviceTensor dx(x), dout(x.dtype(), outShape);
  cuda::reduce(op, dx.view(), dout.view(), axes);
  const bool exact =
      op == ReduceOp::Max || x.dtype() == DType::I64 || x.dtype() == DType::I32;
  if (exact)
    expectSame(dout.host(), expected, what);
  else
    expectNear(dout.host(), expected, tolerance(x.dtype()), what);
}

TEST_F(CudaReduce, EveryAxisSubsetOfA4dTensor) {
  const Shape shape = {4, 5, 6, 7};
  unsigned seed = 1;
  for (DType dtype : {DType::F32, DType::F64, DType::I64, DType::I32}) {
    const bool isInt = dtype == DType::I64 || dtype == DType::I32;
    Tensor x = isInt ? randomIntegers(dtype, shape, ++seed, -100, 100)
                     : randomTensor(dtype, shape, ++seed, -2, 3);
    for (int mask = 0; mask < 16; ++mask) {
      std::vector<int64_t> axes;
      for (int64_t d = 0; d < 4; ++d)
        if (mask & (1 << d))
          axes.push_back(d);
      for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max})
        checkReduce(op, x, axes,
                    std::string(dtypeName(dtype)) + " mask " +
                        std::to_string(mask) + " op " +
                        std::to_string(static_cast<int>(op)));
    }
  }
}

TEST_F(CudaReduce, LargeReductionsSplitAcrossBlocks) {
  // Few outputs and many reduced elements: partial results in scratch.
  Tensor full = randomTensor(DType::F32, {300000}, 1);
  checkReduce(ReduceOp::Sum, full, {0}, "full sum");
  checkReduce(ReduceOp::Max, full, {0}, "full max");
  Tensor columns = randomTensor(DType::F32, {20000, 48}, 2);
  checkReduce(ReduceOp::Sum, columns, {0}, "column sum");
  checkReduce(ReduceOp::Mean, columns, {0}, "column mean");
  Tensor middle = randomTensor(DType::F64, {3, 5000, 17}, 3);
  checkReduce(ReduceOp::Sum, middle, {1}, "middle sum");
  checkReduce(ReduceOp::Max, middle, {0, 2}, "outer and inner max");
}

TEST_F(CudaReduce, MaxPropagatesNaNAndEmptyReductions) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor x = make(DType::F32, {2, 3}, {1, nan, 3, 4, 5, 6});
  checkReduce(ReduceOp::Max, x, {1}, "NaN row");
  checkReduce(ReduceOp::Max, x, {0}, "NaN column");
  // A zero-size reduced dim: sums are 0, the mean NaN, the max -inf.
  Tensor empty(DType::F32, {3, 0});
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max})
    checkReduce(op, empty, {1}, "empty");
  Tensor copyLike = randomTensor(DType::F32, {3, 4}, 9);
  checkReduce(ReduceOp::Sum, copyLike, {}, "no axes");
}

TEST_F(CudaReduce, CumSumMatchesTheCpuBitwise) {
  // Both backends sum each line in order in x's type: the same bits.
  const Shape shape = {3, 65, 37};
  for (DType dtype : {DType::F32, DType::F64, DType::I32, DType::I64})
    for (int64_t axis = 0; axis < 3; ++axis)
      for (bool exclusive : {false, true})
        for (bool reverse : {false, true}) {
          Tensor x = dtype == DType::I32 || dtype == DType::I64
                         ? randomIntegers(dtype, shape, 13, -50, 50)
                         : randomTensor(dtype, shape, 13);
          Tensor y(dtype, shape);
          rt::cumSum(x.view(), y.view(), axis, exclusive, reverse);
          DeviceTensor dx(x), dy(dtype, shape);
          cuda::cumSum(dx.view(), dy.view(), axis, exclusive, reverse);
          expectSame(dy.host(), y, "axis " + std::to_string(axis));
        }
}

} // namespace
