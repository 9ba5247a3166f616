//===- LossScalingTest.cpp - Overflow check, unscale and skip -------------===//
//
// The loss-scaling kernels against what they must mean: anyNonFinite finds
// any inf or NaN in every float storage type; an update given the scale S
// and the gradient S * g is bitwise the update given g when S is a power of
// two (both products are exact, so GradScaler's unscale is exact); a
// skipped update leaves every output equal to its input, in place or not,
// and checks its step only when it runs. The scale update's rules are
// checked against PyTorch's own sequences in LossScaleUpdateTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/Kernels.h"

#include "TestUtil.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace remat::rt;
using namespace remat::rt::test;

namespace {

Tensor flag(bool value) { return make(DType::Bool, {}, {value ? 1.0 : 0.0}); }

bool read(const Tensor &t) { return t.as<uint8_t>()[0] != 0; }

Tensor copyOf(const Tensor &t) {
  Tensor c(t.dtype(), t.shape());
  std::memcpy(c.data(), t.data(), t.bytes());
  return c;
}

bool sameBytes(const Tensor &a, const Tensor &b) {
  return a.bytes() == b.bytes() && std::memcmp(a.data(), b.data(), a.bytes()) == 0;
}

TEST(LossScaling, AnyNonFiniteFindsInfAndNanInEveryFloatStorage) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (DType dtype : {DType::F32, DType::F64, DType::F16, DType::BF16}) {
    SCOPED_TRACE(dtypeName(dtype));
    Tensor finite = make(dtype, {5}, {1, -2, 0.5, 1e3, -0.0});
    Tensor out = flag(true);
    anyNonFinite(finite.view(), flag(false).view(), out.view());
    EXPECT_FALSE(read(out));
    for (double bad : {inf, -inf, nan}) {
      Tensor x = make(dtype, {5}, {1, -2, bad, 1e3, 0});
      anyNonFinite(x.view(), flag(false).view(), out.view());
      EXPECT_TRUE(read(out)) << bad;
    }
    // An earlier gradient's overflow carries through a finite one.
    anyNonFinite(finite.view(), flag(true).view(), out.view());
    EXPECT_TRUE(read(out));
  }
  // A value finite in fp32 but past fp16's range was already inf when the
  // fp16 gradient was stored: the check sees the stored value.
  Tensor overflowed = make(DType::F16, {1}, {70000});
  Tensor out = flag(false);
  anyNonFinite(overflowed.view(), out.view(), out.view()); // in place
  EXPECT_TRUE(read(out));
}

TEST(LossScaling, UnscaledAdamUpdateEqualsTheUnscaledGradientsUpdate) {
  AdamOptions options;
  options.lr = 1e-2;
  options.weightDecay = 0.1;
  for (bool decoupled : {false, true}) {
    options.decoupledWeightDecay = decoupled;
    Tensor p1 = randomTensor(DType::F32, {64}, 1), m1 = randomTensor(DType::F32, {64}, 2);
    Tensor v1 = randomTensor(DType::F32, {64}, 3, 0, 1);
    Tensor p2 = copyOf(p1), m2 = copyOf(m1), v2 = copyOf(v1);
    Tensor g = randomTensor(DType::F32, {64}, 4);
    const double scale = 65536;
    std::vector<double> scaledValues = values(g);
    for (double &x : scaledValues)
      x *= scale;
    Tensor scaled = make(DType::F32, {64}, scaledValues);
    Tensor s = make(DType::F32, {}, {scale});
    adamUpdate(p1.view(), g.view(), m1.view(), v1.view(), p1.view(), m1.view(),
               v1.view(), 3, options);
    adamUpdate(p2.view(), scaled.view(), m2.view(), v2.view(), p2.view(),
               m2.view(), v2.view(), 3, options, s.view(), flag(false).view());
    EXPECT_TRUE(sameBytes(p1, p2));
    EXPECT_TRUE(sameBytes(m1, m2));
    EXPECT_TRUE(sameBytes(v1, v2));
  }
}

TEST(LossScaling, UnscaledSgdUpdateEqualsTheUnscaledGradientsUpdate) {
  SgdOptions options;
  options.lr = 0.1;
  options.momentum = 0.9;
  Tensor p1 = randomTensor(DType::F64, {32}, 5), b1 = randomTensor(DType::F64, {32}, 6);
  Tensor p2 = copyOf(p1), b2 = copyOf(b1);
  Tensor g = randomTensor(DType::F64, {32}, 7);
  std::vector<double> scaledValues = values(g);
  for (double &x : scaledValues)
    x *= 1024;
  Tensor scaled = make(DType::F64, {32}, scaledValues);
  sgdUpdate(p1.view(), g.view(), b1.view(), p1.view(), b1.view(), 2, options);
  sgdUpdate(p2.view(), scaled.view(), b2.view(), p2.view(), b2.view(), 2,
            options, make(DType::F32, {}, {1024}).view(), TensorView());
  EXPECT_TRUE(sameBytes(p1, p2));
  EXPECT_TRUE(sameBytes(b1, b2));
}

