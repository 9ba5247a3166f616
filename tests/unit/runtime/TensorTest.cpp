//===- TensorTest.cpp - DType helpers, Tensor, 16-bit float conversions ---===//

#include "TestUtil.h"

#include <cstring>
#include <limits>

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

} // namespace
