//===- TensorTest.cpp - DType helpers, Tensor, 16-bit float conversions ---===//

#include "TestUtil.h"

#include "common/FloatStorage.h"

#include <cstring>
#include <limits>
#include <random>

using namespace remat::rt;

namespace {

float fromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

TEST(TensorTest, DTypeHelpers) {
  EXPECT_EQ(dtypeSize(DType::F32), 4u);
  EXPECT_EQ(dtypeSize(DType::F64), 8u);
  EXPECT_EQ(dtypeSize(DType::BF16), 2u);
  EXPECT_EQ(dtypeSize(DType::Bool), 1u);
  EXPECT_STREQ(dtypeName(DType::I64), "i64");
  EXPECT_TRUE(isFloat(DType::F16));
  EXPECT_FALSE(isFloat(DType::I32));
  EXPECT_EQ(numElements({}), 1);
  EXPECT_EQ(numElements({2, 0, 3}), 0);
  EXPECT_EQ(shapeToString({2, 3}), "[2, 3]");
}

TEST(TensorTest, OwnedBufferIsAlignedAndZeroed) {
  Tensor t(DType::F64, {3, 5});
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % 64, 0u);
  EXPECT_EQ(t.bytes(), 15u * 8u);
  for (int64_t i = 0; i < t.numel(); ++i)
    EXPECT_EQ(t.as<double>()[i], 0.0);
  Tensor empty(DType::F32, {0, 4});
  EXPECT_FALSE(empty.view().empty()) << "zero-element tensors are not absent";
}

TEST(TensorTest, HalfRoundTripsEveryNonNanPattern) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    float f = halfToFloat(static_cast<uint16_t>(bits));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(f))));
      continue;
    }
    ASSERT_EQ(floatToHalf(f), bits) << std::hex << bits;
  }
}

TEST(TensorTest, HalfRoundsToNearestEven) {
  EXPECT_EQ(halfToFloat(floatToHalf(1.0f)), 1.0f);
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to the even 1.
  EXPECT_EQ(halfToFloat(floatToHalf(1.0f + 0x1p-11f)), 1.0f);
  // 1 + 3 * 2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even).
  EXPECT_EQ(halfToFloat(floatToHalf(1.0f + 3 * 0x1p-11f)), 1.0f + 0x1p-9f);
  EXPECT_EQ(halfToFloat(floatToHalf(1.0f + 0x1p-11f + 0x1p-20f)),
            1.0f + 0x1p-10f);
  EXPECT_EQ(halfToFloat(floatToHalf(65504.0f)), 65504.0f);
  EXPECT_EQ(halfToFloat(floatToHalf(65519.0f)), 65504.0f);
  EXPECT_TRUE(std::isinf(halfToFloat(floatToHalf(65520.0f))));
  EXPECT_EQ(halfToFloat(floatToHalf(-1e9f)),
            -std::numeric_limits<float>::infinity());
  // Subnormals: smallest is 2^-24; 2^-25 ties to zero, a bit more rounds up.
  EXPECT_EQ(halfToFloat(floatToHalf(0x1p-24f)), 0x1p-24f);
  EXPECT_EQ(halfToFloat(floatToHalf(0x1p-25f)), 0.0f);
  EXPECT_EQ(halfToFloat(floatToHalf(1.5f * 0x1p-25f)), 0x1p-24f);
  EXPECT_EQ(halfToFloat(floatToHalf(3 * 0x1p-25f)), 2 * 0x1p-24f);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(std::nanf("")))));
}

#ifdef __FLT16_MAX__
// GCC's _Float16 conversion is an independent round-to-nearest-even reference.
TEST(TensorTest, HalfMatchesCompilerFloat16) {
  std::mt19937 gen(7);
  for (int i = 0; i < 200000; ++i) {
    // Random exponents around the half range, random mantissas.
    uint32_t bits = (gen() & 0x807fffffu) | ((97u + gen() % 50u) << 23);
    float f = fromBits(bits);
    _Float16 h = static_cast<_Float16>(f);
    uint16_t expected;
    std::memcpy(&expected, &h, 2);
    ASSERT_EQ(floatToHalf(f), expected) << f;
  }
}
#endif

