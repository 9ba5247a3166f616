//===- DataMovementChecks.cpp - Data movement checks and strides ----------===//

#include "common/DataMovementChecks.h"

#include <string>

namespace remat::rt::common {

Strides transposeStrides(const char *kernel, const TensorView &x,
                         const TensorView &y,
                         const Dims &perm) {
  requireDType(y, x.dtype, kernel, "output");
  require(static_cast<int64_t>(perm.size()) == x.rank() &&
              y.rank() == x.rank(),
          kernel, "perm, input and output ranks differ");
  const Strides xs = contiguousStrides(x.shape);
  Strides strides(perm.size());
  InlineVector<bool, kMaxRank> seen(perm.size(), false);
  for (size_t i = 0; i < perm.size(); ++i) {
    require(perm[i] >= 0 && perm[i] < x.rank() && !seen[perm[i]], kernel,
            "perm is not a permutation");
    seen[perm[i]] = true;
    if (y.shape[i] != x.shape[perm[i]])
      fail(kernel, "output shape " + shapeToString(y.shape) +
                       " does not match the permuted input " +
                       shapeToString(x.shape));
    strides[i] = xs[perm[i]];
  }
  return strides;
}

Strides sliceStrides(const char *kernel, const Shape &whole, const Shape &part,
                     const Dims &starts,
                     const Dims &steps, const char *verb,
                     const char *what, int64_t &base) {
  const size_t rank = whole.size();
  require(starts.size() == rank && steps.size() == rank && part.size() == rank,
          kernel, what);
  const Strides ws = contiguousStrides(whole);
  Strides strides(rank);
  base = 0;
  for (size_t d = 0; d < rank; ++d) {
    require(steps[d] != 0, kernel, "step is zero");
    if (part[d] > 0) { // first and last element must be inside `whole`
      const int64_t last = starts[d] + (part[d] - 1) * steps[d];
      if (starts[d] < 0 || starts[d] >= whole[d] || last < 0 ||
          last >= whole[d])
        fail(kernel, "dim " + std::to_string(d) + " " + verb + " outside " +
                         shapeToString(whole));
    }
    base += starts[d] * ws[d];
    strides[d] = steps[d] * ws[d];
  }
  return strides;
}

namespace {

/// Checks that `part` matches `whole` in every dim but `axis`.
void requireSameExceptAxis(const char *kernel, const TensorView &part,
                           const TensorView &whole, int64_t axis) {
  requireDType(part, whole.dtype, kernel, "operand");
  bool ok = part.rank() == whole.rank();
  for (int64_t d = 0; ok && d < whole.rank(); ++d)
    ok = d == axis || part.shape[d] == whole.shape[d];
  if (!ok)
    fail(kernel, "operand shape " + shapeToString(part.shape) +
                     " is incompatible with " + shapeToString(whole.shape) +
                     " along axis " + std::to_string(axis));
}

} // namespace

void checkConcatOrSplit(const char *kernel,
                        TensorViewList parts,
                        const TensorView &whole, int64_t axis) {
  require(axis >= 0 && axis < whole.rank(), kernel, "axis out of range");
  int64_t total = 0;
  for (const TensorView &p : parts) {
    requireSameExceptAxis(kernel, p, whole, axis);
    total += p.shape[axis];
  }
  if (total != whole.shape[axis])
    fail(kernel, "sizes along axis add up to " + std::to_string(total) +
                     ", expected " + std::to_string(whole.shape[axis]));
}

AxisExtents checkGatherBackward(const char *kernel, const TensorView &dy,
                                const TensorView &indices,
                                const TensorView &dx, int64_t axis) {
  requireDType(dx, dy.dtype, kernel, "dx");
  require(axis >= 0 && axis < dx.rank(), kernel, "axis out of range");
  require(dy.rank() == dx.rank() - 1 + indices.rank(), kernel,
          "dy rank must be rank(dx) - 1 + rank(indices)");
  const AxisExtents e = axisExtents(dx.shape, axis);
  requireNumel(dy, e.outer * indices.numel() * e.inner, kernel, "dy");
  return e;
}

GatherElementsGeometry gatherElementsGeometry(const char *kernel,
                                              const TensorView &data,
                                              const TensorView &indices,
                                              const TensorView &out,
                                              int64_t axis) {
  requireDType(out, data.dtype, kernel, "gathered tensor");
  if (indices.dtype != DType::I64 && indices.dtype != DType::I32)
    unsupportedDType(kernel, indices.dtype);
  require(axis >= 0 && axis < data.rank(), kernel, "axis out of range");
  require(indices.rank() == data.rank(), kernel,
          "indices must have the data's rank");
  requireShape(out, indices.shape, kernel, "gathered tensor");
  for (int64_t d = 0; d < data.rank(); ++d)
    if (d != axis && indices.shape[d] > data.shape[d])
      fail(kernel, "indices " + shapeToString(indices.shape) +
                       " exceed the data " + shapeToString(data.shape) +
                       " along dim " + std::to_string(d));
  GatherElementsGeometry g;
  g.rank = static_cast<int>(data.rank());
  g.axis = static_cast<int>(axis);
  g.axisSize = data.shape[axis];
  const Strides is = contiguousStrides(indices.shape);
  const Strides ds = contiguousStrides(data.shape);
  for (int d = 0; d < g.rank; ++d) {
    g.index[d] = indices.shape[d];
    g.indexStride[d] = is[d];
    g.dataStride[d] = ds[d];
  }
  return g;
}

AxisExtents checkTrilu(const char *kernel, const TensorView &x,
                       const TensorView &y) {
  requireDType(y, x.dtype, kernel, "output");
  requireShape(y, x.shape, kernel, "output");
  require(x.rank() >= 2, kernel, "input must have rank >= 2");
  AxisExtents e;
  e.size = x.shape[x.rank() - 2];
  e.inner = x.shape[x.rank() - 1];
  e.outer = e.size * e.inner == 0 ? 0 : x.numel() / (e.size * e.inner);
  return e;
}

PadGeometry padGeometry(const char *kernel, const Shape &in, const Shape &out,
                        const Dims &begins, PadMode mode) {
  require(in.size() == out.size() && begins.size() == in.size(), kernel,
          "begins, input and output need one entry per dim");
  PadGeometry g;
  g.rank = static_cast<int>(in.size());
  g.mode = mode;
  const Strides is = contiguousStrides(in), os = contiguousStrides(out);
  for (int d = 0; d < g.rank; ++d) {
    const int64_t begin = begins[d], end = out[d] - in[d] - begin;
    PadDim &p = g.dim[d];
    p.in = in[d];
    p.out = out[d];
    p.crop = begin < 0 ? -begin : 0;
    p.kept = in[d] - p.crop - (end < 0 ? -end : 0);
    p.before = begin > 0 ? begin : 0;
    if (p.kept < 0)
      fail(kernel, "dim " + std::to_string(d) + " pads " +
                       std::to_string(begin) + " and " + std::to_string(end) +
                       " crop more than its " + std::to_string(in[d]) +
                       " elements");
    if (mode != PadMode::Constant && p.kept == 0 && p.out > 0)
      fail(kernel, "dim " + std::to_string(d) +
                       " has no element left to read for non-constant pads");
    g.inStride[d] = is[d];
    g.outStride[d] = os[d];
  }
  return g;
}

} // namespace remat::rt::common
