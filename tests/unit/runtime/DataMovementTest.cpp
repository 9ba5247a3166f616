//===- DataMovementTest.cpp - transpose, concat, split, slice, gather, expand

#include "TestUtil.h"

#include <numeric>

using namespace remat::rt;
using namespace remat::rt::test;

namespace {

std::vector<double> iota(int64_t n) {
  std::vector<double> v(n);
  std::iota(v.begin(), v.end(), 0.0);
  return v;
}

TEST(DataMovementTest, TransposeAllPermutationsAndDtypes) {
  const Shape shape = {2, 3, 4};
  for (DType dt : {DType::F32, DType::F64, DType::F16, DType::I8}) {
    Tensor x = make(dt, shape, iota(24));
    std::vector<int64_t> perm = {0, 1, 2};
    do {
      Shape ys = {shape[perm[0]], shape[perm[1]], shape[perm[2]]};
      Tensor y(dt, ys);
      transpose(x.view(), y.view(), perm);
      std::vector<double> yv = values(y);
      for (int64_t o = 0; o < y.numel(); ++o) {
        std::vector<int64_t> yi = unravel(o, ys), xi(3);
        for (int d = 0; d < 3; ++d)
          xi[perm[d]] = yi[d];
        ASSERT_EQ(yv[o], ravel(xi, shape));
      }
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
  Tensor x(DType::F32, {2, 3}), y(DType::F32, {2, 3});
  EXPECT_THROW(transpose(x.view(), y.view(), {1, 0}), RuntimeError);
}

TEST(DataMovementTest, ConcatAndSplitAreInverse) {
  for (int64_t axis = 0; axis < 3; ++axis) {
    Shape a = {2, 3, 4}, b = {2, 3, 4}, y = {2, 3, 4};
    b[axis] = 1;
    Shape c = a;
    c[axis] = 2;
    y[axis] = a[axis] + b[axis] + c[axis];
    Tensor ta = make(DType::I32, a, iota(numElements(a)));
    Tensor tb = make(DType::I32, b, std::vector<double>(numElements(b), -1));
    Tensor tc = make(DType::I32, c, std::vector<double>(numElements(c), -2));
    Tensor ty(DType::I32, y);
    concat({ta.view(), tb.view(), tc.view()}, ty.view(), axis);
    std::vector<double> yv = values(ty);
    for (int64_t o = 0; o < ty.numel(); ++o) {
      std::vector<int64_t> yi = unravel(o, y);
      double expected;
      if (yi[axis] < a[axis])
        expected = ravel(yi, a);
      else if (yi[axis] < a[axis] + b[axis])
        expected = -1;
      else
        expected = -2;
      ASSERT_EQ(yv[o], expected);
    }
    Tensor sa(DType::I32, a), sb(DType::I32, b), sc(DType::I32, c);
    split(ty.view(), {sa.view(), sb.view(), sc.view()}, axis);
    EXPECT_EQ(values(sa), values(ta));
    EXPECT_EQ(values(sb), values(tb));
    EXPECT_EQ(values(sc), values(tc));
  }
  Tensor a(DType::F32, {2, 3}), b(DType::F32, {3, 3}), y(DType::F32, {5, 3});
  EXPECT_THROW(concat({a.view(), b.view()}, y.view(), 1), RuntimeError);
}

TEST(DataMovementTest, SliceWithPositiveAndNegativeSteps) {
  const Shape shape = {4, 5, 6};
  Tensor x = make(DType::F64, shape, iota(120));
  struct Case {
    std::vector<int64_t> starts, steps;
    Shape out;
  };
  const std::vector<Case> cases = {
      {{1, 0, 2}, {1, 2, 1}, {2, 3, 3}},
      {{3, 4, 5}, {-1, -1, -1}, {4, 5, 6}}, // full reversal
      {{3, 4, 5}, {-2, -3, -2}, {2, 2, 3}},
      {{0, 2, 5}, {3, 1, -4}, {2, 3, 2}},
      {{0, 0, 0}, {1, 1, 1}, {4, 0, 6}}, // empty
  };
  for (const Case &c : cases) {
    Tensor y(DType::F64, c.out);
    slice(x.view(), y.view(), c.starts, c.steps);
    std::vector<double> yv = values(y);
    for (int64_t o = 0; o < y.numel(); ++o) {
      std::vector<int64_t> yi = unravel(o, c.out), xi(3);
      for (int d = 0; d < 3; ++d)
        xi[d] = c.starts[d] + yi[d] * c.steps[d];
      ASSERT_EQ(yv[o], ravel(xi, shape));
    }
  }
  Tensor y(DType::F64, {3, 1, 1});
  EXPECT_THROW(slice(x.view(), y.view(), {2, 0, 0}, {1, 1, 1}), RuntimeError);
}

TEST(DataMovementTest, GatherWithNegativeIndices) {
  const Shape shape = {3, 4, 2};
  Tensor x = make(DType::F32, shape, iota(24));
  for (DType idt : {DType::I64, DType::I32})
    for (int64_t axis = 0; axis < 3; ++axis) {
      const int64_t size = shape[axis];
      Tensor idx = make(idt, {2, 2}, {0, -1, static_cast<double>(size - 1),
                                      static_cast<double>(-size)});
      Shape ys;
      for (int64_t d = 0; d < axis; ++d)
        ys.push_back(shape[d]);
      ys.push_back(2);
      ys.push_back(2);
      for (int64_t d = axis + 1; d < 3; ++d)
        ys.push_back(shape[d]);
      Tensor y(DType::F32, ys);
      gather(x.view(), idx.view(), y.view(), axis);
      std::vector<double> yv = values(y), iv = values(idx);
      for (int64_t o = 0; o < y.numel(); ++o) {
        std::vector<int64_t> yi = unravel(o, ys), xi;
        for (int64_t d = 0; d < axis; ++d)
          xi.push_back(yi[d]);
        int64_t i = static_cast<int64_t>(iv[yi[axis] * 2 + yi[axis + 1]]);
        xi.push_back(i < 0 ? i + size : i);
        for (int64_t d = axis + 1; d < 3; ++d)
          xi.push_back(yi[d + 1]);
        ASSERT_EQ(yv[o], ravel(xi, shape));
      }
    }
  Tensor bad = make(DType::I64, {1}, {3});
  Tensor y(DType::F32, {1, 4, 2});
  EXPECT_THROW(gather(x.view(), bad.view(), y.view(), 0), RuntimeError);
  Tensor badNeg = make(DType::I32, {1}, {-4});
  EXPECT_THROW(gather(x.view(), badNeg.view(), y.view(), 0), RuntimeError);
}

TEST(DataMovementTest, GatherEmbeddingLookup) {
  // The GPT-2 token embedding: table [vocab, d], ids [batch, seq].
  Tensor table = make(DType::F32, {5, 3}, iota(15));
  Tensor ids = make(DType::I64, {2, 2}, {4, 0, 2, 2});
  Tensor y(DType::F32, {2, 2, 3});
  gather(table.view(), ids.view(), y.view(), 0);
  EXPECT_EQ(values(y), (std::vector<double>{12, 13, 14, 0, 1, 2, 6, 7, 8, 6,
                                            7, 8}));
}

TEST(DataMovementTest, ExpandBroadcasts) {
  for (DType dt : {DType::F32, DType::Bool, DType::I64}) {
    Tensor x = make(dt, {3, 1}, {1, 0, 1});
    Tensor y(dt, {2, 3, 4});
    expand(x.view(), y.view());
    std::vector<double> yv = values(y), xv = values(x);
    for (int64_t o = 0; o < y.numel(); ++o)
      ASSERT_EQ(yv[o], xv[broadcastSource(unravel(o, {2, 3, 4}), {3, 1})]);
  }
  Tensor x(DType::F32, {3}), y(DType::F32, {2, 4});
  EXPECT_THROW(expand(x.view(), y.view()), RuntimeError);
}

} // namespace
