//===- GradCheckTest.cpp - Backward kernels vs finite differences ---------===//
//
// Every backward kernel is checked in float64 against central differences of
// the FORWARD kernel it differentiates: for random inputs x and a random
// cotangent dy, the directional derivative of L(x) = <dy, f(x)> along each
// basis vector e_i,
//   (L(x + h e_i) - L(x - h e_i)) / 2h,
// must match the kernel's dx_i to 1e-6 relative to max|dx|. The same backward
// is then run in float32 on the same data and compared with the float64
// result.
//
// The 16-bit section at the end runs each backward kernel on F16/BF16
// operands and compares it with the float64 kernel (checked here against
// finite differences) called on the same operands widened to F64, by the
// rule in TestUtil.h: n = 0 where the kernel sums in double (its result is
// then the float64 one rounded once), the accumulation length where it
// sums in fp32 (the convolution GEMMs, with M the same kernel on |inputs|).
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/Kernels.h"

#include "TestUtil.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <string>

using namespace remat::rt;
using namespace remat::rt::test;

namespace {

constexpr DType F64 = DType::F64;
constexpr DType F32 = DType::F32;

/// <a, b> over all elements.
double dot(const Tensor &a, const Tensor &b) {
  EXPECT_EQ(a.numel(), b.numel());
  std::vector<double> av = values(a), bv = values(b);
  return std::inner_product(av.begin(), av.end(), bv.begin(), 0.0);
}

/// The same values in another float dtype (integer tensors are returned as
/// a copy unchanged).
Tensor as(DType dtype, const Tensor &t) {
  if (!isFloat(t.dtype()))
    dtype = t.dtype();
  return make(dtype, t.shape(), values(t));
}

double maxAbs(const std::vector<double> &v) {
  double m = 0;
  for (double x : v)
    m = std::max(m, std::abs(x));
  return m;
}

/// Compares `analytic` (the kernel's gradient with respect to the F64 tensor
/// x) with central differences of loss() over every element of x.
void expectGradient(const Tensor &x, const std::function<double()> &loss,
                    const std::vector<double> &analytic,
                    const std::string &what, double h = 1e-6,
                    double tol = 1e-6) {
  SCOPED_TRACE(what);
  ASSERT_EQ(x.dtype(), F64);
  ASSERT_EQ(static_cast<int64_t>(analytic.size()), x.numel());
  const double scale = maxAbs(analytic);
  ASSERT_GT(scale, 0) << "gradient is identically zero: weak test";
  double *p = x.as<double>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double saved = p[i];
    p[i] = saved + h;
    const double plus = loss();
    p[i] = saved - h;
    const double minus = loss();
    p[i] = saved;
    const double numeric = (plus - minus) / (2 * h);
    ASSERT_NEAR(analytic[i], numeric, tol * scale)
        << "element " << i << " of " << shapeToString(x.shape());
  }
}

/// Float32 backward vs the float64 one, relative to the largest magnitude.
void expectF32Close(const std::vector<double> &f32,
                    const std::vector<double> &f64, const std::string &what,
                    double tol = 2e-5) {
  SCOPED_TRACE(what + " (float32)");
  ASSERT_EQ(f32.size(), f64.size());
  const double scale = std::max(maxAbs(f64), 1e-30);
  for (size_t i = 0; i < f64.size(); ++i)
    ASSERT_NEAR(f32[i], f64[i], tol * scale) << "element " << i;
}

/// Output extent of one spatial dim (floor or ceil mode, as ONNX).
int64_t outDim(int64_t in, int64_t k, int64_t s, int64_t pb, int64_t pe,
               int64_t d, bool ceil = false) {
  int64_t span = in + pb + pe - ((k - 1) * d + 1);
  int64_t o = (ceil ? (span + s - 1) / s : span / s) + 1;
  if (ceil && (o - 1) * s >= in + pb)
    --o;
  return o;
}

Shape windowOutShape(const Shape &x, int64_t channels,
                     const WindowParams &p, bool ceil = false) {
  const int64_t k = p.kernel.size();
  Shape ys = {x[0], channels};
  for (int64_t d = 0; d < k; ++d)
    ys.push_back(outDim(x[2 + d], p.kernel[d], p.strides[d], p.pads[d],
                        p.pads[k + d], p.dilations[d], ceil));
  return ys;
}

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

TEST(GradCheckTest, Gelu) {
  for (bool tanhApprox : {false, true}) {
    const std::string what = tanhApprox ? "gelu tanh" : "gelu erf";
    Tensor x = randomTensor(F64, {3, 7}, 11, -3, 3);
    Tensor dy = randomTensor(F64, {3, 7}, 12);
    auto backward = [&](DType dt) {
      Tensor xt = as(dt, x), dyt = as(dt, dy), dx(dt, x.shape());
      geluBackward(xt.view(), dyt.view(), dx.view(), tanhApprox);
      return values(dx);
    };
    const std::vector<double> dx = backward(F64);
    Tensor y(F64, x.shape());
    expectGradient(x, [&] {
      unary(tanhApprox ? UnaryOp::GeluTanh : UnaryOp::GeluErf, x.view(),
            y.view());
      return dot(y, dy);
    }, dx, what);
    expectF32Close(backward(F32), dx, what);
  }
}

