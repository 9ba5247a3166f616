//===- ScatterGatherTest.cpp - CUDA GatherND, ScatterND, Resize -----------===//
//
// The N-dimensional indexing and resampling kernels must give the CPU's
// bytes exactly: GatherND, ScatterND (none) and nearest Resize move data;
// GatherND's backward, ScatterND's reductions and linear Resize (both
// directions) add the same terms in the same order in the same type on both
// backends, repeated index tuples included.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtil.h"

using namespace remat::rt;
using namespace remat::rt::cudatest;
namespace rt = remat::rt;

namespace {

using CudaScatterGather = CudaTest;

/// In-range tuples of `depth` coordinates into data's dims after the
/// batch dims, some negative, many repeated.
Tensor tuples(DType dtype, const Shape &data, Shape indices,
              int64_t batchDims, unsigned seed) {
  Tensor t = randomIntegers(DType::I64, indices, seed, 0, 1 << 20);
  const int64_t depth = indices.back();
  for (int64_t i = 0; i < t.numel(); ++i) {
    const int64_t size = data[batchDims + i % depth];
    int64_t &v = t.as<int64_t>()[i];
    v = v % (2 * size) - size;
  }
  Tensor out(dtype, indices);
  rt::cast(t.view(), out.view());
  return out;
}

TEST_F(CudaScatterGather, GatherNDAndItsBackward) {
  const Shape data = {3, 5, 4, 6};
  struct Case {
    Shape indices;
    int64_t batchDims;
  };
  const Case cases[] = {{{40, 1}, 0}, {{7, 5, 2}, 0}, {{3, 30, 2}, 1},
                        {{3, 5, 20, 1}, 2}};
  for (const Case &c : cases)
    for (DType idt : {DType::I64, DType::I32}) {
      Tensor idx = tuples(idt, data, c.indices, c.batchDims, 3);
      Shape out(c.indices.begin(), c.indices.end() - 1);
      out.insert(out.end(), data.begin() + c.batchDims + c.indices.back(),
                 data.end());
      for (DType dtype : {DType::F32, DType::F16, DType::I64, DType::Bool}) {
        Tensor x = dtype == DType::Bool
                       ? randomIntegers(dtype, data, 4, 0, 1)
                       : randomIntegers(dtype, data, 4, -99, 99);
        Tensor y(dtype, out);
        rt::gatherND(x.view(), idx.view(), y.view(), c.batchDims);
        DeviceTensor dx(x), didx(idx), dy(dtype, out);
        cuda::gatherND(dx.view(), didx.view(), dy.view(), c.batchDims);
        expectSame(dy.host(), y, shapeToString(c.indices));
      }
      for (DType dtype : {DType::F32, DType::F64, DType::BF16, DType::F16}) {
        Tensor g = randomTensor(dtype, out, 5);
        Tensor dx(dtype, data);
        rt::gatherNDBackward(g.view(), idx.view(), dx.view(), c.batchDims);
        DeviceTensor dg(g), didx(idx), ddx(dtype, data);
        cuda::fill(ddx.view(), 5); // overwritten, not accumulated into
        cuda::gatherNDBackward(dg.view(), didx.view(), ddx.view(),
                               c.batchDims);
        expectSame(ddx.host(), dx, "backward " + shapeToString(c.indices));
      }
    }
  Tensor x = randomTensor(DType::F32, {3, 4}, 6);
  Tensor bad = make(DType::I64, {2, 1}, {0, 3});
  DeviceTensor dx(x), dbad(bad), out(DType::F32, {2, 4});
  cuda::gatherND(dx.view(), dbad.view(), out.view(), 0);
  try {
    syncDevice();
    ADD_FAILURE() << "expected an index error";
  } catch (const RuntimeError &e) {
    EXPECT_NE(std::string(e.what()).find("gatherND: index 3"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(CudaScatterGather, ScatterNDEveryReduction) {
  const Shape data = {6, 5, 4};
  for (int64_t depth = 1; depth <= 3; ++depth) {
    const Shape is = {9, depth}; // repeated tuples among 9
    Tensor idx = tuples(DType::I64, data, is, 0, 7 + depth);
    Shape us = {9};
    us.insert(us.end(), data.begin() + depth, data.end());
    for (ScatterReduction r :
         {ScatterReduction::None, ScatterReduction::Add, ScatterReduction::Mul,
          ScatterReduction::Max, ScatterReduction::Min})
      for (DType dtype : {DType::F32, DType::F64, DType::BF16, DType::I32}) {
        Tensor x = randomTensor(dtype, data, 8, 0.5, 1.5);
        Tensor u = randomTensor(dtype, us, 9, 0.5, 1.5);
        Tensor y(dtype, data);
        rt::scatterND(x.view(), idx.view(), u.view(), y.view(), r);
        DeviceTensor dx(x), didx(idx), du(u), dy(dtype, data);
        cuda::scatterND(dx.view(), didx.view(), du.view(), dy.view(), r);
        expectSame(dy.host(), y,
                   "depth " + std::to_string(depth) + " reduction " +
                       std::to_string(static_cast<int>(r)) + " " +
                       dtypeName(dtype));
      }
  }
}

TEST_F(CudaScatterGather, ResizeAndItsBackward) {
  const Shape in = {2, 3, 7, 5};
  struct Case {
    Shape out;
    std::vector<double> scales;
  };
  const Case cases[] = {{{2, 3, 14, 9}, {1, 1, 2, 1.8}},
                        {{2, 3, 4, 2}, {1, 1, 4.0 / 7, 0.4}},
                        {{2, 6, 7, 5}, {1, 2, 1, 1}}};
  const ResizeCoordinates coordinates[] = {
      ResizeCoordinates::HalfPixel, ResizeCoordinates::HalfPixelSymmetric,
      ResizeCoordinates::PytorchHalfPixel, ResizeCoordinates::AlignCorners,
      ResizeCoordinates::Asymmetric};
  for (const Case &c : cases)
    for (ResizeCoordinates coords : coordinates)
      for (ResizeMode mode :
           {ResizeMode::Nearest, ResizeMode::Linear, ResizeMode::Cubic}) {
        ResizeParams p;
        p.mode = mode;
        p.excludeOutside = coords == ResizeCoordinates::AlignCorners;
        p.coordinates = coords;
        p.nearest = ResizeNearest::RoundPreferCeil;
        p.scales = DimScales(c.scales.begin(), c.scales.end());
        const std::string what = shapeToString(c.out) + " coordinates " +
                                 std::to_string(static_cast<int>(coords));
        for (DType dtype : {DType::F32, DType::F64, DType::F16, DType::BF16}) {
          Tensor x = randomTensor(dtype, in, 10);
          Tensor y(dtype, c.out);
          rt::resize(x.view(), y.view(), p);
          DeviceTensor dx(x), dy(dtype, c.out);
          cuda::resize(dx.view(), dy.view(), p);
          expectSame(dy.host(), y, what);
          Tensor g = randomTensor(dtype, c.out, 11);
          Tensor gx(dtype, in);
          rt::resizeBackward(g.view(), gx.view(), p);
          DeviceTensor dg(g), dgx(dtype, in);
          cuda::resizeBackward(dg.view(), dgx.view(), p);
          expectSame(dgx.host(), gx, "backward " + what);
        }
      }
}

} // namespace
