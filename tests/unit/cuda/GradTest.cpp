//===- GradTest.cpp - CUDA backward kernels against the CPU ---------------===//
//
// Tolerances: tolerance() where sums run in another order (GEMMs, row and
// column sums) or transcendental functions differ, or the GPU computes in
// fp32 what the CPU computes in double (F32 data); average-pool backward in
// F64 and slice backward (DataMovementTest) are exact; scatter-adds with
// atomics (gather and max-pool backward) are summed in float on the GPU
// and in double on the CPU: 1e-5 relative for f32.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtil.h"

using namespace remat::rt;
using namespace remat::rt::cudatest;
namespace rt = remat::rt;

namespace {

using CudaGrad = CudaTest;

TEST_F(CudaGrad, GeluBackward) {
  for (DType dtype : {DType::F32, DType::F64})
    for (bool tanhApprox : {false, true}) {
      Tensor x = randomTensor(dtype, {5, 301}, 1, -5, 5);
      Tensor dy = randomTensor(dtype, {5, 301}, 2);
      Tensor dx(dtype, {5, 301});
      rt::geluBackward(x.view(), dy.view(), dx.view(), tanhApprox);
      DeviceTensor ddx_in(x), ddy(dy), ddx(dtype, {5, 301});
      cuda::geluBackward(ddx_in.view(), ddy.view(), ddx.view(), tanhApprox);
      expectNear(ddx.host(), dx, tolerance(dtype));
      // In place (dx over dy), as a memory plan may put it.
      cuda::geluBackward(ddx_in.view(), ddy.view(), ddy.view(), tanhApprox);
      expectNear(ddy.host(), dx, tolerance(dtype), "in place");
    }
}

TEST_F(CudaGrad, ActivationBackward) {
  UnaryParams leaky, elu, selu, hard, clip;
  leaky.alpha = 0.1;
  elu.alpha = 0.7;
  selu.alpha = 1.6732632423543772;
  selu.gamma = 1.0507009873554805;
  hard.alpha = 0.2;
  hard.beta = 0.5;
  clip.lower = -0.5;
  clip.upper = 1.25;
  const std::pair<UnaryOp, UnaryParams> cases[] = {
      {UnaryOp::Relu, {}},         {UnaryOp::LeakyRelu, leaky},
      {UnaryOp::Elu, elu},
      {UnaryOp::Selu, selu},       {UnaryOp::Softplus, {}},
      {UnaryOp::Softsign, {}},     {UnaryOp::HardSigmoid, hard},
      {UnaryOp::Clip, clip},       {UnaryOp::Sin, {}},
      {UnaryOp::Cos, {}}};
  for (DType dtype : {DType::F32, DType::F64})
    for (const auto &[op, params] : cases) {
      Tensor x = randomTensor(dtype, {5, 301}, 9, -5, 5);
      Tensor dy = randomTensor(dtype, {5, 301}, 10);
      Tensor dx(dtype, {5, 301});
      rt::activationBackward(op, x.view(), dy.view(), dx.view(), params);
      DeviceTensor dxIn(x), ddy(dy), ddx(dtype, {5, 301});
      cuda::activationBackward(op, dxIn.view(), ddy.view(), ddx.view(), params);
      expectNear(ddx.host(), dx, tolerance(dtype),
                 "op " + std::to_string(static_cast<int>(op)));
      // In place (dx over x), as a memory plan may put it.
      cuda::activationBackward(op, dxIn.view(), ddy.view(), dxIn.view(), params);
      expectNear(dxIn.host(), dx, tolerance(dtype),
                 "op " + std::to_string(static_cast<int>(op)) + " in place");
    }
  DeviceTensor x(DType::F32, {3}), dy(DType::F32, {3}), dx(DType::F32, {3});
  EXPECT_THROW(cuda::activationBackward(UnaryOp::Tanh, x.view(), dy.view(),
                                        dx.view(), {}),
               RuntimeError);
}

TEST_F(CudaGrad, SoftmaxAndLogSoftmaxBackward) {
  const Shape shapes[] = {{3, 5, 7}, {4, 2000}};
  for (const Shape &shape : shapes)
    for (DType dtype : {DType::F32, DType::F64})
      for (int64_t axis = 0; axis < static_cast<int64_t>(shape.size()); ++axis)
        for (bool log : {false, true}) {
          Tensor x = randomTensor(dtype, shape, 3, -3, 3);
          Tensor y(dtype, shape), dy = randomTensor(dtype, shape, 4);
          if (log)
            rt::logSoftmax(x.view(), y.view(), axis);
          else
            rt::softmax(x.view(), y.view(), axis);
          Tensor dx(dtype, shape);
          DeviceTensor dyy(y), ddy(dy), ddx(dtype, shape);
          if (log) {
            rt::logSoftmaxBackward(y.view(), dy.view(), dx.view(), axis);
            cuda::logSoftmaxBackward(dyy.view(), ddy.view(), ddx.view(), axis);
          } else {
            rt::softmaxBackward(y.view(), dy.view(), dx.view(), axis);
            cuda::softmaxBackward(dyy.view(), ddy.view(), ddx.view(), axis);
          }
          expectNear(ddx.host(), dx, tolerance(dtype),
                     shapeToString(shape) + " axis " + std::to_string(axis));
          // In place (dx over dy), as a memory plan may put it.
          if (log)
            cuda::logSoftmaxBackward(dyy.view(), ddy.view(), ddy.view(), axis);
          else
            cuda::softmaxBackward(dyy.view(), ddy.view(), ddy.view(), axis);
          expectNear(ddy.host(), dx, tolerance(dtype),
                     shapeToString(shape) + " axis " + std::to_string(axis) +
                         " in place");
        }
}

TEST_F(CudaGrad, LayerNormBackward) {
  struct Case {
    Shape x;
    int64_t axis;
    Shape scale;
  };
  const Case cases[] = {{{4, 6, 768}, 2, {768}},
                        {{3, 4, 5}, 1, {4, 5}},
                        {{5, 3, 4}, 1, {4}}, // broadcast scale
                        {{3000, 16}, 1, {16}}};
  unsigned seed = 10;
  for (const Case &c : cases)
    for (DType dtype : {DType::F32, DType::F64}) {
      Shape statShape(c.x.begin(), c.x.begin() + c.axis);
      statShape.resize(c.x.size(), 1);
      const Shape normShape(c.x.begin() + c.axis, c.x.end());
      Tensor x = randomTensor(dtype, c.x, ++seed, -2, 2);
      Tensor scale = randomTensor(dtype, c.scale, ++seed, 0.5, 1.5);
      Tensor y(dtype, c.x), mean(dtype, statShape), inv(dtype, statShape);
      rt::layerNorm(x.view(), scale.view(), TensorView(), y.view(), mean.view(),
                    inv.view(), c.axis, 1e-5);
      Tensor dy = randomTensor(dtype, c.x, ++seed);
      Tensor dx(dtype, c.x), dscale(dtype, normShape), dbias(dtype, normShape);
      rt::layerNormBackward(x.view(), scale.view(), mean.view(), inv.view(),
                            dy.view(), dx.view(), dscale.view(), dbias.view(),
                            c.axis);
      DeviceTensor dX(x), dS(scale), dM(mean), dI(inv), dDy(dy),
          dDx(dtype, c.x), dDscale(dtype, normShape), dDbias(dtype, normShape);
      cuda::layerNormBackward(dX.view(), dS.view(), dM.view(), dI.view(),
                              dDy.view(), dDx.view(), dDscale.view(),
                              dDbias.view(), c.axis);
      const std::string what = shapeToString(c.x);
      expectNear(dDx.host(), dx, tolerance(dtype), what + " dx");
      expectNear(dDscale.host(), dscale, tolerance(dtype), what + " dscale");
      expectNear(dDbias.host(), dbias, tolerance(dtype), what + " dbias");
      // In place (dx over dy), parameter gradients only from dy.
      cuda::layerNormBackward(dX.view(), dS.view(), dM.view(), dI.view(),
                              dDy.view(), dDy.view(), dDscale.view(),
                              TensorView(), c.axis);
      expectNear(dDy.host(), dx, tolerance(dtype), what + " in place");
      expectNear(dDscale.host(), dscale, tolerance(dtype),
                 what + " dscale in place");
    }
}

TEST_F(CudaGrad, BatchNormTrainingBackward) {
  const Shape shapes[] = {{4, 3, 5, 5}, {64, 16}, {2, 4, 3000}};
  unsigned seed = 20;
  for (const Shape &shape : shapes)
    for (DType dtype : {DType::F32, DType::F64}) {
      const int64_t C = shape[1];
      Tensor x = randomTensor(dtype, shape, ++seed, -1, 2);
      Tensor scale = randomTensor(dtype, {C}, ++seed);
      Tensor bias = randomTensor(dtype, {C}, ++seed);
      Tensor y(dtype, shape), mean(dtype, {C}), inv(dtype, {C});
      rt::batchNormTraining(x.view(), scale.view(), bias.view(), TensorView(),
                            TensorView(), y.view(), TensorView(), TensorView(),
                            mean.view(), inv.view(), 1e-5, 0.9, false);
      Tensor dy = randomTensor(dtype, shape, ++seed);
      Tensor dx(dtype, shape), dscale(dtype, {C}), dbias(dtype, {C});
      rt::batchNormTrainingBackward(x.view(), scale.view(), mean.view(),
                                    inv.view(), dy.view(), dx.view(),
                                    dscale.view(), dbias.view());
      DeviceTensor dX(x), dS(scale), dM(mean), dI(inv), dDy(dy),
          dDx(dtype, shape), dDscale(dtype, {C}), dDbias(dtype, {C});
      cuda::batchNormTrainingBackward(dX.view(), dS.view(), dM.view(),
                                      dI.view(), dDy.view(), dDx.view(),
                                      dDscale.view(), dDbias.view());
      const std::string what = shapeToString(shape);
      expectNear(dDx.host(), dx, tolerance(dtype), what + " dx");
      expectNear(dDscale.host(), dscale, tolerance(dtype), what + " dscale");
      expectNear(dDbias.host(), dbias, tolerance(dtype), what + " dbias");
      // In place (dx over dy, then over x), as a memory plan may put it.
      cuda::batchNormTrainingBackward(dX.view(), dS.view(), dM.view(),
                                      dI.view(), dDy.view(), dDy.view(),
                                      dDscale.view(), dDbias.view());
      expectNear(dDy.host(), dx, tolerance(dtype), what + " dx over dy");
      expectNear(dDscale.host(), dscale, tolerance(dtype),
                 what + " dscale with dx over dy");
      DeviceTensor dDy2(dy);
      cuda::batchNormTrainingBackward(dX.view(), dS.view(), dM.view(),
                                      dI.view(), dDy2.view(), dX.view(),
                                      TensorView(), TensorView());
      expectNear(dX.host(), dx, tolerance(dtype), what + " dx over x");
    }
}

struct ConvGradCase {
  Shape x;
  int64_t M, group;
  Shape kernel;
  WindowParams params;
};

Shape convOut(const ConvGradCase &c) {
  Shape y = {c.x[0], c.M};
  const size_t k = c.kernel.size();
  for (size_t i = 0; i < k; ++i) {
    const int64_t s = c.params.strides.empty() ? 1 : c.params.strides[i];
    const int64_t d = c.params.dilations.empty() ? 1 : c.params.dilations[i];
    const int64_t pb = c.params.pads.empty() ? 0 : c.params.pads[i];
    const int64_t pe = c.params.pads.empty() ? 0 : c.params.pads[k + i];
    y.push_back((c.x[2 + i] + pb + pe - d * (c.kernel[i] - 1) - 1) / s + 1);
  }
  return y;
}

TEST_F(CudaGrad, ConvBackwardDataAndFilter) {
  const ConvGradCase cases[] = {
      {{2, 3, 9, 9}, 4, 1, {3, 3}, {{}, {1, 1}, {1, 1, 1, 1}, {}}},
      {{3, 4, 10, 7}, 6, 2, {3, 2}, {{}, {2, 1}, {1, 0, 0, 1}, {1, 2}}},
      {{2, 6, 8, 8}, 6, 6, {3, 3}, {{}, {2, 2}, {1, 1, 1, 1}, {}}},
      {{2, 8, 5, 5}, 16, 2, {1, 1}, {{}, {}, {}, {}}}, // pointwise
      {{3, 5, 20}, 7, 1, {4}, {{}, {3}, {2, 1}, {2}}},
      {{1, 2, 5, 6, 4},
       3,
       1,
       {2, 3, 2},
       {{}, {1, 2, 1}, {0, 1, 1, 1, 0, 0}, {}}},
  };
  unsigned seed = 30;
  for (ConvGradCase c : cases)
    for (DType dtype : {DType::F32, DType::F64}) {
      c.params.kernel = c.kernel;
      Shape wShape = {c.M, c.x[1] / c.group};
      wShape.insert(wShape.end(), c.kernel.begin(), c.kernel.end());
      const Shape yShape = convOut(c);
      Tensor x = randomTensor(dtype, c.x, ++seed);
      Tensor w = randomTensor(dtype, wShape, ++seed);
      Tensor dy = randomTensor(dtype, yShape, ++seed);
      Tensor dx(dtype, c.x), dw(dtype, wShape);
      rt::convBackwardData(dy.view(), w.view(), dx.view(), c.params, c.group);
      rt::convBackwardFilter(x.view(), dy.view(), dw.view(), c.params, c.group);
      DeviceTensor dX(x), dW(w), dDy(dy), dDx(dtype, c.x), dDw(dtype, wShape);
      cuda::fill(dDx.view(), 5); // must be overwritten
      cuda::fill(dDw.view(), 5);
      cuda::convBackwardData(dDy.view(), dW.view(), dDx.view(), c.params,
                             c.group);
      cuda::convBackwardFilter(dX.view(), dDy.view(), dDw.view(), c.params,
                               c.group);
      const std::string what =
          shapeToString(c.x) + " group " + std::to_string(c.group);
      expectNear(dDx.host(), dx, tolerance(dtype), what + " dx");
      expectNear(dDw.host(), dw, tolerance(dtype), what + " dw");
    }
}

TEST_F(CudaGrad, PoolingBackward) {
  struct Case {
    Shape x, y;
    WindowParams params;
  };
  const Case cases[] = {
      // Overlapping windows (stride < kernel): indices repeat.
      {{2, 3, 9, 9}, {2, 3, 5, 5}, {{3, 3}, {2, 2}, {1, 1, 1, 1}, {}}},
      // Dilated windows with a ceil-mode overhang (H: 4 outputs, floor 3).
      {{2, 3, 9, 8}, {2, 3, 4, 6}, {{3, 2}, {2, 1}, {1, 0, 0, 1}, {2, 3}}},
  };
  for (const Case &c : cases)
    for (DType dtype : {DType::F32, DType::F64}) {
      const WindowParams &params = c.params;
      const std::string what = " " + shapeToString(c.x);
      Tensor x = randomTensor(dtype, c.x, 40);
      const Shape &yShape = c.y;
      Tensor y(dtype, yShape), idx(DType::I64, yShape);
      rt::maxPool(x.view(), y.view(), idx.view(), params);
      Tensor dy = randomTensor(dtype, yShape, 41);
      Tensor dx(dtype, x.shape());
      rt::maxPoolBackward(dy.view(), idx.view(), dx.view(), params);
      DeviceTensor dIdx(idx), dDy(dy), dDx(dtype, x.shape()),
          again(dtype, x.shape());
      cuda::fill(dDx.view(), 5);
      cuda::maxPoolBackward(dDy.view(), dIdx.view(), dDx.view(), params);
      expectNear(dDx.host(), dx, tolerance(dtype), "max" + what);
      // Gathered per input element, no atomics: two runs, the same bits.
      cuda::maxPoolBackward(dDy.view(), dIdx.view(), again.view(), params);
      expectSame(again.host(), dDx.host(), "max, two runs" + what);

      for (bool includePad : {false, true}) {
        Tensor ax(dtype, x.shape());
        rt::averagePoolBackward(dy.view(), ax.view(), params, includePad);
        DeviceTensor dAx(dtype, x.shape());
        cuda::averagePoolBackward(dDy.view(), dAx.view(), params, includePad);
        if (dtype == DType::F64)
          expectSame(dAx.host(), ax, "average" + what);
        else
          expectNear(dAx.host(), ax, tolerance(dtype), "average" + what);
      }
    }
  Tensor bad = make(DType::I64, {1, 1, 1}, {1000});
  DeviceTensor dBad(bad), dDy1(DType::F32, {1, 1, 1}),
      dDx1(DType::F32, {1, 1, 4});
  cuda::maxPoolBackward(dDy1.view(), dBad.view(), dDx1.view(),
                        {{4}, {1}, {0, 0}, {1}});
  EXPECT_THROW(syncDevice(), RuntimeError);
}

TEST_F(CudaGrad, GatherBackwardAccumulatesRepeatedIndices) {
  for (DType dtype : {DType::F32, DType::F64})
    for (int64_t axis : {int64_t(0), int64_t(1)}) {
      const Shape xShape = {20, 12};
      // Many repeats: 300 indices into 20 or 12 rows, negative ones too.
      Tensor idx = randomIntegers(DType::I64, {300}, 50, -xShape[axis],
                                  xShape[axis] - 1);
      Shape dyShape = axis == 0 ? Shape{300, 12} : Shape{20, 300};
      Tensor dy = randomTensor(dtype, dyShape, 51);
      Tensor dx(dtype, xShape);
      rt::gatherBackward(dy.view(), idx.view(), dx.view(), axis);
      DeviceTensor dIdx(idx), dDy(dy), dDx(dtype, xShape);
      cuda::fill(dDx.view(), 5);
      cuda::gatherBackward(dDy.view(), dIdx.view(), dDx.view(), axis);
      expectNear(dDx.host(), dx, tolerance(dtype),
                 "axis " + std::to_string(axis));
    }
}

// An embedding's backward with heavily repeated tokens (a padding token,
// say) adds in the same order on every run: no float atomics.
TEST_F(CudaGrad, GatherBackwardIsDeterministic) {
  for (DType dtype : {DType::F32, DType::BF16}) {
    Tensor idx = randomIntegers(DType::I64, {4096}, 52, 0, 9);
    Tensor dy = randomTensor(dtype, {4096, 96}, 53);
    DeviceTensor dIdx(idx), dDy(dy), first(dtype, {50, 96}),
        second(dtype, {50, 96});
    cuda::gatherBackward(dDy.view(), dIdx.view(), first.view(), 0);
    cuda::gatherBackward(dDy.view(), dIdx.view(), second.view(), 0);
    expectSame(second.host(), first.host(), "two runs");
    Tensor ref(dtype, {50, 96});
    rt::gatherBackward(dy.view(), idx.view(), ref.view(), 0);
    expectNear(first.host(), ref, tolerance(dtype), "against the CPU");
  }
}

} // namespace
