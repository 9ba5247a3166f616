//===- GradUtil.h - Helpers shared by the backward kernels -------*- C++ -*-===//
//
// Scatter-style backward kernels (col2im, pooling, gather) add several
// contributions into one gradient element; they accumulate in double and
// round once, so F32 (and F16/BF16) gradients do not depend on the
// summation order.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_CPU_GRADUTIL_H
#define REMAT_RUNTIME_CPU_GRADUTIL_H

#include "Scratch.h"

#include "common/FloatStorage.h"

#include "remat/runtime/Tensor.h"

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace remat::rt::cpu {

/// Calls fn(acc) with `acc` a zeroed double buffer of n elements, then
/// writes it to dst (rounded once to T). For T = double, acc is dst itself;
/// otherwise it is the next buffer of `scratch` (accumulatorScratchBytes).
template <typename T, typename Fn>
void accumulateInDouble(T *dst, int64_t n, Scratch &scratch, Fn &&fn) {
  if constexpr (std::is_same_v<T, double>) {
    std::fill(dst, dst + n, 0.0);
    fn(dst);
  } else {
    double *acc = scratch.take<double>(n);
    std::fill(acc, acc + n, 0.0);
    fn(acc);
    for (int64_t i = 0; i < n; ++i)
      dst[i] = common::fromDouble<T>(acc[i]);
  }
}

} // namespace remat::rt::cpu

#endif // REMAT_RUNTIME_CPU_GRADUTIL_H
