//===- HalfPrecisionTest.cpp - CUDA kernels on F16 and BF16 storage -------===//
//
// Mixed precision stores tensors in 16 bits and computes in fp32. Each
// kernel runs here on F16 and BF16 inputs, and its result is compared with
// a float64 reference computed on the host from the same inputs widened
// exactly to F64: the CPU kernel's F64 path (itself tested against float64
// loops and ONNX data in tests/unit/runtime).
//
// The tolerance rule (expectRounded): the kernel computes in fp32 from
// exact inputs and rounds once to the 16-bit format, so
//   |actual - ref| <= u * |ref| + (1 + u) * delta + floor,
// with u the format's unit roundoff (2^-11 for F16, 2^-8 for BF16: half an
// ulp, relative), delta the fp32 computation's error, bounded by
// ops * 2^-24 * magnitude (ops: the length of the fp32 accumulation, e.g. K
// for a GEMM, or a few ulps for elementwise math; magnitude: the sum of the
// absolute values of the terms), and floor half the format's smallest
// subnormal. A kernel that rounded an intermediate to 16 bits, accumulated
// in 16 bits or used the wrong formula misses this bound by orders of
// magnitude, since delta stays far below u * |ref|.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtil.h"

#include <algorithm>
#include <functional>
#include <limits>

using namespace remat::rt;
using namespace remat::rt::cudatest;
namespace rt = remat::rt;

