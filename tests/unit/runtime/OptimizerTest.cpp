//===- OptimizerTest.cpp - sgdUpdate / adamUpdate vs torch.optim ----------===//
//
// The references below transcribe torch.optim's single-tensor code paths
// (torch/optim/sgd.py _single_tensor_sgd, torch/optim/adam.py
// _single_tensor_adam, non-amsgrad, non-capturable) line by line in double.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/Kernels.h"

#include "TestUtil.h"

#include <cmath>

using namespace remat::rt;
using namespace remat::rt::test;

namespace {

/// Rounds through float when the kernel under test stores F32 state, so the
/// reference carries exactly the state the kernel reads back next step.
double storeAs(DType dt, double v) {
  return dt == DType::F32 ? static_cast<double>(static_cast<float>(v)) : v;
}

struct RefSgd {
  SgdOptions o;
  std::vector<double> p, buf;
  bool hasBuf = false;

  void step(const std::vector<double> &grad, DType dt) {
    for (size_t i = 0; i < p.size(); ++i) {
      double d_p = grad[i];
      if (o.weightDecay != 0)
        d_p = d_p + o.weightDecay * p[i]; // grad.add(param, alpha=wd)
      if (o.momentum != 0) {
        if (!hasBuf)
          buf[i] = d_p; // torch.clone(grad).detach()
        else
          buf[i] = buf[i] * o.momentum + (1 - o.dampening) * d_p;
        buf[i] = storeAs(dt, buf[i]);
        d_p = o.nesterov ? d_p + o.momentum * buf[i] : buf[i];
      }
      p[i] = storeAs(dt, p[i] + -o.lr * d_p); // param.add_(grad, alpha=-lr)
    }
    hasBuf = true;
  }
};

struct RefAdam {
  AdamOptions o;
  std::vector<double> p, m, v;

  void step(const std::vector<double> &gradIn, int64_t step, DType dt) {
    for (size_t i = 0; i < p.size(); ++i) {
      double grad = gradIn[i];
      if (o.weightDecay != 0) {
        if (o.decoupledWeightDecay)
          p[i] = p[i] * (1 - o.lr * o.weightDecay); // param.mul_(1 - lr*wd)
        else
          grad = grad + o.weightDecay * p[i]; // grad.add(param, alpha=wd)
      }
      m[i] = m[i] + (grad - m[i]) * (1 - o.beta1); // exp_avg.lerp_(grad, 1-b1)
      v[i] = v[i] * o.beta2 + (1 - o.beta2) * grad * grad;
      const double bc1 = 1 - std::pow(o.beta1, step);
      const double bc2 = 1 - std::pow(o.beta2, step);
      const double stepSize = o.lr / bc1;
      const double denom = std::sqrt(v[i]) / std::sqrt(bc2) + o.eps;
      m[i] = storeAs(dt, m[i]);
      v[i] = storeAs(dt, v[i]);
      p[i] = storeAs(dt, p[i] - stepSize * m[i] / denom);
    }
  }
};

void expectClose(const std::vector<double> &actual,
                 const std::vector<double> &expected, DType dt,
                 const char *what) {
  // Float64: agreement to rounding. Float32: both round the same double
  // value, so they differ by at most an ulp or so.
  const double tol = dt == DType::F64 ? 1e-14 : 3e-7;
  const double floor = dt == DType::F64 ? 1.0 : 1e-3;
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i)
    ASSERT_NEAR(actual[i], expected[i], tol * (floor + std::abs(expected[i])))
        << what << " element " << i;
}

const Shape kShape = {3, 5};
constexpr int kSteps = 6;

TEST(OptimizerTest, SgdMatchesTorchFormulas) {
  std::vector<SgdOptions> configs(6);
  configs[0].lr = 0.1; // plain
  configs[1] = {0.05, 0.9, 0.0, 0.0, false};   // momentum
  configs[2] = {0.05, 0.9, 0.3, 0.0, false};   // momentum + dampening
  configs[3] = {0.05, 0.9, 0.0, 0.0, true};    // nesterov
  configs[4] = {0.05, 0.0, 0.0, 0.01, false};  // weight decay, no momentum
  configs[5] = {0.02, 0.8, 0.0, 0.05, true};   // nesterov + weight decay
  for (DType dt : {DType::F64, DType::F32})
    for (size_t k = 0; k < configs.size(); ++k) {
      const SgdOptions &o = configs[k];
      SCOPED_TRACE("config " + std::to_string(k) + " " + dtypeName(dt));
      Tensor p = randomTensor(dt, kShape, 1, -2, 2);
      Tensor buf(dt, kShape), newP(dt, kShape), newBuf(dt, kShape);
      RefSgd ref{o, values(p), std::vector<double>(p.numel(), 0.0)};
      const bool momentum = o.momentum != 0;
      for (int64_t step = 1; step <= kSteps; ++step) {
        Tensor g = randomTensor(dt, kShape, 100 + step, -1, 1);
        ref.step(values(g), dt);
        sgdUpdate(p.view(), g.view(),
                  momentum && step > 1 ? buf.view() : TensorView(),
                  newP.view(), momentum ? newBuf.view() : TensorView(), step,
                  o);
        expectClose(values(newP), ref.p, dt, "param");
        if (momentum)
          expectClose(values(newBuf), ref.buf, dt, "momentum buffer");
        copy(newP.view(), p.view());
        copy(newBuf.view(), buf.view());
      }
    }
}

