//===- IndexingChecks.cpp - GatherND, ScatterND and Resize checks ---------===//

#include "common/IndexingChecks.h"

#include "common/Check.h"
#include "common/Strides.h"

#include <cmath>
#include <string>

namespace remat::rt::common {

namespace {

std::string dims(const Shape &shape, size_t from, size_t to) {
  Shape part(shape.begin() + from, shape.begin() + to);
  return shapeToString(part);
}

/// The geometry of index tuples over data's dims after `batchDims`, with
/// `gathered` (named `what` in messages) the [batch..., tuples...,
/// slice...] operand.
GatherNDGeometry tupleGeometry(const char *kernel, const TensorView &data,
                               const TensorView &indices,
                               const TensorView &gathered, int64_t batchDims,
                               const char *what) {
  if (indices.dtype != DType::I64 && indices.dtype != DType::I32)
    unsupportedDType(kernel, indices.dtype);
  const int64_t r = data.rank(), q = indices.rank();
  require(q >= 1, kernel, "indices must have rank >= 1");
  if (batchDims < 0 || batchDims >= q || batchDims >= r)
    fail(kernel, "batch_dims " + std::to_string(batchDims) +
                     " must be below the ranks of data (" +
                     std::to_string(r) + ") and indices (" +
                     std::to_string(q) + ")");
  const int64_t depth = indices.shape[q - 1];
  if (depth < 1 || depth > r - batchDims)
    fail(kernel, "index tuples of " + std::to_string(depth) +
                     " coordinates do not fit data " +
                     shapeToString(data.shape) + " after " +
                     std::to_string(batchDims) + " batch dims");
  for (int64_t d = 0; d < batchDims; ++d)
    if (data.shape[d] != indices.shape[d])
      fail(kernel, "batch dims of data " + dims(data.shape, 0, batchDims) +
                       " and indices " + dims(indices.shape, 0, batchDims) +
                       " differ");
  Shape expected(indices.shape.begin(), indices.shape.end() - 1);
  expected.insert(expected.end(), data.shape.begin() + batchDims + depth,
                  data.shape.end());
  requireShape(gathered, expected, kernel, what);
  requireDType(gathered, data.dtype, kernel, what);

  GatherNDGeometry g;
  const Strides strides = contiguousStrides(data.shape);
  g.depth = static_cast<int>(depth);
  for (int64_t d = 0; d < batchDims; ++d)
    g.batch *= data.shape[d];
  g.batchStride = batchDims < r ? strides[batchDims] * data.shape[batchDims]
                                : 1;
  g.tuples = 1;
  for (int64_t d = batchDims; d < q - 1; ++d)
    g.tuples *= indices.shape[d];
  for (int64_t d = batchDims + depth; d < r; ++d)
    g.slice *= data.shape[d];
  for (int j = 0; j < g.depth; ++j) {
    g.dimSize[j] = data.shape[batchDims + j];
    g.dimStride[j] = strides[batchDims + j];
  }
  return g;
}

} // namespace

GatherNDGeometry gatherNDGeometry(const char *kernel, const TensorView &data,
                                  const TensorView &indices,
                                  const TensorView &gathered,
                                  int64_t batchDims) {
  return tupleGeometry(kernel, data, indices, gathered, batchDims,
                       "gathered tensor");
}

GatherNDGeometry scatterNDGeometry(const char *kernel, const TensorView &data,
                                   const TensorView &indices,
                                   const TensorView &updates,
                                   const TensorView &y) {
  requireDType(y, data.dtype, kernel, "output");
  requireShape(y, data.shape, kernel, "output");
  return tupleGeometry(kernel, data, indices, updates, 0, "updates");
}

ResizeGeometry resizeGeometry(const char *kernel, const Shape &in,
                              const Shape &out, const ResizeParams &params) {
  const size_t rank = in.size();
  if (out.size() != rank || params.scales.size() != rank)
    fail(kernel, "input " + shapeToString(in) + ", output " +
                     shapeToString(out) + " and " +
                     std::to_string(params.scales.size()) +
                     " scales need one entry per dim");
  ResizeGeometry g;
  g.rank = static_cast<int>(rank);
  g.mode = params.mode;
  g.coordinates = params.coordinates;
  g.nearest = params.nearest;
  g.cubicCoeffA = params.cubicCoeffA;
  g.excludeOutside = params.excludeOutside;
  const Strides is = contiguousStrides(in), os = contiguousStrides(out);
  for (size_t d = 0; d < rank; ++d) {
    const double scale = params.scales[d];
    if (!(scale > 0) || !std::isfinite(scale))
      fail(kernel, "dim " + std::to_string(d) + " has scale " +
                       std::to_string(scale) + "; scales must be positive");
    if (in[d] == 0 && out[d] > 0)
      fail(kernel, "dim " + std::to_string(d) +
                       " resizes an empty input to " + std::to_string(out[d]));
    g.in[d] = in[d];
    g.out[d] = out[d];
    g.scale[d] = scale;
    // As ONNX's reference: a dim of unchanged size at scale 1 (within
    // rounding) is copied, whatever the coordinate mode.
    g.copied[d] = in[d] == out[d] && std::fabs(scale - 1.0) <= 1e-9;
    g.inStride[d] = is[d];
    g.outStride[d] = os[d];
  }
  return g;
}

} // namespace remat::rt::common