TEST(LossScaling, UnscalingUsesGradScalersFloatInverse) {
  // GradScaler.unscale_ multiplies by inv_scale = float(1 / double(scale))
  // in float, and the optimizer reads the float product. With a scale of 3
  // and this gradient, that product differs from the gradient times the
  // exact 1/3 (0.378121436 against 0.378121406), and SGD (p - 1 * g) shows
  // which one the kernel used.
  SgdOptions options;
  options.lr = 1.0;
  const float gradient = 1.1343642473220825f;
  Tensor p = make(DType::F32, {1}, {0});
  Tensor g = make(DType::F32, {1}, {gradient});
  sgdUpdate(p.view(), g.view(), TensorView(), p.view(), TensorView(), 1,
            options, make(DType::F32, {}, {3}).view(), TensorView());
  const float inverse = static_cast<float>(1.0 / 3.0);
  EXPECT_EQ(p.as<float>()[0], -(gradient * inverse));
  EXPECT_NE(p.as<float>()[0],
            -static_cast<float>(static_cast<double>(gradient) / 3.0));
}

TEST(LossScaling, SkippedUpdatesLeaveEveryOutputEqualToItsInput) {
  AdamOptions adam;
  Tensor p = randomTensor(DType::F32, {16}, 8), m = randomTensor(DType::F32, {16}, 9);
  Tensor v = randomTensor(DType::F32, {16}, 10, 0, 1);
  Tensor g = make(DType::F32, {16}, std::vector<double>(16, NAN));
  Tensor p0 = copyOf(p), m0 = copyOf(m), v0 = copyOf(v);
  // In place: nothing is written.
  adamUpdate(p.view(), g.view(), m.view(), v.view(), p.view(), m.view(),
             v.view(), 1, adam, make(DType::F32, {}, {65536}).view(),
             flag(true).view());
  EXPECT_TRUE(sameBytes(p, p0));
  EXPECT_TRUE(sameBytes(m, m0));
  EXPECT_TRUE(sameBytes(v, v0));
  // Out of place: the inputs are copied. A skipped step may carry a step
  // number an update could not take (the counter did not advance).
  Tensor pOut(DType::F32, {16}), mOut(DType::F32, {16}), vOut(DType::F32, {16});
  adamUpdate(p.view(), g.view(), m.view(), v.view(), pOut.view(), mOut.view(),
             vOut.view(), 0, adam, TensorView(), flag(true).view());
  EXPECT_TRUE(sameBytes(pOut, p0));
  EXPECT_TRUE(sameBytes(mOut, m0));
  EXPECT_TRUE(sameBytes(vOut, v0));

  SgdOptions sgd;
  sgd.momentum = 0.9;
  Tensor buf = randomTensor(DType::F32, {16}, 11);
  Tensor buf0 = copyOf(buf);
  Tensor sgdOut(DType::F32, {16}), bufOut(DType::F32, {16});
  sgdUpdate(p.view(), g.view(), buf.view(), sgdOut.view(), bufOut.view(), 5,
            sgd, TensorView(), flag(true).view());
  EXPECT_TRUE(sameBytes(sgdOut, p0));
  EXPECT_TRUE(sameBytes(bufOut, buf0));
  // Not skipped, the same step number is an error.
  EXPECT_THROW(adamUpdate(p.view(), p.view(), m.view(), v.view(), p.view(),
                          m.view(), v.view(), 0, adam, TensorView(),
                          flag(false).view()),
               RuntimeError);
}

TEST(LossScaling, BadScalingOperandsAreErrorsNamingTheKernel) {
  AdamOptions adam;
  Tensor p = randomTensor(DType::F32, {4}, 12);
  Tensor m = copyOf(p), v = copyOf(p);
  try {
    adamUpdate(p.view(), p.view(), m.view(), v.view(), p.view(), m.view(),
               v.view(), 1, adam, make(DType::F64, {}, {2}).view());
    FAIL() << "an f64 scale was accepted";
  } catch (const RuntimeError &e) {
    EXPECT_NE(std::string(e.what()).find("adamUpdate: lossScale has dtype f64"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(anyNonFinite(p.view(), make(DType::Bool, {2}, {0, 0}).view(),
                            flag(false).view()),
               RuntimeError);
  EXPECT_THROW(anyNonFinite(make(DType::I32, {1}, {1}).view(),
                            flag(false).view(), flag(false).view()),
               RuntimeError);
}

} // namespace
