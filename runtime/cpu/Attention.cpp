//===- Attention.cpp - Fused scaled dot-product attention -----------------===//
//
// FlashAttention-2 (Dao, 2023) on the CPU: the Sq x Sk scores are never
// materialised. The forward walks, per (batch, head, block of query rows),
// the blocks of keys with an online softmax (a running maximum and sum per
// row), and keeps of the probabilities only each row's log-sum-exp. The
// backward recomputes each tile's probabilities from it.
//
// Everything is computed in double from tiles converted on load (F16, BF16,
// F32 and F64 inputs alike), so results stay close to a float64 reference,
// in a fixed order: results are bitwise reproducible. Outputs are rounded
// once to the inputs' dtype; the logsumexp is F32 for 16-bit inputs. The tile products are
// GEMMs (Gemm.h), reproducible as the matmul kernel's are: the same BLAS
// calls in the same order give the same bits.
//
// Scratch (tiles and the backward's key/value gradient accumulators) comes
// from the workspace; attentionScratchBytes and
// attentionBackwardScratchBytes are defined here, next to the buffers they
// count, because both depend on the tile sizes.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/Kernels.h"
#include "remat/runtime/Philox.h"

#include "DTypeDispatch.h"
#include "Gemm.h"
#include "Scratch.h"
#include "common/AttentionChecks.h"
#include "common/Strides.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

namespace remat::rt {
using namespace cpu;

namespace {

using Acc = double;
constexpr Acc kMinusInf = -std::numeric_limits<Acc>::infinity();

/// Query rows and keys per tile: a tile's buffers (a few of 64 x 64
/// doubles) stay in the L2 cache, and the tile GEMMs are large enough for
/// BLAS to run at speed.
constexpr int64_t kBlockRows = 64;
constexpr int64_t kBlockCols = 64;

/// The tile extents of one call: no larger than the sequences, so short
/// sequences take little scratch.
struct Tiles {
  int64_t rows, cols;
};

Tiles tilesFor(int64_t querySeq, int64_t keySeq) {
  return {std::min(querySeq, kBlockRows), std::min(keySeq, kBlockCols)};
}

/// The additive mask broadcast to [B, Hq, Sq, Sk], read through strides.
template <typename T> struct MaskReader {
  const T *data = nullptr;
  Strides strides;

  /// Offset of (b, h, 0, 0); add row * strides[2] + col * strides[3].
  int64_t base(int64_t b, int64_t h) const {
    return data ? b * strides[0] + h * strides[1] : 0;
  }
};

template <typename T>
MaskReader<T> maskReader(const TensorView &mask, const AttentionDims &d,
                         const char *kernel) {
  MaskReader<T> reader;
  if (mask.empty())
    return reader;
  reader.data = mask.as<const T>();
  reader.strides = broadcastStrides(mask.shape, d.scores(), kernel);
  return reader;
}

/// Where the dropout keep decisions of one (batch, head) come from: element
/// (b, h, i, j) is element ((b * Hq + h) * Sq + i) * Sk + j of the dropout
/// kernel's stream (Dropout.cpp), so a reference dropout of the
/// materialised probabilities draws the same mask.
struct DropoutStream {
  bool active = false;
  PhiloxKey key{};
  uint64_t step = 0, threshold = 0;
  Acc keptScale = 1; // 1 / (1 - ratio)

