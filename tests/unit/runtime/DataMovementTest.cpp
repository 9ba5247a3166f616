//===- DataMovementTest.cpp - transpose, concat, split, slice, gather, expand, pad

#include "TestUtil.h"

#include <algorithm>
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

//===----------------------------------------------------------------------===//
// Pad: the reference walks each padded dim from its first kept element
// outwards one step at a time (bouncing off the ends for reflect, wrapping
// for wrap, stopping for edge), the way the modes are defined, rather than
// with the kernels' closed-form periods.
//===----------------------------------------------------------------------===//

/// For each output position of one dim: the input index it reads, or -1.
std::vector<int64_t> padWalk(int64_t in, int64_t begin, int64_t end,
                             PadMode mode) {
  const int64_t crop = std::max<int64_t>(0, -begin);
  const int64_t kept = in - crop - std::max<int64_t>(0, -end);
  const int64_t before = std::max<int64_t>(0, begin);
  const int64_t after = std::max<int64_t>(0, end);
  std::vector<int64_t> map(before + kept + after, -1);
  for (int64_t j = 0; j < kept; ++j)
    map[before + j] = crop + j;
  if (mode == PadMode::Constant)
    return map;
  // Walks `steps` steps from kept index `start` in direction `dir`.
  auto walk = [&](int64_t start, int dir, int64_t steps) {
    int64_t j = start;
    for (int64_t s = 0; s < steps; ++s) {
      if (mode == PadMode::Edge)
        break;
      if (mode == PadMode::Wrap) {
        j = (j + dir + kept) % kept;
        continue;
      }
      if (kept == 1)
        continue; // reflect of one element
      if (j + dir < 0 || j + dir >= kept)
        dir = -dir; // bounce off the end element without repeating it
      j += dir;
    }
    return crop + j;
  };
  for (int64_t p = 0; p < before; ++p)
    map[p] = walk(0, -1, before - p);
  for (int64_t p = 0; p < after; ++p)
    map[before + kept + p] = walk(kept - 1, +1, p + 1);
  return map;
}

/// Reference pad: per output element, the product of the per-dim maps.
std::vector<double> padReference(const std::vector<double> &x, const Shape &in,
                                 const std::vector<int64_t> &pads,
                                 PadMode mode, double value, Shape &out) {
  const size_t rank = in.size();
  std::vector<std::vector<int64_t>> maps;
  out.clear();
  for (size_t d = 0; d < rank; ++d) {
    maps.push_back(padWalk(in[d], pads[d], pads[rank + d], mode));
    out.push_back(static_cast<int64_t>(maps.back().size()));
  }
  std::vector<double> y(numElements(out));
  for (int64_t o = 0; o < static_cast<int64_t>(y.size()); ++o) {
    std::vector<int64_t> oi = unravel(o, out), xi(rank);
    bool inside = true;
    for (size_t d = 0; d < rank; ++d) {
      xi[d] = maps[d][oi[d]];
      inside &= xi[d] >= 0;
    }
    y[o] = inside ? x[ravel(xi, in)] : value;
  }
  return y;
}

/// Reference pad backward: scatter-add each dy element to the element its
/// output position read.
std::vector<double> padBackwardReference(const std::vector<double> &dy,
                                         const Shape &in,
                                         const std::vector<int64_t> &pads,
                                         PadMode mode) {
  const size_t rank = in.size();
  std::vector<std::vector<int64_t>> maps;
  Shape out;
  for (size_t d = 0; d < rank; ++d) {
    maps.push_back(padWalk(in[d], pads[d], pads[rank + d], mode));
    out.push_back(static_cast<int64_t>(maps.back().size()));
  }
  std::vector<double> dx(numElements(in), 0.0);
  for (int64_t o = 0; o < static_cast<int64_t>(dy.size()); ++o) {
    std::vector<int64_t> oi = unravel(o, out), xi(rank);
    bool inside = true;
    for (size_t d = 0; d < rank; ++d) {
      xi[d] = maps[d][oi[d]];
      inside &= xi[d] >= 0;
    }
    if (inside)
      dx[ravel(xi, in)] += dy[o];
  }
  return dx;
}

