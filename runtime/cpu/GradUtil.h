//===- GradUtil.h - Helpers shared by the backward kernels -------*- C++ -*-===//
//
// Scatter-style backward kernels (col2im, pooling, gather) add several
// contributions into one gradient element; they accumulate in double and
// round once, so F32 gradients do not depend on the summation order.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_CPU_GRADUTIL_H
#define REMAT_RUNTIME_CPU_GRADUTIL_H

#include "remat/runtime/Tensor.h"

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace remat::rt::cpu {

/// Calls fn(acc) with `acc` a zeroed double buffer of n elements, then
/// writes it to dst (rounded to T). For T = double, acc is dst itself.
template <typename T, typename Fn>
void accumulateInDouble(T *dst, int64_t n, Fn &&fn) {
  if constexpr (std::is_same_v<T, double>) {
    std::fill(dst, dst + n, 0.0);
    fn(dst);
  } else {
    std::vector<double> acc(static_cast<size_t>(n), 0.0);
    fn(acc.data());
    for (int64_t i = 0; i < n; ++i)
      dst[i] = static_cast<T>(acc[i]);
  }
}

} // namespace remat::rt::cpu

#endif // REMAT_RUNTIME_CPU_GRADUTIL_H