  /// keep[c] for the `count` consecutive elements from `first`.
  void keeps(uint64_t first, int64_t count, uint8_t *keep) const {
    int64_t c = 0;
    while (c < count) {
      const PhiloxCounter bits = dropoutBits(key, first / 4, step);
      for (int w = static_cast<int>(first % 4); w < 4 && c < count;
           ++w, ++c, ++first)
        keep[c] = dropoutKeeps(bits[w], threshold);
    }
  }
};

DropoutStream dropoutStream(double ratio, uint64_t seed, uint64_t streamId,
                            uint64_t step) {
  DropoutStream s;
  if (ratio == 0)
    return s;
  s.active = true;
  s.key = dropoutKey(seed, streamId);
  s.step = step;
  s.threshold = dropoutThreshold(1.0 - ratio);
  s.keptScale = 1.0 / (1.0 - ratio);
  return s;
}

/// The keep decisions of a rows x cols tile at (row0, col0) of head
/// (b, h), row-major.
void dropoutTile(const DropoutStream &dropout, const AttentionDims &d,
                 int64_t b, int64_t h, int64_t row0, int64_t col0,
                 int64_t rows, int64_t cols, uint8_t *keep) {
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t first =
        ((b * d.queryHeads + h) * d.querySeq + row0 + r) * d.keySeq + col0;
    dropout.keeps(static_cast<uint64_t>(first), cols, keep + r * cols);
  }
}

/// `count` elements converted to the compute type.
template <typename T> void load(const T *src, int64_t count, Acc *dst) {
  for (int64_t i = 0; i < count; ++i)
    dst[i] = static_cast<Acc>(toCompute(src[i]));
}

/// The logsumexp's storage type for inputs of type T: F32 for 16-bit
/// inputs (attentionStatisticsDType), else T.
template <typename T>
using StatisticsType = std::conditional_t<kIsHalfStorage<T>, float, T>;

/// The positions of one tile: query rows [row0, row0 + rows) against keys
/// [col0, col0 + cols).
struct TileSpan {
  int64_t row0, rows, col0, cols;
};

/// s = scale * q . k^T + mask, with -inf where causal hides key j from
/// query i: q [rows, dim] and k [cols, dim] tiles, s [rows, cols].
template <typename T>
void scoreTile(const Acc *q, const Acc *k, int64_t dim, const TileSpan &t,
               Acc scale, const MaskReader<T> &mask, int64_t maskBase,
               bool causal, Acc *s) {
  gemm(false, true, t.rows, t.cols, dim, q, k, s);
  for (int64_t r = 0; r < t.rows; ++r) {
    Acc *sr = s + r * t.cols;
    for (int64_t c = 0; c < t.cols; ++c)
      sr[c] *= scale;
    if (mask.data) {
      const T *mr = mask.data + maskBase + (t.row0 + r) * mask.strides[2] +
                    t.col0 * mask.strides[3];
      for (int64_t c = 0; c < t.cols; ++c)
        sr[c] += static_cast<Acc>(toCompute(mr[c * mask.strides[3]]));
    }
    if (causal)
      // Key col0 + c is hidden from query row0 + r when it is later.
      for (int64_t c = std::max<int64_t>(0, t.row0 + r + 1 - t.col0);
           c < t.cols; ++c)
        sr[c] = kMinusInf;
  }
}

/// The keys query rows [row0, row0 + rows) may see: causal hides those
/// after the last row, so later key blocks are skipped outright.
int64_t visibleKeys(const AttentionDims &d, bool causal, int64_t row0,
                    int64_t rows) {
  return causal ? std::min(d.keySeq, row0 + rows) : d.keySeq;
}

//===----------------------------------------------------------------------===//
// Forward
//===----------------------------------------------------------------------===//

/// The forward's tiles: q [rows, D], k [cols, D], v [cols, Dv], scores s
/// and keep decisions [rows, cols], the output accumulator o [rows, Dv] and
/// each row's running maximum and sum.
struct ForwardBuffers {
  Acc *q, *k, *v, *s, *o, *rowMax, *rowSum;
  uint8_t *keep;

  /// The scratch bytes of the buffers the constructor takes.
  static size_t bytes(const AttentionDims &d, const Tiles &t) {
    return scratchPiece<Acc>(t.rows * d.headDim) +
           scratchPiece<Acc>(t.cols * d.headDim) +
           scratchPiece<Acc>(t.cols * d.valueDim) +
           scratchPiece<Acc>(t.rows * t.cols) +
           scratchPiece<Acc>(t.rows * d.valueDim) +
           2 * scratchPiece<Acc>(t.rows) +
           scratchPiece<uint8_t>(t.rows * t.cols);
  }