std::vector<int64_t> begins(const std::vector<int64_t> &pads) {
  return std::vector<int64_t>(pads.begin(), pads.begin() + pads.size() / 2);
}

struct PadCase {
  Shape in;
  std::vector<int64_t> pads;
};

const PadCase kPadCases[] = {
    {{3, 4}, {1, 2, 2, 1}},
    {{3, 4}, {0, 7, 0, 9}},      // several periods of reflect / wrap
    {{2, 3, 4}, {1, -1, 2, 0, 2, -1}}, // crop one side, pad the other
    {{4}, {-2, 3}},
    {{1, 5}, {3, 0, 2, 1}},      // a single-element dim
    {{2, 1, 3, 2}, {0, 1, 1, 1, 1, 2, 0, 1}},
    {{}, {}},                    // a scalar: a copy
};

TEST(DataMovementTest, PadMatchesTheWalkReference) {
  for (PadMode mode :
       {PadMode::Constant, PadMode::Reflect, PadMode::Edge, PadMode::Wrap})
    for (const PadCase &c : kPadCases)
      for (DType dt : {DType::F32, DType::F64, DType::I32, DType::F16}) {
        SCOPED_TRACE(std::to_string(static_cast<int>(mode)) + " " +
                     shapeToString(c.in) + " " + dtypeName(dt));
        std::vector<double> xv = iota(numElements(c.in));
        for (double &v : xv)
          v = v * 3 - 7; // negative and positive, exact in every dtype
        Tensor x = make(dt, c.in, xv);
        Shape out;
        std::vector<double> expected =
            padReference(xv, c.in, c.pads, mode, -2.5, out);
        Tensor y(dt, out);
        pad(x.view(), y.view(), begins(c.pads), mode, -2.5);
        std::vector<double> yv = values(y);
        if (dt == DType::I32) // the constant converts as fill() does
          for (double &v : expected)
            if (v == -2.5)
              v = -2;
        ASSERT_EQ(yv, expected);
      }
}

TEST(DataMovementTest, PadOnnxExamples) {
  // The ONNX operator documentation's Pad examples.
  Tensor x = make(DType::F32, {3, 2}, {1.0, 1.2, 2.3, 3.4, 4.5, 5.7});
  Tensor y(DType::F32, {3, 4});
  pad(x.view(), y.view(), {0, 2}, PadMode::Constant, 0.0);
  expectAllNear(values(y), {0, 0, 1.0, 1.2, 0, 0, 2.3, 3.4, 0, 0, 4.5, 5.7},
                1e-7);
  pad(x.view(), y.view(), {0, 2}, PadMode::Reflect, 0.0);
  expectAllNear(values(y),
                {1.0, 1.2, 1.0, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7, 4.5, 5.7},
                1e-7);
  pad(x.view(), y.view(), {0, 2}, PadMode::Edge, 0.0);
  expectAllNear(values(y),
                {1.0, 1.0, 1.0, 1.2, 2.3, 2.3, 2.3, 3.4, 4.5, 4.5, 4.5, 5.7},
                1e-7);
  // wrap, pads [2, 1, 1, 1] (ONNX's wrap example).
  Tensor w(DType::F32, {6, 4});
  pad(x.view(), w.view(), {2, 1}, PadMode::Wrap, 0.0);
  expectAllNear(values(w),
                {3.4, 2.3, 3.4, 2.3, 5.7, 4.5, 5.7, 4.5, 1.2, 1.0, 1.2, 1.0,
                 3.4, 2.3, 3.4, 2.3, 5.7, 4.5, 5.7, 4.5, 1.2, 1.0, 1.2, 1.0},
                1e-7);
}

TEST(DataMovementTest, PadBoolConstant) {
  Tensor x = make(DType::Bool, {2}, {1, 0});
  Tensor y(DType::Bool, {5});
  pad(x.view(), y.view(), {1}, PadMode::Constant, 1.0);
  EXPECT_EQ(values(y), (std::vector<double>{1, 1, 0, 1, 1}));
}

