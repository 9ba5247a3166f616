//===- Float16.h - IEEE half and bfloat16 conversions ------------*- C++ -*-===//
//
// The 16-bit float conversions of both backends (the CPU's halfToFloat & co.
// and the CUDA cast and fill kernels), so a CUDA cast gives bitwise the
// CPU's result: round to nearest even, with NaN payloads kept rather than
// canonicalised as the CUDA intrinsics would. Host+device.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_COMMON_FLOAT16_H
#define REMAT_RUNTIME_COMMON_FLOAT16_H

#include "remat/runtime/HostDevice.h"

#include <cstdint>
#include <cstring>

namespace remat::rt::common {

REMAT_HOST_DEVICE inline uint32_t floatBits(float f) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

REMAT_HOST_DEVICE inline float bitsToFloat(uint32_t u) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

/// Shifts `mantissa` right by `shift` (1..31) rounding to nearest even.
REMAT_HOST_DEVICE inline uint32_t shiftRightRne(uint32_t mantissa, int shift) {
  uint32_t kept = mantissa >> shift;
  uint32_t rest = mantissa & ((1u << shift) - 1);
  uint32_t half = 1u << (shift - 1);
  if (rest > half || (rest == half && (kept & 1)))
    ++kept;
  return kept;
}

REMAT_HOST_DEVICE inline float halfBitsToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1f;
  uint32_t mantissa = bits & 0x3ff;
  if (exponent == 0) { // zero or subnormal: mantissa * 2^-24, exact in float
    float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) // inf / NaN (payload kept)
    return bitsToFloat(sign | 0x7f800000u | (mantissa << 13));
  return bitsToFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

REMAT_HOST_DEVICE inline uint16_t floatToHalfBits(float value) {
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

REMAT_HOST_DEVICE inline float bfloat16BitsToFloat(uint16_t bits) {
  return bitsToFloat(static_cast<uint32_t>(bits) << 16);
}

REMAT_HOST_DEVICE inline uint16_t floatToBfloat16Bits(float value) {
  uint32_t f = floatBits(value);
  if ((f & 0x7fffffffu) > 0x7f800000u) // NaN: truncate and force quiet
    return static_cast<uint16_t>((f >> 16) | 0x0040);
  // Overflow rounds to inf naturally.
  uint32_t rounding = 0x7fffu + ((f >> 16) & 1);
  return static_cast<uint16_t>((f + rounding) >> 16);
}

} // namespace remat::rt::common

#endif // REMAT_RUNTIME_COMMON_FLOAT16_H