  ForwardBuffers(Scratch &scratch, const AttentionDims &d, const Tiles &t)
      : q(scratch.take<Acc>(t.rows * d.headDim)),
        k(scratch.take<Acc>(t.cols * d.headDim)),
        v(scratch.take<Acc>(t.cols * d.valueDim)),
        s(scratch.take<Acc>(t.rows * t.cols)),
        o(scratch.take<Acc>(t.rows * d.valueDim)),
        rowMax(scratch.take<Acc>(t.rows)), rowSum(scratch.take<Acc>(t.rows)),
        keep(scratch.take<uint8_t>(t.rows * t.cols)) {}
};

/// Folds one tile of scores (in buf.s) into the running softmax of its
/// rows: rescales what was accumulated to the new row maximum, then adds
/// the tile's probabilities (dropped, if dropout) times the value rows.
void onlineSoftmaxStep(ForwardBuffers &buf, const TileSpan &t, int64_t Dv,
                       const DropoutStream &dropout) {
  for (int64_t r = 0; r < t.rows; ++r) {
    Acc *sr = buf.s + r * t.cols;
    Acc tileMax = kMinusInf;
    for (int64_t c = 0; c < t.cols; ++c)
      tileMax = std::max(tileMax, sr[c]);
    const Acc oldMax = buf.rowMax[r];
    const Acc newMax = std::max(oldMax, tileMax);
    if (newMax == kMinusInf) { // every key so far hidden: nothing to add
      std::fill(sr, sr + t.cols, Acc(0));
      continue;
    }
    // exp(-inf) = 0 drops the (empty) accumulator of a first visible tile.
    const Acc rescale = std::exp(oldMax - newMax);
    Acc sum = 0;
    for (int64_t c = 0; c < t.cols; ++c) {
      sr[c] = std::exp(sr[c] - newMax);
      sum += sr[c];
    }
    buf.rowMax[r] = newMax;
    // The softmax denominator counts every probability, dropped or not.
    buf.rowSum[r] = buf.rowSum[r] * rescale + sum;
    Acc *orow = buf.o + r * Dv;
    for (int64_t e = 0; e < Dv; ++e)
      orow[e] *= rescale;
    if (dropout.active) {
      const uint8_t *keep = buf.keep + r * t.cols;
      for (int64_t c = 0; c < t.cols; ++c)
        sr[c] = keep[c] ? sr[c] * dropout.keptScale : Acc(0);
    }
  }
  // o += p . v
  gemm(false, false, t.rows, Dv, t.cols, buf.s, buf.v, buf.o, Acc(1));
}

template <typename T>
void attentionImpl(const AttentionDims &d, const TensorView &q,
                   const TensorView &k, const TensorView &v,
                   const TensorView &mask, const TensorView &out,
                   const TensorView &logsumexp, Acc scale, bool causal,
                   const DropoutStream &dropout, Scratch &scratch,
                   const char *kernel) {
  const int64_t D = d.headDim, Dv = d.valueDim;
  ForwardBuffers buf(scratch, d, tilesFor(d.querySeq, d.keySeq));
  const MaskReader<T> maskRead = maskReader<T>(mask, d, kernel);
  using Stat = StatisticsType<T>;
  Stat *lse = logsumexp.empty() ? nullptr : logsumexp.as<Stat>();
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t h = 0; h < d.queryHeads; ++h) {
      const int64_t g = h / d.groupSize();
      const int64_t row = (b * d.queryHeads + h) * d.querySeq;
      const T *qh = q.as<const T>() + row * D;
      const T *kh = k.as<const T>() + (b * d.keyValueHeads + g) * d.keySeq * D;
      const T *vh =
          v.as<const T>() + (b * d.keyValueHeads + g) * d.keySeq * Dv;
      T *oh = out.as<T>() + row * Dv;
      const int64_t maskBase = maskRead.base(b, h);
      for (int64_t row0 = 0; row0 < d.querySeq; row0 += kBlockRows) {
        const int64_t rows = std::min(kBlockRows, d.querySeq - row0);
        load(qh + row0 * D, rows * D, buf.q);
        std::fill(buf.o, buf.o + rows * Dv, Acc(0));
        std::fill(buf.rowMax, buf.rowMax + rows, kMinusInf);
        std::fill(buf.rowSum, buf.rowSum + rows, Acc(0));
        const int64_t keys = visibleKeys(d, causal, row0, rows);
        for (int64_t col0 = 0; col0 < keys; col0 += kBlockCols) {
          const TileSpan t{row0, rows, col0,
                           std::min(kBlockCols, d.keySeq - col0)};
          load(kh + col0 * D, t.cols * D, buf.k);
          load(vh + col0 * Dv, t.cols * Dv, buf.v);
          scoreTile(buf.q, buf.k, D, t, scale, maskRead, maskBase, causal,
                    buf.s);
          if (dropout.active)
            dropoutTile(dropout, d, b, h, row0, col0, rows, t.cols, buf.keep);
          onlineSoftmaxStep(buf, t, Dv, dropout);
        }
        for (int64_t r = 0; r < rows; ++r) {
          // A row with no visible key has sum 0: output 0, logsumexp -inf.
          const Acc sum = buf.rowSum[r];
          const Acc inv = sum > 0 ? 1 / sum : Acc(0);
          for (int64_t e = 0; e < Dv; ++e)
            oh[(row0 + r) * Dv + e] = fromDouble<T>(buf.o[r * Dv + e] * inv);
          if (lse)
            lse[row + row0 + r] = static_cast<Stat>(
                sum > 0 ? buf.rowMax[r] + std::log(sum) : kMinusInf);
        }
      }
    }
}