TEST(GradCheckTest, ActivationBackward) {
  struct Case {
    const char *name;
    UnaryOp op;
    UnaryParams params;
    double lo, hi; // sample range: away from the kinks by much more than h
  };
  UnaryParams leaky, elu, selu, hard, clip;
  leaky.alpha = 0.1;
  elu.alpha = 0.7;
  selu.alpha = 1.6732632423543772;
  selu.gamma = 1.0507009873554805;
  hard.alpha = 0.2;
  hard.beta = 0.5;
  clip.lower = -0.5;
  clip.upper = 0.75;
  const Case cases[] = {
      {"leaky_relu", UnaryOp::LeakyRelu, leaky, -3, 3},
      {"elu", UnaryOp::Elu, elu, -3, 3},
      {"selu", UnaryOp::Selu, selu, -3, 3},
      {"softplus", UnaryOp::Softplus, {}, -6, 6},
      {"softsign", UnaryOp::Softsign, {}, -4, 4},
      {"hard_sigmoid", UnaryOp::HardSigmoid, hard, -4, 4},
      {"clip", UnaryOp::Clip, clip, -2, 2},
      {"sin", UnaryOp::Sin, {}, -4, 4},
      {"cos", UnaryOp::Cos, {}, -4, 4},
  };
  for (const Case &c : cases) {
    Tensor x = randomTensor(F64, {3, 7}, 41, c.lo, c.hi);
    // Nudge samples off the kinks (x = 0; hard_sigmoid's and clip's
    // saturation points) so central differences are exact there.
    for (double *v = x.as<double>(), *end = v + x.numel(); v != end; ++v)
      for (double kink : {0.0, -2.5, 2.5, clip.lower, clip.upper})
        if (std::abs(*v - kink) < 1e-3)
          *v = kink + 1e-2;
    Tensor dy = randomTensor(F64, {3, 7}, 42);
    auto backward = [&](DType dt) {
      Tensor xt = as(dt, x), dyt = as(dt, dy), dx(dt, x.shape());
      activationBackward(c.op, xt.view(), dyt.view(), dx.view(), c.params);
      return values(dx);
    };
    const std::vector<double> dx = backward(F64);
    Tensor y(F64, x.shape());
    expectGradient(x, [&] {
      unary(c.op, x.view(), y.view(), c.params);
      return dot(y, dy);
    }, dx, c.name);
    expectF32Close(backward(F32), dx, c.name);
  }
}

TEST(GradCheckTest, SoftmaxAndLogSoftmax) {
  for (bool log : {false, true})
    for (int64_t axis : {0, 1, 2}) {
      const std::string what = std::string(log ? "logSoftmax" : "softmax") +
                               " axis " + std::to_string(axis);
      Tensor x = randomTensor(F64, {3, 4, 5}, 21 + axis, -2, 2);
      Tensor dy = randomTensor(F64, {3, 4, 5}, 31 + axis);
      Tensor y(F64, x.shape());
      auto forward = [&](const Tensor &in, const Tensor &out) {
        log ? logSoftmax(in.view(), out.view(), axis)
            : softmax(in.view(), out.view(), axis);
      };
      auto backward = [&](DType dt) {
        Tensor xt = as(dt, x), yt(dt, x.shape()), dyt = as(dt, dy),
               dx(dt, x.shape());
        forward(xt, yt);
        log ? logSoftmaxBackward(yt.view(), dyt.view(), dx.view(), axis)
            : softmaxBackward(yt.view(), dyt.view(), dx.view(), axis);
        return values(dx);
      };
      const std::vector<double> dx = backward(F64);
      expectGradient(x, [&] {
        forward(x, y);
        return dot(y, dy);
      }, dx, what);
      expectF32Close(backward(F32), dx, what);
    }
}

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

TEST(GradCheckTest, LayerNorm) {
  const Shape xs = {2, 3, 4, 5};
  for (int64_t axis : {1, 2, 3}) {
    const std::string what = "layerNorm axis " + std::to_string(axis);
    const Shape ps(xs.begin() + axis, xs.end());
    Shape stats(xs.begin(), xs.begin() + axis);
    stats.resize(xs.size(), 1);
    Tensor x = randomTensor(F64, xs, 41, -2, 3);
    Tensor scale = randomTensor(F64, ps, 42, 0.5, 1.5);
    Tensor bias = randomTensor(F64, ps, 43);
    Tensor dy = randomTensor(F64, xs, 44);
    const double eps = 1e-5;
    // Returns dx, dscale, dbias.
    auto backward = [&](DType dt) {
      Tensor xt = as(dt, x), st = as(dt, scale), bt = as(dt, bias),
             dyt = as(dt, dy);
      Tensor y(dt, xs), mean(dt, stats), inv(dt, stats);
      layerNorm(xt.view(), st.view(), bt.view(), y.view(), mean.view(),
                inv.view(), axis, eps);
      Tensor dx(dt, xs), ds(dt, ps), db(dt, ps);
      layerNormBackward(xt.view(), st.view(), mean.view(), inv.view(),
                        dyt.view(), dx.view(), ds.view(), db.view(), axis);
      return std::vector<std::vector<double>>{values(dx), values(ds),
                                              values(db)};
    };
    const auto grads = backward(F64);
    Tensor y(F64, xs);
    auto loss = [&] {
      layerNorm(x.view(), scale.view(), bias.view(), y.view(), TensorView(),
                TensorView(), axis, eps);
      return dot(y, dy);
    };
    expectGradient(x, loss, grads[0], what + " dx");
    expectGradient(scale, loss, grads[1], what + " dscale");
    expectGradient(bias, loss, grads[2], what + " dbias");
    const auto grads32 = backward(F32);
    for (int k = 0; k < 3; ++k)
      expectF32Close(grads32[k], grads[k], what + " output " +
                                               std::to_string(k));
  }
}