namespace {

class CudaHalfPrecision : public CudaTest {};

const DType kHalfTypes[] = {DType::F16, DType::BF16};

double unitRoundoff(DType dtype) {
  return dtype == DType::F16 ? 0x1p-11 : 0x1p-8;
}
double subnormalFloor(DType dtype) {
  return dtype == DType::F16 ? 0x1p-25 : 0x1p-134;
}

/// t converted by the CPU's cast (exact from a 16-bit type to F64).
Tensor castTo(const Tensor &t, DType dtype) {
  Tensor out(dtype, t.shape());
  rt::cast(t.view(), out.view());
  return out;
}

/// Compares a 16-bit result with its F64 reference by the rule above;
/// magnitude(i) (default |ref_i|) scales the fp32 error of element i.
void expectRounded(const Tensor &actual, const Tensor &ref, double ops,
                   const std::string &what,
                   const std::function<double(int64_t)> &magnitude = {}) {
  ASSERT_EQ(ref.dtype(), DType::F64) << what;
  ASSERT_EQ(actual.shape(), ref.shape()) << what;
  const double u = unitRoundoff(actual.dtype());
  for (int64_t i = 0; i < ref.numel(); ++i) {
    const double a = getElement(actual.view(), i);
    const double e = getElement(ref.view(), i);
    if (std::isnan(e)) {
      ASSERT_TRUE(std::isnan(a)) << what << ": element " << i;
      continue;
    }
    if (std::isinf(e)) {
      ASSERT_EQ(a, e) << what << ": element " << i;
      continue;
    }
    const double m = magnitude ? magnitude(i) : std::abs(e);
    const double delta = ops * 0x1p-24 * m;
    ASSERT_NEAR(a, e, u * std::abs(e) + (1 + u) * delta +
                          subnormalFloor(actual.dtype()))
        << what << " (" << dtypeName(actual.dtype()) << "): element " << i;
  }
}

/// The magnitude of element i of a tensor (for expectRounded).
std::function<double(int64_t)> absOf(const Tensor &t) {
  return [&t](int64_t i) { return std::abs(getElement(t.view(), i)); };
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

TEST_F(CudaHalfPrecision, UnaryOps) {
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
      {UnaryOp::Neg, {}},         {UnaryOp::Abs, {}},
      {UnaryOp::Sqrt, {}},        {UnaryOp::Exp, {}},
      {UnaryOp::Log, {}},         {UnaryOp::Reciprocal, {}},
      {UnaryOp::Erf, {}},         {UnaryOp::Tanh, {}},
      {UnaryOp::Sigmoid, {}},     {UnaryOp::Relu, {}},
      {UnaryOp::GeluErf, {}},     {UnaryOp::GeluTanh, {}},
      {UnaryOp::LeakyRelu, leaky}, {UnaryOp::Elu, elu},
      {UnaryOp::Selu, selu},      {UnaryOp::Softplus, {}},
      {UnaryOp::Softsign, {}},    {UnaryOp::HardSigmoid, hard},
      {UnaryOp::Clip, clip},      {UnaryOp::Sin, {}},
      {UnaryOp::Cos, {}}};
  for (DType dtype : kHalfTypes)
    for (const auto &[op, params] : cases) {
      const bool positive = op == UnaryOp::Sqrt || op == UnaryOp::Log ||
                            op == UnaryOp::Reciprocal;
      Tensor x = randomTensor(dtype, {7, 129}, 1, positive ? 0.01 : -4, 4);
      Tensor x64 = castTo(x, DType::F64), ref(DType::F64, x.shape());
      rt::unary(op, x64.view(), ref.view(), params);
      DeviceTensor dx(x), dy(dtype, x.shape());
      cuda::unary(op, dx.view(), dy.view(), params);
      // A few fp32 ulps of the result or of the input (GELU and Softplus
      // cancel against x).
      expectRounded(dy.host(), ref, 8,
                    "op " + std::to_string(static_cast<int>(op)),
                    [&](int64_t i) {
                      return std::abs(getElement(ref.view(), i)) +
                             std::abs(getElement(x64.view(), i));
                    });
    }
}

TEST_F(CudaHalfPrecision, BinaryOpsBroadcast) {
  const BinaryOp ops[] = {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul,
                          BinaryOp::Div, BinaryOp::Max, BinaryOp::Min,
                          BinaryOp::PRelu};
  for (DType dtype : kHalfTypes) {
    Tensor a = randomTensor(dtype, {2, 3, 4, 5}, 2, -3, 3);
    Tensor b = randomTensor(dtype, {3, 1, 5}, 3, 0.5, 3);
    Tensor a64 = castTo(a, DType::F64), b64 = castTo(b, DType::F64);
    for (BinaryOp op : ops) {
      Tensor ref(DType::F64, a.shape());
      rt::binary(op, a64.view(), b64.view(), ref.view());
      DeviceTensor da(a), db(b), dout(dtype, a.shape());
      cuda::binary(op, da.view(), db.view(), dout.view());
      // One fp32 operation on exact inputs, then one rounding.
      expectRounded(dout.host(), ref, 1,
                    "op " + std::to_string(static_cast<int>(op)));
    }
    for (BinaryOp op : {BinaryOp::Equal, BinaryOp::Less, BinaryOp::Greater}) {
      Tensor ref(DType::Bool, a.shape());
      rt::binary(op, a64.view(), b64.view(), ref.view());
      DeviceTensor da(a), db(b), dout(DType::Bool, a.shape());
      cuda::binary(op, da.view(), db.view(), dout.view());
      expectSame(dout.host(), ref, "comparison");
    }
  }
}

TEST_F(CudaHalfPrecision, PowWithFloatAndIntegerExponents) {
  for (DType dtype : kHalfTypes) {
    Tensor a = randomTensor(dtype, {3, 17}, 4, 0.1, 3);
    Tensor a64 = castTo(a, DType::F64);
    for (DType exponent : {dtype, DType::F32, DType::I32, DType::I64}) {
      Tensor b = exponent == DType::I32 || exponent == DType::I64
                     ? randomIntegers(exponent, {17}, 5, -3, 4)
                     : randomTensor(exponent, {17}, 5, -2, 2);
      Tensor ref(DType::F64, a.shape());
      rt::binary(BinaryOp::Pow, a64.view(), castTo(b, DType::F64).view(),
                 ref.view());
      DeviceTensor da(a), db(b), dout(dtype, a.shape());
      cuda::binary(BinaryOp::Pow, da.view(), db.view(), dout.view());
      // powf: a few ulps, relative to the result.
      expectRounded(dout.host(), ref, 8, dtypeName(exponent));
    }
  }
}

TEST_F(CudaHalfPrecision, DropoutScalesInFp32) {
  uint64_t *step = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void **>(&step), sizeof(uint64_t)),
            cudaSuccess);
  const uint64_t value = 5;
  ASSERT_EQ(cudaMemcpyAsync(step, &value, sizeof value, cudaMemcpyHostToDevice,
                            cuda::stream()),
            cudaSuccess);
  for (DType dtype : kHalfTypes) {
    Tensor x = randomTensor(dtype, {4099}, 6, -2, 2);
    Tensor x64 = castTo(x, DType::F64), ref(DType::F64, x.shape()),
        mask(DType::Bool, x.shape());
    rt::dropout(x64.view(), ref.view(), mask.view(), 0.3, 42, 7, value);
    DeviceTensor dx(x), dy(dtype, x.shape()), dmask(DType::Bool, x.shape());
    cuda::dropout(dx.view(), dy.view(), dmask.view(), 0.3, 42, 7, step);
    // The mask depends on the element's index only.
    expectSame(dmask.host(), mask, "mask");
    expectRounded(dy.host(), ref, 2, "output");
  }
  cudaFree(step);
}

//===----------------------------------------------------------------------===//
// GEMMs: cuBLAS with 16-bit operands and fp32 accumulation
//===----------------------------------------------------------------------===//