//===----------------------------------------------------------------------===//
// Backward
//===----------------------------------------------------------------------===//

/// The backward's tiles: q [rows, D], dout [rows, Dv], the row statistics
/// (logsumexp and D = rowsum(dout * out)), k [cols, D], v [cols, Dv],
/// probabilities p, their gradient dp and keep decisions [rows, cols], the
/// query gradient dq [rows, D]; then the key and value gradients of one
/// key/value head over the whole sequence (dk [Sk, D], dv [Sk, Dv]), summed
/// over the query heads of its group.
struct BackwardBuffers {
  Acc *q, *dout, *lse, *rowDot, *k, *v, *p, *dp, *dq, *dk, *dv;
  uint8_t *keep;

  static size_t bytes(const AttentionDims &d, const Tiles &t) {
    return scratchPiece<Acc>(t.rows * d.headDim) +
           scratchPiece<Acc>(t.rows * d.valueDim) +
           2 * scratchPiece<Acc>(t.rows) +
           scratchPiece<Acc>(t.cols * d.headDim) +
           scratchPiece<Acc>(t.cols * d.valueDim) +
           2 * scratchPiece<Acc>(t.rows * t.cols) +
           scratchPiece<Acc>(t.rows * d.headDim) +
           scratchPiece<Acc>(d.keySeq * d.headDim) +
           scratchPiece<Acc>(d.keySeq * d.valueDim) +
           scratchPiece<uint8_t>(t.rows * t.cols);
  }

  BackwardBuffers(Scratch &scratch, const AttentionDims &d, const Tiles &t)
      : q(scratch.take<Acc>(t.rows * d.headDim)),
        dout(scratch.take<Acc>(t.rows * d.valueDim)),
        lse(scratch.take<Acc>(t.rows)), rowDot(scratch.take<Acc>(t.rows)),
        k(scratch.take<Acc>(t.cols * d.headDim)),
        v(scratch.take<Acc>(t.cols * d.valueDim)),
        p(scratch.take<Acc>(t.rows * t.cols)),
        dp(scratch.take<Acc>(t.rows * t.cols)),
        dq(scratch.take<Acc>(t.rows * d.headDim)),
        dk(scratch.take<Acc>(d.keySeq * d.headDim)),
        dv(scratch.take<Acc>(d.keySeq * d.valueDim)),
        keep(scratch.take<uint8_t>(t.rows * t.cols)) {}
};

/// One tile's gradients, from its scores in buf.p: P = exp(S - logsumexp)
/// (0 for a row with no visible key), dP = dout . v^T, then
/// dv += P_dropped^T . dout, dS = scale * P * (dP_dropped - D),
/// dq += dS . k and dk += dS^T . q.
void gradientTile(BackwardBuffers &buf, const TileSpan &t, int64_t D,
                  int64_t Dv, Acc scale, const DropoutStream &dropout) {
  gemm(false, true, t.rows, t.cols, Dv, buf.dout, buf.v, buf.dp);
  for (int64_t r = 0; r < t.rows; ++r) {
    Acc *pr = buf.p + r * t.cols, *dpr = buf.dp + r * t.cols;
    const uint8_t *keep = buf.keep + r * t.cols;
    const Acc lse = buf.lse[r], rowDot = buf.rowDot[r];
    for (int64_t c = 0; c < t.cols; ++c) {
      const Acc p = lse == kMinusInf ? Acc(0) : std::exp(pr[c] - lse);
      // Dropout scales both the probability's use and its gradient.
      const Acc kept = dropout.active
                           ? (keep[c] ? dropout.keptScale : Acc(0))
                           : Acc(1);
      // A hidden key (p = 0) passes no gradient, even if dP is not finite.
      dpr[c] = p == 0 ? Acc(0) : scale * p * (dpr[c] * kept - rowDot);
      pr[c] = p * kept;
    }
  }
  Acc *dk = buf.dk + t.col0 * D, *dv = buf.dv + t.col0 * Dv;
  gemm(true, false, t.cols, Dv, t.rows, buf.p, buf.dout, dv, Acc(1));
  gemm(false, false, t.rows, D, t.cols, buf.dp, buf.k, buf.dq, Acc(1));
  gemm(true, false, t.cols, D, t.rows, buf.dp, buf.q, dk, Acc(1));
}