TEST(GradCheckTest, LayerNormBroadcastScaleAndOptionalOutputs) {
  // scale [5] broadcast over the normalised [4, 5]: dscale comes back at
  // [4, 5] and its column sums are the gradient of the [5] scale.
  const Shape xs = {3, 4, 5};
  Tensor x = randomTensor(F64, xs, 51, -1, 2);
  Tensor scale = randomTensor(F64, {5}, 52, 0.5, 1.5);
  Tensor dy = randomTensor(F64, xs, 53);
  Tensor y(F64, xs), mean(F64, {3, 1, 1}), inv(F64, {3, 1, 1});
  layerNorm(x.view(), scale.view(), TensorView(), y.view(), mean.view(),
            inv.view(), 1, 1e-5);
  Tensor dx(F64, xs), ds(F64, {4, 5});
  layerNormBackward(x.view(), scale.view(), mean.view(), inv.view(),
                    dy.view(), dx.view(), ds.view(), TensorView(), 1);
  std::vector<double> dsv = values(ds), reduced(5, 0.0);
  for (int64_t i = 0; i < 20; ++i)
    reduced[i % 5] += dsv[i];
  auto loss = [&] {
    layerNorm(x.view(), scale.view(), TensorView(), y.view(), TensorView(),
              TensorView(), 1, 1e-5);
    return dot(y, dy);
  };
  expectGradient(x, loss, values(dx), "broadcast-scale dx");
  expectGradient(scale, loss, reduced, "broadcast-scale dscale");
  // dx alone, then dscale alone, give the same numbers.
  Tensor dx2(F64, xs), ds2(F64, {4, 5});
  layerNormBackward(x.view(), scale.view(), mean.view(), inv.view(), dy.view(),
                    dx2.view(), TensorView(), TensorView(), 1);
  layerNormBackward(x.view(), scale.view(), mean.view(), inv.view(), dy.view(),
                    TensorView(), ds2.view(), TensorView(), 1);
  EXPECT_EQ(values(dx2), values(dx));
  EXPECT_EQ(values(ds2), dsv);
}