TEST_F(CudaHalfPrecision, MatMulAccumulatesInFp32) {
  struct Case {
    Shape a, b, out;
    bool transA, transB;
  };
  // K >= 4 max(M, N) goes through an fp32 result and a cast (MatMul.cu):
  // the first two cases, the batched fourth and the dot product below.
  const Case cases[] = {
      {{5, 300}, {300, 3}, {5, 3}, false, false},
      {{300, 5}, {3, 300}, {5, 3}, true, true},
      {{2, 4, 6, 70}, {70, 9}, {2, 4, 6, 9}, false, false}, // linear layer
      {{3, 4, 200}, {3, 200, 5}, {3, 4, 5}, false, false},
      {{2, 1, 6, 7}, {1, 4, 7, 9}, {2, 4, 6, 9}, false, false},
      {{3, 6, 0}, {3, 0, 9}, {3, 6, 9}, false, false}, // K = 0: zeros
  };
  unsigned seed = 10;
  for (DType dtype : kHalfTypes)
    for (const Case &c : cases) {
      Tensor a = randomTensor(dtype, c.a, ++seed);
      Tensor b = randomTensor(dtype, c.b, ++seed);
      Tensor ref(DType::F64, c.out);
      rt::matmul(castTo(a, DType::F64).view(), castTo(b, DType::F64).view(),
                 ref.view(), c.transA, c.transB);
      DeviceTensor da(a), db(b), dout(dtype, c.out);
      cuda::fill(dout.view(), 7.0);
      cuda::matmul(da.view(), db.view(), dout.view(), c.transA, c.transB);
      const int64_t K = c.transA ? c.a[c.a.size() - 2] : c.a.back();
      // The terms' magnitudes bounded by |a| |b| <= 1 each: K terms.
      expectRounded(dout.host(), ref, static_cast<double>(K),
                    shapeToString(c.a) + " x " + shapeToString(c.b),
                    [&](int64_t) { return static_cast<double>(K); });
    }
  // A long dot product whose fp32 partial sums are all exact: 4096 terms
  // of 1 + 2^-7 sum to 4128 (exact in both formats), and alternating signs
  // to 0. A 16-bit accumulator rounds once its sum passes 256 (BF16) or
  // 2048 (F16) and misses by far more than the bound, which is the
  // output's rounding alone.
  for (DType dtype : kHalfTypes) {
    const int64_t K = 4096;
    Tensor a(dtype, {1, K}), b(dtype, {K, 2});
    for (int64_t k = 0; k < K; ++k) {
      setElement(a.view(), k, 1 + 0x1p-7);
      setElement(b.view(), 2 * k, 1.0);
      setElement(b.view(), 2 * k + 1, k % 2 ? -1.0 : 1.0);
    }
    const Tensor ref = make(DType::F64, {1, 2}, {4128, 0});
    DeviceTensor da(a), db(b), dout(dtype, {1, 2});
    cuda::matmul(da.view(), db.view(), dout.view(), false, false);
    expectRounded(dout.host(), ref, 0, "fp32 accumulation");
  }
}

//===----------------------------------------------------------------------===//
// Softmax and normalisation
//===----------------------------------------------------------------------===//

TEST_F(CudaHalfPrecision, SoftmaxAndItsBackwardOverEveryAxis) {
  const Shape shapes[] = {{3, 5, 7}, {4, 3000}};
  unsigned seed = 20;
  for (DType dtype : kHalfTypes)
    for (const Shape &shape : shapes)
      for (int64_t axis = 0; axis < static_cast<int64_t>(shape.size()); ++axis)
        for (bool log : {false, true}) {
          const std::string what = shapeToString(shape) + " axis " +
                                   std::to_string(axis) + (log ? " log" : "");
          Tensor x = randomTensor(dtype, shape, ++seed, -8, 8);
          Tensor x64 = castTo(x, DType::F64), ref(DType::F64, shape);
          if (log)
            rt::logSoftmax(x64.view(), ref.view(), axis);
          else
            rt::softmax(x64.view(), ref.view(), axis);
          DeviceTensor dx(x), dy(dtype, shape);
          if (log)
            cuda::logSoftmax(dx.view(), dy.view(), axis);
          else
            cuda::softmax(dx.view(), dy.view(), axis);
          // exp and a compensated sum: a few ulps of the result; log-softmax
          // subtracts quantities of the size of |x| + log(size).
          expectRounded(dy.host(), ref, 8, what, [&](int64_t i) {
            return std::abs(getElement(ref.view(), i)) +
                   (log ? 8 + std::log(double(shape[axis])) : 0.0);
          });

          // Backward from the 16-bit forward output as stored.
          Tensor y = dy.host(), g = randomTensor(dtype, shape, ++seed);
          Tensor gradRef(DType::F64, shape);
          if (log)
            rt::logSoftmaxBackward(castTo(y, DType::F64).view(),
                                   castTo(g, DType::F64).view(),
                                   gradRef.view(), axis);
          else
            rt::softmaxBackward(castTo(y, DType::F64).view(),
                                castTo(g, DType::F64).view(), gradRef.view(),
                                axis);
          DeviceTensor dyy(y), dg(g), ddx(dtype, shape);
          if (log)
            cuda::logSoftmaxBackward(dyy.view(), dg.view(), ddx.view(), axis);
          else
            cuda::softmaxBackward(dyy.view(), dg.view(), ddx.view(), axis);
          // dx = y (dy - s) or dy - exp(y) s with |s| <= size: the row sum's
          // magnitude enters every element.
          const double rowSum = log ? double(shape[axis]) : 1.0;
          expectRounded(ddx.host(), gradRef, 8, what + " backward",
                        [&](int64_t i) {
                          return std::abs(getElement(gradRef.view(), i)) + 1 +
                                 rowSum;
                        });
        }
}

