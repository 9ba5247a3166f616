//===- ResizeIndex.h - Which input elements Resize reads ----------*- C++ -*-===//
//
// ONNX Resize maps each output index o of a dim to an input coordinate
// (ResizeCoordinates, in double as ONNX's reference does), then reads the
// nearest element (ResizeNearest) or interpolates linearly between the two
// around it; indices outside the input clamp to its edge. Every dim is
// handled alike, so a dim that keeps its size at scale 1 maps o to o.
//
// Each output index reads at most two input indices per dim, `low` and
// `high` (equal for nearest and for copied dims), with weights 1 - w and w,
// and both are non-decreasing in o. So the outputs that read input index i
// form one range, which resizeBackward finds by bisection: each dx element
// gathers its own sum, with no scatter. Host+device, so both backends pick
// the same indices and weights.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_COMMON_RESIZEINDEX_H
#define REMAT_RUNTIME_COMMON_RESIZEINDEX_H

#include "remat/runtime/HostDevice.h"
#include "remat/runtime/Kernels.h"

#include <cmath>
#include <cstdint>

namespace remat::rt::common {

/// The input indices one output index reads along a dim, and the weight of
/// `high` (`low` gets 1 - weight; 0 for nearest and copied dims).
struct ResizeTaps {
  int64_t low, high;
  double weight;
};

struct ResizeGeometry {
  int rank = 0;
  ResizeMode mode = ResizeMode::Nearest;
  ResizeCoordinates coordinates = ResizeCoordinates::HalfPixel;
  ResizeNearest nearest = ResizeNearest::RoundPreferFloor;
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
    if (copied[d])
      return {o, o, 0.0};
    const double x = coordinate(d, o);
    const double below = floor(x);
    const double fraction = x - below;
    const int64_t base = static_cast<int64_t>(below);
    if (mode == ResizeMode::Linear)
      return {clampIndex(d, base), clampIndex(d, base + 1), fraction};
    // Between two indices, ONNX's nearest modes pick by the fraction; on an
    // index, every mode reads that index.
    bool up = false;
    switch (nearest) {
    case ResizeNearest::RoundPreferFloor: up = fraction > 0.5; break;
    case ResizeNearest::RoundPreferCeil: up = fraction >= 0.5; break;
    case ResizeNearest::Floor: up = false; break;
    case ResizeNearest::Ceil: up = fraction > 0; break;
    }
    const int64_t i = clampIndex(d, up ? base + 1 : base);
    return {i, i, 0.0};
  }

  /// The weight with which output index o reads input index i along dim d.
  REMAT_HOST_DEVICE double weight(int d, int64_t o, int64_t i) const {
    const ResizeTaps t = taps(d, o);
    if (t.weight == 0)
      return t.low == i ? 1.0 : 0.0;
    return (t.low == i ? 1 - t.weight : 0.0) + (t.high == i ? t.weight : 0.0);
  }

  /// The output indices along dim d that read input index i: [first, last).
  REMAT_HOST_DEVICE void readers(int d, int64_t i, int64_t &first,
                                 int64_t &last) const {
    if (copied[d]) {
      first = i;
      last = i + 1;
      return;
    }
    // The first o whose high index reaches i, and the first whose low index
    // passes it (both non-decreasing in o).
    int64_t lo = 0, hi = out[d];
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (taps(d, mid).high >= i)
        hi = mid;
      else
        lo = mid + 1;
    }
    first = lo;
    hi = out[d];
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (taps(d, mid).low > i)
        hi = mid;
      else
        lo = mid + 1;
    }
    last = lo;
  }
};

} // namespace remat::rt::common

#endif // REMAT_RUNTIME_COMMON_RESIZEINDEX_H