TEST(OptimizerTest, SgdInPlace) {
  const SgdOptions o{0.05, 0.9, 0.1, 0.02, true};
  Tensor p = randomTensor(DType::F64, kShape, 2), buf(DType::F64, kShape);
  RefSgd ref{o, values(p), std::vector<double>(p.numel(), 0.0)};
  for (int64_t step = 1; step <= kSteps; ++step) {
    Tensor g = randomTensor(DType::F64, kShape, 200 + step);
    ref.step(values(g), DType::F64);
    sgdUpdate(p.view(), g.view(), buf.view(), p.view(), buf.view(), step, o);
    expectClose(values(p), ref.p, DType::F64, "param");
    expectClose(values(buf), ref.buf, DType::F64, "momentum buffer");
  }
}

TEST(OptimizerTest, SgdWorkedExample) {
  // lr 0.1, momentum 0.9, gradient 1 on both steps, p0 = 1:
  //   step 1: buf = g = 1,              p = 1   - 0.1 * 1   = 0.9
  //   step 2: buf = 0.9 * 1 + 1 = 1.9,  p = 0.9 - 0.1 * 1.9 = 0.71
  // Nesterov instead steps along g + 0.9 * buf:
  //   step 1: 1 + 0.9 = 1.9 -> p = 0.81; step 2: 1 + 0.9 * 1.9 = 2.71
  //   -> p = 0.81 - 0.271 = 0.539.
  for (bool nesterov : {false, true}) {
    const SgdOptions o{0.1, 0.9, 0.0, 0.0, nesterov};
    Tensor p = make(DType::F64, {1}, {1}), buf(DType::F64, {1});
    Tensor g = make(DType::F64, {1}, {1});
    sgdUpdate(p.view(), g.view(), TensorView(), p.view(), buf.view(), 1, o);
    EXPECT_NEAR(values(p)[0], nesterov ? 0.81 : 0.9, 1e-15);
    EXPECT_NEAR(values(buf)[0], 1.0, 1e-15);
    sgdUpdate(p.view(), g.view(), buf.view(), p.view(), buf.view(), 2, o);
    EXPECT_NEAR(values(p)[0], nesterov ? 0.539 : 0.71, 1e-15);
    EXPECT_NEAR(values(buf)[0], 1.9, 1e-15);
  }
}

TEST(OptimizerTest, AdamMatchesTorchFormulas) {
  std::vector<AdamOptions> configs(5);
  configs[0] = {1e-2, 0.9, 0.999, 1e-8, 0.0, false};  // Adam
  configs[1] = {1e-2, 0.8, 0.99, 1e-6, 0.1, false};   // Adam + L2
  configs[2] = {1e-2, 0.9, 0.999, 1e-8, 0.1, true};   // AdamW
  configs[3] = {3e-3, 0.5, 0.9, 1e-3, 0.0, true};     // AdamW, wd 0
  configs[4] = {5e-2, 0.0, 0.0, 1e-8, 0.0, false};    // betas 0: sign-like
  for (DType dt : {DType::F64, DType::F32})
    for (size_t k = 0; k < configs.size(); ++k) {
      const AdamOptions &o = configs[k];
      SCOPED_TRACE("config " + std::to_string(k) + " " + dtypeName(dt));
      Tensor p = randomTensor(dt, kShape, 3, -2, 2);
      Tensor m(dt, kShape), v(dt, kShape);
      Tensor newP(dt, kShape), newM(dt, kShape), newV(dt, kShape);
      const std::vector<double> zeros(p.numel(), 0.0);
      RefAdam ref{o, values(p), zeros, zeros};
      for (int64_t step = 1; step <= kSteps; ++step) {
        Tensor g = randomTensor(dt, kShape, 300 + step, -1, 1);
        ref.step(values(g), step, dt);
        adamUpdate(p.view(), g.view(), m.view(), v.view(), newP.view(),
                   newM.view(), newV.view(), step, o);
        expectClose(values(newP), ref.p, dt, "param");
        expectClose(values(newM), ref.m, dt, "m");
        expectClose(values(newV), ref.v, dt, "v");
        copy(newP.view(), p.view());
        copy(newM.view(), m.view());
        copy(newV.view(), v.view());
      }
    }
}