TEST_F(CudaHalfPrecision, LayerNormAndItsBackward) {
  struct Case {
    Shape x;
    int64_t axis;
    Shape scale;
  };
  const Case cases[] = {{{4, 6, 768}, 2, {768}},
                        {{5, 3, 4}, 1, {4}}, // broadcast scale
                        {{9, 2000}, 1, {2000}}};
  unsigned seed = 40;
  for (DType dtype : kHalfTypes)
    for (const Case &c : cases) {
      const std::string what = shapeToString(c.x);
      Shape statShape(c.x.begin(), c.x.begin() + c.axis);
      statShape.resize(c.x.size(), 1);
      const Shape normShape(c.x.begin() + c.axis, c.x.end());
      Tensor x = randomTensor(dtype, c.x, ++seed, -3, 5);
      Tensor scale = randomTensor(dtype, c.scale, ++seed, 0.5, 1.5);
      Tensor bias = randomTensor(dtype, c.scale, ++seed);
      Tensor y(DType::F64, c.x), mean(DType::F64, statShape),
          inv(DType::F64, statShape);
      rt::layerNorm(castTo(x, DType::F64).view(),
                    castTo(scale, DType::F64).view(),
                    castTo(bias, DType::F64).view(), y.view(), mean.view(),
                    inv.view(), c.axis, 1e-5);
      // Statistics and parameter gradients in the data's 16-bit type (one
      // dtype per call, as the mixed-precision pass gives them).
      DeviceTensor dx(x), ds(scale), db(bias), dy(dtype, c.x),
          dmean(dtype, statShape), dinv(dtype, statShape);
      cuda::layerNorm(dx.view(), ds.view(), db.view(), dy.view(), dmean.view(),
                      dinv.view(), c.axis, 1e-5);
      // |y| <= |xhat| |scale| + |bias|: a few fp32 ulps of that.
      expectRounded(dy.host(), y, 8, what, [&](int64_t i) {
        return std::abs(getElement(y.view(), i)) + 8;
      });
      // Compensated fp32 sums of values below 5 in magnitude.
      expectRounded(dmean.host(), mean, 8, what + " mean",
                    [](int64_t) { return 5.0; });
      expectRounded(dinv.host(), inv, 8, what + " invStdDev");

      // Backward with the statistics the forward saved.
      Tensor g = randomTensor(dtype, c.x, ++seed);
      Tensor meanSaved = dmean.host(), invSaved = dinv.host();
      Tensor dxRef(DType::F64, c.x), dscaleRef(DType::F64, normShape),
          dbiasRef(DType::F64, normShape);
      rt::layerNormBackward(castTo(x, DType::F64).view(),
                            castTo(scale, DType::F64).view(),
                            castTo(meanSaved, DType::F64).view(),
                            castTo(invSaved, DType::F64).view(),
                            castTo(g, DType::F64).view(), dxRef.view(),
                            dscaleRef.view(), dbiasRef.view(), c.axis);
      DeviceTensor dg(g), ddx(dtype, c.x), ddscale(dtype, normShape),
          ddbias(dtype, normShape);
      cuda::layerNormBackward(dx.view(), ds.view(), dmean.view(), dinv.view(),
                              dg.view(), ddx.view(), ddscale.view(),
                              ddbias.view(), c.axis);
      // dx = inv (g - mean(g) - xhat mean(g xhat)): terms of magnitude up
      // to inv (|g| + 1 + |xhat| 3), a row of compensated sums.
      expectRounded(ddx.host(), dxRef, 16, what + " dx", [&](int64_t i) {
        return std::abs(getElement(dxRef.view(), i)) + 16;
      });
      // Sums over the rows of terms of magnitude below 4.
      const double rows = double(x.numel() / numElements(normShape));
      expectRounded(ddscale.host(), dscaleRef, 8, what + " dscale",
                    [&](int64_t) { return 4 * rows; });
      expectRounded(ddbias.host(), dbiasRef, 8, what + " dbias",
                    [&](int64_t) { return rows; });
    }
}

