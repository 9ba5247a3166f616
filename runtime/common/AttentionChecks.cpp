//===- AttentionChecks.cpp - Fused attention operand checks ---------------===//

#include "common/AttentionChecks.h"

#include "common/Check.h"
#include "common/Strides.h"

#include <cmath>

namespace remat::rt::common {

DType attentionStatisticsDType(DType input) {
  return input == DType::F16 || input == DType::BF16 ? DType::F32 : input;
}

namespace {

AttentionDims checkInputs(const char *kernel, const TensorView &q,
                          const TensorView &k, const TensorView &v,
                          const TensorView &mask, double scale,
                          double dropoutRatio) {
  require(q.rank() == 4 && k.rank() == 4 && v.rank() == 4, kernel,
          "query, key and value must be [batch, heads, seq, dim] (rank 4)");
  requireDType(k, q.dtype, kernel, "key");
  requireDType(v, q.dtype, kernel, "value");
  const AttentionDims d{q.shape[0], q.shape[1], k.shape[1], q.shape[2],
                        k.shape[2], q.shape[3], v.shape[3]};
  requireShape(k, {d.batch, d.keyValueHeads, d.keySeq, d.headDim}, kernel,
               "key");
  requireShape(v, {d.batch, d.keyValueHeads, d.keySeq, d.valueDim}, kernel,
               "value");
  if (d.keyValueHeads <= 0 || d.queryHeads % d.keyValueHeads != 0)
    fail(kernel, "query heads (" + std::to_string(d.queryHeads) +
                     ") must be a multiple of key/value heads (" +
                     std::to_string(d.keyValueHeads) + ")");
  if (!mask.empty()) {
    requireDType(mask, q.dtype, kernel, "mask");
    broadcastStrides(mask.shape, d.scores(), kernel); // throws if it cannot
  }
  require(std::isfinite(scale) && scale != 0, kernel,
          "scale must be finite and non-zero");
  require(dropoutRatio >= 0 && dropoutRatio < 1, kernel,
          "dropout ratio must be in [0, 1)");
  return d;
}

void requireStatistics(const char *kernel, const TensorView &logsumexp,
                       const TensorView &q, const AttentionDims &d) {
  requireDType(logsumexp, attentionStatisticsDType(q.dtype), kernel,
               "logsumexp");
  requireShape(logsumexp, d.logsumexp(), kernel, "logsumexp");
}

void requireOptionalLike(const char *kernel, const TensorView &t,
                         const TensorView &like, const char *what) {
  if (t.empty())
    return;
  requireDType(t, like.dtype, kernel, what);
  requireShape(t, like.shape, kernel, what);
}

} // namespace

AttentionDims checkAttention(const char *kernel, const TensorView &q,
                             const TensorView &k, const TensorView &v,
                             const TensorView &mask, const TensorView &out,
                             const TensorView &logsumexp, double scale,
                             double dropoutRatio) {
  const AttentionDims d = checkInputs(kernel, q, k, v, mask, scale,
                                      dropoutRatio);
  requireDType(out, q.dtype, kernel, "output");
  requireShape(out, d.output(), kernel, "output");
  if (!logsumexp.empty())
    requireStatistics(kernel, logsumexp, q, d);
  return d;
}

AttentionDims checkAttentionBackward(
    const char *kernel, const TensorView &q, const TensorView &k,
    const TensorView &v, const TensorView &mask, const TensorView &out,
    const TensorView &logsumexp, const TensorView &dout, const TensorView &dq,
    const TensorView &dk, const TensorView &dv, double scale,
    double dropoutRatio) {
  const AttentionDims d = checkInputs(kernel, q, k, v, mask, scale,
                                      dropoutRatio);
  requireDType(out, q.dtype, kernel, "output");
  requireShape(out, d.output(), kernel, "output");
  requireLike(kernel, out, dout, "output gradient");
  require(!logsumexp.empty(), kernel, "logsumexp is required");
  requireStatistics(kernel, logsumexp, q, d);
  requireOptionalLike(kernel, dq, q, "query gradient");
  requireOptionalLike(kernel, dk, k, "key gradient");
  requireOptionalLike(kernel, dv, v, "value gradient");
  return d;
}

} // namespace remat::rt::common