TEST(OptimizerTest, AdamInPlace) {
  const AdamOptions o{1e-2, 0.9, 0.999, 1e-8, 0.05, true};
  Tensor p = randomTensor(DType::F32, kShape, 4);
  Tensor m(DType::F32, kShape), v(DType::F32, kShape);
  const std::vector<double> zeros(p.numel(), 0.0);
  RefAdam ref{o, values(p), zeros, zeros};
  for (int64_t step = 1; step <= kSteps; ++step) {
    Tensor g = randomTensor(DType::F32, kShape, 400 + step);
    ref.step(values(g), step, DType::F32);
    adamUpdate(p.view(), g.view(), m.view(), v.view(), p.view(), m.view(),
               v.view(), step, o);
    expectClose(values(p), ref.p, DType::F32, "param");
    expectClose(values(m), ref.m, DType::F32, "m");
    expectClose(values(v), ref.v, DType::F32, "v");
  }
}

TEST(OptimizerTest, AdamWorkedExample) {
  // Step 1 from zero state, lr 0.1, betas (0.9, 0.999), eps 1e-8:
  //   m = 0.1 g, v = 0.001 g^2; bias corrections 0.1 and 0.001 give
  //   m_hat = g, sqrt(v_hat) = |g|, so p -= 0.1 * g / (|g| + 1e-8):
  //   about lr * sign(g) whatever the gradient's scale.
  //   g = 0.5:  p = 1 - 0.1 * 0.5 / 0.50000001   = 0.900000002 (to 1e-17)
  //   g = -4:   p = 1 + 0.1 * 4 / 4.00000001     = 1.09999999975
  //   g = 0:    m = v = 0, p stays 1.
  // AdamW with wd 0.5 first scales p by 1 - 0.1 * 0.5 = 0.95, then takes the
  // same step: 0.95 - 0.1 * 0.5 / 0.50000001 = 0.850000002.
  // Adam with wd 0.5 instead sees g' = 0.5 + 0.5 * 1 = 1: p = 0.9000000010.
  const AdamOptions adam{0.1, 0.9, 0.999, 1e-8, 0.0, false};
  Tensor p = make(DType::F64, {3}, {1, 1, 1});
  Tensor g = make(DType::F64, {3}, {0.5, -4, 0});
  Tensor m(DType::F64, {3}), v(DType::F64, {3});
  adamUpdate(p.view(), g.view(), m.view(), v.view(), p.view(), m.view(),
             v.view(), 1, adam);
  expectAllNear(values(p), {0.900000002, 1.09999999975, 1}, 1e-15);
  expectAllNear(values(m), {0.05, -0.4, 0}, 1e-15);
  expectAllNear(values(v), {0.00025, 0.016, 0}, 1e-15);

  AdamOptions adamW = adam;
  adamW.weightDecay = 0.5;
  adamW.decoupledWeightDecay = true;
  Tensor p1 = make(DType::F64, {1}, {1}), g1 = make(DType::F64, {1}, {0.5});
  Tensor m1(DType::F64, {1}), v1(DType::F64, {1});
  adamUpdate(p1.view(), g1.view(), m1.view(), v1.view(), p1.view(), m1.view(),
             v1.view(), 1, adamW);
  EXPECT_NEAR(values(p1)[0], 0.850000002, 1e-15);

  AdamOptions adamL2 = adamW;
  adamL2.decoupledWeightDecay = false;
  Tensor p2 = make(DType::F64, {1}, {1});
  Tensor m2(DType::F64, {1}), v2(DType::F64, {1});
  adamUpdate(p2.view(), g1.view(), m2.view(), v2.view(), p2.view(), m2.view(),
             v2.view(), 1, adamL2);
  EXPECT_NEAR(values(p2)[0], 0.900000001, 1e-15);
}

TEST(OptimizerTest, Errors) {
  Tensor p(DType::F32, {4}), g(DType::F32, {4}), gBad(DType::F32, {3});
  Tensor g64(DType::F64, {4}), s(DType::F32, {4});
  SgdOptions sgd;
  EXPECT_THROW(sgdUpdate(p.view(), gBad.view(), TensorView(), p.view(),
                         TensorView(), 1, sgd),
               RuntimeError);
  EXPECT_THROW(sgdUpdate(p.view(), g64.view(), TensorView(), p.view(),
                         TensorView(), 1, sgd),
               RuntimeError);
  EXPECT_THROW(sgdUpdate(p.view(), g.view(), TensorView(), p.view(),
                         TensorView(), 0, sgd),
               RuntimeError);
  sgd.momentum = 0.9; // step 2 needs the incoming buffer
  EXPECT_THROW(sgdUpdate(p.view(), g.view(), TensorView(), p.view(), s.view(),
                         2, sgd),
               RuntimeError);
  AdamOptions adam;
  EXPECT_THROW(adamUpdate(p.view(), g.view(), s.view(), s.view(), p.view(),
                          s.view(), s.view(), 0, adam),
               RuntimeError);
  Tensor i(DType::I32, {4});
  EXPECT_THROW(adamUpdate(i.view(), i.view(), i.view(), i.view(), i.view(),
                          i.view(), i.view(), 1, adam),
               RuntimeError);
}

} // namespace
