//===- ResizeIndex.h - Which input elements Resize reads ----------*- C++ -*-===//
//
// ONNX Resize maps each output index o of a dim to an input coordinate
// (ResizeCoordinates, in double as ONNX's reference does), then reads the
// nearest element (ResizeNearest), interpolates linearly between the two
// around it, or cubically over the four around it; indices outside the
// input clamp to its edge (ONNX's reference pads with edge values). Every
// dim is handled alike, so a dim that keeps its size at scale 1 maps o to o.
//
// Each output index reads at most four input indices per dim (its taps),
// in increasing order, and the first and last tap are non-decreasing in o.
// So the outputs that read input index i form one range, which
// resizeBackward finds by bisection: each dx element gathers its own sum,
// with no scatter. Host+device, so both backends pick the same indices and
// weights.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_COMMON_RESIZEINDEX_H
#define REMAT_RUNTIME_COMMON_RESIZEINDEX_H

#include "remat/runtime/HostDevice.h"
#include "remat/runtime/Kernels.h"

#include <cmath>
#include <cstdint>

namespace remat::rt::common {

/// The input indices one output index reads along a dim (clamped into the
/// input, non-decreasing) and the weight of each.
struct ResizeTaps {
  static constexpr int kMax = 4; // cubic
  int count = 0;
  int64_t index[kMax] = {};
  double weight[kMax] = {};
};

struct ResizeGeometry {
  int rank = 0;
  ResizeMode mode = ResizeMode::Nearest;
  ResizeCoordinates coordinates = ResizeCoordinates::HalfPixel;
  ResizeNearest nearest = ResizeNearest::RoundPreferFloor;
  double cubicCoeffA = -0.75;
  bool excludeOutside = false;
  int64_t in[kMaxRank] = {}, out[kMaxRank] = {};
  double scale[kMaxRank] = {};
  bool copied[kMaxRank] = {}; // same size at scale 1: o reads o
  int64_t inStride[kMaxRank] = {}, outStride[kMaxRank] = {};

  /// The input coordinate of output index o along dim d (ONNX's formulas).
  REMAT_HOST_DEVICE double coordinate(int d, int64_t o) const {
    const double x = static_cast<double>(o), s = scale[d];
    const double length = s * static_cast<double>(in[d]); // ONNX: scaled
    switch (coordinates) {
    case ResizeCoordinates::HalfPixel: return (x + 0.5) / s - 0.5;
    case ResizeCoordinates::HalfPixelSymmetric: {
      const double adjustment = static_cast<double>(out[d]) / length;
      const double center = static_cast<double>(in[d]) / 2;
      return center * (1 - adjustment) + (x + 0.5) / s - 0.5;
    }
    case ResizeCoordinates::PytorchHalfPixel:
      return length == 1 ? -0.5 : (x + 0.5) / s - 0.5;
    case ResizeCoordinates::AlignCorners:
      return length == 1 ? 0.0
                         : x * static_cast<double>(in[d] - 1) / (length - 1);
    case ResizeCoordinates::Asymmetric: return x / s;
    }
    return x;
  }

  REMAT_HOST_DEVICE int64_t clampIndex(int d, int64_t i) const {
    return i < 0 ? 0 : i >= in[d] ? in[d] - 1 : i;
  }

  /// What output index o reads along dim d.
  REMAT_HOST_DEVICE ResizeTaps taps(int d, int64_t o) const {
    ResizeTaps t;
    if (copied[d]) {
      t.count = 1;
      t.index[0] = o;
      t.weight[0] = 1;
      return t;
    }
    const double x = coordinate(d, o);
    const double below = floor(x);
    const double fraction = x - below;
    const int64_t base = static_cast<int64_t>(below);
    if (mode == ResizeMode::Linear) {
      t.count = 2;
      t.index[0] = clampIndex(d, base);
      t.index[1] = clampIndex(d, base + 1);
      t.weight[0] = 1.0 - fraction;
      t.weight[1] = fraction;
      return t;
    }
    if (mode == ResizeMode::Cubic)
      return cubicTaps(d, base, fraction);
    // Between two indices, ONNX's nearest modes pick by the fraction; on an
    // index, every mode reads that index.
    bool up = false;
    switch (nearest) {
    case ResizeNearest::RoundPreferFloor: up = fraction > 0.5; break;
    case ResizeNearest::RoundPreferCeil: up = fraction >= 0.5; break;
    case ResizeNearest::Floor: up = false; break;
    case ResizeNearest::Ceil: up = fraction > 0; break;
    }
    t.count = 1;
    t.index[0] = clampIndex(d, up ? base + 1 : base);
    t.weight[0] = 1;
    return t;
  }

  /// Keys' cubic convolution over base - 1 .. base + 2 at distance
  /// `fraction` past base, with ONNX's coefficient formulas (op_resize.py's
  /// _cubic_coeffs). At fraction 0 they are exactly [0, 1, 0, 0], which is
  /// what ONNX's window [x - 2, x + 1] at ratio 1 gives on an index.
  /// exclude_outside zeroes the taps outside the input and renormalises.
  REMAT_HOST_DEVICE ResizeTaps cubicTaps(int d, int64_t base,
                                         double fraction) const {
    const double a = cubicCoeffA, r = fraction, s = 1 - fraction;
    double w[4] = {
        ((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
        ((a + 2) * r - (a + 3)) * r * r + 1,
        ((a + 2) * s - (a + 3)) * s * s + 1,
        ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a,
    };
    if (excludeOutside) {
      double sum = 0;
      for (int k = 0; k < 4; ++k) {
        const int64_t i = base - 1 + k;
        if (i < 0 || i >= in[d])
          w[k] = 0;
        sum += w[k];
      }
      if (sum != 0) // only a coordinate far outside the input has no taps
        for (int k = 0; k < 4; ++k)
          w[k] /= sum;
    }
    ResizeTaps t;
    t.count = 4;
    for (int k = 0; k < 4; ++k) {
      t.index[k] = clampIndex(d, base - 1 + k);
      t.weight[k] = w[k];
    }
    return t;
  }

  /// The weight with which output index o reads input index i along dim d
  /// (the sum of its taps on i: clamping can put several there).
  REMAT_HOST_DEVICE double weight(int d, int64_t o, int64_t i) const {
    const ResizeTaps t = taps(d, o);
    double w = 0;
    for (int k = 0; k < t.count; ++k)
      if (t.index[k] == i)
        w += t.weight[k];
    return w;
  }

  /// The output indices along dim d that read input index i: [first, last).
  REMAT_HOST_DEVICE void readers(int d, int64_t i, int64_t &first,
                                 int64_t &last) const {
    if (copied[d]) {
      first = i;
      last = i + 1;
      return;
    }
    // The first o whose last tap reaches i, and the first whose first tap
    // passes it (both non-decreasing in o).
    int64_t lo = 0, hi = out[d];
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      const ResizeTaps t = taps(d, mid);
      if (t.index[t.count - 1] >= i)
        hi = mid;
      else
        lo = mid + 1;
    }
    first = lo;
    hi = out[d];
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (taps(d, mid).index[0] > i)
        hi = mid;
      else
        lo = mid + 1;
    }
    last = lo;
  }
};

} // namespace remat::rt::common

#endif // REMAT_RUNTIME_COMMON_RESIZEINDEX_H
