//===- Tensor.cpp - DType helpers, owned tensors, 16-bit floats -----------===//

#include "remat/runtime/Tensor.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>

namespace remat::rt {

size_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F64:
  case DType::I64: return 8;
  case DType::F32:
  case DType::I32: return 4;
  case DType::F16:
  case DType::BF16: return 2;
  case DType::I8:
  case DType::U8:
  case DType::Bool: return 1;
  }
  throw RuntimeError("dtypeSize: invalid dtype");
}

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32: return "f32";
  case DType::F64: return "f64";
  case DType::F16: return "f16";
  case DType::BF16: return "bf16";
  case DType::I64: return "i64";
  case DType::I32: return "i32";
  case DType::I8: return "i8";
  case DType::U8: return "u8";
  case DType::Bool: return "bool";
  }
  return "<invalid dtype>";
}

bool isFloat(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F64 || dtype == DType::F16 ||
         dtype == DType::BF16;
}

int64_t numElements(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string shapeToString(const Shape &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

void Tensor::FreeDeleter::operator()(void *p) const { std::free(p); }

Tensor::Tensor(DType dtype, Shape shape) {
  for (int64_t d : shape)
    if (d < 0)
      throw RuntimeError("Tensor: negative dimension in " +
                         shapeToString(shape));
  // aligned_alloc needs a size that is a multiple of the alignment; a
  // zero-element tensor still gets a buffer so its view is not "absent".
  constexpr size_t kAlign = 64;
  size_t bytes = static_cast<size_t>(numElements(shape)) * dtypeSize(dtype);
  size_t padded = (bytes + kAlign - 1) / kAlign * kAlign;
  if (padded == 0)
    padded = kAlign;
  void *p = std::aligned_alloc(kAlign, padded);
  if (!p)
    throw std::bad_alloc();
  std::memset(p, 0, padded);
  storage_.reset(p);
  view_ = TensorView(dtype, std::move(shape), p);
}

//===----------------------------------------------------------------------===//
// 16-bit floats. Narrowing rounds to nearest, ties to even; NaN stays NaN.
//===----------------------------------------------------------------------===//

namespace {
uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
float bitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
/// Shifts `mantissa` right by `shift` (1..31) rounding to nearest even.
uint32_t shiftRightRne(uint32_t mantissa, int shift) {
  uint32_t kept = mantissa >> shift;
  uint32_t rest = mantissa & ((1u << shift) - 1);
  uint32_t half = 1u << (shift - 1);
  if (rest > half || (rest == half && (kept & 1)))
    ++kept;
  return kept;
}
} // namespace

float halfToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1f;
  uint32_t mantissa = bits & 0x3ff;
  if (exponent == 0) { // zero or subnormal: mantissa * 2^-24, exact in float
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) // inf / NaN (payload kept)
    return bitsToFloat(sign | 0x7f800000u | (mantissa << 13));
  return bitsToFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t floatToHalf(float value) {
  uint32_t f = floatBits(value);
  uint16_t sign = static_cast<uint16_t>((f >> 16) & 0x8000);
  uint32_t magnitude = f & 0x7fffffffu;
  if (magnitude > 0x7f800000u) // NaN: quiet, keep the top payload bits
    return sign | 0x7e00 | static_cast<uint16_t>((magnitude >> 13) & 0x3ff);
  if (magnitude >= 0x477ff000u) // >= 65520 rounds to inf (inf included)
    return sign | 0x7c00;
  uint32_t exponent = magnitude >> 23;
  if (exponent < 113) { // below 2^-14: half subnormal (or zero)
    int shift = 126 - static_cast<int>(exponent);
    if (shift > 24) // below half the smallest subnormal: rounds to zero
      return sign;
    uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
    // A carry into bit 10 correctly yields the smallest normal.
    return sign | static_cast<uint16_t>(shiftRightRne(mantissa, shift));
  }
  // Normal: rebias the exponent; a rounding carry may bump the exponent.
  uint32_t rebased = magnitude - (112u << 23);
  return sign | static_cast<uint16_t>(shiftRightRne(rebased, 13));
}

float bfloat16ToFloat(uint16_t bits) {
  return bitsToFloat(static_cast<uint32_t>(bits) << 16);
}

uint16_t floatToBfloat16(float value) {
  uint32_t f = floatBits(value);
  if ((f & 0x7fffffffu) > 0x7f800000u) // NaN: truncate and force quiet
    return static_cast<uint16_t>((f >> 16) | 0x0040);
  // Overflow rounds to inf naturally.
  uint32_t rounding = 0x7fffu + ((f >> 16) & 1);
  return static_cast<uint16_t>((f + rounding) >> 16);
}

} // namespace remat::rt
