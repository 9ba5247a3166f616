//===- ScatterGatherTest.cpp - GatherND, its backward, ScatterND ----------===//
//
// Against the ONNX operator documentation's examples (worked out there) and
// against float64 references that spell out ONNX's definitions index by
// index: an output position's coordinates are split into batch, tuple and
// slice coordinates, and the data coordinates are the batch ones, the
// tuple's values (negative ones wrapped), then the slice ones.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "remat/runtime/KernelScratch.h"
#include "remat/runtime/Workspace.h"

#include <string>

namespace remat::rt::test {
namespace {

/// The data position (flat) that GatherND reads for gathered position
/// `flat` of the [indices.shape[:-1], data.shape[b+k:]] result.
int64_t refSource(int64_t flat, const Shape &data,
                  const std::vector<double> &idx, const Shape &is,
                  int64_t batchDims) {
  const int64_t k = is.back();
  Shape out(is.begin(), is.end() - 1);
  out.insert(out.end(), data.begin() + batchDims + k, data.end());
  std::vector<int64_t> o = unravel(flat, out);
  // The tuple: indices at the result's leading coordinates.
  std::vector<int64_t> at(o.begin(), o.begin() + (is.size() - 1));
  std::vector<int64_t> coords(o.begin(), o.begin() + batchDims);
  for (int64_t j = 0; j < k; ++j) {
    at.push_back(j);
    int64_t v = static_cast<int64_t>(idx[ravel(at, is)]);
    at.pop_back();
    coords.push_back(v < 0 ? v + data[batchDims + j] : v);
  }
  coords.insert(coords.end(), o.begin() + (is.size() - 1), o.end());
  return ravel(coords, data);
}

Shape gatheredShape(const Shape &data, const Shape &is, int64_t batchDims) {
  Shape out(is.begin(), is.end() - 1);
  out.insert(out.end(), data.begin() + batchDims + is.back(), data.end());
  return out;
}

/// In-range index values for the indexed dims, a third of them negative.
std::vector<double> tupleValues(const Shape &data, const Shape &is,
                                int64_t batchDims, unsigned seed) {
  std::mt19937 gen(seed);
  std::vector<double> v(numElements(is));
  for (size_t n = 0; n < v.size(); ++n) {
    const int64_t size = data[batchDims + n % is.back()];
    int64_t c = static_cast<int64_t>(gen() % size);
    if (gen() % 3 == 0)
      c -= size;
    v[n] = static_cast<double>(c);
  }
  return v;
}

TEST(ScatterGatherTest, GatherNDOnnxExamples) {
  // The five examples of the ONNX GatherND documentation.
  Tensor d2 = make(DType::I64, {2, 2}, {0, 1, 2, 3});
  Tensor i1 = make(DType::I64, {2, 2}, {0, 0, 1, 1});
  Tensor y1(DType::I64, {2});
  gatherND(d2.view(), i1.view(), y1.view(), 0);
  EXPECT_EQ(values(y1), (std::vector<double>{0, 3}));

  Tensor i2 = make(DType::I64, {2, 1}, {1, 0});
  Tensor y2(DType::I64, {2, 2});
  gatherND(d2.view(), i2.view(), y2.view(), 0);
  EXPECT_EQ(values(y2), (std::vector<double>{2, 3, 0, 1}));

  Tensor d3 = make(DType::F32, {2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  Tensor i3 = make(DType::I64, {2, 2}, {0, 1, 1, 0});
  Tensor y3(DType::F32, {2, 2});
  gatherND(d3.view(), i3.view(), y3.view(), 0);
  EXPECT_EQ(values(y3), (std::vector<double>{2, 3, 4, 5}));

  Tensor i4 = make(DType::I32, {2, 1, 2}, {0, 1, 1, 0});
  Tensor y4(DType::F32, {2, 1, 2});
  gatherND(d3.view(), i4.view(), y4.view(), 0);
  EXPECT_EQ(values(y4), (std::vector<double>{2, 3, 4, 5}));

  Tensor i5 = make(DType::I64, {2, 1}, {1, 0});
  Tensor y5(DType::F32, {2, 2});
  gatherND(d3.view(), i5.view(), y5.view(), 1);
  EXPECT_EQ(values(y5), (std::vector<double>{2, 3, 4, 5}));
}

TEST(ScatterGatherTest, GatherNDAgainstTheDefinition) {
  const Shape data = {2, 3, 4, 5};
  const std::vector<double> xv = randomValues(numElements(data), 1);
  struct Case {
    Shape indices;
    int64_t batchDims;
  };
  const Case cases[] = {{{6, 1}, 0},    {{2, 3, 2}, 0}, {{4, 4}, 0},
                        {{2, 4, 1}, 1}, {{2, 2, 3}, 1}, {{2, 3, 5, 2}, 2}};
  for (const Case &c : cases)
    for (DType idt : {DType::I64, DType::I32})
      for (DType dt : {DType::F64, DType::F16, DType::I64}) {
        SCOPED_TRACE(shapeToString(c.indices) + " batch_dims " +
                     std::to_string(c.batchDims));
        const std::vector<double> iv =
            tupleValues(data, c.indices, c.batchDims, 7);
        Tensor x = make(dt, data, xv);
        Tensor idx = make(idt, c.indices, iv);
        const Shape out = gatheredShape(data, c.indices, c.batchDims);
        Tensor y(dt, out);
        gatherND(x.view(), idx.view(), y.view(), c.batchDims);
        std::vector<double> xs = values(x), ys = values(y);
        for (int64_t e = 0; e < numElements(out); ++e)
          ASSERT_EQ(ys[e], xs[refSource(e, data, iv, c.indices, c.batchDims)])
              << e;
      }
}

TEST(ScatterGatherTest, GatherNDRejectsBadOperands) {
  Tensor x(DType::F32, {3, 4});
  Tensor y(DType::F32, {2});
  Tensor bad = make(DType::I64, {2, 2}, {0, 0, 3, 0});
  try {
    gatherND(x.view(), bad.view(), y.view(), 0);
    FAIL() << "no error";
  } catch (const RuntimeError &e) {
    EXPECT_NE(std::string(e.what()).find("gatherND: index 3 out of range"),
              std::string::npos)
        << e.what();
  }
  Tensor deep = make(DType::I64, {1, 3}, {0, 0, 0});
  Tensor y1(DType::F32, {1});
  EXPECT_THROW(gatherND(x.view(), deep.view(), y1.view(), 0), RuntimeError);
  Tensor ok = make(DType::I64, {2, 2}, {0, 0, 1, 1});
  Tensor wrongShape(DType::F32, {2, 1});
  EXPECT_THROW(gatherND(x.view(), ok.view(), wrongShape.view(), 0),
               RuntimeError);
  Tensor floatIndices(DType::F32, {2, 2});
  EXPECT_THROW(gatherND(x.view(), floatIndices.view(), y.view(), 0),
               RuntimeError);
  Tensor i2 = make(DType::I64, {2, 1}, {0, 1});
  Tensor y2(DType::F32, {2});
  EXPECT_THROW(gatherND(x.view(), i2.view(), y2.view(), 2), RuntimeError);
}

TEST(ScatterGatherTest, GatherNDBackwardAddsRepeatedTuples) {
  // x [3, 2]; tuples (row) 2, 0, 2, -1: row 2 receives three slices.
  Tensor idx = make(DType::I64, {4, 1}, {2, 0, 2, -1});
  const std::vector<double> dyv = {1, 2, 10, 20, 100, 200, 0.5, 2};
  for (DType dt : {DType::F32, DType::F64, DType::BF16, DType::F16}) {
    Tensor dy = make(dt, {4, 2}, dyv);
    Tensor dx(dt, {3, 2});
    gatherNDBackward(dy.view(), idx.view(), dx.view(), 0);
    EXPECT_EQ(values(dx), (std::vector<double>{10, 20, 0, 0, 101.5, 204}))
        << dtypeName(dt);
  }
}

TEST(ScatterGatherTest, GatherNDBackwardSumsInTupleOrderInComputeType) {
  // Three tuples name one f32 element: 1e8 + 1 rounds to 1e8 in float, so
  // the tuple order gives 0 (a sum in double or in another order gives 1).
  Tensor dy = make(DType::F32, {3}, {1e8, 1, -1e8});
  Tensor idx = make(DType::I64, {3, 1}, {0, 0, 0});
  Tensor dx(DType::F32, {1});
  gatherNDBackward(dy.view(), idx.view(), dx.view(), 0);
  EXPECT_EQ(values(dx)[0], 0.0);
}

TEST(ScatterGatherTest, GatherNDBackwardAgainstAFloat64ScatterAdd) {
  const Shape data = {2, 3, 4, 5};
  struct Case {
    Shape indices;
    int64_t batchDims;
  };
  const Case cases[] = {{{7, 2}, 0}, {{2, 6, 1}, 1}, {{2, 3, 4, 2}, 2}};
  for (const Case &c : cases) {
    SCOPED_TRACE(shapeToString(c.indices));
    const std::vector<double> iv = tupleValues(data, c.indices, c.batchDims, 3);
    Tensor idx = make(DType::I64, c.indices, iv);
    const Shape out = gatheredShape(data, c.indices, c.batchDims);
    const std::vector<double> dyv = randomValues(numElements(out), 5);
    std::vector<double> ref(numElements(data), 0.0);
    for (int64_t e = 0; e < numElements(out); ++e)
      ref[refSource(e, data, iv, c.indices, c.batchDims)] += dyv[e];
    // f64 sums exactly these values; f32 and 16-bit storage round.
    for (auto [dt, tol] : {std::pair{DType::F64, 1e-14},
                           std::pair{DType::F32, 1e-6},
                           std::pair{DType::BF16, 1e-2},
                           std::pair{DType::F16, 2e-3}}) {
      Tensor dy = make(dt, out, dyv);
      Tensor dx(dt, data);
      gatherNDBackward(dy.view(), idx.view(), dx.view(), c.batchDims);
      if (dt == DType::F64)
        expectAllNear(values(dx), ref, tol);
      else
        expectAllNear(values(dx), ref, tol * 4); // inputs rounded too
    }
  }
}

TEST(ScatterGatherTest, GatherNDBackwardTakesItsDeclaredScratch) {
  Tensor dy = make(DType::BF16, {2, 2}, {1, 2, 3, 4});
  Tensor idx = make(DType::I64, {2, 1}, {1, 1});
  Tensor dx(DType::BF16, {3, 2});
  EXPECT_EQ(gatherNDBackwardScratchBytes(dx.view()),
            scratchPiece<float>(6));
  EXPECT_EQ(gatherNDBackwardScratchBytes(Tensor(DType::F32, {3, 2}).view()),
            0u);
  setWorkspace(nullptr, 0);
  EXPECT_THROW(gatherNDBackward(dy.view(), idx.view(), dx.view(), 0),
               RuntimeError);
  std::vector<char> buffer(scratchPiece<float>(6) + kScratchAlignment);
  void *aligned = buffer.data() + (kScratchAlignment -
                                   reinterpret_cast<uintptr_t>(buffer.data()) %
                                       kScratchAlignment);
  setWorkspace(aligned, scratchPiece<float>(6));
  gatherNDBackward(dy.view(), idx.view(), dx.view(), 0);
  EXPECT_EQ(values(dx), (std::vector<double>{0, 0, 4, 6, 0, 0}));
  setWorkspace(nullptr, 0);
  useGrowableWorkspace();
}

TEST(ScatterGatherTest, ScatterNDOnnxExamples) {
  // ONNX ScatterND documentation, examples 1 and 2.
  Tensor data = make(DType::F32, {8}, {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor idx = make(DType::I64, {4, 1}, {4, 3, 1, 7});
  Tensor upd = make(DType::F32, {4}, {9, 10, 11, 12});
  Tensor y(DType::F32, {8});
  scatterND(data.view(), idx.view(), upd.view(), y.view(),
            ScatterReduction::None);
  EXPECT_EQ(values(y), (std::vector<double>{1, 11, 3, 10, 9, 6, 7, 12}));

  std::vector<double> cube = {1, 2, 3, 4, 5, 6, 7, 8, 8, 7, 6, 5, 4, 3, 2, 1,
                              1, 2, 3, 4, 5, 6, 7, 8, 8, 7, 6, 5, 4, 3, 2, 1,
                              8, 7, 6, 5, 4, 3, 2, 1, 1, 2, 3, 4, 5, 6, 7, 8,
                              8, 7, 6, 5, 4, 3, 2, 1, 1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<double> fives = {5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7, 8, 8, 8, 8};
  std::vector<double> ones = {1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4};
  std::vector<double> updv = fives;
  updv.insert(updv.end(), ones.begin(), ones.end());
  Tensor data3 = make(DType::I64, {4, 4, 4}, cube);
  Tensor idx3 = make(DType::I32, {2, 1}, {0, 2});
  Tensor upd3 = make(DType::I64, {2, 4, 4}, updv);
  Tensor y3(DType::I64, {4, 4, 4});
  scatterND(data3.view(), idx3.view(), upd3.view(), y3.view(),
            ScatterReduction::None);
  std::vector<double> expected = fives;
  expected.insert(expected.end(), cube.begin() + 16, cube.begin() + 32);
  expected.insert(expected.end(), ones.begin(), ones.end());
  expected.insert(expected.end(), cube.begin() + 48, cube.end());
  EXPECT_EQ(values(y3), expected);
}

TEST(ScatterGatherTest, ScatterNDReductionsApplyRepeatedTuplesInOrder) {
  // ONNX's test_scatternd_add/multiply/max/min cases (data 4x4x4, tuples
  // 0 and 0 again), on one row: data row r, updates u1 then u2.
  const std::vector<double> row = {1, 2, 3, 4};
  const std::vector<double> u1 = {5, 1, 7, 0.5}, u2 = {2, 3, -1, 0.5};
  struct Case {
    ScatterReduction reduction;
    std::vector<double> expected;
  };
  const Case cases[] = {
      {ScatterReduction::None, u2},
      {ScatterReduction::Add, {8, 6, 9, 5}},
      {ScatterReduction::Mul, {10, 6, -21, 1}},
      {ScatterReduction::Max, {5, 3, 7, 4}},
      {ScatterReduction::Min, {1, 1, -1, 0.5}},
  };
  for (const Case &c : cases)
    for (DType dt : {DType::F32, DType::F64, DType::F16, DType::BF16}) {
      std::vector<double> data = row;
      data.insert(data.end(), row.begin(), row.end());
      std::vector<double> upd = u1;
      upd.insert(upd.end(), u2.begin(), u2.end());
      Tensor x = make(dt, {2, 4}, data);
      Tensor idx = make(DType::I64, {2, 1}, {-2, 0});
      Tensor u = make(dt, {2, 4}, upd);
      Tensor y(dt, {2, 4});
      scatterND(x.view(), idx.view(), u.view(), y.view(), c.reduction);
      std::vector<double> expected = c.expected;
      expected.insert(expected.end(), row.begin(), row.end());
      EXPECT_EQ(values(y), expected)
          << dtypeName(dt) << " reduction " << static_cast<int>(c.reduction);
    }
  // Integers (wrap-around arithmetic), and in place (y is data).
  Tensor xi = make(DType::I32, {3}, {1, 2, 3});
  Tensor idx = make(DType::I64, {3, 1}, {2, 0, 2});
  Tensor ui = make(DType::I32, {3}, {10, 20, 30});
  scatterND(xi.view(), idx.view(), ui.view(), xi.view(),
            ScatterReduction::Add);
  EXPECT_EQ(values(xi), (std::vector<double>{21, 2, 43}));
  scatterND(xi.view(), idx.view(), ui.view(), xi.view(),
            ScatterReduction::Mul);
  EXPECT_EQ(values(xi), (std::vector<double>{420, 2, 12900}));
}

TEST(ScatterGatherTest, ScatterNDAgainstTheDefinition) {
  // Update slices of a [3, 4, 5] tensor by tuples of 1, 2 and 3
  // coordinates, in f64 against the definition's loop.
  const Shape data = {3, 4, 5};
  const std::vector<double> xv = randomValues(numElements(data), 11);
  for (int64_t k = 1; k <= 3; ++k) {
    const Shape is = {6, k};
    const std::vector<double> iv = tupleValues(data, is, 0, 13 + k);
    const Shape us = gatheredShape(data, is, 0);
    const std::vector<double> uv = randomValues(numElements(us), 17);
    for (ScatterReduction r : {ScatterReduction::None, ScatterReduction::Add,
                               ScatterReduction::Max}) {
      std::vector<double> ref = xv;
      for (int64_t e = 0; e < numElements(us); ++e) {
        double &target = ref[refSource(e, data, iv, is, 0)];
        target = r == ScatterReduction::None  ? uv[e]
                 : r == ScatterReduction::Add ? target + uv[e]
                                              : std::max(target, uv[e]);
      }
      Tensor x = make(DType::F64, data, xv), idx = make(DType::I64, is, iv);
      Tensor u = make(DType::F64, us, uv), y(DType::F64, data);
      scatterND(x.view(), idx.view(), u.view(), y.view(), r);
      expectAllNear(values(y), ref, 1e-15);
    }
  }
}

TEST(ScatterGatherTest, ScatterNDRejectsBadOperands) {
  Tensor x(DType::F32, {4});
  Tensor y(DType::F32, {4});
  Tensor idx = make(DType::I64, {2, 1}, {0, -5});
  Tensor u(DType::F32, {2});
  try {
    scatterND(x.view(), idx.view(), u.view(), y.view(),
              ScatterReduction::None);
    FAIL() << "no error";
  } catch (const RuntimeError &e) {
    EXPECT_NE(std::string(e.what()).find("scatterND: index -5 out of range"),
              std::string::npos)
        << e.what();
  }
  Tensor ok = make(DType::I64, {2, 1}, {0, 1});
  Tensor u3(DType::F32, {3});
  EXPECT_THROW(scatterND(x.view(), ok.view(), u3.view(), y.view(),
                         ScatterReduction::None),
               RuntimeError);
  Tensor b(DType::Bool, {4}), ub(DType::Bool, {2}), yb(DType::Bool, {4});
  EXPECT_THROW(scatterND(b.view(), ok.view(), ub.view(), yb.view(),
                         ScatterReduction::Add),
               RuntimeError);
  Tensor y5(DType::F32, {5});
  EXPECT_THROW(scatterND(x.view(), ok.view(), u.view(), y5.view(),
                         ScatterReduction::None),
               RuntimeError);
}

} // namespace
} // namespace remat::rt::test