TEST(DataMovementTest, PadRejectsBadShapes) {
  Tensor x(DType::F32, {2, 3}), y(DType::F32, {2, 5});
  // Ends come from the shapes: here begin 1 leaves end 1.
  EXPECT_NO_THROW(pad(x.view(), y.view(), {0, 1}, PadMode::Edge, 0));
  EXPECT_THROW(pad(x.view(), y.view(), {0}, PadMode::Edge, 0), RuntimeError);
  // Cropping 4 of 3 elements.
  Tensor z(DType::F32, {2, 1});
  EXPECT_THROW(pad(x.view(), z.view(), {0, -4}, PadMode::Constant, 0),
               RuntimeError);
  // Nothing left to reflect.
  Tensor e(DType::F32, {2, 2});
  EXPECT_THROW(pad(x.view(), e.view(), {0, -3}, PadMode::Reflect, 0),
               RuntimeError);
  Tensor i(DType::I64, {2, 5});
  EXPECT_THROW(pad(x.view(), i.view(), {0, 1}, PadMode::Edge, 0), RuntimeError);
}

TEST(DataMovementTest, PadBackwardMatchesScatterReference) {
  for (PadMode mode :
       {PadMode::Constant, PadMode::Reflect, PadMode::Edge, PadMode::Wrap})
    for (const PadCase &c : kPadCases)
      for (DType dt : {DType::F32, DType::F64}) {
        SCOPED_TRACE(std::to_string(static_cast<int>(mode)) + " " +
                     shapeToString(c.in) + " " + dtypeName(dt));
        Shape out;
        padReference(iota(numElements(c.in)), c.in, c.pads, mode, 0, out);
        std::vector<double> dyv = randomValues(numElements(out), 7);
        Tensor dy = make(dt, out, dyv);
        Tensor dx(dt, c.in);
        padBackward(dy.view(), dx.view(), begins(c.pads), mode);
        expectAllNear(values(dx),
                      padBackwardReference(values(dy), c.in, c.pads, mode),
                      dt == DType::F32 ? 1e-6 : 1e-14);
      }
  Tensor dy(DType::I32, {4}), dx(DType::I32, {2});
  EXPECT_THROW(padBackward(dy.view(), dx.view(), {1}, PadMode::Edge),
               RuntimeError);
}

TEST(DataMovementTest, TileIsAWrapPadWithoutBeginPads) {
  // ONNX Tile (remat.tile runs the wrap pad): y[i] = x[i mod x.shape].
  const Shape in = {2, 3, 2};
  const std::vector<int64_t> repeats = {2, 1, 3};
  Shape out;
  std::vector<int64_t> ends;
  for (size_t d = 0; d < in.size(); ++d) {
    out.push_back(in[d] * repeats[d]);
    ends.push_back((repeats[d] - 1) * in[d]);
  }
  for (DType dt : {DType::F32, DType::I64, DType::Bool}) {
    std::vector<double> xv = iota(numElements(in));
    if (dt == DType::Bool)
      for (double &v : xv)
        v = static_cast<int64_t>(v) % 3 == 0;
    Tensor x = make(dt, in, xv);
    Tensor y(dt, out);
    pad(x.view(), y.view(), {0, 0, 0}, PadMode::Wrap, 0);
    std::vector<double> yv = values(y);
    for (int64_t o = 0; o < y.numel(); ++o) {
      std::vector<int64_t> oi = unravel(o, out), xi(in.size());
      for (size_t d = 0; d < in.size(); ++d)
        xi[d] = oi[d] % in[d];
      ASSERT_EQ(yv[o], xv[ravel(xi, in)]);
    }
  }
  // The ONNX Tile example: [[0, 1], [2, 3]] repeated [2, 2].
  Tensor x = make(DType::F32, {2, 2}, {0, 1, 2, 3});
  Tensor y(DType::F32, {4, 4});
  pad(x.view(), y.view(), {0, 0}, PadMode::Wrap, 0);
  EXPECT_EQ(values(y), (std::vector<double>{0, 1, 0, 1, 2, 3, 2, 3, 0, 1, 0,
                                            1, 2, 3, 2, 3}));
  // Its backward sums the tiles.
  Tensor dy = make(DType::F64, {4, 4}, iota(16));
  Tensor dx(DType::F64, {2, 2});
  padBackward(dy.view(), dx.view(), {0, 0}, PadMode::Wrap);
  // dx[i][j] = sum over tiles (a, b) of dy[2a + i][2b + j].
  EXPECT_EQ(values(dx), (std::vector<double>{0 + 2 + 8 + 10, 1 + 3 + 9 + 11,
                                             4 + 6 + 12 + 14,
                                             5 + 7 + 13 + 15}));
}

