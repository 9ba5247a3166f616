//===- DataMovementTest.cpp - CUDA transpose, concat, ..., gather, pad ----===//
//
// Data movement must reproduce the CPU's bytes exactly, for every element
// size.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtil.h"

using namespace remat::rt;
using namespace remat::rt::cudatest;
namespace rt = remat::rt;

namespace {

using CudaDataMovement = CudaTest;

const DType kSizes[] = {DType::F32, DType::F16, DType::I64, DType::Bool};

Tensor randomOf(DType dtype, const Shape &shape, unsigned seed) {
  return dtype == DType::Bool ? randomIntegers(dtype, shape, seed, 0, 1)
                              : randomIntegers(dtype, shape, seed, -99, 99);
}

TEST_F(CudaDataMovement, Transpose) {
  struct Case {
    Shape x;
    std::vector<int64_t> perm;
  };
  const Case cases[] = {{{5, 7}, {1, 0}},
                        {{2, 3, 4, 5}, {0, 2, 1, 3}},
                        {{2, 3, 4, 5}, {3, 2, 1, 0}},
                        {{4, 1, 6}, {2, 0, 1}},
                        {{64, 33}, {1, 0}}};
  for (const Case &c : cases)
    for (DType dtype : kSizes) {
      Tensor x = randomOf(dtype, c.x, 1);
      Shape yShape;
      for (int64_t p : c.perm)
        yShape.push_back(c.x[p]);
      Tensor y(dtype, yShape);
      rt::transpose(x.view(), y.view(), c.perm);
      DeviceTensor dx(x), dy(dtype, yShape);
      cuda::transpose(dx.view(), dy.view(), c.perm);
      expectSame(dy.host(), y, shapeToString(c.x));
    }
}

TEST_F(CudaDataMovement, ConcatAndSplit) {
  for (DType dtype : {DType::F32, DType::I8, DType::F16, DType::F64})
    for (int64_t axis = 0; axis < 3; ++axis) {
      // Part sizes along the axis: odd, so row copies use narrow units.
      const std::vector<int64_t> sizes = {3, 1, 5};
      std::vector<Tensor> parts;
      std::vector<std::unique_ptr<DeviceTensor>> dparts;
      std::vector<TensorView> views, dviews;
      Shape whole = {4, 6, 10};
      whole[axis] = 9;
      unsigned seed = 10;
      for (int64_t s : sizes) {
        Shape shape = whole;
        shape[axis] = s;
        parts.push_back(randomOf(dtype, shape, ++seed));
      }
      for (const Tensor &p : parts) {
        views.push_back(p.view());
        dparts.push_back(std::make_unique<DeviceTensor>(p));
        dviews.push_back(dparts.back()->view());
      }
      Tensor y(dtype, whole);
      rt::concat(views, y.view(), axis);
      DeviceTensor dy(dtype, whole);
      cuda::concat(dviews, dy.view(), axis);
      expectSame(dy.host(), y, "concat axis " + std::to_string(axis));

      // Split the concatenation back into fresh parts.
      std::vector<std::unique_ptr<DeviceTensor>> outs;
      std::vector<TensorView> outViews;
      for (const Tensor &p : parts) {
        outs.push_back(std::make_unique<DeviceTensor>(dtype, p.shape()));
        outViews.push_back(outs.back()->view());
      }
      cuda::split(dy.view(), outViews, axis);
      for (size_t i = 0; i < parts.size(); ++i)
        expectSame(outs[i]->host(), parts[i],
                   "split axis " + std::to_string(axis));
    }
}

TEST_F(CudaDataMovement, SliceWithNegativeStepsAndItsBackward) {
  struct Case {
    Shape x, y;
    std::vector<int64_t> starts, steps;
  };
  const Case cases[] = {
      {{10, 8}, {3, 8}, {2, 0}, {3, 1}},
      {{10, 8}, {5, 4}, {9, 7}, {-2, -2}},
      {{4, 5, 6}, {4, 2, 6}, {0, 1, 0}, {1, 2, 1}},
      {{4, 5, 6}, {0, 5, 6}, {0, 0, 0}, {1, 1, 1}},
  };
  for (const Case &c : cases)
    for (DType dtype : kSizes) {
      Tensor x = randomOf(dtype, c.x, 2);
      Tensor y(dtype, c.y);
      rt::slice(x.view(), y.view(), c.starts, c.steps);
      DeviceTensor dx(x), dy(dtype, c.y);
      cuda::slice(dx.view(), dy.view(), c.starts, c.steps);
      expectSame(dy.host(), y, "slice " + shapeToString(c.x));

      Tensor dxExpected(dtype, c.x);
      rt::sliceBackward(y.view(), dxExpected.view(), c.starts, c.steps);
      DeviceTensor ddx(dtype, c.x);
      cuda::fill(ddx.view(), 1); // must be cleared
      cuda::sliceBackward(dy.view(), ddx.view(), c.starts, c.steps);
      expectSame(ddx.host(), dxExpected, "sliceBackward " + shapeToString(c.x));
    }
  DeviceTensor x(DType::F32, {4}), y(DType::F32, {3});
  EXPECT_THROW(cuda::slice(x.view(), y.view(), {2}, {1}), RuntimeError);
}

TEST_F(CudaDataMovement, GatherAlongEveryAxis) {
  for (DType indexType : {DType::I64, DType::I32})
    for (DType dtype : {DType::F32, DType::F16, DType::F64, DType::U8})
      for (int64_t axis = 0; axis < 3; ++axis) {
        const Shape xShape = {5, 6, 7};
        Tensor x = randomOf(dtype, xShape, 3);
        Tensor idx = randomIntegers(indexType, {2, 4}, 4, -xShape[axis],
                                    xShape[axis] - 1);
        Shape yShape(xShape.begin(), xShape.begin() + axis);
        yShape.insert(yShape.end(), {2, 4});
        yShape.insert(yShape.end(), xShape.begin() + axis + 1, xShape.end());
        Tensor y(dtype, yShape);
        rt::gather(x.view(), idx.view(), y.view(), axis);
        DeviceTensor dx(x), didx(idx), dy(dtype, yShape);
        cuda::gather(dx.view(), didx.view(), dy.view(), axis);
        expectSame(dy.host(), y, "axis " + std::to_string(axis));
      }
}

TEST_F(CudaDataMovement, GatherEmbeddingRowsAndBadIndices) {
  // Rows of 768 floats: copied 16 bytes at a time.
  Tensor table = randomTensor(DType::F32, {100, 768}, 5);
  Tensor tokens = randomIntegers(DType::I64, {3, 17}, 6, 0, 99);
  Tensor y(DType::F32, {3, 17, 768});
  rt::gather(table.view(), tokens.view(), y.view(), 0);
  DeviceTensor dt(table), dtok(tokens), dy(DType::F32, {3, 17, 768});
  cuda::gather(dt.view(), dtok.view(), dy.view(), 0);
  expectSame(dy.host(), y);

  Tensor bad = make(DType::I64, {2}, {3, 100});
  DeviceTensor dbad(bad), out(DType::F32, {2, 768});
  cuda::gather(dt.view(), dbad.view(), out.view(), 0);
  try {
    syncDevice();
    ADD_FAILURE() << "expected an index error";
  } catch (const RuntimeError &e) {
    EXPECT_NE(std::string(e.what()).find("gather: index 100"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(CudaDataMovement, Expand) {
  for (DType dtype : kSizes) {
    Tensor x = randomOf(dtype, {3, 1, 5}, 7);
    Tensor y(dtype, {2, 3, 4, 5});
    rt::expand(x.view(), y.view());
    DeviceTensor dx(x), dy(dtype, {2, 3, 4, 5});
    cuda::expand(dx.view(), dy.view());
    expectSame(dy.host(), y, dtypeName(dtype));
  }
}

TEST_F(CudaDataMovement, PadEveryModeAndDtype) {
  struct Case {
    Shape x;
    std::vector<int64_t> pads; // begins, then ends
  };
  const Case cases[] = {{{3, 4}, {1, 2, 2, 1}},
                        {{3, 4}, {0, 7, 0, 9}},
                        {{2, 3, 5}, {1, -1, 2, 0, 2, -1}},
                        {{1, 33, 65}, {2, 0, 1, 1, 3, 2}}};
  for (const Case &c : cases)
    for (PadMode mode :
         {PadMode::Constant, PadMode::Reflect, PadMode::Edge, PadMode::Wrap})
      for (DType dtype : kSizes) {
        const size_t rank = c.x.size();
        Shape yShape;
        for (size_t d = 0; d < rank; ++d)
          yShape.push_back(c.x[d] + c.pads[d] + c.pads[rank + d]);
        const std::vector<int64_t> begins(c.pads.begin(),
                                          c.pads.begin() + rank);
        Tensor x = randomOf(dtype, c.x, 8);
        Tensor y(dtype, yShape);
        rt::pad(x.view(), y.view(), begins, mode, 1.0);
        DeviceTensor dx(x), dy(dtype, yShape);
        cuda::pad(dx.view(), dy.view(), begins, mode, 1.0);
        expectSame(dy.host(), y,
                   shapeToString(c.x) + " mode " +
                       std::to_string(static_cast<int>(mode)));
      }
}

TEST_F(CudaDataMovement, PadBackwardEveryMode) {
  // The GPU sums each element's sources in the tensor's type, the CPU in
  // double: the same terms in the same order, so f32 differs by rounding.
  const Shape x = {3, 17, 9};
  const std::vector<int64_t> begins = {1, 2, -1}, ends = {2, 20, 4};
  Shape yShape;
  for (size_t d = 0; d < x.size(); ++d)
    yShape.push_back(x[d] + begins[d] + ends[d]);
  for (PadMode mode :
       {PadMode::Constant, PadMode::Reflect, PadMode::Edge, PadMode::Wrap})
    for (DType dtype : {DType::F32, DType::F64}) {
      Tensor dy = randomTensor(dtype, yShape, 9);
      Tensor dx(dtype, x);
      rt::padBackward(dy.view(), dx.view(), begins, mode);
      DeviceTensor ddy(dy), ddx(dtype, x);
      cuda::padBackward(ddy.view(), ddx.view(), begins, mode);
      expectNear(ddx.host(), dx, dtype == DType::F32 ? 1e-5 : 1e-12,
                 "mode " + std::to_string(static_cast<int>(mode)));
    }
}

TEST_F(CudaDataMovement, TileAndItsBackward) {
  // remat.tile runs the wrap pad with no begin pads.
  const Shape x = {3, 1, 70};
  const Shape yShape = {6, 5, 140};
  for (DType dtype : kSizes) {
    Tensor t = randomOf(dtype, x, 10);
    Tensor y(dtype, yShape);
    rt::pad(t.view(), y.view(), {0, 0, 0}, PadMode::Wrap, 0);
    DeviceTensor dt(t), dy(dtype, yShape);
    cuda::pad(dt.view(), dy.view(), {0, 0, 0}, PadMode::Wrap, 0);
    expectSame(dy.host(), y, dtypeName(dtype));
  }
  for (DType dtype : {DType::F32, DType::F64}) {
    Tensor g = randomTensor(dtype, yShape, 11);
    Tensor dx(dtype, x);
    rt::padBackward(g.view(), dx.view(), {0, 0, 0}, PadMode::Wrap);
    DeviceTensor dg(g), ddx(dtype, x);
    cuda::padBackward(dg.view(), ddx.view(), {0, 0, 0}, PadMode::Wrap);
    expectNear(ddx.host(), dx, dtype == DType::F32 ? 1e-5 : 1e-12);
  }
}

TEST_F(CudaDataMovement, Trilu) {
  for (DType dtype : kSizes)
    for (bool upper : {true, false})
      for (int64_t k : {-2, 0, 3}) {
        Tensor x = randomOf(dtype, {3, 7, 33}, 12);
        Tensor y(dtype, {3, 7, 33});
        rt::trilu(x.view(), y.view(), upper, k);
        DeviceTensor dx(x), dy(dtype, {3, 7, 33});
        cuda::trilu(dx.view(), dy.view(), upper, k);
        expectSame(dy.host(), y, dtypeName(dtype));
      }
}

TEST_F(CudaDataMovement, GatherElementsAndItsBackward) {
  const Shape xs = {5, 33, 7};
  for (int64_t axis = 0; axis < 3; ++axis) {
    Shape is = {4, 30, 6};
    is[axis] = 40; // repeated indices along the axis
    for (DType idt : {DType::I64, DType::I32}) {
      Tensor idx = randomIntegers(idt, is, 14, -xs[axis], xs[axis] - 1);
      for (DType dtype : kSizes) {
        Tensor x = randomOf(dtype, xs, 15);
        Tensor y(dtype, is);
        rt::gatherElements(x.view(), idx.view(), y.view(), axis);
        DeviceTensor dx(x), didx(idx), dy(dtype, is);
        cuda::gatherElements(dx.view(), didx.view(), dy.view(), axis);
        expectSame(dy.host(), y, "axis " + std::to_string(axis));
      }
      // Backward: the same additions in the same order per element, in
      // float on the GPU and double on the CPU.
      for (DType dtype : {DType::F32, DType::F64}) {
        Tensor g = randomTensor(dtype, is, 16);
        Tensor dx(dtype, xs);
        rt::gatherElementsBackward(g.view(), idx.view(), dx.view(), axis);
        DeviceTensor dg(g), didx(idx), ddx(dtype, xs);
        cuda::fill(ddx.view(), 5); // overwritten, not accumulated into
        cuda::gatherElementsBackward(dg.view(), didx.view(), ddx.view(), axis);
        expectNear(ddx.host(), dx, dtype == DType::F32 ? 1e-5 : 1e-12,
                   "backward axis " + std::to_string(axis));
      }
    }
  }
  Tensor x = randomTensor(DType::F32, {3, 4}, 17);
  Tensor bad = make(DType::I64, {1, 4}, {0, 3, 1, 0});
  DeviceTensor dx(x), dbad(bad), out(DType::F32, {1, 4});
  cuda::gatherElements(dx.view(), dbad.view(), out.view(), 0);
  try {
    syncDevice();
    ADD_FAILURE() << "expected an index error";
  } catch (const RuntimeError &e) {
    EXPECT_NE(std::string(e.what()).find("gatherElements: index 3"),
              std::string::npos)
        << e.what();
  }
}

} // namespace
