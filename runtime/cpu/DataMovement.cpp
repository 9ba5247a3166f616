//===- DataMovement.cpp - Transpose, concat, ..., expand, pad, trilu ------===//
//
// All of these move whole elements without looking at them, so they dispatch
// on the element size only and work for every dtype.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/Kernels.h"

#include "DTypeDispatch.h"
#include "Scratch.h"
#include "common/DataMovementChecks.h"
#include "common/StridedLoop.h"

#include <algorithm>
#include <cstring>

namespace remat::rt {
using namespace cpu;

namespace {

/// y (contiguous, y.shape) = x read at `base + sum(i_d * xStrides[d])`.
void stridedCopy(const char *kernel, const TensorView &x, int64_t base,
                 const Strides &xStrides, const TensorView &y) {
  dispatchBySize(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *px = x.as<const T>() + base;
    T *py = y.as<T>();
    std::array<Strides, 2> strides = {xStrides, contiguousStrides(y.shape)};
    forEachRun<2>(y.shape, strides,
                  [&](const std::array<int64_t, 2> &off,
                      const std::array<int64_t, 2> &st, int64_t n) {
                    const T *src = px + off[0];
                    T *dst = py + off[1];
                    if (st[0] == 1)
                      std::memcpy(dst, src, n * sizeof(T));
                    else if (st[0] == 0)
                      std::fill(dst, dst + n, *src);
                    else
                      for (int64_t i = 0; i < n; ++i)
                        dst[i] = src[i * st[0]];
                  });
  });
}

/// Bytes per (outer index) block of `shape` from `axis` on.
struct AxisBlocks {
  int64_t outer = 1;       // product of dims before axis
  size_t innerBytes = 0;   // bytes of one index along axis
};
AxisBlocks axisBlocks(const TensorView &t, int64_t axis) {
  AxisBlocks b;
  int64_t inner = 1;
  for (int64_t d = 0; d < t.rank(); ++d) {
    if (d < axis)
      b.outer *= t.shape[d];
    else if (d > axis)
      inner *= t.shape[d];
  }
  b.innerBytes = static_cast<size_t>(inner) * dtypeSize(t.dtype);
  return b;
}

/// Concat (toWhole) or split (!toWhole): moves each part's block per outer
/// index into / out of the whole tensor.
void concatOrSplit(const char *kernel, TensorViewList parts,
                   const TensorView &whole, int64_t axis, bool toWhole) {
  checkConcatOrSplit(kernel, parts, whole, axis);
  const AxisBlocks wb = axisBlocks(whole, axis);
  const size_t wholeRow = wb.innerBytes * whole.shape[axis];
  char *base = static_cast<char *>(whole.data);
  size_t column = 0;
  for (const TensorView &p : parts) {
    const size_t partRow = wb.innerBytes * p.shape[axis];
    char *partData = static_cast<char *>(p.data);
    if (partRow != 0)
      for (int64_t o = 0; o < wb.outer; ++o) {
        char *w = base + o * wholeRow + column;
        char *q = partData + o * partRow;
        toWhole ? std::memcpy(w, q, partRow) : std::memcpy(q, w, partRow);
      }
    column += partRow;
  }
}

/// Writes the indices, negative ones counted from the end, into `out`.
template <typename I>
void normalizedIndices(const TensorView &indices, int64_t axisSize,
                       int64_t *out) {
  const I *p = indices.as<const I>();
  for (int64_t i = 0, n = indices.numel(); i < n; ++i) {
    int64_t v = static_cast<int64_t>(p[i]);
    if (v < -axisSize || v >= axisSize)
      fail("gather", "index " + std::to_string(v) +
                         " out of range for axis of size " +
                         std::to_string(axisSize));
    out[i] = v < 0 ? v + axisSize : v;
  }
}

} // namespace

void transpose(const TensorView &x, const TensorView &y,
               const Dims &perm) {
  const char *kernel = "transpose";
  const Strides strides = transposeStrides(kernel, x, y, perm);
  stridedCopy(kernel, x, 0, strides, y);
}

void concat(TensorViewList inputs, const TensorView &y,
            int64_t axis) {
  concatOrSplit("concat", inputs, y, axis, true);
}

void split(const TensorView &x, TensorViewList outputs,
           int64_t axis) {
  concatOrSplit("split", outputs, x, axis, false);
}