template <typename T>
void attentionBackwardImpl(const AttentionDims &d, const TensorView &q,
                           const TensorView &k, const TensorView &v,
                           const TensorView &mask, const TensorView &out,
                           const TensorView &logsumexp, const TensorView &dout,
                           const TensorView &dq, const TensorView &dk,
                           const TensorView &dv, Acc scale, bool causal,
                           const DropoutStream &dropout, Scratch &scratch,
                           const char *kernel) {
  const int64_t D = d.headDim, Dv = d.valueDim;
  BackwardBuffers buf(scratch, d, tilesFor(d.querySeq, d.keySeq));
  const MaskReader<T> maskRead = maskReader<T>(mask, d, kernel);
  const StatisticsType<T> *lse = logsumexp.as<const StatisticsType<T>>();
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t g = 0; g < d.keyValueHeads; ++g) {
      const int64_t kvRow = (b * d.keyValueHeads + g) * d.keySeq;
      const T *kg = k.as<const T>() + kvRow * D;
      const T *vg = v.as<const T>() + kvRow * Dv;
      std::fill(buf.dk, buf.dk + d.keySeq * D, Acc(0));
      std::fill(buf.dv, buf.dv + d.keySeq * Dv, Acc(0));
      // The query heads of the group, in order: their key and value
      // gradients sum in buf.dk and buf.dv.
      for (int64_t h = g * d.groupSize(); h < (g + 1) * d.groupSize(); ++h) {
        const int64_t row = (b * d.queryHeads + h) * d.querySeq;
        const T *qh = q.as<const T>() + row * D;
        const T *oh = out.as<const T>() + row * Dv;
        const T *gh = dout.as<const T>() + row * Dv;
        const int64_t maskBase = maskRead.base(b, h);
        for (int64_t row0 = 0; row0 < d.querySeq; row0 += kBlockRows) {
          const int64_t rows = std::min(kBlockRows, d.querySeq - row0);
          load(qh + row0 * D, rows * D, buf.q);
          load(gh + row0 * Dv, rows * Dv, buf.dout);
          for (int64_t r = 0; r < rows; ++r) {
            buf.lse[r] = static_cast<Acc>(lse[row + row0 + r]);
            Acc dot = 0;
            for (int64_t e = 0; e < Dv; ++e)
              dot += buf.dout[r * Dv + e] *
                     static_cast<Acc>(toCompute(oh[(row0 + r) * Dv + e]));
            buf.rowDot[r] = dot;
          }
          std::fill(buf.dq, buf.dq + rows * D, Acc(0));
          const int64_t keys = visibleKeys(d, causal, row0, rows);
          for (int64_t col0 = 0; col0 < keys; col0 += kBlockCols) {
            const TileSpan t{row0, rows, col0,
                             std::min(kBlockCols, d.keySeq - col0)};
            load(kg + col0 * D, t.cols * D, buf.k);
            load(vg + col0 * Dv, t.cols * Dv, buf.v);
            scoreTile(buf.q, buf.k, D, t, scale, maskRead, maskBase, causal,
                      buf.p);
            if (dropout.active)
              dropoutTile(dropout, d, b, h, row0, col0, rows, t.cols,
                          buf.keep);
            gradientTile(buf, t, D, Dv, scale, dropout);
          }
          if (!dq.empty()) {
            T *dqh = dq.as<T>() + (row + row0) * D;
            for (int64_t i = 0; i < rows * D; ++i)
              dqh[i] = fromDouble<T>(buf.dq[i]);
          }
        }
      }
      if (!dk.empty())
        for (int64_t i = 0; i < d.keySeq * D; ++i)
          dk.as<T>()[kvRow * D + i] = fromDouble<T>(buf.dk[i]);
      if (!dv.empty())
        for (int64_t i = 0; i < d.keySeq * Dv; ++i)
          dv.as<T>()[kvRow * Dv + i] = fromDouble<T>(buf.dv[i]);
    }
}

