//===- DTypeDispatch.h - Map runtime dtypes to C++ types ---------*- C++ -*-===//
//
// Kernels are written once as templates over the element type; these helpers
// turn a runtime DType into a call `f(Tag<T>{})`, so each kernel lists the
// dtypes it supports in one place (which also keeps the CUDA backend's
// device instantiations in view) and reports the others uniformly. Shared by
// the CPU and CUDA backends.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_COMMON_DTYPEDISPATCH_H
#define REMAT_RUNTIME_COMMON_DTYPEDISPATCH_H

#include "common/Check.h"

#include <cstdint>

namespace remat::rt::common {

template <typename T> struct Tag { using type = T; };

/// F32, F64.
template <typename F>
decltype(auto) dispatchFloat(DType dtype, const char *kernel, F &&f) {
  switch (dtype) {
  case DType::F32: return f(Tag<float>{});
  case DType::F64: return f(Tag<double>{});
  default: unsupportedDType(kernel, dtype);
  }
}

/// Types with arithmetic: F32, F64, I64, I32.
template <typename F>
decltype(auto) dispatchArith(DType dtype, const char *kernel, F &&f) {
  switch (dtype) {
  case DType::F32: return f(Tag<float>{});
  case DType::F64: return f(Tag<double>{});
  case DType::I64: return f(Tag<int64_t>{});
  case DType::I32: return f(Tag<int32_t>{});
  default: unsupportedDType(kernel, dtype);
  }
}

/// Data movement only needs the element size: one unsigned type per size.
template <typename F>
decltype(auto) dispatchBySize(DType dtype, const char *kernel, F &&f) {
  switch (dtypeSize(dtype)) {
  case 1: return f(Tag<uint8_t>{});
  case 2: return f(Tag<uint16_t>{});
  case 4: return f(Tag<uint32_t>{});
  case 8: return f(Tag<uint64_t>{});
  default: unsupportedDType(kernel, dtype);
  }
}

/// Integer indices (Gather, loss labels): I64 or I32, read as int64_t.
template <typename F>
decltype(auto) dispatchIndex(DType dtype, const char *kernel, F &&f) {
  switch (dtype) {
  case DType::I64: return f(Tag<int64_t>{});
  case DType::I32: return f(Tag<int32_t>{});
  default: unsupportedDType(kernel, dtype);
  }
}

} // namespace remat::rt::common

#endif // REMAT_RUNTIME_COMMON_DTYPEDISPATCH_H