TEST(TensorTest, Bfloat16RoundTripsAndRounds) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    float f = bfloat16ToFloat(static_cast<uint16_t>(bits));
    if (std::isnan(f))
      continue;
    ASSERT_EQ(floatToBfloat16(f), bits);
  }
  EXPECT_EQ(bfloat16ToFloat(floatToBfloat16(1.0f + 0x1p-8f)), 1.0f);
  EXPECT_EQ(bfloat16ToFloat(floatToBfloat16(1.0f + 3 * 0x1p-8f)),
            1.0f + 0x1p-6f);
  EXPECT_EQ(bfloat16ToFloat(floatToBfloat16(1.0f + 0x1p-8f + 0x1p-20f)),
            1.0f + 0x1p-7f);
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(floatToBfloat16(std::nanf("")))));
  EXPECT_TRUE(std::isinf(bfloat16ToFloat(floatToBfloat16(fromBits(0x7f7fffffu)))));
  // 8 significant bits: the relative error of a round trip is at most 2^-8.
  for (double v : test::randomValues(1000, 3, -1e6, 1e6)) {
    float f = static_cast<float>(v);
    EXPECT_LE(std::abs(bfloat16ToFloat(floatToBfloat16(f)) - f),
              std::abs(f) * 0x1p-8f);
  }
}

/// Checks that `bits` holds the 16-bit value nearest to v (ties to even):
/// no closer value at the neighbouring bit patterns.
template <typename T>
void expectNearest(double v, uint16_t bits) {
  using common::toCompute;
  const double got = toCompute(T{bits});
  for (int step : {-1, 1}) {
    const uint16_t other = static_cast<uint16_t>(bits + step);
    if ((other & 0x7fff) == 0 || ((other ^ bits) & 0x8000))
      continue; // past zero: a sign change
    const double neighbour = toCompute(T{other});
    if (std::isinf(neighbour) || std::isnan(neighbour))
      continue;
    const double mine = std::abs(v - got), theirs = std::abs(v - neighbour);
    ASSERT_LE(mine, theirs) << v << " rounded to " << got;
    if (mine == theirs) {
      ASSERT_EQ(bits & 1, 0) << v << ": a tie goes to the even pattern";
    }
  }
}

TEST(TensorTest, FromDoubleRoundsOnce) {
  using common::BFloat16;
  using common::fromDouble;
  using common::Half;
  // Just above the midpoint between two 16-bit values, by less than a
  // float ulp: the nearest float is the midpoint itself, which would round
  // to even (down); the double's nearest value is the one above.
  const double bf = 1 + 0x1p-8 + 0x1p-40, half = 1 + 0x1p-11 + 0x1p-40;
  EXPECT_EQ(fromDouble<BFloat16>(bf).bits, 0x3f81);
  EXPECT_EQ(floatToBfloat16(static_cast<float>(bf)), 0x3f80);
  EXPECT_EQ(fromDouble<Half>(half).bits, 0x3c01);
  EXPECT_EQ(floatToHalf(static_cast<float>(half)), 0x3c00);
  // And below the midpoint: down.
  EXPECT_EQ(fromDouble<BFloat16>(1 + 0x1p-8 - 0x1p-40).bits, 0x3f80);
  EXPECT_EQ(fromDouble<Half>(1 + 0x1p-11 - 0x1p-40).bits, 0x3c00);
  // Exact values, signed zeros, infinities, NaN and overflow.
  EXPECT_EQ(fromDouble<BFloat16>(-2.0).bits, 0xc000);
  EXPECT_EQ(fromDouble<Half>(-0.0).bits, 0x8000);
  EXPECT_EQ(fromDouble<Half>(1e300).bits, 0x7c00);
  EXPECT_EQ(fromDouble<BFloat16>(-1e300).bits, 0xff80);
  EXPECT_EQ(fromDouble<Half>(70000.0).bits, 0x7c00);
  EXPECT_TRUE(std::isnan(halfToFloat(fromDouble<Half>(std::nan("")).bits)));
  // Random doubles, mantissas with bits far below a float's, over the
  // formats' normal and subnormal ranges.
  std::mt19937_64 gen(7);
  std::uniform_real_distribution<double> mantissa(1, 2);
  std::uniform_int_distribution<int> exponent(-30, 14); // below F16 overflow
  for (int i = 0; i < 200000; ++i) {
    const double v = std::ldexp(mantissa(gen), exponent(gen)) *
                     (i % 2 ? -1 : 1);
    expectNearest<BFloat16>(v, fromDouble<BFloat16>(v).bits);
    expectNearest<Half>(v, fromDouble<Half>(v).bits);
  }
  // Near the midpoints themselves, where rounding through float goes wrong.
  for (int i = 0; i < 20000; ++i) {
    const uint16_t bits = static_cast<uint16_t>(0x3c00 + i % 0x400);
    const double lo = halfToFloat(bits), hi = halfToFloat(bits + 1);
    const double mid = (lo + hi) / 2, nudge = (hi - lo) * 0x1p-30;
    for (double v : {mid + nudge, mid - nudge, mid})
      expectNearest<Half>(v, fromDouble<Half>(v).bits);
  }
}

} // namespace
