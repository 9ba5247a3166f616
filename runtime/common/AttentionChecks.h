//===- AttentionChecks.h - Fused attention operand checks --------*- C++ -*-===//
//
// The operand checks of attention and attentionBackward, shared by both
// backends so that they accept the same arguments with the same messages;
// they return the extents the kernels iterate.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_COMMON_ATTENTIONCHECKS_H
#define REMAT_RUNTIME_COMMON_ATTENTIONCHECKS_H

#include "remat/runtime/Tensor.h"

#include <cstdint>

namespace remat::rt::common {

/// q [batch, queryHeads, querySeq, headDim], k [batch, keyValueHeads,
/// keySeq, headDim], v [batch, keyValueHeads, keySeq, valueDim].
struct AttentionDims {
  int64_t batch, queryHeads, keyValueHeads, querySeq, keySeq, headDim,
      valueDim;
  /// Query heads that share one key/value head.
  int64_t groupSize() const { return queryHeads / keyValueHeads; }
  Shape output() const { return {batch, queryHeads, querySeq, valueDim}; }
  Shape logsumexp() const { return {batch, queryHeads, querySeq}; }
  Shape scores() const { return {batch, queryHeads, querySeq, keySeq}; }
};

/// The dtype of the logsumexp statistics: at least F32.
DType attentionStatisticsDType(DType input);

/// attention: q, k, v of one float dtype with the shapes above, Hq a
/// multiple of Hkv, an optional mask of q's dtype that broadcasts to the
/// scores, out [B, Hq, Sq, Dv], an optional logsumexp [B, Hq, Sq], a finite
/// non-zero scale and a dropout ratio in [0, 1).
AttentionDims checkAttention(const char *kernel, const TensorView &q,
                             const TensorView &k, const TensorView &v,
                             const TensorView &mask, const TensorView &out,
                             const TensorView &logsumexp, double scale,
                             double dropoutRatio);

/// attentionBackward: the forward's operands (logsumexp required), dout
/// like out, and dq, dk, dv (each optional) like q, k, v.
AttentionDims checkAttentionBackward(
    const char *kernel, const TensorView &q, const TensorView &k,
    const TensorView &v, const TensorView &mask, const TensorView &out,
    const TensorView &logsumexp, const TensorView &dout, const TensorView &dq,
    const TensorView &dk, const TensorView &dv, double scale,
    double dropoutRatio);

} // namespace remat::rt::common

#endif // REMAT_RUNTIME_COMMON_ATTENTIONCHECKS_H