TEST_F(CudaHalfPrecision, BatchNormWithFp32Statistics) {
  const Shape shapes[] = {{4, 3, 5, 5}, {2, 8, 3000}};
  unsigned seed = 60;
  for (DType dtype : kHalfTypes)
    for (const Shape &shape : shapes) {
      const std::string what = shapeToString(shape);
      const int64_t C = shape[1];
      Tensor x = randomTensor(dtype, shape, ++seed, -1, 3);
      Tensor scale = randomTensor(DType::F32, {C}, ++seed);
      Tensor bias = randomTensor(DType::F32, {C}, ++seed);
      Tensor rm = randomTensor(DType::F32, {C}, ++seed);
      Tensor rv = randomTensor(DType::F32, {C}, ++seed, 0.5, 2);
      Tensor x64 = castTo(x, DType::F64);
      const Tensor s64 = castTo(scale, DType::F64), b64 = castTo(bias, DType::F64),
                   rm64 = castTo(rm, DType::F64), rv64 = castTo(rv, DType::F64);

      // Inference.
      Tensor yRef(DType::F64, shape);
      rt::batchNormInference(x64.view(), s64.view(), b64.view(), rm64.view(),
                             rv64.view(), yRef.view(), 1e-5);
      DeviceTensor dx(x), ds(scale), db(bias), drm(rm), drv(rv),
          dy(dtype, shape);
      cuda::batchNormInference(dx.view(), ds.view(), db.view(), drm.view(),
                               drv.view(), dy.view(), 1e-5);
      expectRounded(dy.host(), yRef, 8, what + " inference", [&](int64_t i) {
        return std::abs(getElement(yRef.view(), i)) + 8;
      });

      // Training.
      Tensor y(DType::F64, shape), rmOut(DType::F64, {C}),
          rvOut(DType::F64, {C}), saved(DType::F64, {C}),
          savedInv(DType::F64, {C});
      rt::batchNormTraining(x64.view(), s64.view(), b64.view(), rm64.view(),
                            rv64.view(), y.view(), rmOut.view(), rvOut.view(),
                            saved.view(), savedInv.view(), 1e-5, 0.9, true);
      DeviceTensor dyt(dtype, shape), drmOut(DType::F32, {C}),
          drvOut(DType::F32, {C}), dsaved(DType::F32, {C}),
          dsavedInv(DType::F32, {C});
      cuda::batchNormTraining(dx.view(), ds.view(), db.view(), drm.view(),
                              drv.view(), dyt.view(), drmOut.view(),
                              drvOut.view(), dsaved.view(), dsavedInv.view(),
                              1e-5, 0.9, true);
      expectRounded(dyt.host(), y, 16, what + " training", [&](int64_t i) {
        return std::abs(getElement(y.view(), i)) + 8;
      });
      expectNear(castTo(drmOut.host(), DType::F64), rmOut, 1e-6, what + " rm");
      expectNear(castTo(drvOut.host(), DType::F64), rvOut, 1e-6, what + " rv");
      expectNear(castTo(dsaved.host(), DType::F64), saved, 1e-6, what + " mean");
      expectNear(castTo(dsavedInv.host(), DType::F64), savedInv, 1e-6,
                 what + " inv");

      // Backward with those statistics.
      Tensor g = randomTensor(dtype, shape, ++seed);
      Tensor dxRef(DType::F64, shape), dscaleRef(DType::F64, {C}),
          dbiasRef(DType::F64, {C});
      rt::batchNormTrainingBackward(
          x64.view(), s64.view(), castTo(dsaved.host(), DType::F64).view(),
          castTo(dsavedInv.host(), DType::F64).view(),
          castTo(g, DType::F64).view(), dxRef.view(), dscaleRef.view(),
          dbiasRef.view());
      DeviceTensor dg(g), ddx(dtype, shape), ddscale(DType::F32, {C}),
          ddbias(DType::F32, {C});
      cuda::batchNormTrainingBackward(dx.view(), ds.view(), dsaved.view(),
                                      dsavedInv.view(), dg.view(), ddx.view(),
                                      ddscale.view(), ddbias.view());
      expectRounded(ddx.host(), dxRef, 16, what + " dx", [&](int64_t i) {
        return std::abs(getElement(dxRef.view(), i)) + 8;
      });
      expectNear(castTo(ddscale.host(), DType::F64), dscaleRef, 1e-5,
                 what + " dscale");
      expectNear(castTo(ddbias.host(), DType::F64), dbiasRef, 1e-5,
                 what + " dbias");
    }
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

TEST_F(CudaHalfPrecision, ReductionsAndCumSum) {
  struct Case {
    Shape x;
    Dims axes;
  };
  const Case cases[] = {{{4, 5, 6, 7}, {1, 3}},
                        {{4, 5, 6, 7}, {0}},
                        {{300000}, {0}}, // split across blocks
                        {{20000, 48}, {0}}};
  unsigned seed = 80;
  for (DType dtype : kHalfTypes)
    for (const Case &c : cases)
      for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max}) {
        const std::string what = shapeToString(c.x) + " op " +
                                 std::to_string(static_cast<int>(op));
        // Values in [-1, 1): the long sums stay within F16's range.
        Tensor x = randomTensor(dtype, c.x, ++seed);
        Shape outShape = c.x;
        for (int64_t a : c.axes)
          outShape[a] = 1;
        Tensor ref(DType::F64, outShape);
        rt::reduce(op, castTo(x, DType::F64).view(), ref.view(), c.axes);
        DeviceTensor dx(x), dout(dtype, outShape);
        cuda::reduce(op, dx.view(), dout.view(), c.axes);
        // Compensated fp32 sums: a few ulps of the summed magnitudes
        // (at most 1 per element), whatever the length.
        const double count = double(x.numel()) / double(ref.numel());
        expectRounded(dout.host(), ref, 4, what, [&](int64_t) {
          return op == ReduceOp::Sum ? count : 1.0;
        });
      }
  for (DType dtype : kHalfTypes)
    for (bool reverse : {false, true}) {
      Tensor x = randomTensor(dtype, {3, 65, 37}, 90);
      Tensor ref(DType::F64, x.shape());
      rt::cumSum(castTo(x, DType::F64).view(), ref.view(), 1, false, reverse);
      DeviceTensor dx(x), dy(dtype, x.shape());
      cuda::cumSum(dx.view(), dy.view(), 1, false, reverse);
      // An fp32 running sum of at most 65 terms of magnitude <= 1.
      expectRounded(dy.host(), ref, 65, "cumSum",
                    [](int64_t) { return 65.0; });
    }
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

