//===- DTypeDispatch.h - Map runtime dtypes to C++ types ---------*- C++ -*-===//
//
// The CPU's additions to common/DTypeDispatch.h: a storage type for Bool,
// dispatch over every dtype (casts) and over the arithmetic storage types,
// and float parameters read and written as double.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_CPU_DTYPEDISPATCH_H
#define REMAT_RUNTIME_CPU_DTYPEDISPATCH_H

#include "common/DTypeDispatch.h"
#include "common/FloatStorage.h"

#include <cstdint>
#include <utility>

namespace remat::rt::cpu {

// The checks and the dispatchers shared with the CUDA backend.
using namespace common;

/// Bool is read as a byte so arbitrary non-zero bytes are never UB (a
/// distinct type, like the 16-bit float storage types of FloatStorage.h,
/// so conversions can tell it from U8).
struct Bool { uint8_t value; };
static_assert(sizeof(Bool) == 1);

/// Every dtype, as its storage type.
template <typename F>
decltype(auto) dispatchAll(DType dtype, const char *kernel, F &&f) {
  switch (dtype) {
  case DType::F32: return f(Tag<float>{});
  case DType::F64: return f(Tag<double>{});
  case DType::F16: return f(Tag<Half>{});
  case DType::BF16: return f(Tag<BFloat16>{});
  case DType::I64: return f(Tag<int64_t>{});
  case DType::I32: return f(Tag<int32_t>{});
  case DType::I8: return f(Tag<int8_t>{});
  case DType::U8: return f(Tag<uint8_t>{});
  case DType::Bool: return f(Tag<Bool>{});
  }
  unsupportedDType(kernel, dtype);
}

/// dispatchArith's types and the 16-bit floats: F32, F64, F16, BF16, I64,
/// I32 (elementwise arithmetic and comparisons, reductions).
template <typename F>
decltype(auto) dispatchArithStorage(DType dtype, const char *kernel, F &&f) {
  switch (dtype) {
  case DType::F16: return f(Tag<Half>{});
  case DType::BF16: return f(Tag<BFloat16>{});
  default: return dispatchArith(dtype, kernel, std::forward<F>(f));
  }
}

/// Reads element i of a float view as double (parameters such as BatchNorm
/// statistics, which may differ in precision from the data).
inline double loadAsDouble(const TensorView &view, int64_t i,
                           const char *kernel) {
  return dispatchFloatStorage(view.dtype, kernel, [&](auto tag) -> double {
    using T = typename decltype(tag)::type;
    return static_cast<double>(toCompute(view.as<T>()[i]));
  });
}

inline void storeFromDouble(const TensorView &view, int64_t i, double value,
                            const char *kernel) {
  dispatchFloatStorage(view.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    view.as<T>()[i] = fromDouble<T>(value);
  });
}

} // namespace remat::rt::cpu

#endif // REMAT_RUNTIME_CPU_DTYPEDISPATCH_H
