//===- FloatStorage.h - Float storage types and their compute types -*- C++ -*-===//
//
// Mixed precision stores activations in 16 bits (F16, BF16) but computes in
// fp32, as PyTorch's autocast kernels do. A float kernel is written once as a
// template over its *storage* type T and does its math in ComputeType<T>:
//
//   using C = ComputeType<T>;          // float for Half/BFloat16/float, double for double
//   C v = toCompute(x[i]);             // widen on load
//   y[i] = fromCompute<T>(f(v));       // round to nearest even on store
//
// For float and double both conversions are the identity, so fp32 and fp64
// kernels keep their exact arithmetic. A kernel that accumulates in double
// stores with fromDouble<T>(acc), which rounds once for every T. The 16-bit conversions are those of
// Float16.h, so both backends round the same way and a CUDA kernel gives the
// CPU's bits wherever its arithmetic is the same. Host+device.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_COMMON_FLOATSTORAGE_H
#define REMAT_RUNTIME_COMMON_FLOATSTORAGE_H

#include "common/Check.h"
#include "common/DTypeDispatch.h"
#include "common/Float16.h"
#include "remat/runtime/HostDevice.h"

#include <cstdint>
#include <type_traits>

namespace remat::rt::common {

/// 16-bit float storage without C++ arithmetic: distinct types (rather than
/// uint16_t) so that conversions can tell them from each other and from
/// integers.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};
static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2);

template <typename T>
inline constexpr bool kIsHalfStorage =
    std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

/// The storage types dispatchFloatStorage hands out.
template <typename T>
inline constexpr bool kIsFloatStorage =
    std::is_floating_point_v<T> || kIsHalfStorage<T>;

/// The type a kernel computes in for storage type T.
template <typename T> struct ComputeTypeOf { using type = T; };
template <> struct ComputeTypeOf<Half> { using type = float; };
template <> struct ComputeTypeOf<BFloat16> { using type = float; };
template <typename T> using ComputeType = typename ComputeTypeOf<T>::type;

/// Widens a stored element to its compute type.
REMAT_HOST_DEVICE inline float toCompute(Half v) {
  return halfBitsToFloat(v.bits);
}
REMAT_HOST_DEVICE inline float toCompute(BFloat16 v) {
  return bfloat16BitsToFloat(v.bits);
}
template <typename T, typename = std::enable_if_t<!kIsHalfStorage<T>>>
REMAT_HOST_DEVICE inline T toCompute(T v) {
  return v;
}

/// Stores a computed value as T (16-bit types round to nearest even).
template <typename T>
REMAT_HOST_DEVICE inline T fromCompute(ComputeType<T> v) {
  if constexpr (std::is_same_v<T, Half>)
    return Half{floatToHalfBits(v)};
  else if constexpr (std::is_same_v<T, BFloat16>)
    return BFloat16{floatToBfloat16Bits(v)};
  else
    return v;
}

/// A double rounded to float toward zero, with the last mantissa bit set
/// when that lost anything ("round to odd"). Rounding this float to a
/// format of at most 22 significant bits (BF16 has 8, F16 11) then gives
/// the double's correctly rounded value, which rounding the double to the
/// nearest float first would not always do (Boldo & Melquiond, "When
/// double rounding is odd", 2005). Infinities and NaN pass through; a
/// double beyond the float range becomes infinite, as it does in any
/// 16-bit format.
REMAT_HOST_DEVICE inline float roundToOddFloat(double v) {
  const float nearest = static_cast<float>(v);
  const double back = static_cast<double>(nearest);
  uint32_t bits = floatBits(nearest);
  // Without branches: kernels call this per element, and which way an
  // element rounds is random (a mispredicted branch costs more than this).
  const uint32_t finite = (bits & 0x7fffffffu) < 0x7f800000u;
  const uint32_t inexact = static_cast<uint32_t>(back != v) & finite;
  // Away from zero: above a positive v, below a negative one.
  const uint32_t roundedAway =
      static_cast<uint32_t>(back > v) ^ static_cast<uint32_t>(v < 0);
  bits -= inexact & roundedAway; // one step toward zero: truncation
  return bitsToFloat(bits | inexact);
}

/// Stores a double (a kernel's double accumulator) as T, rounded once to
/// nearest even: the 16-bit types through roundToOddFloat, so that the
/// result is the double's nearest T and not the nearest T of its nearest
/// float.
template <typename T> REMAT_HOST_DEVICE inline T fromDouble(double v) {
  if constexpr (kIsHalfStorage<T>)
    return fromCompute<T>(roundToOddFloat(v));
  else
    return static_cast<T>(v);
}

/// Float storage: F32, F64, F16, BF16 (compute in ComputeType<T>).
template <typename F>
decltype(auto) dispatchFloatStorage(DType dtype, const char *kernel, F &&f) {
  switch (dtype) {
  case DType::F32: return f(Tag<float>{});
  case DType::F64: return f(Tag<double>{});
  case DType::F16: return f(Tag<Half>{});
  case DType::BF16: return f(Tag<BFloat16>{});
  default: unsupportedDType(kernel, dtype);
  }
}

} // namespace remat::rt::common

#endif // REMAT_RUNTIME_COMMON_FLOATSTORAGE_H