TEST_F(CudaHalfPrecision, ConvolutionForwardAndBackward) {
  struct Case {
    Shape x, w;
    int64_t group;
    WindowParams params;
  };
  const Case cases[] = {
      {{2, 3, 9, 9}, {4, 3, 3, 3}, 1, {{3, 3}, {1, 1}, {1, 1, 1, 1}, {}}},
      {{3, 4, 10, 7}, {6, 2, 3, 2}, 2, {{3, 2}, {2, 1}, {1, 0, 0, 1}, {1, 2}}},
      {{2, 8, 5, 5}, {16, 8, 1, 1}, 1, {{1, 1}, {}, {}, {}}}, // pointwise
  };
  unsigned seed = 100;
  for (DType dtype : kHalfTypes)
    for (const Case &c : cases) {
      const std::string what = shapeToString(c.x);
      Tensor x = randomTensor(dtype, c.x, ++seed);
      Tensor w = randomTensor(dtype, c.w, ++seed);
      Tensor bias = randomTensor(dtype, {c.w[0]}, ++seed);
      Tensor x64 = castTo(x, DType::F64), w64 = castTo(w, DType::F64);
      // The output shape from the CPU's own check of a probe call.
      Shape yShape = {c.x[0], c.w[0]};
      for (size_t d = 0; d + 2 < c.x.size(); ++d) {
        const int64_t k = c.params.kernel[d];
        const int64_t s = c.params.strides.empty() ? 1 : c.params.strides[d];
        const int64_t dil =
            c.params.dilations.empty() ? 1 : c.params.dilations[d];
        const size_t r = c.x.size() - 2;
        const int64_t pb = c.params.pads.empty() ? 0 : c.params.pads[d];
        const int64_t pe = c.params.pads.empty() ? 0 : c.params.pads[r + d];
        yShape.push_back((c.x[2 + d] + pb + pe - dil * (k - 1) - 1) / s + 1);
      }
      const int64_t K = c.w[1] * numElements(Shape(c.w.begin() + 2, c.w.end()));
      Tensor yRef(DType::F64, yShape);
      rt::conv(x64.view(), w64.view(), castTo(bias, DType::F64).view(),
               yRef.view(), c.params, c.group);
      DeviceTensor dx(x), dw(w), db(bias), dy(dtype, yShape);
      cuda::conv(dx.view(), dw.view(), db.view(), dy.view(), c.params,
                 c.group);
      // K products of magnitude <= 1, then the bias.
      expectRounded(dy.host(), yRef, double(K + 1), what + " forward",
                    [&](int64_t) { return double(K + 1); });

      Tensor g = randomTensor(dtype, yShape, ++seed);
      Tensor g64 = castTo(g, DType::F64);
      Tensor dxRef(DType::F64, c.x), dwRef(DType::F64, c.w);
      rt::convBackwardData(g64.view(), w64.view(), dxRef.view(), c.params,
                           c.group);
      rt::convBackwardFilter(x64.view(), g64.view(), dwRef.view(), c.params,
                             c.group);
      DeviceTensor dg(g), ddx(dtype, c.x), ddw(dtype, c.w);
      cuda::convBackwardData(dg.view(), dw.view(), ddx.view(), c.params,
                             c.group);
      cuda::convBackwardFilter(dx.view(), dg.view(), ddw.view(), c.params,
                               c.group);
      // dx: at most M * taps terms; dw: the batch times the output
      // positions, summed in fp32 across images (not in 16 bits).
      const double dxTerms = double(c.w[0] * K);
      const double dwTerms = double(numElements(yShape) / c.w[0]);
      expectRounded(ddx.host(), dxRef, dxTerms, what + " dx",
                    [&](int64_t) { return dxTerms; });
      expectRounded(ddw.host(), dwRef, dwTerms, what + " dw",
                    [&](int64_t) { return dwTerms; });
    }
}

TEST_F(CudaHalfPrecision, PoolingForwardAndBackward) {
  // Overlapping windows (stride < kernel): max-pool indices repeat.
  const WindowParams params{{3, 3}, {2, 2}, {1, 1, 1, 1}, {}};
  for (DType dtype : kHalfTypes) {
    Tensor x = randomTensor(dtype, {2, 3, 9, 9}, 120);
    Tensor x64 = castTo(x, DType::F64);
    const Shape yShape = {2, 3, 5, 5};
    Tensor yRef(DType::F64, yShape), idxRef(DType::I64, yShape);
    rt::maxPool(x64.view(), yRef.view(), idxRef.view(), params);
    DeviceTensor dx(x), dy(dtype, yShape), didx(DType::I64, yShape);
    cuda::maxPool(dx.view(), dy.view(), didx.view(), params);
    // The maximum is one of the inputs: exact.
    expectSame(castTo(dy.host(), DType::F64), yRef, "maxPool");
    expectSame(didx.host(), idxRef, "maxPool indices");

    for (bool includePad : {false, true}) {
      Tensor aRef(DType::F64, yShape);
      rt::averagePool(x64.view(), aRef.view(), params, includePad);
      DeviceTensor da(dtype, yShape);
      cuda::averagePool(dx.view(), da.view(), params, includePad);
      // Up to 9 taps of magnitude <= 1 summed, then divided.
      expectRounded(da.host(), aRef, 10, "averagePool",
                    [](int64_t) { return 9.0; });
    }
    Tensor gRef(DType::F64, {2, 3, 1, 1});
    rt::globalAveragePool(x64.view(), gRef.view());
    DeviceTensor dgap(dtype, {2, 3, 1, 1});
    cuda::globalAveragePool(dx.view(), dgap.view());
    expectRounded(dgap.host(), gRef, 4, "globalAveragePool",
                  [](int64_t) { return 1.0; });

    Tensor g = randomTensor(dtype, yShape, 121);
    Tensor g64 = castTo(g, DType::F64);
    Tensor maxRef(DType::F64, x.shape());
    rt::maxPoolBackward(g64.view(), idxRef.view(), maxRef.view(), params);
    DeviceTensor dg(g), dmax(dtype, x.shape());
    cuda::fill(dmax.view(), 5);
    cuda::maxPoolBackward(dg.view(), didx.view(), dmax.view(), params);
    // Up to four windows share an input: four fp32 additions, one rounding.
    expectRounded(dmax.host(), maxRef, 4, "maxPoolBackward",
                  [](int64_t) { return 4.0; });
    for (bool includePad : {false, true}) {
      Tensor avgRef(DType::F64, x.shape());
      rt::averagePoolBackward(g64.view(), avgRef.view(), params, includePad);
      DeviceTensor davg(dtype, x.shape());
      cuda::averagePoolBackward(dg.view(), davg.view(), params, includePad);
      expectRounded(davg.host(), avgRef, 10, "averagePoolBackward",
                    [](int64_t) { return 4.0; });
    }
  }
}

