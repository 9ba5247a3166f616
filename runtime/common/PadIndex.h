//===- PadIndex.h - Which input element each Pad output reads ----*- C++ -*-===//
//
// Pad maps every output position to one input element (or to the constant)
// independently per dim, so forward and backward are "walk one tensor and
// look up the other" on both backends. The forward asks, per output
// position, which input element it reads; the backward asks, per input
// element, which output positions read it: per dim at most two arithmetic
// progressions (reflect reads an element from both directions), so each dx
// element sums its own sources in a fixed order, with no scatter and no
// atomics. The CUDA kernels receive a PadGeometry by value, hence the
// host+device functions.
//
// Geometry of one dim: negative pads crop first, positive pads then add
// positions around the `kept` input elements that remain.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_COMMON_PADINDEX_H
#define REMAT_RUNTIME_COMMON_PADINDEX_H

#include "common/FloatStorage.h"
#include "remat/runtime/HostDevice.h"
#include "remat/runtime/Kernels.h"

#include <cstdint>

namespace remat::rt::common {

struct PadDim {
  int64_t in = 0;     // input size
  int64_t out = 0;    // output size
  int64_t crop = 0;   // input elements removed at the start
  int64_t kept = 0;   // input elements left after cropping both ends
  int64_t before = 0; // output positions before the first kept element
};

struct PadGeometry {
  int rank = 0;
  PadMode mode = PadMode::Constant;
  PadDim dim[kMaxRank];
  int64_t inStride[kMaxRank] = {};  // row-major strides of the input
  int64_t outStride[kMaxRank] = {}; // and of the output
};

/// a mod m in [0, m) for m > 0.
REMAT_HOST_DEVICE inline int64_t floorMod(int64_t a, int64_t m) {
  const int64_t r = a % m;
  return r < 0 ? r + m : r;
}

/// The input index output position `o` of dim `d` reads, or -1 where a
/// constant pad writes the value.
REMAT_HOST_DEVICE inline int64_t padSource(const PadDim &d, PadMode mode,
                                           int64_t o) {
  int64_t c = o - d.before; // position relative to the first kept element
  const int64_t n = d.kept;
  if (c < 0 || c >= n) {
    switch (mode) {
    case PadMode::Constant:
      return -1;
    case PadMode::Edge:
      c = c < 0 ? 0 : n - 1;
      break;
    case PadMode::Wrap:
      c = floorMod(c, n);
      break;
    case PadMode::Reflect:
      if (n == 1) {
        c = 0;
      } else { // a triangle wave of period 2(n - 1), as numpy's reflect
        const int64_t period = 2 * (n - 1);
        c = floorMod(c, period);
        if (c >= n)
          c = period - c;
      }
      break;
    }
  }
  return d.crop + c;
}

/// The output positions of one dim that read one input element: `count[k]`
/// positions first[k], first[k] + step, ... for k = 0, 1.
struct PadSources {
  int64_t first[2] = {0, 0};
  int64_t count[2] = {0, 0};
  int64_t step = 1;

  REMAT_HOST_DEVICE int64_t total() const { return count[0] + count[1]; }
  /// The t-th position, t in [0, total()).
  REMAT_HOST_DEVICE int64_t at(int64_t t) const {
    return t < count[0] ? first[0] + t * step
                        : first[1] + (t - count[0]) * step;
  }
};

/// Sets progression k to the positions o in [0, out) with o = r (mod step).
REMAT_HOST_DEVICE inline void padProgression(PadSources &s, int k, int64_t r,
                                             int64_t out) {
  s.first[k] = r;
  s.count[k] = r < out ? (out - 1 - r) / s.step + 1 : 0;
}

/// The output positions of dim `d` that read input index `i`.
REMAT_HOST_DEVICE inline PadSources padSources(const PadDim &d, PadMode mode,
                                               int64_t i) {
  PadSources s;
  const int64_t j = i - d.crop, n = d.kept;
  if (j < 0 || j >= n)
    return s; // cropped away
  // Every kept element is read at its own position; edge elements also from
  // the pads beside them.
  s.first[0] = j + d.before;
  s.count[0] = 1;
  switch (mode) {
  case PadMode::Constant:
    break;
  case PadMode::Edge:
    if (n == 1) {
      s.first[0] = 0;
      s.count[0] = d.out;
    } else if (j == 0) {
      s.first[0] = 0;
      s.count[0] = d.before + 1;
    } else if (j == n - 1) {
      s.count[0] = d.out - s.first[0];
    }
    break;
  case PadMode::Wrap:
    s.step = n;
    padProgression(s, 0, floorMod(j + d.before, n), d.out);
    break;
  case PadMode::Reflect:
    if (n == 1) {
      s.first[0] = 0;
      s.count[0] = d.out;
      break;
    }
    // Positions c = o - before with c = j or c = -j (mod 2(n - 1)); the two
    // coincide for the end elements.
    s.step = 2 * (n - 1);
    padProgression(s, 0, floorMod(j + d.before, s.step), d.out);
    if (j != 0 && j != n - 1)
      padProgression(s, 1, floorMod(d.before - j, s.step), d.out);
    break;
  }
  return s;
}

/// The input offset output element `linear` reads, or -1 for the constant.
REMAT_HOST_DEVICE inline int64_t padReadOffset(const PadGeometry &g,
                                               int64_t linear) {
  int64_t offset = 0;
  for (int d = g.rank - 1; d >= 0; --d) {
    const int64_t o = linear % g.dim[d].out;
    linear /= g.dim[d].out;
    const int64_t i = padSource(g.dim[d], g.mode, o);
    if (i < 0)
      return -1;
    offset += i * g.inStride[d];
  }
  return offset;
}

/// The sum, in Acc, of dy (widened to its compute type, FloatStorage.h)
/// over the output positions that read input element `linear`, in
/// row-major order of those positions.
template <typename Acc, typename T>
REMAT_HOST_DEVICE Acc padGradient(const PadGeometry &g, const T *dy,
                                  int64_t linear) {
  PadSources src[kMaxRank];
  for (int d = g.rank - 1; d >= 0; --d) {
    const int64_t i = linear % g.dim[d].in;
    linear /= g.dim[d].in;
    src[d] = padSources(g.dim[d], g.mode, i);
    if (src[d].total() == 0)
      return Acc(0);
  }
  int64_t t[kMaxRank] = {};
  Acc sum = Acc(0);
  for (;;) {
    int64_t offset = 0;
    for (int d = 0; d < g.rank; ++d)
      offset += src[d].at(t[d]) * g.outStride[d];
    sum += static_cast<Acc>(toCompute(dy[offset]));
    int d = g.rank - 1;
    for (; d >= 0; --d) { // odometer over the per-dim sources
      if (++t[d] < src[d].total())
        break;
      t[d] = 0;
    }
    if (d < 0)
      return sum;
  }
}

} // namespace remat::rt::common

#endif // REMAT_RUNTIME_COMMON_PADINDEX_H