void slice(const TensorView &x, const TensorView &y,
           const Dims &starts,
           const Dims &steps) {
  const char *kernel = "slice";
  requireDType(y, x.dtype, kernel, "output");
  int64_t base = 0;
  const Strides strides = sliceStrides(
      kernel, x.shape, y.shape, starts, steps, "reads",
      "starts, steps, input and output need one entry per dim", base);
  if (y.numel() == 0)
    return;
  stridedCopy(kernel, x, base, strides, y);
}

void gather(const TensorView &x, const TensorView &indices,
            const TensorView &y, int64_t axis) {
  const char *kernel = "gather";
  requireDType(y, x.dtype, kernel, "output");
  require(axis >= 0 && axis < x.rank(), kernel, "axis out of range");
  require(y.rank() == x.rank() - 1 + indices.rank(), kernel,
          "output rank must be rank(x) - 1 + rank(indices)");
  const int64_t axisSize = x.shape[axis];
  Scratch scratch(kernel, gatherScratchBytes(indices));
  const int64_t count = indices.numel();
  int64_t *idx = scratch.take<int64_t>(count);
  dispatchIndex(indices.dtype, kernel, [&](auto tag) {
    normalizedIndices<typename decltype(tag)::type>(indices, axisSize, idx);
  });
  const AxisBlocks xb = axisBlocks(x, axis);
  requireNumel(y, xb.outer * count *
                      static_cast<int64_t>(xb.innerBytes / dtypeSize(x.dtype)),
               kernel, "output");
  const char *src = static_cast<const char *>(x.data);
  char *dst = static_cast<char *>(y.data);
  const size_t block = xb.innerBytes;
  if (block == 0)
    return;
  for (int64_t o = 0; o < xb.outer; ++o) {
    const char *row = src + o * axisSize * block;
    for (int64_t k = 0; k < count; ++k) {
      std::memcpy(dst, row + idx[k] * block, block);
      dst += block;
    }
  }
}

void expand(const TensorView &x, const TensorView &y) {
  requireDType(y, x.dtype, "expand", "output");
  stridedCopy("expand", x, 0, broadcastStrides(x.shape, y.shape, "expand"), y);
}

void gatherElements(const TensorView &x, const TensorView &indices,
                    const TensorView &y, int64_t axis) {
  const char *kernel = "gatherElements";
  const GatherElementsGeometry g =
      gatherElementsGeometry(kernel, x, indices, y, axis);
  dispatchIndex(indices.dtype, kernel, [&](auto indexTag) {
    using I = typename decltype(indexTag)::type;
    const I *idx = indices.as<const I>();
    dispatchBySize(x.dtype, kernel, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T *px = x.as<const T>();
      T *py = y.as<T>();
      for (int64_t p = 0, n = y.numel(); p < n; ++p) {
        const int64_t v = static_cast<int64_t>(idx[p]);
        const int64_t c = gatherElementsCoordinate(v, g.axisSize);
        if (c < 0)
          fail(kernel, "index " + std::to_string(v) +
                           " out of range for axis of size " +
                           std::to_string(g.axisSize));
        py[p] = px[g.dataBase(p) + c * g.dataStride[axis]];
      }
    });
  });
}

void pad(const TensorView &x, const TensorView &y, const Dims &begins,
         PadMode mode, double value) {
  const char *kernel = "pad";
  requireDType(y, x.dtype, kernel, "output");
  const PadGeometry g = padGeometry(kernel, x.shape, y.shape, begins, mode);
  // The constant's bytes, converted as fill() converts.
  uint64_t constant = 0;
  fill(TensorView(y.dtype, Shape{}, &constant), value);
  dispatchBySize(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T fillValue;
    std::memcpy(&fillValue, &constant, sizeof(T));
    const T *px = x.as<const T>();
    T *py = y.as<T>();
    for (int64_t o = 0, n = y.numel(); o < n; ++o) {
      const int64_t at = padReadOffset(g, o);
      py[o] = at < 0 ? fillValue : px[at];
    }
  });
}

void trilu(const TensorView &x, const TensorView &y, bool upper, int64_t k) {
  const char *kernel = "trilu";
  const AxisExtents e = checkTrilu(kernel, x, y);
  dispatchBySize(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *px = x.as<const T>();
    T *py = y.as<T>();
    for (int64_t m = 0; m < e.outer; ++m)
      for (int64_t i = 0; i < e.size; ++i)
        for (int64_t j = 0; j < e.inner; ++j, ++px, ++py)
          *py = triluKeeps(i, j, upper, k) ? *px : T{0};
  });
}

} // namespace remat::rt