TEST(GradCheckTest, BatchNormTraining) {
  for (const Shape &xs : {Shape{4, 3}, Shape{3, 2, 5}, Shape{2, 3, 2, 3}}) {
    const std::string what = "batchNorm " + shapeToString(xs);
    const int64_t C = xs[1];
    Tensor x = randomTensor(F64, xs, 61, -2, 3);
    Tensor scale = randomTensor(F64, {C}, 62, 0.5, 1.5);
    Tensor bias = randomTensor(F64, {C}, 63);
    Tensor dy = randomTensor(F64, xs, 64);
    const double eps = 1e-5, momentum = 0.9;
    auto backward = [&](DType dt) {
      Tensor xt = as(dt, x), st = as(dt, scale), bt = as(dt, bias),
             dyt = as(dt, dy);
      Tensor y(dt, xs), mean(dt, {C}), inv(dt, {C});
      batchNormTraining(xt.view(), st.view(), bt.view(), TensorView(),
                        TensorView(), y.view(), TensorView(), TensorView(),
                        mean.view(), inv.view(), eps, momentum, false);
      Tensor dx(dt, xs), ds(dt, {C}), db(dt, {C});
      batchNormTrainingBackward(xt.view(), st.view(), mean.view(), inv.view(),
                                dyt.view(), dx.view(), ds.view(), db.view());
      return std::vector<std::vector<double>>{values(dx), values(ds),
                                              values(db)};
    };
    const auto grads = backward(F64);
    Tensor y(F64, xs);
    auto loss = [&] {
      batchNormTraining(x.view(), scale.view(), bias.view(), TensorView(),
                        TensorView(), y.view(), TensorView(), TensorView(),
                        TensorView(), TensorView(), eps, momentum, false);
      return dot(y, dy);
    };
    expectGradient(x, loss, grads[0], what + " dx");
    expectGradient(scale, loss, grads[1], what + " dscale");
    expectGradient(bias, loss, grads[2], what + " dbias");
    const auto grads32 = backward(F32);
    for (int k = 0; k < 3; ++k)
      expectF32Close(grads32[k], grads[k], what + " output " +
                                               std::to_string(k));
  }
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

struct ConvGradCase {
  const char *name;
  Shape x;
  int64_t M, group;
  WindowParams p;
};

TEST(GradCheckTest, Conv) {
  const std::vector<ConvGradCase> cases = {
      {"1-D", {2, 3, 9}, 4, 1, {{3}, {1}, {1, 2}, {1}}},
      {"1-D stride 3 skips inputs", {1, 2, 10}, 2, 1, {{2}, {3}, {0, 0}, {1}}},
      {"2-D stride 2 asym pads", {2, 2, 7, 6}, 3, 1,
       {{3, 2}, {2, 2}, {1, 0, 2, 1}, {1, 1}}},
      {"2-D dilation 2 groups 2", {1, 4, 7, 7}, 4, 2,
       {{3, 3}, {1, 2}, {2, 1, 0, 2}, {2, 2}}},
      {"2-D pointwise", {2, 3, 4, 4}, 2, 1,
       {{1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}}},
      {"2-D depthwise", {1, 3, 5, 5}, 3, 3,
       {{3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}}},
      {"3-D", {1, 2, 4, 3, 4}, 2, 2,
       {{2, 2, 2}, {1, 2, 1}, {1, 0, 1, 0, 1, 0}, {1, 1, 2}}},
  };
  for (const ConvGradCase &c : cases) {
    const std::string what = std::string("conv ") + c.name;
    Shape ws = {c.M, c.x[1] / c.group};
    ws.insert(ws.end(), c.p.kernel.begin(), c.p.kernel.end());
    const Shape ys = windowOutShape(c.x, c.M, c.p);
    Tensor x = randomTensor(F64, c.x, 71);
    Tensor w = randomTensor(F64, ws, 72);
    Tensor dy = randomTensor(F64, ys, 73);
    auto backward = [&](DType dt) {
      Tensor xt = as(dt, x), wt = as(dt, w), dyt = as(dt, dy);
      Tensor dx(dt, c.x), dw(dt, ws);
      fill(dx.view(), 123); // written, not accumulated
      fill(dw.view(), 123);
      convBackwardData(dyt.view(), wt.view(), dx.view(), c.p, c.group);
      convBackwardFilter(xt.view(), dyt.view(), dw.view(), c.p, c.group);
      return std::vector<std::vector<double>>{values(dx), values(dw)};
    };
    const auto grads = backward(F64);
    Tensor y(F64, ys);
    auto loss = [&] {
      conv(x.view(), w.view(), TensorView(), y.view(), c.p, c.group);
      return dot(y, dy);
    };
    expectGradient(x, loss, grads[0], what + " dx");
    expectGradient(w, loss, grads[1], what + " dw");
    const auto grads32 = backward(F32);
    expectF32Close(grads32[0], grads[0], what + " dx");
    expectF32Close(grads32[1], grads[1], what + " dw");
  }
}

struct PoolGradCase {
  const char *name;
  Shape x;
  WindowParams p;
  bool ceil;
};

const std::vector<PoolGradCase> &poolGradCases() {
  static const std::vector<PoolGradCase> cases = {
      {"1-D padded", {1, 2, 9}, {{3}, {2}, {1, 1}, {1}}, false},
      {"1-D dilated", {2, 1, 10}, {{3}, {1}, {2, 1}, {2}}, false},
      {"2-D padded overlap", {2, 2, 5, 6}, {{3, 3}, {2, 2}, {1, 1, 1, 1},
                                            {1, 1}}, false},
      {"2-D asym pads ceil overhang", {1, 2, 6, 7},
       {{3, 2}, {2, 2}, {1, 0, 1, 0}, {1, 1}}, true},
      {"2-D ceil overhang", {1, 1, 8, 8}, {{3, 3}, {3, 2}, {0, 1, 0, 0},
                                           {1, 1}}, true},
      {"3-D", {1, 2, 4, 5, 4}, {{2, 2, 3}, {2, 1, 2}, {1, 0, 1, 0, 1, 1},
                                {1, 1, 1}}, true},
      {"2-D dilated ceil overhang", {1, 2, 9, 8},
       {{3, 2}, {2, 1}, {1, 0, 0, 1}, {2, 3}}, true},
      {"3-D dilated", {1, 1, 5, 6, 7},
       {{2, 2, 2}, {1, 2, 3}, {0, 1, 1, 0, 0, 1}, {2, 2, 3}}, false},
  };
  return cases;
}

TEST(GradCheckTest, MaxPool) {
  for (const PoolGradCase &c : poolGradCases()) {
    const std::string what = std::string("maxPool ") + c.name;
    const Shape ys = windowOutShape(c.x, c.x[1], c.p, c.ceil);
    // Distinct values 0.01 apart in random order: no ties, and the h-sized
    // perturbations never change a window's winner.
    const int64_t n = numElements(c.x);
    std::vector<double> xv(n);
    std::iota(xv.begin(), xv.end(), 0.0);
    std::shuffle(xv.begin(), xv.end(), std::mt19937(81));
    for (double &v : xv)
      v = -2 + 0.01 * v;
    Tensor x = make(F64, c.x, xv);
    Tensor dy = randomTensor(F64, ys, 82);
    auto backward = [&](DType dt) {
      Tensor xt = as(dt, x), dyt = as(dt, dy), y(dt, ys),
             idx(DType::I64, ys), dx(dt, c.x);
      maxPool(xt.view(), y.view(), idx.view(), c.p);
      fill(dx.view(), 123);
      maxPoolBackward(dyt.view(), idx.view(), dx.view(), c.p);
      return values(dx);
    };
    const std::vector<double> dx = backward(F64);
    Tensor y(F64, ys);
    expectGradient(x, [&] {
      maxPool(x.view(), y.view(), TensorView(), c.p);
      return dot(y, dy);
    }, dx, what);
    expectF32Close(backward(F32), dx, what);
  }
}

TEST(GradCheckTest, AveragePool) {
  for (bool includePad : {false, true})
    for (const PoolGradCase &c : poolGradCases()) {
      const std::string what = std::string("averagePool ") + c.name +
                               (includePad ? " countIncludePad" : "");
      const Shape ys = windowOutShape(c.x, c.x[1], c.p, c.ceil);
      Tensor x = randomTensor(F64, c.x, 91);
      Tensor dy = randomTensor(F64, ys, 92);
      auto backward = [&](DType dt) {
        Tensor dyt = as(dt, dy), dx(dt, c.x);
        fill(dx.view(), 123);
        averagePoolBackward(dyt.view(), dx.view(), c.p, includePad);
        return values(dx);
      };
      const std::vector<double> dx = backward(F64);
      Tensor y(F64, ys);
      expectGradient(x, [&] {
        averagePool(x.view(), y.view(), c.p, includePad);
        return dot(y, dy);
      }, dx, what);
      expectF32Close(backward(F32), dx, what);
    }
}

TEST(GradCheckTest, PoolBackwardErrors) {
  Tensor dy(F64, {1, 1, 2}), dx(F64, {1, 1, 4});
  const WindowParams pairs = {{2}, {2}, {0, 0}, {1}};
  Tensor idx = make(DType::I64, {1, 1, 2}, {0, 4});
  EXPECT_THROW(maxPoolBackward(dy.view(), idx.view(), dx.view(), pairs),
               RuntimeError);
  // In range, but output 0's window is [0, 2): the gathering CUDA kernel
  // would drop it, so both backends refuse it.
  Tensor outside = make(DType::I64, {1, 1, 2}, {2, 3});
  EXPECT_THROW(maxPoolBackward(dy.view(), outside.view(), dx.view(), pairs),
               RuntimeError);
  Tensor idx32(DType::I32, {1, 1, 2});
  EXPECT_THROW(maxPoolBackward(dy.view(), idx32.view(), dx.view(), pairs),
               RuntimeError);
  Tensor dxBad(F32, {1, 1, 4});
  EXPECT_THROW(averagePoolBackward(dy.view(), dxBad.view(),
                                   {{2}, {2}, {0, 0}, {1}}, false),
               RuntimeError);
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

TEST(GradCheckTest, Gather) {
  struct Case {
    Shape x;
    int64_t axis;
    DType indexType;
    Shape indexShape;
    std::vector<double> indices;
  };
  const std::vector<Case> cases = {
      // Repeated (0 three times, 4 == -1 twice) and negative indices.
      {{3, 5, 2}, 1, DType::I64, {2, 3}, {0, -1, 2, 4, 0, 0}},
      {{4, 3}, 0, DType::I32, {5}, {-4, 3, 0, 3, -1}},
      {{2, 3, 4}, 2, DType::I64, {2}, {-2, 2}},
      {{3, 4}, 1, DType::I64, {}, {-3}}, // scalar index drops the axis
  };
  for (const Case &c : cases) {
    const std::string what = "gather axis " + std::to_string(c.axis) +
                             " of " + shapeToString(c.x);
    Shape ys(c.x.begin(), c.x.begin() + c.axis);
    ys.insert(ys.end(), c.indexShape.begin(), c.indexShape.end());
    ys.insert(ys.end(), c.x.begin() + c.axis + 1, c.x.end());
    Tensor x = randomTensor(F64, c.x, 101);
    Tensor indices = make(c.indexType, c.indexShape, c.indices);
    Tensor dy = randomTensor(F64, ys, 102);
    auto backward = [&](DType dt) {
      Tensor dyt = as(dt, dy), dx(dt, c.x);
      fill(dx.view(), 123);
      gatherBackward(dyt.view(), indices.view(), dx.view(), c.axis);
      return values(dx);
    };
    const std::vector<double> dx = backward(F64);
    Tensor y(F64, ys);
    expectGradient(x, [&] {
      gather(x.view(), indices.view(), y.view(), c.axis);
      return dot(y, dy);
    }, dx, what);
    expectF32Close(backward(F32), dx, what);
  }
  Tensor dy(F64, {2}), dx(F64, {3});
  Tensor bad = make(DType::I64, {2}, {0, 3});
  EXPECT_THROW(gatherBackward(dy.view(), bad.view(), dx.view(), 0),
               RuntimeError);
}

TEST(GradCheckTest, Slice) {
  struct Case {
    Shape x, y;
    std::vector<int64_t> starts, steps;
  };
  const std::vector<Case> cases = {
      {{5, 6, 3}, {3, 3, 3}, {4, 0, 2}, {-2, 2, -1}},
      {{7}, {3}, {5, }, {-2}},
      {{4, 5}, {2, 2}, {1, 4}, {1, -3}},
  };
  for (const Case &c : cases) {
    const std::string what = "slice " + shapeToString(c.x) + " -> " +
                             shapeToString(c.y);
    Tensor x = randomTensor(F64, c.x, 111);
    Tensor dy = randomTensor(F64, c.y, 112);
    auto backward = [&](DType dt) {
      Tensor dyt = as(dt, dy), dx(dt, c.x);
      fill(dx.view(), 123);
      sliceBackward(dyt.view(), dx.view(), c.starts, c.steps);
      return values(dx);
    };
    const std::vector<double> dx = backward(F64);
    Tensor y(F64, c.y);
    expectGradient(x, [&] {
      slice(x.view(), y.view(), c.starts, c.steps);
      return dot(y, dy);
    }, dx, what);
    expectF32Close(backward(F32), dx, what);
  }
  // Data movement: works on integer dtypes too.
  Tensor dy = make(DType::I32, {2}, {7, 8}), dx(DType::I32, {5});
  fill(dx.view(), 1);
  sliceBackward(dy.view(), dx.view(), {4}, {-3});
  EXPECT_EQ(values(dx), (std::vector<double>{0, 8, 0, 0, 7}));
  EXPECT_THROW(sliceBackward(dy.view(), dx.view(), {4}, {-5}), RuntimeError);
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

struct LossGradCase {
  const char *name;
  Shape scores;
  std::vector<double> labels; // [N, d...]
  bool weights;
  bool hasIgnoreIndex;
  int64_t ignoreIndex;
};

const std::vector<LossGradCase> &lossGradCases() {
  static const std::vector<LossGradCase> cases = {
      {"plain", {4, 5}, {1, 0, 4, 2}, false, false, 0},
      {"weights", {4, 5}, {1, 0, 4, 1}, true, false, 0},
      {"ignore in range", {5, 4}, {2, 1, 2, 3, 0}, true, true, 2},
      {"ignore -100", {4, 3}, {-100, 1, 2, -100}, false, true, -100},
      {"d-dims", {2, 3, 2, 2}, {0, 2, 1, 1, 2, 0, 0, 1}, true, true, 1},
  };
  return cases;
}

Shape lossShape(const LossGradCase &c, LossReduction r) {
  if (r != LossReduction::None)
    return {};
  Shape s = {c.scores[0]};
  s.insert(s.end(), c.scores.begin() + 2, c.scores.end());
  return s;
}

const char *reductionName(LossReduction r) {
  return r == LossReduction::None ? "none"
         : r == LossReduction::Sum ? "sum"
                                   : "mean";
}

TEST(GradCheckTest, SoftmaxCrossEntropyLoss) {
  for (LossReduction r :
       {LossReduction::None, LossReduction::Sum, LossReduction::Mean})
    for (const LossGradCase &c : lossGradCases()) {
      const std::string what = std::string("softmaxCrossEntropy ") + c.name +
                               " " + reductionName(r);
      const int64_t C = c.scores[1];
      Shape ls(c.scores.begin(), c.scores.end());
      ls.erase(ls.begin() + 1);
      Tensor scores = randomTensor(F64, c.scores, 121, -2, 2);
      Tensor labels = make(DType::I64, ls, c.labels);
      Tensor weights = randomTensor(F64, {C}, 122, 0.2, 2);
      const Shape lossShapeR = lossShape(c, r);
      Tensor dloss = randomTensor(F64, lossShapeR, 123, 0.5, 1.5);
      auto weightView = [&](const Tensor &w) {
        return c.weights ? w.view() : TensorView();
      };
      auto backward = [&](DType dt) {
        Tensor st = as(dt, scores), wt = as(dt, weights), dlt = as(dt, dloss);
        Tensor loss(dt, lossShapeR), logProb(dt, c.scores), ds(dt, c.scores);
        softmaxCrossEntropyLoss(st.view(), labels.view(), weightView(wt),
                                loss.view(), logProb.view(), r,
                                c.ignoreIndex, c.hasIgnoreIndex);
        fill(ds.view(), 123);
        softmaxCrossEntropyLossBackward(dlt.view(), logProb.view(),
                                        labels.view(), weightView(wt),
                                        ds.view(), r, c.ignoreIndex,
                                        c.hasIgnoreIndex);
        return values(ds);
      };
      const std::vector<double> ds = backward(F64);
      Tensor loss(F64, lossShapeR);
      expectGradient(scores, [&] {
        softmaxCrossEntropyLoss(scores.view(), labels.view(),
                                weightView(weights), loss.view(),
                                TensorView(), r, c.ignoreIndex,
                                c.hasIgnoreIndex);
        return dot(loss, dloss);
      }, ds, what);
      expectF32Close(backward(F32), ds, what);
    }
}

TEST(GradCheckTest, NllLoss) {
  for (LossReduction r :
       {LossReduction::None, LossReduction::Sum, LossReduction::Mean})
    for (const LossGradCase &c : lossGradCases()) {
      const std::string what =
          std::string("nllLoss ") + c.name + " " + reductionName(r);
      const int64_t C = c.scores[1];
      Shape ls(c.scores.begin(), c.scores.end());
      ls.erase(ls.begin() + 1);
      Tensor input = randomTensor(F64, c.scores, 131, -3, 0);
      Tensor labels = make(DType::I32, ls, c.labels);
      Tensor weights = randomTensor(F64, {C}, 132, 0.2, 2);
      const Shape lossShapeR = lossShape(c, r);
      Tensor dloss = randomTensor(F64, lossShapeR, 133, 0.5, 1.5);
      auto weightView = [&](const Tensor &w) {
        return c.weights ? w.view() : TensorView();
      };
      auto backward = [&](DType dt) {
        Tensor wt = as(dt, weights), dlt = as(dt, dloss), di(dt, c.scores);
        fill(di.view(), 123);
        nllLossBackward(dlt.view(), labels.view(), weightView(wt), di.view(),
                        r, c.ignoreIndex, c.hasIgnoreIndex);
        return values(di);
      };
      const std::vector<double> di = backward(F64);
      Tensor loss(F64, lossShapeR);
      expectGradient(input, [&] {
        nllLoss(input.view(), labels.view(), weightView(weights), loss.view(),
                r, c.ignoreIndex, c.hasIgnoreIndex);
        return dot(loss, dloss);
      }, di, what);
      expectF32Close(backward(F32), di, what);
    }
}

//===----------------------------------------------------------------------===//
// 16-bit storage
//===----------------------------------------------------------------------===//

/// Keeps widened (F64) copies of 16-bit tensors for a reference call.
struct Widened {
  std::vector<Tensor> tensors;
  TensorView operator()(const Tensor &t) {
    tensors.push_back(widened(t));
    return tensors.back().view();
  }
};

TEST(GradCheckTest, GeluOnHalfStorage) {
  for (DType dt : kHalfTypes)
    for (bool tanhApprox : {false, true}) {
      SCOPED_TRACE(std::string(dtypeName(dt)) + (tanhApprox ? " tanh" : ""));
      Tensor x = randomTensor(dt, {3, 7}, 11, -3, 3);
      Tensor dy = randomTensor(dt, {3, 7}, 12);
      Tensor dx(dt, x.shape()), ref(F64, x.shape());
      geluBackward(x.view(), dy.view(), dx.view(), tanhApprox);
      Tensor xw = widened(x), dyw = widened(dy);
      geluBackward(xw.view(), dyw.view(), ref.view(), tanhApprox);
      expectHalfNear(values(dx), values(ref), dt, 0);
    }
}

TEST(GradCheckTest, SoftmaxBackwardOnHalfStorage) {
  for (DType dt : kHalfTypes)
    for (bool log : {false, true})
      for (int64_t axis : {0, 2}) {
        SCOPED_TRACE(std::string(dtypeName(dt)) + (log ? " log" : "") +
                     " axis " + std::to_string(axis));
        Tensor x = randomTensor(dt, {3, 4, 5}, 21, -2, 2);
        Tensor y(dt, x.shape()), dx(dt, x.shape()), ref(F64, x.shape());
        log ? logSoftmax(x.view(), y.view(), axis)
            : softmax(x.view(), y.view(), axis);
        Tensor dy = randomTensor(dt, x.shape(), 31);
        log ? logSoftmaxBackward(y.view(), dy.view(), dx.view(), axis)
            : softmaxBackward(y.view(), dy.view(), dx.view(), axis);
        Tensor yw = widened(y), dyw = widened(dy);
        log ? logSoftmaxBackward(yw.view(), dyw.view(), ref.view(), axis)
            : softmaxBackward(yw.view(), dyw.view(), ref.view(), axis);
        expectHalfNear(values(dx), values(ref), dt, 0);
      }
}

TEST(GradCheckTest, LayerNormBackwardOnHalfStorage) {
  const Shape xs = {2, 3, 4, 5};
  for (DType dt : kHalfTypes)
    for (int64_t axis : {1, 3}) {
      SCOPED_TRACE(std::string(dtypeName(dt)) + " axis " +
                   std::to_string(axis));
      const Shape ps(xs.begin() + axis, xs.end());
      Shape stats(xs.begin(), xs.begin() + axis);
      stats.resize(xs.size(), 1);
      Tensor x = randomTensor(dt, xs, 41, -2, 3);
      Tensor scale = randomTensor(dt, ps, 42, 0.5, 1.5);
      Tensor bias = randomTensor(dt, ps, 43);
      Tensor dy = randomTensor(dt, xs, 44);
      Tensor y(dt, xs), mean(dt, stats), inv(dt, stats);
      layerNorm(x.view(), scale.view(), bias.view(), y.view(), mean.view(),
                inv.view(), axis, 1e-5);
      Tensor dx(dt, xs), ds(dt, ps), db(dt, ps);
      layerNormBackward(x.view(), scale.view(), mean.view(), inv.view(),
                        dy.view(), dx.view(), ds.view(), db.view(), axis);
      Widened w;
      Tensor rdx(F64, xs), rds(F64, ps), rdb(F64, ps);
      layerNormBackward(w(x), w(scale), w(mean), w(inv), w(dy), rdx.view(),
                        rds.view(), rdb.view(), axis);
      expectHalfNear(values(dx), values(rdx), dt, 0);
      expectHalfNear(values(ds), values(rds), dt, 0);
      expectHalfNear(values(db), values(rdb), dt, 0);
    }
}

TEST(GradCheckTest, BatchNormBackwardOnHalfDataWithF32Parameters) {
  // 16-bit x, dy and dx; scale, saved statistics and their gradients F32.
  for (const Shape &xs : {Shape{4, 3}, Shape{2, 3, 2, 3}})
    for (DType dt : kHalfTypes) {
      SCOPED_TRACE(std::string(dtypeName(dt)) + " " + shapeToString(xs));
      const int64_t C = xs[1];
      Tensor x = randomTensor(dt, xs, 61, -2, 3);
      Tensor scale = randomTensor(F32, {C}, 62, 0.5, 1.5);
      Tensor bias = randomTensor(F32, {C}, 63);
      Tensor dy = randomTensor(dt, xs, 64);
      Tensor y(dt, xs), mean(F32, {C}), inv(F32, {C});
      batchNormTraining(x.view(), scale.view(), bias.view(), TensorView(),
                        TensorView(), y.view(), TensorView(), TensorView(),
                        mean.view(), inv.view(), 1e-5, 0.9, false);
      Tensor dx(dt, xs), ds(F32, {C}), db(F32, {C});
      batchNormTrainingBackward(x.view(), scale.view(), mean.view(),
                                inv.view(), dy.view(), dx.view(), ds.view(),
                                db.view());
      Widened w;
      Tensor rdx(F64, xs), rds(F64, {C}), rdb(F64, {C});
      batchNormTrainingBackward(w(x), w(scale), w(mean), w(inv), w(dy),
                                rdx.view(), rds.view(), rdb.view());
      expectHalfNear(values(dx), values(rdx), dt, 0);
      expectF32Close(values(ds), values(rds), "dscale", 1e-6);
      expectF32Close(values(db), values(rdb), "dbias", 1e-6);
    }
}

TEST(GradCheckTest, ConvBackwardOnHalfStorage) {
  const std::vector<ConvGradCase> cases = {
      {"1-D", {2, 3, 9}, 4, 1, {{3}, {1}, {1, 2}, {1}}},
      {"2-D stride 2 asym pads", {2, 2, 7, 6}, 3, 1,
       {{3, 2}, {2, 2}, {1, 0, 2, 1}, {1, 1}}},
      {"2-D dilation 2 groups 2", {1, 4, 7, 7}, 4, 2,
       {{3, 3}, {1, 2}, {2, 1, 0, 2}, {2, 2}}},
      {"2-D pointwise", {2, 3, 4, 4}, 2, 1,
       {{1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}}},
  };
  for (DType dt : kHalfTypes)
    for (const ConvGradCase &c : cases) {
      SCOPED_TRACE(std::string(dtypeName(dt)) + " " + c.name);
      Shape ws = {c.M, c.x[1] / c.group};
      ws.insert(ws.end(), c.p.kernel.begin(), c.p.kernel.end());
      const Shape ys = windowOutShape(c.x, c.M, c.p);
      Tensor x = randomTensor(dt, c.x, 71), w = randomTensor(dt, ws, 72);
      Tensor dy = randomTensor(dt, ys, 73);
      Tensor dx(dt, c.x), dw(dt, ws);
      convBackwardData(dy.view(), w.view(), dx.view(), c.p, c.group);
      convBackwardFilter(x.view(), dy.view(), dw.view(), c.p, c.group);
      // The float64 kernels on the widened operands, and on their absolute
      // values for M (both gradients are bilinear).
      auto reference = [&](const Tensor &xr, const Tensor &wr,
                           const Tensor &dyr) {
        Tensor rdx(F64, c.x), rdw(F64, ws);
        convBackwardData(dyr.view(), wr.view(), rdx.view(), c.p, c.group);
        convBackwardFilter(xr.view(), dyr.view(), rdw.view(), c.p, c.group);
        return std::vector<std::vector<double>>{values(rdx), values(rdw)};
      };
      auto absolute = [](const Tensor &t) {
        std::vector<double> v = values(t);
        for (double &e : v)
          e = std::abs(e);
        return make(F64, t.shape(), v);
      };
      const auto ref = reference(widened(x), widened(w), widened(dy));
      const auto mag = reference(absolute(x), absolute(w), absolute(dy));
      // fp32 sums: dx's GEMM over a group's M/group filters (col2im then
      // adds in double), dw's over every image's outputs.
      const int64_t dataTerms = c.M / c.group;
      const int64_t filterTerms = numElements(ys) / c.M;
      expectHalfNear(values(dx), ref[0], dt, dataTerms, mag[0]);
      expectHalfNear(values(dw), ref[1], dt, filterTerms, mag[1]);
    }
}

TEST(GradCheckTest, PoolBackwardOnHalfStorage) {
  for (DType dt : kHalfTypes)
    for (const PoolGradCase &c : poolGradCases()) {
      SCOPED_TRACE(std::string(dtypeName(dt)) + " " + c.name);
      const Shape ys = windowOutShape(c.x, c.x[1], c.p, c.ceil);
      Tensor x = randomTensor(dt, c.x, 81, -2, 2);
      Tensor dy = randomTensor(dt, ys, 82);
      Tensor y(dt, ys), idx(DType::I64, ys), dx(dt, c.x), ref(F64, c.x);
      maxPool(x.view(), y.view(), idx.view(), c.p);
      maxPoolBackward(dy.view(), idx.view(), dx.view(), c.p);
      Tensor dyw = widened(dy);
      maxPoolBackward(dyw.view(), idx.view(), ref.view(), c.p);
      expectHalfNear(values(dx), values(ref), dt, 0);
      for (bool includePad : {false, true}) {
        averagePoolBackward(dy.view(), dx.view(), c.p, includePad);
        averagePoolBackward(dyw.view(), ref.view(), c.p, includePad);
        expectHalfNear(values(dx), values(ref), dt, 0);
      }
    }
}

TEST(GradCheckTest, DataMovementBackwardOnHalfStorage) {
  for (DType dt : kHalfTypes) {
    SCOPED_TRACE(dtypeName(dt));
    // Gather with repeated indices: dx sums several dy.
    Tensor indices = make(DType::I64, {2, 3}, {0, -1, 2, 4, 0, 0});
    Tensor dy = randomTensor(dt, {3, 2, 3, 2}, 102);
    Tensor dx(dt, {3, 5, 2}), ref(F64, {3, 5, 2});
    gatherBackward(dy.view(), indices.view(), dx.view(), 1);
    Tensor dyw = widened(dy);
    gatherBackward(dyw.view(), indices.view(), ref.view(), 1);
    expectHalfNear(values(dx), values(ref), dt, 0);
    // GatherElements along axis 0, repeated rows.
    Tensor rows = make(DType::I32, {3, 2}, {0, 1, 0, 0, 2, 0});
    Tensor dye = randomTensor(dt, {3, 2}, 103);
    Tensor dxe(dt, {3, 2}), refe(F64, {3, 2});
    gatherElementsBackward(dye.view(), rows.view(), dxe.view(), 0);
    Tensor dyew = widened(dye);
    gatherElementsBackward(dyew.view(), rows.view(), refe.view(), 0);
    expectHalfNear(values(dxe), values(refe), dt, 0);
    // Reflect padding reads some elements twice.
    Tensor dyp = randomTensor(dt, {9}, 104);
    Tensor dxp(dt, {5}), refp(F64, {5});
    padBackward(dyp.view(), dxp.view(), {2}, PadMode::Reflect);
    Tensor dypw = widened(dyp);
    padBackward(dypw.view(), refp.view(), {2}, PadMode::Reflect);
    expectHalfNear(values(dxp), values(refp), dt, 0);
  }
}

TEST(GradCheckTest, LossBackwardOnHalfStorage) {
  for (DType dt : kHalfTypes)
    for (LossReduction r :
         {LossReduction::None, LossReduction::Sum, LossReduction::Mean})
      for (const LossGradCase &c : lossGradCases()) {
        SCOPED_TRACE(std::string(dtypeName(dt)) + " " + c.name + " " +
                     reductionName(r));
        const int64_t C = c.scores[1];
        Shape ls(c.scores.begin(), c.scores.end());
        ls.erase(ls.begin() + 1);
        Tensor labels = make(DType::I64, ls, c.labels);
        Tensor logProb = randomTensor(dt, c.scores, 121, -3, 0);
        Tensor weights = randomTensor(dt, {C}, 122, 0.2, 2);
        Tensor dloss = randomTensor(dt, lossShape(c, r), 123, 0.5, 1.5);
        Widened w;
        const TensorView wv = c.weights ? weights.view() : TensorView();
        const TensorView wwv = c.weights ? w(weights) : TensorView();
        Tensor ds(dt, c.scores), rds(F64, c.scores);
        softmaxCrossEntropyLossBackward(dloss.view(), logProb.view(),
                                        labels.view(), wv, ds.view(), r,
                                        c.ignoreIndex, c.hasIgnoreIndex);
        softmaxCrossEntropyLossBackward(w(dloss), w(logProb), labels.view(),
                                        wwv, rds.view(), r, c.ignoreIndex,
                                        c.hasIgnoreIndex);
        expectHalfNear(values(ds), values(rds), dt, 0);
        Tensor di(dt, c.scores), rdi(F64, c.scores);
        nllLossBackward(dloss.view(), labels.view(), wv, di.view(), r,
                        c.ignoreIndex, c.hasIgnoreIndex);
        nllLossBackward(w(dloss), labels.view(), wwv, rdi.view(), r,
                        c.ignoreIndex, c.hasIgnoreIndex);
        expectHalfNear(values(di), values(rdi), dt, 0);
      }
}

TEST(GradCheckTest, LossBackwardHandValues) {
  // Two samples, three classes, mean reduction, no weights, dloss = 1:
  // dscores = (softmax - onehot) / 2. Uniform scores give softmax 1/3.
  Tensor logProb = make(F64, {2, 3}, std::vector<double>(6, std::log(1.0 / 3)));
  Tensor labels = make(DType::I64, {2}, {0, 2});
  Tensor dloss = make(F64, {}, {1});
  Tensor ds(F64, {2, 3});
  softmaxCrossEntropyLossBackward(dloss.view(), logProb.view(), labels.view(),
                                  TensorView(), ds.view(),
                                  LossReduction::Mean, 0, false);
  expectAllNear(values(ds),
                {-1.0 / 3, 1.0 / 6, 1.0 / 6, 1.0 / 6, 1.0 / 6, -1.0 / 3},
                1e-15);
  // NLL with weights [1, 2, 3], mean: denominator 1 + 3 = 4.
  Tensor w = make(F64, {3}, {1, 2, 3}), di(F64, {2, 3});
  nllLossBackward(dloss.view(), labels.view(), w.view(), di.view(),
                  LossReduction::Mean, 0, false);
  expectAllNear(values(di), {-0.25, 0, 0, 0, 0, -0.75}, 1e-15);
  // Out-of-range (non-ignored) label.
  Tensor bad = make(DType::I64, {2}, {0, 3});
  EXPECT_THROW(nllLossBackward(dloss.view(), bad.view(), TensorView(),
                               di.view(), LossReduction::Sum, 0, false),
               RuntimeError);
}

} // namespace
