//===- Convert.cuh - Scalar conversions for cast and fill -------*- CUDA
//-*-===//
//
// The CPU's conversions (the 16-bit floats of common/Float16.h, shared, and
// the widen/narrow rules of cast and fill in Elementwise.cpp) as host/device
// functions, so a CUDA cast gives bitwise the CPU's result: F16/BF16 round to
// nearest even with the CPU's NaN payload handling (not the CUDA intrinsics'
// canonical NaN), float to integer truncates and saturates with NaN -> 0,
// integer to integer wraps, anything to Bool is `!= 0`.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_CUDA_CONVERT_CUH
#define REMAT_RUNTIME_CUDA_CONVERT_CUH

#include "remat/runtime/Tensor.h"

#include "common/Float16.h"

#include <cstdint>
#include <cstring>

namespace remat::rt::cuda::detail {

#define REMAT_HD __host__ __device__ inline

using namespace rt::common; // the 16-bit float conversions (Float16.h)

/// A value on its way through cast: floats widen to double, integers and
/// Bool to int64 (as the CPU's widen()).
struct Wide {
  bool isFloat;
  double f;
  int64_t i;
};

/// Float to integer: truncation toward zero; out-of-range values saturate
/// and NaN becomes 0.
template <typename I> REMAT_HD I saturatingTruncate(double v, I lo, I hi) {
  if (v != v)
    return 0;
  if (v <= static_cast<double>(lo))
    return lo;
  if (v >= static_cast<double>(hi))
    return hi;
  return static_cast<I>(v);
}

REMAT_HD Wide loadWide(const void *data, DType dtype, int64_t i) {
  switch (dtype) {
  case DType::F32:
    return {true, static_cast<double>(static_cast<const float *>(data)[i]), 0};
  case DType::F64: return {true, static_cast<const double *>(data)[i], 0};
  case DType::F16:
    return {true,
            static_cast<double>(
                halfBitsToFloat(static_cast<const uint16_t *>(data)[i])),
            0};
  case DType::BF16:
    return {true,
            static_cast<double>(
                bfloat16BitsToFloat(static_cast<const uint16_t *>(data)[i])),
            0};
  case DType::I64: return {false, 0, static_cast<const int64_t *>(data)[i]};
  case DType::I32: return {false, 0, static_cast<const int32_t *>(data)[i]};
  case DType::I8: return {false, 0, static_cast<const int8_t *>(data)[i]};
  case DType::U8: return {false, 0, static_cast<const uint8_t *>(data)[i]};
  case DType::Bool:
    return {false, 0, static_cast<const uint8_t *>(data)[i] != 0 ? 1 : 0};
  }
  return {false, 0, 0};
}

/// Integer destination: from double saturate, from int64 wrap.
template <typename I> REMAT_HD I narrowInteger(const Wide &w, I lo, I hi) {
  return w.isFloat ? saturatingTruncate<I>(w.f, lo, hi) : static_cast<I>(w.i);
}

/// A float narrowing of the wide value (from double, or int64 converted to
/// float directly as the CPU does).
REMAT_HD float wideToFloat(const Wide &w) {
  return w.isFloat ? static_cast<float>(w.f) : static_cast<float>(w.i);
}

REMAT_HD void storeWide(void *data, DType dtype, int64_t i, const Wide &w) {
  switch (dtype) {
  case DType::F32: static_cast<float *>(data)[i] = wideToFloat(w); return;
  case DType::F64:
    static_cast<double *>(data)[i] = w.isFloat ? w.f : static_cast<double>(w.i);
    return;
  case DType::F16:
    static_cast<uint16_t *>(data)[i] = floatToHalfBits(wideToFloat(w));
    return;
  case DType::BF16:
    static_cast<uint16_t *>(data)[i] = floatToBfloat16Bits(wideToFloat(w));
    return;
  case DType::I64:
    static_cast<int64_t *>(data)[i] = narrowInteger<int64_t>(
        w, static_cast<int64_t>(-0x7fffffffffffffffll - 1),
        static_cast<int64_t>(0x7fffffffffffffffll));
    return;
  case DType::I32:
    static_cast<int32_t *>(data)[i] =
        narrowInteger<int32_t>(w, static_cast<int32_t>(-0x7fffffff - 1),
                               static_cast<int32_t>(0x7fffffff));
    return;
  case DType::I8:
    static_cast<int8_t *>(data)[i] = narrowInteger<int8_t>(w, -128, 127);
    return;
  case DType::U8:
    static_cast<uint8_t *>(data)[i] = narrowInteger<uint8_t>(w, 0, 255);
    return;
  case DType::Bool:
    static_cast<uint8_t *>(data)[i] = w.isFloat ? (w.f != 0) : (w.i != 0);
    return;
  }
}

#undef REMAT_HD

} // namespace remat::rt::cuda::detail

#endif // REMAT_RUNTIME_CUDA_CONVERT_CUH
