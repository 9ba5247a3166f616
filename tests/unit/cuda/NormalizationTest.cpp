//===- NormalizationTest.cpp - CUDA softmax, LayerNorm, BatchNorm ---------===//
//
// Statistics are summed in double on the CPU, and on the GPU in compensated
// fp32 for F32 data (double when the data or a statistics or parameter
// array is F64), in another order, and exp/log differ in the last bits:
// tolerance(). BatchNorm inference with an F64 parameter folds in double
// as the CPU and applies the same IEEE operations per element: exact.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtil.h"

#include <limits>

using namespace remat::rt;
using namespace remat::rt::cudatest;
namespace rt = remat::rt;

namespace {

using CudaNormalization = CudaTest;

TEST_F(CudaNormalization, SoftmaxAndLogSoftmaxOverEveryAxis) {
  const Shape shapes[] = {{3, 5, 7}, {4, 3000}, {2, 1}, {1, 600, 3}};
  unsigned seed = 1;
  for (const Shape &shape : shapes)
    for (DType dtype : {DType::F32, DType::F64})
      for (int64_t axis = 0; axis < static_cast<int64_t>(shape.size()); ++axis)
        for (bool log : {false, true}) {
          Tensor x = randomTensor(dtype, shape, ++seed, -8, 8);
          Tensor expected(dtype, shape);
          DeviceTensor dx(x), dy(dtype, shape);
          if (log) {
            rt::logSoftmax(x.view(), expected.view(), axis);
            cuda::logSoftmax(dx.view(), dy.view(), axis);
          } else {
            rt::softmax(x.view(), expected.view(), axis);
            cuda::softmax(dx.view(), dy.view(), axis);
          }
          const std::string what = shapeToString(shape) + " axis " +
                                   std::to_string(axis) + (log ? " log" : "");
          expectNear(dy.host(), expected, tolerance(dtype), what);
          // In place (y over x, InPlaceRowwise), as a memory plan may put
          // it: the same bits.
          if (log)
            cuda::logSoftmax(dx.view(), dx.view(), axis);
          else
            cuda::softmax(dx.view(), dx.view(), axis);
          expectSame(dx.host(), dy.host(), what + " in place");
        }
}

TEST_F(CudaNormalization, SoftmaxHandlesInfinities) {
  const double inf = std::numeric_limits<double>::infinity();
  Tensor x = make(DType::F32, {3, 4},
                  {-inf, -inf, -inf, -inf, 1, -inf, 2, 3, inf, 0, 1, 2});
  for (bool log : {false, true}) {
    Tensor expected(DType::F32, {3, 4});
    DeviceTensor dx(x), dy(DType::F32, {3, 4});
    if (log) {
      rt::logSoftmax(x.view(), expected.view(), 1);
      cuda::logSoftmax(dx.view(), dy.view(), 1);
    } else {
      rt::softmax(x.view(), expected.view(), 1);
      cuda::softmax(dx.view(), dy.view(), 1);
    }
    expectNear(dy.host(), expected, 1e-6);
  }
}

TEST_F(CudaNormalization, LayerNormWithOptionalOperands) {
  struct Case {
    Shape x;
    int64_t axis;
    Shape scale;
    bool bias;
  };
  const Case cases[] = {{{4, 6, 768}, 2, {768}, true},
                        {{4, 6, 10}, 1, {6, 10}, false},
                        {{5, 3, 4}, 1, {4}, true}, // broadcast scale
                        {{9, 2000}, 1, {2000}, true},
                        {{3, 8}, 0, {3, 8}, true}};
  unsigned seed = 100;
  for (const Case &c : cases)
    for (DType dtype : {DType::F32, DType::F64}) {
      Tensor x = randomTensor(dtype, c.x, ++seed, -3, 5);
      Tensor scale = randomTensor(dtype, c.scale, ++seed, 0.5, 1.5);
      Tensor bias = randomTensor(dtype, c.scale, ++seed);
      const Shape statShape = [&] {
        Shape s(c.x.begin(), c.x.begin() + c.axis);
        s.resize(c.x.size(), 1);
        return s;
      }();
      // Statistics in f32 even for f64 data (ONNX allows it).
      Tensor y(dtype, c.x), mean(DType::F32, statShape),
          inv(DType::F64, statShape);
      TensorView biasView = c.bias ? bias.view() : TensorView();
      rt::layerNorm(x.view(), scale.view(), biasView, y.view(), mean.view(),
                    inv.view(), c.axis, 1e-5);
      DeviceTensor dx(x), ds(scale), db(bias), dy(dtype, c.x),
          dmean(DType::F32, statShape), dinv(DType::F64, statShape);
      cuda::layerNorm(dx.view(), ds.view(), c.bias ? db.view() : TensorView(),
                      dy.view(), dmean.view(), dinv.view(), c.axis, 1e-5);
      const std::string what = shapeToString(c.x);
      expectNear(dy.host(), y, tolerance(dtype), what);
      expectNear(dmean.host(), mean, 1e-6, what + " mean");
      expectNear(dinv.host(), inv, 1e-12, what + " invStdDev");
      // Without the optional statistics.
      DeviceTensor dy2(dtype, c.x);
      cuda::layerNorm(dx.view(), ds.view(), TensorView(), dy2.view(),
                      TensorView(), TensorView(), c.axis, 1e-5);
      Tensor y2(dtype, c.x);
      rt::layerNorm(x.view(), scale.view(), TensorView(), y2.view(),
                    TensorView(), TensorView(), c.axis, 1e-5);
      expectNear(dy2.host(), y2, tolerance(dtype), what + " no bias");
    }
}

TEST_F(CudaNormalization, BatchNormInferenceIsExact) {
  for (DType dtype : {DType::F32, DType::F64}) {
    const Shape shape = {3, 5, 4, 6};
    Tensor x = randomTensor(dtype, shape, 1, -2, 2);
    Tensor scale = randomTensor(DType::F32, {5}, 2);
    Tensor bias = randomTensor(DType::F64, {5}, 3);
    Tensor mean = randomTensor(dtype, {5}, 4);
    Tensor var = randomTensor(dtype, {5}, 5, 0.1, 2);
    Tensor y(dtype, shape);
    rt::batchNormInference(x.view(), scale.view(), bias.view(), mean.view(),
                           var.view(), y.view(), 1e-5);
    DeviceTensor dx(x), ds(scale), db(bias), dm(mean), dv(var),
        dy(dtype, shape);
    cuda::batchNormInference(dx.view(), ds.view(), db.view(), dm.view(),
                             dv.view(), dy.view(), 1e-5);
    expectSame(dy.host(), y, dtypeName(dtype));
  }
}

TEST_F(CudaNormalization, BatchNormTrainingStatistics) {
  const Shape shapes[] = {{4, 3, 5, 5}, {64, 16}, {2, 8, 3000}, {1, 2, 1}};
  unsigned seed = 200;
  for (const Shape &shape : shapes)
    for (DType dtype : {DType::F32, DType::F64})
      for (bool unbiased : {false, true}) {
        const int64_t C = shape[1];
        Tensor x = randomTensor(dtype, shape, ++seed, -1, 3);
        Tensor scale = randomTensor(dtype, {C}, ++seed);
        Tensor bias = randomTensor(dtype, {C}, ++seed);
        Tensor rm = randomTensor(dtype, {C}, ++seed);
        Tensor rv = randomTensor(dtype, {C}, ++seed, 0.5, 2);
        Tensor y(dtype, shape), rmOut(dtype, {C}), rvOut(dtype, {C}),
            saved(DType::F32, {C}), savedInv(DType::F32, {C});
        rt::batchNormTraining(x.view(), scale.view(), bias.view(), rm.view(),
                              rv.view(), y.view(), rmOut.view(), rvOut.view(),
                              saved.view(), savedInv.view(), 1e-5, 0.9,
                              unbiased);
        DeviceTensor dx(x), ds(scale), db(bias), drm(rm), drv(rv),
            dy(dtype, shape), drmOut(dtype, {C}), drvOut(dtype, {C}),
            dsaved(DType::F32, {C}), dsavedInv(DType::F32, {C});
        cuda::batchNormTraining(dx.view(), ds.view(), db.view(), drm.view(),
                                drv.view(), dy.view(), drmOut.view(),
                                drvOut.view(), dsaved.view(), dsavedInv.view(),
                                1e-5, 0.9, unbiased);
        const std::string what = shapeToString(shape);
        expectNear(dy.host(), y, tolerance(dtype), what);
        expectNear(drmOut.host(), rmOut, tolerance(dtype), what + " mean");
        expectNear(drvOut.host(), rvOut, tolerance(dtype), what + " var");
        expectNear(dsaved.host(), saved, 1e-6, what + " saved mean");
        expectNear(dsavedInv.host(), savedInv, 1e-6, what + " saved inv");
      }
}

TEST_F(CudaNormalization, BatchNormTrainingInPlaceRunningStatistics) {
  Tensor x = randomTensor(DType::F32, {6, 4, 3}, 1);
  Tensor scale = randomTensor(DType::F32, {4}, 2);
  Tensor bias = randomTensor(DType::F32, {4}, 3);
  Tensor rm = randomTensor(DType::F32, {4}, 4);
  Tensor rv = randomTensor(DType::F32, {4}, 5, 0.5, 2);
  Tensor y(DType::F32, {6, 4, 3}), rmOut(DType::F32, {4}),
      rvOut(DType::F32, {4});
  rt::batchNormTraining(x.view(), scale.view(), bias.view(), rm.view(),
                        rv.view(), y.view(), rmOut.view(), rvOut.view(),
                        TensorView(), TensorView(), 1e-5, 0.9, true);
  DeviceTensor dx(x), ds(scale), db(bias), drm(rm), drv(rv),
      dy(DType::F32, {6, 4, 3});
  cuda::batchNormTraining(dx.view(), ds.view(), db.view(), drm.view(),
                          drv.view(), dy.view(), drm.view(), drv.view(),
                          TensorView(), TensorView(), 1e-5, 0.9, true);
  expectNear(drm.host(), rmOut, 1e-5);
  expectNear(drv.host(), rvOut, 1e-5);
}

} // namespace
