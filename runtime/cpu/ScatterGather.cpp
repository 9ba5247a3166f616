//===- ScatterGather.cpp - GatherND, its backward, and ScatterND ----------===//
//
// The CPU kernels of ONNX's N-dimensional indexing ops. Every loop visits the
// index tuples in row-major order, so each element receives its updates (or
// gradient contributions) in that order: the CUDA kernels give each thread
// one column of slice elements and walk the tuples in the same order, which
// is what makes the two backends agree bitwise (ScatterGather.cu).
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/Kernels.h"

#include "DTypeDispatch.h"
#include "Scratch.h"
#include "common/IndexingChecks.h"
#include "common/ScatterCombine.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace remat::rt {
using namespace cpu;

namespace {

/// Calls fn(t, offset) for every index tuple t (row-major over indices)
/// with the offset into data of the slice it names; throws naming `kernel`
/// on an out-of-range coordinate.
template <typename Fn>
void forEachTuple(const char *kernel, const GatherNDGeometry &g,
                  const TensorView &indices, Fn &&fn) {
  dispatchIndex(indices.dtype, kernel, [&](auto tag) {
    using I = typename decltype(tag)::type;
    const I *idx = indices.as<const I>();
    for (int64_t t = 0, n = g.batch * g.tuples; t < n; ++t) {
      int64_t bad = 0;
      const int64_t offset = g.sliceOffset(t, idx + t * g.depth, bad);
      if (offset < 0)
        fail(kernel, "index " + std::to_string(bad) + " out of range");
      fn(t, offset);
    }
  });
}

} // namespace

size_t gatherNDBackwardScratchBytes(const TensorView &dx) {
  // 16-bit gradients accumulate in a float copy of dx.
  const bool half = dx.dtype == DType::F16 || dx.dtype == DType::BF16;
  return half ? scratchPiece<float>(dx.numel()) : 0;
}

void gatherND(const TensorView &data, const TensorView &indices,
              const TensorView &y, int64_t batchDims) {
  const char *kernel = "gatherND";
  const GatherNDGeometry g =
      gatherNDGeometry(kernel, data, indices, y, batchDims);
  const size_t block = g.slice * dtypeSize(data.dtype);
  const char *src = static_cast<const char *>(data.data);
  char *dst = static_cast<char *>(y.data);
  forEachTuple(kernel, g, indices, [&](int64_t t, int64_t offset) {
    std::memcpy(dst + t * block, src + offset * dtypeSize(data.dtype), block);
  });
}

void gatherNDBackward(const TensorView &dy, const TensorView &indices,
                      const TensorView &dx, int64_t batchDims) {
  const char *kernel = "gatherNDBackward";
  const GatherNDGeometry g =
      gatherNDGeometry(kernel, dx, indices, dy, batchDims);
  Scratch scratch(kernel, gatherNDBackwardScratchBytes(dx));
  dispatchFloatStorage(dx.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const int64_t n = dx.numel();
    // f32 and f64 accumulate in dx itself, 16-bit storage in a float copy.
    C *acc = nullptr;
    if constexpr (std::is_same_v<T, C>)
      acc = dx.as<T>();
    else
      acc = scratch.take<C>(n);
    std::fill(acc, acc + n, C(0));
    const T *pdy = dy.as<const T>();
    forEachTuple(kernel, g, indices, [&](int64_t t, int64_t offset) {
      const T *src = pdy + t * g.slice;
      for (int64_t s = 0; s < g.slice; ++s)
        acc[offset + s] += toCompute(src[s]);
    });
    if constexpr (!std::is_same_v<T, C>) {
      T *out = dx.as<T>();
      for (int64_t i = 0; i < n; ++i)
        out[i] = fromCompute<T>(acc[i]);
    }
  });
}

void scatterND(const TensorView &data, const TensorView &indices,
               const TensorView &updates, const TensorView &y,
               ScatterReduction reduction) {
  const char *kernel = "scatterND";
  const GatherNDGeometry g =
      scatterNDGeometry(kernel, data, indices, updates, y);
  if (y.data != data.data)
    std::memcpy(y.data, data.data, data.bytes());
  if (reduction == ScatterReduction::None) {
    const size_t size = dtypeSize(data.dtype), block = g.slice * size;
    const char *src = static_cast<const char *>(updates.data);
    char *dst = static_cast<char *>(y.data);
    forEachTuple(kernel, g, indices, [&](int64_t t, int64_t offset) {
      std::memcpy(dst + offset * size, src + t * block, block);
    });
    return;
  }
  dispatchScatterArith(data.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *pu = updates.as<const T>();
    T *py = y.as<T>();
    forEachTuple(kernel, g, indices, [&](int64_t t, int64_t offset) {
      const T *src = pu + t * g.slice;
      T *dst = py + offset;
      for (int64_t s = 0; s < g.slice; ++s)
        dst[s] = scatterCombine(reduction, dst[s], src[s]);
    });
  });
}

} // namespace remat::rt