//===----------------------------------------------------------------------===//
// Scatter-adds: fp32 accumulation, also when dx exceeds the scratch
//===----------------------------------------------------------------------===//

TEST_F(CudaHalfPrecision, GatherBackwardAccumulatesInFp32) {
  // Many repeats of few rows: 16-bit partial sums would drift far outside
  // the bound; fp32 ones stay within it. The second size needs several
  // windows of the 1 MiB workspace's scratch.
  for (const Shape &xShape : {Shape{20, 12}, Shape{600, 512}})
    for (DType dtype : kHalfTypes) {
      const int64_t rows = xShape[0];
      Tensor idx = randomIntegers(DType::I64, {3000}, 130, -rows, rows - 1);
      const Shape dyShape = {3000, xShape[1]};
      Tensor dy = randomTensor(dtype, dyShape, 131, 0, 1);
      Tensor ref(DType::F64, xShape);
      rt::gatherBackward(castTo(dy, DType::F64).view(), idx.view(), ref.view(),
                         0);
      bindContext(size_t(1) << 20);
      DeviceTensor didx(idx), ddy(dy), ddx(dtype, xShape);
      cuda::fill(ddx.view(), 5);
      cuda::gatherBackward(ddy.view(), didx.view(), ddx.view(), 0);
      Tensor got = ddx.host();
      bindContext();
      // At most 3000 terms in [0, 1) per element; their count bounds the
      // fp32 error, the element's value the rounding.
      expectRounded(got, ref, 3000, shapeToString(xShape), absOf(ref));
    }
}

TEST_F(CudaHalfPrecision, GatherElementsAndPadBackward) {
  for (DType dtype : kHalfTypes) {
    Tensor dy = randomTensor(dtype, {4, 9}, 140);
    Tensor idx = randomIntegers(DType::I64, {4, 9}, 141, -3, 2);
    Tensor ref(DType::F64, {4, 3});
    rt::gatherElementsBackward(castTo(dy, DType::F64).view(), idx.view(),
                               ref.view(), 1);
    DeviceTensor ddy(dy), didx(idx), ddx(dtype, {4, 3});
    cuda::gatherElementsBackward(ddy.view(), didx.view(), ddx.view(), 1);
    expectRounded(ddx.host(), ref, 9, "gatherElementsBackward",
                  [](int64_t) { return 9.0; });

    Tensor g = randomTensor(dtype, {5, 9}, 142);
    const Dims begins = {1, 3};
    Tensor padRef(DType::F64, {3, 4});
    rt::padBackward(castTo(g, DType::F64).view(), padRef.view(), begins,
                    PadMode::Reflect);
    DeviceTensor dg(g), dpad(dtype, {3, 4});
    cuda::padBackward(dg.view(), dpad.view(), begins, PadMode::Reflect);
    expectRounded(dpad.host(), padRef, 9, "padBackward",
                  [](int64_t) { return 9.0; });
  }
}

//===----------------------------------------------------------------------===//
// Activation backward and losses
//===----------------------------------------------------------------------===//

TEST_F(CudaHalfPrecision, ActivationBackward) {
  UnaryParams elu, clip;
  elu.alpha = 0.7;
  clip.lower = -0.5;
  clip.upper = 1.25;
  for (DType dtype : kHalfTypes) {
    Tensor x = randomTensor(dtype, {5, 301}, 150, -5, 5);
    Tensor dy = randomTensor(dtype, {5, 301}, 151);
    Tensor x64 = castTo(x, DType::F64), dy64 = castTo(dy, DType::F64);
    // |dx| <= |dy| (1 + |x|) bounds the intermediates of every formula.
    auto magnitude = [&](int64_t i) {
      return std::abs(getElement(dy64.view(), i)) *
             (1 + std::abs(getElement(x64.view(), i)));
    };
    for (bool tanhApprox : {false, true}) {
      Tensor ref(DType::F64, x.shape());
      rt::geluBackward(x64.view(), dy64.view(), ref.view(), tanhApprox);
      DeviceTensor dx(x), ddy(dy), ddx(dtype, x.shape());
      cuda::geluBackward(dx.view(), ddy.view(), ddx.view(), tanhApprox);
      expectRounded(ddx.host(), ref, 16, "geluBackward", magnitude);
    }
    const std::pair<UnaryOp, UnaryParams> cases[] = {{UnaryOp::Elu, elu},
                                                     {UnaryOp::Softplus, {}},
                                                     {UnaryOp::Softsign, {}},
                                                     {UnaryOp::Clip, clip},
                                                     {UnaryOp::Sin, {}}};
    for (const auto &[op, params] : cases) {
      Tensor ref(DType::F64, x.shape());
      rt::activationBackward(op, x64.view(), dy64.view(), ref.view(), params);
      DeviceTensor dx(x), ddy(dy), ddx(dtype, x.shape());
      cuda::activationBackward(op, dx.view(), ddy.view(), ddx.view(), params);
      expectRounded(ddx.host(), ref, 16,
                    "op " + std::to_string(static_cast<int>(op)), magnitude);
    }
  }
}

