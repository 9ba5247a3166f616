//===- ResizeSum.h - One element of resize and of its backward ----*- C++ -*-===//
//
// The arithmetic of resize and resizeBackward for one output (one input)
// element, shared by the backends so that they add the same terms in the
// same order in the same type: ComputeType<T> (common/FloatStorage.h), with
// each per-dim weight computed in double (ResizeIndex.h) and rounded once.
// Terms of weight 0 are skipped, so a coordinate that falls on an input
// index copies it exactly.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_COMMON_RESIZESUM_H
#define REMAT_RUNTIME_COMMON_RESIZESUM_H

#include "common/FloatStorage.h"
#include "common/ResizeIndex.h"

namespace remat::rt::common {

/// y at output element `o` (row-major over g.out) for linear and cubic
/// mode: every combination of its taps (one per dim, in row-major order of
/// the tap positions), each weighted by the product of its dims' weights.
template <typename T>
REMAT_HOST_DEVICE ComputeType<T> resizeInterpolatedAt(const ResizeGeometry &g,
                                                      const T *x, int64_t o) {
  using C = ComputeType<T>;
  ResizeTaps taps[kMaxRank];
  for (int d = g.rank - 1; d >= 0; --d) {
    taps[d] = g.taps(d, o % g.out[d]);
    o /= g.out[d];
  }
  int k[kMaxRank] = {};
  C sum = C(0);
  while (true) {
    C weight = C(1);
    int64_t at = 0;
    bool zero = false;
    for (int d = 0; d < g.rank; ++d) {
      const double w = taps[d].weight[k[d]];
      if (w == 0) {
        zero = true;
        break;
      }
      weight *= static_cast<C>(w);
      at += taps[d].index[k[d]] * g.inStride[d];
    }
    if (!zero)
      sum += weight * toCompute(x[at]);
    // Next combination, the last dim the fastest.
    int d = g.rank - 1;
    while (d >= 0 && ++k[d] == taps[d].count) {
      k[d] = 0;
      --d;
    }
    if (d < 0)
      break;
  }
  return sum;
}

/// The offset into x that output element `o` reads in nearest mode.
REMAT_HOST_DEVICE inline int64_t resizeNearestOffset(const ResizeGeometry &g,
                                                     int64_t o) {
  int64_t at = 0;
  for (int d = g.rank - 1; d >= 0; --d) {
    at += g.taps(d, o % g.out[d]).index[0] * g.inStride[d];
    o /= g.out[d];
  }
  return at;
}

/// dx at input element `i` (row-major over g.in): dy summed, in row-major
/// order of the output positions that read x[i], times the weights they
/// read it with.
template <typename T>
REMAT_HOST_DEVICE ComputeType<T> resizeGradientAt(const ResizeGeometry &g,
                                                  const T *dy, int64_t i) {
  using C = ComputeType<T>;
  int64_t index[kMaxRank], first[kMaxRank], last[kMaxRank], o[kMaxRank];
  for (int d = g.rank - 1; d >= 0; --d) {
    index[d] = i % g.in[d];
    i /= g.in[d];
  }
  for (int d = 0; d < g.rank; ++d) {
    g.readers(d, index[d], first[d], last[d]);
    if (first[d] >= last[d])
      return C(0);
    o[d] = first[d];
  }
  C sum = C(0);
  while (true) {
    C weight = C(1);
    int64_t at = 0;
    bool zero = false;
    for (int d = 0; d < g.rank; ++d) {
      const double w = g.weight(d, o[d], index[d]);
      if (w == 0) {
        zero = true;
        break;
      }
      weight *= static_cast<C>(w);
      at += o[d] * g.outStride[d];
    }
    if (!zero)
      sum += weight * toCompute(dy[at]);
    // Next output position in row-major order.
    int d = g.rank - 1;
    while (d >= 0 && ++o[d] == last[d]) {
      o[d] = first[d];
      --d;
    }
    if (d < 0)
      break;
  }
  return sum;
}

} // namespace remat::rt::common

#endif // REMAT_RUNTIME_COMMON_RESIZESUM_H
