//===- Check.h - Kernel argument checks --------------------------*- C++ -*-===//
//
// Shared by the CPU and CUDA backends, so that a bad argument gives the same
// message on either. Kernels validate only what is cheap (ranks, dtypes,
// sizes) and report problems as RuntimeError messages that start with the
// kernel's name, so a failure in a long interpreter run points at the
// offending op.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_COMMON_CHECK_H
#define REMAT_RUNTIME_COMMON_CHECK_H

#include "remat/runtime/Tensor.h"

#include <string>

namespace remat::rt::common {

[[noreturn]] inline void fail(const char *kernel, const std::string &message) {
  throw RuntimeError(std::string(kernel) + ": " + message);
}

inline void require(bool condition, const char *kernel, const char *message) {
  if (!condition)
    fail(kernel, message);
}

[[noreturn]] inline void unsupportedDType(const char *kernel, DType dtype) {
  fail(kernel, std::string("unsupported dtype ") + dtypeName(dtype));
}

inline void requireDType(const TensorView &view, DType dtype,
                         const char *kernel, const char *what) {
  if (view.dtype != dtype)
    fail(kernel, std::string(what) + " has dtype " + dtypeName(view.dtype) +
                     ", expected " + dtypeName(dtype));
}

inline void requireShape(const TensorView &view, const Shape &shape,
                         const char *kernel, const char *what) {
  if (view.shape != shape)
    fail(kernel, std::string(what) + " has shape " +
                     shapeToString(view.shape) + ", expected " +
                     shapeToString(shape));
}

inline void requireNumel(const TensorView &view, int64_t numel,
                         const char *kernel, const char *what) {
  if (view.numel() != numel)
    fail(kernel, std::string(what) + " has " + std::to_string(view.numel()) +
                     " elements, expected " + std::to_string(numel));
}

/// `view` is one element of `dtype` (a 0-d flag, scale or counter).
inline void requireScalar(const TensorView &view, DType dtype,
                          const char *kernel, const char *what) {
  if (view.empty())
    fail(kernel, std::string(what) + " is required");
  requireDType(view, dtype, kernel, what);
  requireNumel(view, 1, kernel, what);
}

/// `t` is given and has `like`'s dtype and shape (optimizer state, which
/// must match its parameter).
inline void requireLike(const char *kernel, const TensorView &like,
                        const TensorView &t, const char *what) {
  if (t.empty())
    fail(kernel, std::string(what) + " is required");
  requireDType(t, like.dtype, kernel, what);
  requireShape(t, like.shape, kernel, what);
}

} // namespace remat::rt::common

#endif // REMAT_RUNTIME_COMMON_CHECK_H