TEST(DataMovementTest, TriluKeepsOneTriangle) {
  // numpy.triu / numpy.tril of [[1..4], [5..8], [9..12]] for several k.
  Tensor x = make(DType::F32, {3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  Tensor y(DType::F32, {3, 4});
  trilu(x.view(), y.view(), true, 0);
  EXPECT_EQ(values(y), (std::vector<double>{1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12}));
  trilu(x.view(), y.view(), true, 2);
  EXPECT_EQ(values(y), (std::vector<double>{0, 0, 3, 4, 0, 0, 0, 8, 0, 0, 0, 0}));
  trilu(x.view(), y.view(), false, 0);
  EXPECT_EQ(values(y), (std::vector<double>{1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0}));
  trilu(x.view(), y.view(), false, -1);
  EXPECT_EQ(values(y), (std::vector<double>{0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0}));
  // k beyond the matrix: everything or nothing.
  trilu(x.view(), y.view(), true, -5);
  EXPECT_EQ(values(y), values(x));
  trilu(x.view(), y.view(), false, -3);
  EXPECT_EQ(values(y), std::vector<double>(12, 0));

  // Batched, every element size: the mask per [i, j] of each matrix.
  const Shape shape = {2, 3, 5};
  for (DType dt : {DType::F64, DType::F16, DType::I8, DType::Bool})
    for (bool upper : {true, false}) {
      std::vector<double> xv(30, 1);
      if (dt != DType::Bool)
        xv = iota(30);
      Tensor t = make(dt, shape, xv);
      Tensor out(dt, shape);
      trilu(t.view(), out.view(), upper, 1);
      std::vector<double> ov = values(out);
      for (int64_t e = 0; e < 30; ++e) {
        std::vector<int64_t> idx = unravel(e, shape);
        const int64_t diag = idx[2] - idx[1];
        const bool keep = upper ? diag >= 1 : diag <= 1;
        ASSERT_EQ(ov[e], keep ? xv[e] : 0) << e;
      }
    }
  Tensor v(DType::F32, {4}), w(DType::F32, {4});
  EXPECT_THROW(trilu(v.view(), w.view(), true, 0), RuntimeError);
}

//===----------------------------------------------------------------------===//
// GatherElements: the reference spells out ONNX's definition for rank 3,
// out[i][j][k] = data[index[i][j][k]][j][k] (axis 0) and so on.
//===----------------------------------------------------------------------===//

std::vector<double> refGatherElements(const std::vector<double> &x,
                                      const Shape &xs,
                                      const std::vector<double> &idx,
                                      const Shape &is, int64_t axis) {
  std::vector<double> y;
  for (int64_t i = 0; i < is[0]; ++i)
    for (int64_t j = 0; j < is[1]; ++j)
      for (int64_t k = 0; k < is[2]; ++k) {
        int64_t v = static_cast<int64_t>(idx[(i * is[1] + j) * is[2] + k]);
        if (v < 0)
          v += xs[axis];
        const int64_t a = axis == 0 ? v : i, b = axis == 1 ? v : j,
                      c = axis == 2 ? v : k;
        y.push_back(x[(a * xs[1] + b) * xs[2] + c]);
      }
  return y;
}

TEST(DataMovementTest, GatherElementsAlongEveryAxis) {
  const Shape xs = {4, 3, 5};
  const std::vector<double> xv = iota(60);
  for (DType idt : {DType::I64, DType::I32})
    for (int64_t axis = 0; axis < 3; ++axis) {
      // Indices smaller than x along the other dims, longer along the axis.
      Shape is = {3, 2, 4};
      is[axis] = 6;
      std::vector<double> iv(numElements(is));
      for (size_t n = 0; n < iv.size(); ++n) // in range, some negative
        iv[n] = static_cast<double>(static_cast<int64_t>(n * 5 % (2 * xs[axis])) -
                                    xs[axis]);
      for (DType dt : {DType::F32, DType::I64, DType::F16}) {
        Tensor x = make(dt, xs, xv);
        Tensor idx = make(idt, is, iv);
        Tensor y(dt, is);
        gatherElements(x.view(), idx.view(), y.view(), axis);
        ASSERT_EQ(values(y), refGatherElements(xv, xs, iv, is, axis))
            << "axis " << axis;
      }
    }
}

TEST(DataMovementTest, GatherElementsOnnxExamplesAndChecks) {
  // The ONNX operator documentation's examples.
  Tensor data = make(DType::F32, {2, 2}, {1, 2, 3, 4});
  Tensor idx = make(DType::I64, {2, 2}, {0, 0, 1, 0});
  Tensor y(DType::F32, {2, 2});
  gatherElements(data.view(), idx.view(), y.view(), 1);
  EXPECT_EQ(values(y), (std::vector<double>{1, 1, 4, 3}));
  Tensor data3 = make(DType::F32, {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor idx3 = make(DType::I32, {2, 3}, {1, 2, 0, 2, 0, 0});
  Tensor y3(DType::F32, {2, 3});
  gatherElements(data3.view(), idx3.view(), y3.view(), 0);
  EXPECT_EQ(values(y3), (std::vector<double>{4, 8, 3, 7, 2, 3}));
  Tensor neg = make(DType::I64, {2, 3}, {-1, -2, 0, -2, 0, 0});
  gatherElements(data3.view(), neg.view(), y3.view(), 0);
  EXPECT_EQ(values(y3), (std::vector<double>{7, 5, 3, 4, 2, 3}));

  Tensor bad = make(DType::I64, {2, 2}, {0, 2, 0, 0});
  EXPECT_THROW(gatherElements(data.view(), bad.view(), y.view(), 1),
               RuntimeError);
  Tensor wide = make(DType::I64, {2, 3}, {0, 0, 0, 0, 0, 0});
  Tensor y23(DType::F32, {2, 3});
  EXPECT_THROW(gatherElements(data.view(), wide.view(), y23.view(), 0),
               RuntimeError);
  Tensor flat = make(DType::I64, {4}, {0, 0, 0, 0});
  Tensor y4(DType::F32, {4});
  EXPECT_THROW(gatherElements(data.view(), flat.view(), y4.view(), 0),
               RuntimeError);
}

TEST(DataMovementTest, GatherElementsBackwardScatterAdds) {
  // dx[idx[i][j]][j] += dy[i][j] (axis 0), worked out by hand: two dy
  // elements land on dx[1][0] and two on dx[2][1].
  Tensor dy = make(DType::F64, {3, 2}, {1, 10, 100, 1000, 0.5, 0.25});
  Tensor idx = make(DType::I64, {3, 2}, {1, -1, 2, 0, -2, 2});
  for (DType dt : {DType::F32, DType::F64}) {
    Tensor g = make(dt, {3, 2}, values(dy));
    Tensor dx(dt, {3, 3});
    gatherElementsBackward(g.view(), idx.view(), dx.view(), 0);
    // x is [3, 3]: its column 2 is outside the indices and gets nothing.
    EXPECT_EQ(values(dx), (std::vector<double>{0, 1000, 0,       //
                                               1 + 0.5, 0, 0,    //
                                               100, 10 + 0.25, 0}));
  }
  Tensor bad = make(DType::I64, {3, 2}, {3, 0, 0, 0, 0, 0});
  Tensor dx(DType::F64, {3, 3});
  EXPECT_THROW(gatherElementsBackward(dy.view(), bad.view(), dx.view(), 0),
               RuntimeError);
}

} // namespace
