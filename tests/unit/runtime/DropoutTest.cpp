//===- DropoutTest.cpp - Philox known answers and dropout properties ------===//

#include "TestUtil.h"

#include "remat/runtime/Philox.h"

using namespace remat::rt;
using namespace remat::rt::test;

namespace {

TEST(DropoutTest, PhiloxMatchesRandom123KnownAnswers) {
  // From Random123's kat_vectors (philox4x32 10 rounds).
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (PhiloxCounter{0x6627e8d5, 0xe169c58d, 0xbc57ac4c,
                                0x9b00dbd8}));
  EXPECT_EQ(philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                          {0xffffffff, 0xffffffff}),
            (PhiloxCounter{0x408f276d, 0x41c83b0e, 0xa20bc7c6,
                                0x6d5451fd}));
  EXPECT_EQ(philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                          {0xa4093822, 0x299f31d0}),
            (PhiloxCounter{0xd16cfe09, 0x94fdcceb, 0x5001e420,
                                0x24126ea1}));
}

struct DropoutRun {
  std::vector<double> y, mask;
};

DropoutRun runDropout(const Tensor &x, double ratio, uint64_t seed,
                      uint64_t stream, uint64_t step) {
  Tensor y(x.dtype(), x.shape()), mask(DType::Bool, x.shape());
  dropout(x.view(), y.view(), mask.view(), ratio, seed, stream, step);
  return {values(y), values(mask)};
}

TEST(DropoutTest, DeterministicPerSeedStreamAndStep) {
  Tensor x = randomTensor(DType::F32, {37, 11}, 1, 0.5, 1.5);
  DropoutRun a = runDropout(x, 0.3, 42, 7, 100);
  DropoutRun b = runDropout(x, 0.3, 42, 7, 100);
  EXPECT_EQ(a.mask, b.mask);
  EXPECT_EQ(a.y, b.y);
  EXPECT_NE(runDropout(x, 0.3, 42, 7, 101).mask, a.mask) << "step";
  EXPECT_NE(runDropout(x, 0.3, 42, 8, 100).mask, a.mask) << "stream";
  EXPECT_NE(runDropout(x, 0.3, 43, 7, 100).mask, a.mask) << "seed";
}

TEST(DropoutTest, MaskIsAPureFunctionOfElementIndex) {
  // A prefix of a longer tensor sees the same decisions (no hidden state).
  Tensor small = randomTensor(DType::F64, {10}, 2, 1, 2);
  Tensor large = randomTensor(DType::F64, {1000}, 2, 1, 2);
  DropoutRun s = runDropout(small, 0.5, 1, 2, 3);
  DropoutRun l = runDropout(large, 0.5, 1, 2, 3);
  EXPECT_EQ(s.mask, std::vector<double>(l.mask.begin(), l.mask.begin() + 10));
}

TEST(DropoutTest, KeepFractionAndScaling) {
  const int64_t n = 100000;
  Tensor x = make(DType::F32, {n}, std::vector<double>(n, 1.0));
  for (double ratio : {0.1, 0.5, 0.8}) {
    DropoutRun r = runDropout(x, ratio, 1234, 0, 5);
    int64_t kept = 0;
    for (int64_t i = 0; i < n; ++i) {
      kept += r.mask[i] != 0;
      // y = x * mask / (1 - ratio)
      ASSERT_NEAR(r.y[i], r.mask[i] / (1 - ratio), 1e-5);
    }
    const double keep = static_cast<double>(kept) / n;
    // 5 binomial standard deviations.
    const double sigma = std::sqrt(ratio * (1 - ratio) / n);
    EXPECT_NEAR(keep, 1 - ratio, 5 * sigma) << "ratio " << ratio;
  }
}

TEST(DropoutTest, HalfStorageDrawsTheF32Mask) {
  // The mask depends on the element index only, so a BF16/F16 dropout of
  // the same (seed, stream, step) drops the same elements as the F32 one;
  // the kept ones are x / (1 - ratio) rounded once (rule of TestUtil.h).
  const double ratio = 0.3;
  Tensor x32 = randomTensor(DType::F32, {37, 11}, 4, -2, 2);
  const DropoutRun f32 = runDropout(x32, ratio, 42, 7, 100);
  for (DType dt : kHalfTypes) {
    SCOPED_TRACE(dtypeName(dt));
    Tensor x = make(dt, x32.shape(), values(x32));
    const DropoutRun r = runDropout(x, ratio, 42, 7, 100);
    EXPECT_EQ(r.mask, f32.mask);
    std::vector<double> expected = values(x);
    for (size_t i = 0; i < expected.size(); ++i)
      expected[i] = r.mask[i] != 0 ? expected[i] / (1 - ratio) : 0.0;
    expectHalfNear(r.y, expected, dt);
  }
}

TEST(DropoutTest, RatioZeroIsIdentity) {
  Tensor x = randomTensor(DType::F64, {3, 5}, 3);
  DropoutRun r = runDropout(x, 0.0, 9, 9, 9);
  EXPECT_EQ(r.y, values(x));
  EXPECT_EQ(r.mask, std::vector<double>(15, 1));
  // The mask is optional.
  Tensor y(DType::F64, {3, 5});
  dropout(x.view(), y.view(), TensorView(), 0.5, 1, 1, 1);
  for (double v : values(y))
    EXPECT_TRUE(std::isfinite(v));
}

TEST(DropoutTest, RejectsBadArguments) {
  Tensor x(DType::F32, {4}), y(DType::F32, {4}), m(DType::F32, {4});
  EXPECT_THROW(dropout(x.view(), y.view(), m.view(), 0.5, 0, 0, 0),
               RuntimeError);
  Tensor mask(DType::Bool, {4});
  EXPECT_THROW(dropout(x.view(), y.view(), mask.view(), 1.5, 0, 0, 0),
               RuntimeError);
}

} // namespace
