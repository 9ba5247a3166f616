//===- Convert.cuh - Scalar conversions for cast and fill -------*- CUDA
//-*-===//
//
// The CPU's conversions (the 16-bit floats of common/Float16.h, shared, and
// the widen/narrow rules of cast and fill in Elementwise.cpp) as host/device
// functions, so a CUDA cast gives bitwise the CPU's result: F16/BF16 round to
// nearest even with the CPU's NaN payload handling (not the CUDA intrinsics'
// canonical NaN), float to integer truncates and saturates with NaN -> 0,
// integer to integer wraps, anything to Bool is `!= 0`. The CPU widens every
// float through double; here only F64 sources do, since the others are
// exact in float and round identically from there (no f64 arithmetic in
// casts between fp32 and the 16-bit types).
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_CUDA_CONVERT_CUH
#define REMAT_RUNTIME_CUDA_CONVERT_CUH

#include "remat/runtime/Tensor.h"

#include "common/DTypeDispatch.h"
#include "common/FloatStorage.h"

#include <cstdint>
#include <cstring>

namespace remat::rt::cuda::detail {

#define REMAT_HD __host__ __device__ inline

using namespace rt::common; // the 16-bit float conversions (FloatStorage.h)

/// A value on its way through cast: floats widen to F (double for F64
/// sources, else float: every F32, F16 and BF16 value is exact in float, and
/// each destination rounds it as the CPU's widening to double would),
/// integers and Bool to int64 (as the CPU's widen()).
template <typename F> struct Wide {
  bool isFloat;
  F f;
  int64_t i;
};

/// Float to integer: truncation toward zero; out-of-range values saturate
/// and NaN becomes 0. For F = float the bounds round to powers of two (or
/// are exact), which saturates exactly the floats that double would.
template <typename I, typename F> REMAT_HD I saturatingTruncate(F v, I lo, I hi) {
  if (v != v)
    return 0;
  if (v <= static_cast<F>(lo))
    return lo;
  if (v >= static_cast<F>(hi))
    return hi;
  return static_cast<I>(v);
}

/// Bool storage (a byte read as `!= 0`), told apart from U8.
struct BoolByte {
  uint8_t value;
};

REMAT_HD Wide<float> widen(float v) { return {true, v, 0}; }
REMAT_HD Wide<double> widen(double v) { return {true, v, 0}; }
REMAT_HD Wide<float> widen(Half v) { return {true, toCompute(v), 0}; }
REMAT_HD Wide<float> widen(BFloat16 v) { return {true, toCompute(v), 0}; }
REMAT_HD Wide<float> widen(int64_t v) { return {false, 0, v}; }
REMAT_HD Wide<float> widen(int32_t v) { return {false, 0, v}; }
REMAT_HD Wide<float> widen(int8_t v) { return {false, 0, v}; }
REMAT_HD Wide<float> widen(uint8_t v) { return {false, 0, v}; }
REMAT_HD Wide<float> widen(BoolByte v) { return {false, 0, v.value != 0}; }

/// Calls f(Tag<S>{}) for the source storage type of cast from `dtype`.
template <typename Fn> void dispatchCastSource(DType dtype, Fn &&f) {
  switch (dtype) {
  case DType::F32: f(Tag<float>{}); return;
  case DType::F64: f(Tag<double>{}); return;
  case DType::F16: f(Tag<Half>{}); return;
  case DType::BF16: f(Tag<BFloat16>{}); return;
  case DType::I64: f(Tag<int64_t>{}); return;
  case DType::I32: f(Tag<int32_t>{}); return;
  case DType::I8: f(Tag<int8_t>{}); return;
  case DType::U8: f(Tag<uint8_t>{}); return;
  case DType::Bool: f(Tag<BoolByte>{}); return;
  }
}

/// Integer destination: from a float saturate, from int64 wrap.
template <typename I, typename F>
REMAT_HD I narrowInteger(const Wide<F> &w, I lo, I hi) {
  return w.isFloat ? saturatingTruncate<I, F>(w.f, lo, hi)
                   : static_cast<I>(w.i);
}

/// A float narrowing of the wide value (from double, or int64 converted to
/// float directly as the CPU does).
template <typename F> REMAT_HD float wideToFloat(const Wide<F> &w) {
  return w.isFloat ? static_cast<float>(w.f) : static_cast<float>(w.i);
}

template <typename F>
REMAT_HD void storeWide(void *data, DType dtype, int64_t i, const Wide<F> &w) {
  switch (dtype) {
  case DType::F32: static_cast<float *>(data)[i] = wideToFloat(w); return;
  case DType::F64:
    static_cast<double *>(data)[i] =
        w.isFloat ? static_cast<double>(w.f) : static_cast<double>(w.i);
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
