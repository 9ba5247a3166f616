//===- ReduceTest.cpp - ReduceSum / Mean / Max, CumSum against naive loops ===//
//
// F16/BF16 results are checked by the rule in TestUtil.h, with n the number
// of elements reduced into each output and M the sum of their |x|.
//
//===----------------------------------------------------------------------===//

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

/// |x| elementwise.
std::vector<double> absolute(std::vector<double> v) {
  for (double &x : v)
    x = std::abs(x);
  return v;
}

/// A 16-bit reduce of x over `axes` against the float64 loop.
void expectHalfReduce(DType dt, ReduceOp op, const Tensor &x,
                      const std::vector<int64_t> &axes) {
  Shape outShape = x.shape();
  for (int64_t d : axes)
    outShape[d] = 1;
  SCOPED_TRACE(std::string(dtypeName(dt)) + " " + shapeToString(x.shape()) +
               " -> " + shapeToString(outShape));
  Tensor out(dt, outShape);
  reduce(op, x.view(), out.view(), axes);
  const int64_t n = x.numel() / numElements(outShape);
  std::vector<double> magnitude =
      refReduce(ReduceOp::Sum, absolute(values(x)), x.shape(), outShape);
  if (op == ReduceOp::Mean)
    for (double &m : magnitude)
      m /= static_cast<double>(n);
  expectHalfNear(values(out), refReduce(op, values(x), x.shape(), outShape),
                 dt, n, magnitude);
}

TEST(ReduceTest, HalfStorageAllAxisSubsets) {
  const Shape shape = {3, 4, 5};
  for (DType dt : kHalfTypes)
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max})
      for (int mask = 1; mask < 8; ++mask) {
        std::vector<int64_t> axes;
        for (int d = 0; d < 3; ++d)
          if (mask & (1 << d))
            axes.push_back(d);
        expectHalfReduce(dt, op, randomTensor(dt, shape, mask, -5, 5), axes);
      }
}

TEST(ReduceTest, HalfStorageLongRowsAccumulateInFloat) {
  // Rows of 4096 values in [0, 1): each sum is about 2048, where a BF16 ulp
  // is 16, so a sum kept in BF16 would stall near 256 (an F16 one near
  // 2048 only by luck, losing every addend's low bits). Reduced along the
  // contiguous dim and across rows (the gradient of a broadcast bias).
  for (DType dt : kHalfTypes) {
    expectHalfReduce(dt, ReduceOp::Sum, randomTensor(dt, {3, 4096}, 7, 0, 1),
                     {1});
    expectHalfReduce(dt, ReduceOp::Sum, randomTensor(dt, {4096, 5}, 8, 0, 1),
                     {0});
    expectHalfReduce(dt, ReduceOp::Mean, randomTensor(dt, {2, 4096}, 9, 0, 1),
                     {1});
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

/// CumSum from its definition: for each output position, the sum of the
/// positions it covers along the axis, added from scratch in double.
std::vector<double> refCumSum(const std::vector<double> &x, const Shape &shape,
                              int64_t axis, bool exclusive, bool reverse) {
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < static_cast<int64_t>(x.size()); ++o) {
    std::vector<int64_t> idx = unravel(o, shape);
    const int64_t j = idx[axis];
    double sum = 0;
    for (int64_t k = 0; k < shape[axis]; ++k) {
      const bool covered = reverse ? (exclusive ? k > j : k >= j)
                                   : (exclusive ? k < j : k <= j);
      if (covered) {
        idx[axis] = k;
        sum += x[ravel(idx, shape)];
      }
    }
    y[o] = sum;
  }
  return y;
}

TEST(ReduceTest, CumSumEveryAxisAndDirection) {
  const Shape shape = {3, 4, 5};
  for (DType dt : {DType::F32, DType::F64, DType::I32, DType::I64,
                   DType::F16, DType::BF16})
    for (int64_t axis = 0; axis < 3; ++axis)
      for (bool exclusive : {false, true})
        for (bool reverse : {false, true}) {
          SCOPED_TRACE(std::string(dtypeName(dt)) + " axis " +
                       std::to_string(axis) + (exclusive ? " exclusive" : "") +
                       (reverse ? " reverse" : ""));
          // Small integers: every partial sum is exact in every dtype.
          std::vector<double> xv(60);
          for (size_t i = 0; i < xv.size(); ++i)
            xv[i] = static_cast<double>(static_cast<int>(i * 7 % 11) - 5);
          Tensor x = make(dt, shape, xv);
          Tensor y(dt, shape);
          cumSum(x.view(), y.view(), axis, exclusive, reverse);
          ASSERT_EQ(values(y), refCumSum(xv, shape, axis, exclusive, reverse));
        }
}

TEST(ReduceTest, CumSumOfHalfStorageRunsInFloat) {
  // 4096 ones: the running sum is fp32, so output k is k + 1 rounded to the
  // format; read back from a BF16 output it would stall at 256
  // (256 + 1 rounds to 256).
  for (DType dt : kHalfTypes) {
    SCOPED_TRACE(dtypeName(dt));
    const std::vector<double> ones(4096, 1.0);
    Tensor x = make(dt, {4096}, ones);
    Tensor y(dt, {4096});
    cumSum(x.view(), y.view(), 0, false, false);
    std::vector<double> expected(4096);
    for (int64_t k = 0; k < 4096; ++k)
      expected[k] = static_cast<double>(k + 1);
    Tensor rounded = make(dt, {4096}, expected); // each k + 1 rounded once
    ASSERT_EQ(values(y), values(rounded));
    EXPECT_EQ(values(y).back(), 4096.0);
  }
}

TEST(ReduceTest, CumSumOnnxExamplesAndChecks) {
  // The ONNX operator documentation's examples: x = [1, 2, 3].
  Tensor x = make(DType::F64, {3}, {1, 2, 3});
  Tensor y(DType::F64, {3});
  cumSum(x.view(), y.view(), 0, false, false);
  EXPECT_EQ(values(y), (std::vector<double>{1, 3, 6}));
  cumSum(x.view(), y.view(), 0, true, false);
  EXPECT_EQ(values(y), (std::vector<double>{0, 1, 3}));
  cumSum(x.view(), y.view(), 0, false, true);
  EXPECT_EQ(values(y), (std::vector<double>{6, 5, 3}));
  cumSum(x.view(), y.view(), 0, true, true);
  EXPECT_EQ(values(y), (std::vector<double>{5, 3, 0}));
  // float32 sums in float32, in order (as numpy.cumsum): 2^24 + 1 rounds
  // back to 2^24.
  Tensor f = make(DType::F32, {3}, {16777216.0, 1.0, 1.0});
  Tensor g(DType::F32, {3});
  cumSum(f.view(), g.view(), 0, false, false);
  EXPECT_EQ(values(g), (std::vector<double>{16777216.0, 16777216.0, 16777216.0}));
  Tensor bad(DType::F32, {3});
  EXPECT_THROW(cumSum(x.view(), bad.view(), 0, false, false), RuntimeError);
  EXPECT_THROW(cumSum(x.view(), y.view(), 1, false, false), RuntimeError);
}

} // namespace
