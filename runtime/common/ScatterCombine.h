//===- ScatterCombine.h - How ScatterND combines an update --------*- C++ -*-===//
//
// One update of ScatterND's reductions, the same on both backends: floats
// are widened to their compute type (common/FloatStorage.h), combined, and
// rounded back to the storage type after each update; integers combine with
// wrap-around (unsigned arithmetic, so overflow is defined). Max and Min
// propagate NaN, as numpy.maximum / numpy.minimum (ONNX's reference).
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_COMMON_SCATTERCOMBINE_H
#define REMAT_RUNTIME_COMMON_SCATTERCOMBINE_H

#include "common/FloatStorage.h"
#include "remat/runtime/HostDevice.h"
#include "remat/runtime/Kernels.h"

#include <cstdint>
#include <type_traits>

namespace remat::rt::common {

template <typename C>
REMAT_HOST_DEVICE inline C combineComputed(ScatterReduction reduction, C a,
                                           C b) {
  switch (reduction) {
  case ScatterReduction::None: return b;
  case ScatterReduction::Add: return a + b;
  case ScatterReduction::Mul: return a * b;
  case ScatterReduction::Max: return a != a || a > b ? a : b;
  case ScatterReduction::Min: return a != a || a < b ? a : b;
  }
  return b;
}

/// `current` combined with `update`, in T's storage.
template <typename T>
REMAT_HOST_DEVICE inline T scatterCombine(ScatterReduction reduction,
                                          T current, T update) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    switch (reduction) {
    case ScatterReduction::Add:
      return static_cast<T>(static_cast<U>(current) + static_cast<U>(update));
    case ScatterReduction::Mul:
      return static_cast<T>(static_cast<U>(current) * static_cast<U>(update));
    default: return combineComputed(reduction, current, update);
    }
  } else {
    return fromCompute<T>(
        combineComputed(reduction, toCompute(current), toCompute(update)));
  }
}

/// The dtypes ScatterND's reductions support: float storage and I32/I64.
template <typename F>
decltype(auto) dispatchScatterArith(DType dtype, const char *kernel, F &&f) {
  switch (dtype) {
  case DType::I64: return f(Tag<int64_t>{});
  case DType::I32: return f(Tag<int32_t>{});
  default: return dispatchFloatStorage(dtype, kernel, std::forward<F>(f));
  }
}

} // namespace remat::rt::common

#endif // REMAT_RUNTIME_COMMON_SCATTERCOMBINE_H
