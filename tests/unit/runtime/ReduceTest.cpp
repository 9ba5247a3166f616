//===- ReduceTest.cpp - ReduceSum / Mean / Max against a naive loop -------===//

#include "TestUtil.h"

using namespace remat::rt;
using namespace remat::rt::test;

namespace {

std::vector<double> refReduce(ReduceOp op, const std::vector<double> &x,
                              const Shape &shape, const Shape &outShape) {
  std::vector<double> acc(numElements(outShape),
                          op == ReduceOp::Max ? -INFINITY : 0.0);
  std::vector<int64_t> count(acc.size(), 0);
  for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i) {
    int64_t o = broadcastSource(unravel(i, shape), outShape);
    acc[o] = op == ReduceOp::Max ? std::max(acc[o], x[i]) : acc[o] + x[i];
    ++count[o];
  }
  if (op == ReduceOp::Mean)
    for (size_t o = 0; o < acc.size(); ++o)
      acc[o] /= count[o];
  return acc;
}

TEST(ReduceTest, AllAxisSubsets) {
  const Shape shape = {3, 4, 5};
  for (DType dt : {DType::F32, DType::F64})
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max})
      for (int mask = 1; mask < 8; ++mask) {
        std::vector<int64_t> axes;
        Shape outShape = shape;
        for (int d = 0; d < 3; ++d)
          if (mask & (1 << d)) {
            axes.push_back(d);
            outShape[d] = 1;
          }
        Tensor x = randomTensor(dt, shape, mask, -5, 5);
        Tensor out(dt, outShape);
        reduce(op, x.view(), out.view(), axes);
        SCOPED_TRACE(shapeToString(outShape));
        expectAllNear(values(out), refReduce(op, values(x), shape, outShape),
                      dt == DType::F32 ? 1e-6 : 1e-13);
      }
}

TEST(ReduceTest, IntegerSumAndMaxAndEmptyAxes) {
  Tensor x = make(DType::I64, {2, 3}, {1, -5, 3, 4, 5, 6});
  Tensor out(DType::I64, {2, 1});
  reduce(ReduceOp::Sum, x.view(), out.view(), {1});
  EXPECT_EQ(values(out), (std::vector<double>{-1, 15}));
  reduce(ReduceOp::Max, x.view(), out.view(), {1});
  EXPECT_EQ(values(out), (std::vector<double>{3, 6}));
  Tensor same(DType::I64, {2, 3});
  reduce(ReduceOp::Sum, x.view(), same.view(), {});
  EXPECT_EQ(values(same), values(x));
  Tensor bad(DType::I64, {2, 3});
  EXPECT_THROW(reduce(ReduceOp::Sum, x.view(), bad.view(), {1}), RuntimeError);
}

TEST(ReduceTest, FloatSumAccumulatesInDouble) {
  // 2^24 + 1 ones: a float accumulator would stall at 2^24.
  const int64_t n = (1 << 24) + 8;
  Tensor x(DType::F32, {n});
  std::fill(x.as<float>(), x.as<float>() + n, 1.0f);
  Tensor out(DType::F32, {1});
  reduce(ReduceOp::Sum, x.view(), out.view(), {0});
  EXPECT_EQ(out.as<float>()[0], static_cast<float>(n));
}

} // namespace