TEST_F(CudaHalfPrecision, LossesAndTheirBackward) {
  const Shape shapes[] = {{8, 5}, {3, 4, 6}, {64, 1000}};
  unsigned seed = 160;
  for (DType dtype : kHalfTypes)
    for (const Shape &scoresShape : shapes)
      for (LossReduction reduction :
           {LossReduction::None, LossReduction::Sum, LossReduction::Mean}) {
        const std::string what = shapeToString(scoresShape) + " reduction " +
                                 std::to_string(static_cast<int>(reduction));
        const int64_t C = scoresShape[1];
        Shape ls = {scoresShape[0]};
        ls.insert(ls.end(), scoresShape.begin() + 2, scoresShape.end());
        const Shape lossShape = reduction == LossReduction::None ? ls : Shape{};
        const double targets = double(numElements(ls));
        Tensor scores = randomTensor(dtype, scoresShape, ++seed, -3, 3);
        Tensor labels = randomIntegers(DType::I64, ls, ++seed, 0, C - 1);
        Tensor weights = randomTensor(dtype, {C}, ++seed, 0.5, 2);
        Tensor s64 = castTo(scores, DType::F64), w64 = castTo(weights, DType::F64);
        Tensor loss(DType::F64, lossShape), logProb(DType::F64, scoresShape);
        rt::softmaxCrossEntropyLoss(s64.view(), labels.view(), w64.view(),
                                    loss.view(), logProb.view(), reduction, 1,
                                    true);
        DeviceTensor ds(scores), dl(labels), dw(weights),
            dloss(dtype, lossShape), dlogProb(dtype, scoresShape),
            dloss2(dtype, lossShape);
        cuda::softmaxCrossEntropyLoss(ds.view(), dl.view(), dw.view(),
                                      dloss.view(), dlogProb.view(), reduction,
                                      1, true);
        // Without logProb: the fused path, from the scores directly.
        cuda::softmaxCrossEntropyLoss(ds.view(), dl.view(), dw.view(),
                                      dloss2.view(), TensorView(), reduction, 1,
                                      true);
        // A loss term is about |x| + log(C) <= 3 + 7, times a weight <= 2.
        const double perTarget = 2 * (3 + std::log(double(C)));
        const double lossMagnitude =
            reduction == LossReduction::Sum ? targets * perTarget : perTarget;
        expectRounded(dloss2.host(), loss, 8, what + " fused",
                      [&](int64_t) { return lossMagnitude; });
        expectRounded(dlogProb.host(), logProb, 8, what + " logProb",
                      [&](int64_t) { return 3 + std::log(double(C)); });
        // With logProb, the loss comes from the 16-bit log-probabilities
        // (rounded once already): NLL of those against their F64 widening.
        Tensor lp = dlogProb.host();
        Tensor nllRef(DType::F64, lossShape);
        rt::nllLoss(castTo(lp, DType::F64).view(), labels.view(), w64.view(),
                    nllRef.view(), reduction, 1, true);
        expectRounded(dloss.host(), nllRef, 8, what + " loss",
                      [&](int64_t) { return lossMagnitude; });

        // Backward of both from the 16-bit log-probabilities.
        Tensor dLoss = randomTensor(dtype, lossShape, ++seed, 0.5, 1.5);
        Tensor lp64 = castTo(lp, DType::F64), dLoss64 = castTo(dLoss, DType::F64);
        Tensor dScores(DType::F64, scoresShape), dInput(DType::F64, scoresShape);
        rt::softmaxCrossEntropyLossBackward(dLoss64.view(), lp64.view(),
                                            labels.view(), w64.view(),
                                            dScores.view(), reduction, 1, true);
        rt::nllLossBackward(dLoss64.view(), labels.view(), w64.view(),
                            dInput.view(), reduction, 1, true);
        DeviceTensor dlp(lp), ddLoss(dLoss), ddScores(dtype, scoresShape),
            ddInput(dtype, scoresShape);
        cuda::softmaxCrossEntropyLossBackward(ddLoss.view(), dlp.view(),
                                              dl.view(), dw.view(),
                                              ddScores.view(), reduction, 1,
                                              true);
        cuda::nllLossBackward(ddLoss.view(), dl.view(), dw.view(),
                              ddInput.view(), reduction, 1, true);
        // Coefficients w * dloss (/ sum of weights): a few fp32 roundings.
        expectRounded(ddScores.host(), dScores, 8, what + " dscores",
                      [&](int64_t i) {
                        return std::abs(getElement(dScores.view(), i)) + 4;
                      });
        expectRounded(ddInput.host(), dInput, 8, what + " dinput");
      }
}

} // namespace