/// The extents of a call from its operands' shapes alone (the planner's
/// views have no data); false for malformed ranks, which the kernel
/// rejects before it takes scratch.
bool shapeDims(const TensorView &q, const TensorView &k, const TensorView &v,
               AttentionDims &d) {
  if (q.rank() != 4 || k.rank() != 4 || v.rank() != 4)
    return false;
  d = {q.shape[0], q.shape[1], k.shape[1], q.shape[2],
       k.shape[2], q.shape[3], v.shape[3]};
  return true;
}

} // namespace

size_t attentionScratchBytes(const TensorView &q, const TensorView &k,
                             const TensorView &v) {
  AttentionDims d;
  if (!shapeDims(q, k, v, d))
    return 0;
  return ForwardBuffers::bytes(d, tilesFor(d.querySeq, d.keySeq));
}

size_t attentionBackwardScratchBytes(const TensorView &q, const TensorView &k,
                                     const TensorView &v) {
  AttentionDims d;
  if (!shapeDims(q, k, v, d))
    return 0;
  // The CUDA kernel (runtime/cuda/AttentionGrad.cu) takes D = rowsum(dO * O)
  // for every query row from the same workspace, in fp32 (double for F64):
  // the plan's workspace must hold whichever backend needs more.
  const int64_t queryRows = d.batch * d.queryHeads * d.querySeq;
  const size_t cudaBytes = q.dtype == DType::F64
                               ? scratchPiece<double>(queryRows)
                               : scratchPiece<float>(queryRows);
  return std::max(BackwardBuffers::bytes(d, tilesFor(d.querySeq, d.keySeq)),
                  cudaBytes);
}

void attention(const TensorView &q, const TensorView &k, const TensorView &v,
               const TensorView &mask, const TensorView &out,
               const TensorView &logsumexp, double scale, bool causal,
               double dropoutRatio, uint64_t seed, uint64_t streamId,
               DropoutStep step) {
  const char *kernel = "attention";
  const AttentionDims d = checkAttention(kernel, q, k, v, mask, out, logsumexp,
                                         scale, dropoutRatio);
  Scratch scratch(kernel, attentionScratchBytes(q, k, v));
  const DropoutStream dropout =
      dropoutStream(dropoutRatio, seed, streamId, step);
  dispatchFloatStorage(q.dtype, kernel, [&](auto tag) {
    attentionImpl<typename decltype(tag)::type>(d, q, k, v, mask, out,
                                                logsumexp, scale, causal,
                                                dropout, scratch, kernel);
  });
}

void attentionBackward(const TensorView &q, const TensorView &k,
                       const TensorView &v, const TensorView &mask,
                       const TensorView &out, const TensorView &logsumexp,
                       const TensorView &dout, const TensorView &dq,
                       const TensorView &dk, const TensorView &dv,
                       double scale, bool causal, double dropoutRatio,
                       uint64_t seed, uint64_t streamId, DropoutStep step) {
  const char *kernel = "attentionBackward";
  const AttentionDims d =
      checkAttentionBackward(kernel, q, k, v, mask, out, logsumexp, dout, dq,
                             dk, dv, scale, dropoutRatio);
  Scratch scratch(kernel, attentionBackwardScratchBytes(q, k, v));
  const DropoutStream dropout =
      dropoutStream(dropoutRatio, seed, streamId, step);
  dispatchFloatStorage(q.dtype, kernel, [&](auto tag) {
    attentionBackwardImpl<typename decltype(tag)::type>(
        d, q, k, v, mask, out, logsumexp, dout, dq, dk, dv, scale, causal,
        dropout, scratch, kernel);
  });
}

} // namespace remat::rt
