//===- AttentionTest.cpp - Fused attention against a float64 reference ----===//
//
// The CUDA attention kernels (forward and FlashAttention-2 backward) against
// a naive reference in this file that materialises the softmax in double:
// scores, probabilities, the dropout mask regenerated with the shared
// Philox keying, and the textbook gradients. Inputs are rounded to the
// tested dtype first, so the reference sees the kernel's exact inputs.
// Shapes cover sequences that are not multiples of the tiles, Sq != Sk,
// causal masking, broadcast additive masks, grouped-query heads, a fully
// masked row, dropout, head sizes up to the 128 maximum, F16/BF16 storage,
// and bitwise equality of two runs.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtil.h"

#include "remat/runtime/Philox.h"

#include <limits>
#include <memory>

using namespace remat::rt;
using namespace remat::rt::cudatest;

namespace {

using CudaAttention = CudaTest;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr uint64_t kSeed = 1234, kStream = 5;

struct Problem {
  int64_t batch = 1, queryHeads = 1, kvHeads = 1, querySeq = 1, keySeq = 1,
          headDim = 8, valueDim = 8;
  bool causal = false;
  double ratio = 0;
  uint64_t step = 0;
  bool hasMask = false;
  Shape maskShape;
  /// A query row whose mask entries are all -inf (-1: none).
  int64_t hiddenRow = -1;
  /// The mask is HF's causal mask instead of random values: [1, 1, Sq, Sk],
  /// 0 where j <= i and the dtype's lowest finite value where j > i.
  bool lowestCausalMask = false;

  double scale() const { return 1.0 / std::sqrt(double(headDim)); }
  Shape qShape() const { return {batch, queryHeads, querySeq, headDim}; }
  Shape kShape() const { return {batch, kvHeads, keySeq, headDim}; }
  Shape vShape() const { return {batch, kvHeads, keySeq, valueDim}; }
  Shape outShape() const { return {batch, queryHeads, querySeq, valueDim}; }
  Shape lseShape() const { return {batch, queryHeads, querySeq}; }
  std::string name(DType dtype) const {
    std::string s = std::string(dtypeName(dtype)) + " B" +
                    std::to_string(batch) + " Hq" + std::to_string(queryHeads) +
                    " Hkv" + std::to_string(kvHeads) + " Sq" +
                    std::to_string(querySeq) + " Sk" + std::to_string(keySeq) +
                    " D" + std::to_string(headDim) + " Dv" +
                    std::to_string(valueDim);
    if (causal)
      s += " causal";
    if (hasMask)
      s += std::string(lowestCausalMask ? " lowest-causal" : "") + " mask " +
           shapeToString(maskShape);
    if (ratio > 0)
      s += " dropout " + std::to_string(ratio);
    return s;
  }
};

/// Host inputs of one problem in the tested dtype.
struct Inputs {
  Tensor q, k, v, mask, dout;
};

Inputs makeInputs(const Problem &p, DType dtype) {
  Inputs in;
  in.q = randomTensor(dtype, p.qShape(), 1, -2, 2);
  in.k = randomTensor(dtype, p.kShape(), 2, -2, 2);
  in.v = randomTensor(dtype, p.vShape(), 3);
  in.dout = randomTensor(dtype, p.outShape(), 4);
  if (p.hasMask && p.lowestCausalMask) {
    const double lowest = dtype == DType::F16    ? -65504.0
                          : dtype == DType::BF16 ? -3.3895313892515355e38
                          : dtype == DType::F32  ? -3.4028234663852886e38
                                                 : -1.7976931348623157e308;
    std::vector<double> mask(p.querySeq * p.keySeq);
    for (int64_t i = 0; i < p.querySeq; ++i)
      for (int64_t j = 0; j < p.keySeq; ++j)
        mask[i * p.keySeq + j] = j > i ? lowest : 0.0;
    in.mask = make(dtype, p.maskShape, mask);
  } else if (p.hasMask) {
    in.mask = randomTensor(dtype, p.maskShape, 5, -3, 1);
    // Hide a few entries outright, as a padding mask would.
    for (int64_t e = 0; e < in.mask.numel(); e += 7)
      setElement(in.mask.view(), e, -kInf);
    if (p.hiddenRow >= 0) {
      // Mask [.., Sq, Sk]: every key of row hiddenRow.
      const int64_t sk = p.maskShape.back();
      const int64_t sq = p.maskShape[p.maskShape.size() - 2];
      for (int64_t e = 0; e < in.mask.numel(); ++e)
        if ((e / sk) % sq == p.hiddenRow)
          setElement(in.mask.view(), e, -kInf);
    }
  }
  return in;
}

/// The reference results, in double.
struct Reference {
  std::vector<double> out, lse, dq, dk, dv;
};

bool keeps(const Problem &p, int64_t element) {
  const PhiloxCounter bits = dropoutBits(dropoutKey(kSeed, kStream),
                                         uint64_t(element) / 4, p.step);
  return dropoutKeeps(bits[int(element % 4)],
                      dropoutThreshold(1.0 - p.ratio));
}

Reference reference(const Problem &p, const Inputs &in) {
  const std::vector<double> q = values(in.q), k = values(in.k),
                            v = values(in.v), dout = values(in.dout);
  std::vector<double> mask;
  if (p.hasMask)
    mask = values(in.mask);
  const int64_t group = p.queryHeads / p.kvHeads;
  const Shape scores{p.batch, p.queryHeads, p.querySeq, p.keySeq};
  Reference r;
  r.out.assign(numElements(p.outShape()), 0);
  r.lse.assign(numElements(p.lseShape()), 0);
  r.dq.assign(numElements(p.qShape()), 0);
  r.dk.assign(numElements(p.kShape()), 0);
  r.dv.assign(numElements(p.vShape()), 0);
  std::vector<double> s(p.keySeq), prob(p.keySeq), dp(p.keySeq);
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.queryHeads; ++h) {
      const int64_t bh = b * p.queryHeads + h;
      const int64_t bkv = b * p.kvHeads + h / group;
      for (int64_t i = 0; i < p.querySeq; ++i) {
        const double *qi = &q[(bh * p.querySeq + i) * p.headDim];
        const double *gi = &dout[(bh * p.querySeq + i) * p.valueDim];
        const int64_t row = bh * p.querySeq + i;
        double m = -kInf;
        for (int64_t j = 0; j < p.keySeq; ++j) {
          s[j] = -kInf;
          if (p.causal && j > i)
            continue;
          const double *kj = &k[(bkv * p.keySeq + j) * p.headDim];
          double dot = 0;
          for (int64_t d = 0; d < p.headDim; ++d)
            dot += qi[d] * kj[d];
          s[j] = p.scale() * dot;
          if (p.hasMask)
            s[j] += mask[broadcastSource({b, h, i, j}, p.maskShape)];
          m = std::max(m, s[j]);
        }
        if (m == -kInf) { // every key hidden: out 0, lse -inf, no gradient
          r.lse[row] = -kInf;
          continue;
        }
        double sum = 0;
        for (int64_t j = 0; j < p.keySeq; ++j)
          sum += prob[j] = std::exp(s[j] - m);
        r.lse[row] = m + std::log(sum);
        // Dropped probabilities (what multiplies v), and dP through them.
        double rowDot = 0;
        for (int64_t j = 0; j < p.keySeq; ++j) {
          prob[j] /= sum;
          double z = 1;
          if (p.ratio > 0)
            z = keeps(p, row * p.keySeq + j) ? 1 / (1 - p.ratio) : 0;
          const double *vj = &v[(bkv * p.keySeq + j) * p.valueDim];
          double gv = 0;
          for (int64_t d = 0; d < p.valueDim; ++d) {
            r.out[row * p.valueDim + d] += prob[j] * z * vj[d];
            r.dv[(bkv * p.keySeq + j) * p.valueDim + d] +=
                prob[j] * z * gi[d];
            gv += gi[d] * vj[d];
          }
          dp[j] = gv * z;
          rowDot += prob[j] * dp[j];
        }
        for (int64_t j = 0; j < p.keySeq; ++j) {
          const double ds = prob[j] * (dp[j] - rowDot) * p.scale();
          const double *kj = &k[(bkv * p.keySeq + j) * p.headDim];
          for (int64_t d = 0; d < p.headDim; ++d) {
            r.dq[row * p.headDim + d] += ds * kj[d];
            r.dk[(bkv * p.keySeq + j) * p.headDim + d] += ds * qi[d];
          }
        }
      }
    }
  return r;
}

/// The CUDA results, copied back to the host.
struct Results {
  Tensor out, lse, dq, dk, dv;
};

DType statisticsDType(DType dtype) {
  return dtype == DType::F16 || dtype == DType::BF16 ? DType::F32 : dtype;
}

Results runCuda(const Problem &p, const Inputs &in, DType dtype) {
  DeviceTensor q(in.q), k(in.k), v(in.v), dout(in.dout);
  std::unique_ptr<DeviceTensor> mask;
  if (p.hasMask)
    mask = std::make_unique<DeviceTensor>(in.mask);
  const TensorView maskView = mask ? mask->view() : TensorView();
  DeviceTensor stepTensor(make(DType::I64, {1}, {double(p.step)}));
  const auto *step = static_cast<const uint64_t *>(stepTensor.view().data);

  DeviceTensor out(dtype, p.outShape()),
      lse(statisticsDType(dtype), p.lseShape());
  cuda::attention(q.view(), k.view(), v.view(), maskView, out.view(),
                  lse.view(), p.scale(), p.causal, p.ratio, kSeed, kStream,
                  step);
  DeviceTensor dq(dtype, p.qShape()), dk(dtype, p.kShape()),
      dv(dtype, p.vShape());
  cuda::attentionBackward(q.view(), k.view(), v.view(), maskView, out.view(),
                          lse.view(), dout.view(), dq.view(), dk.view(),
                          dv.view(), p.scale(), p.causal, p.ratio, kSeed,
                          kStream, step);
  syncDevice();
  return {out.host(), lse.host(), dq.host(), dk.host(), dv.host()};
}

Tensor asF64(const Tensor &t) {
  return make(DType::F64, t.shape(), values(t));
}

/// Relative tolerance per dtype: 16-bit storage rounds inputs, the output
/// and (for the backward) the output the gradients are computed from.
double attentionTolerance(DType dtype) {
  switch (dtype) {
  case DType::F64: return 1e-10;
  case DType::F32: return 1e-4;
  default: return 3e-2;
  }
}

void check(const Problem &p, DType dtype) {
  const Inputs in = makeInputs(p, dtype);
  const Reference ref = reference(p, in);
  const Results got = runCuda(p, in, dtype);
  const double tol = attentionTolerance(dtype);
  const std::string what = p.name(dtype);
  expectNear(asF64(got.out), make(DType::F64, p.outShape(), ref.out), tol,
             what + " output");
  expectNear(asF64(got.lse), make(DType::F64, p.lseShape(), ref.lse), tol,
             what + " logsumexp");
  expectNear(asF64(got.dq), make(DType::F64, p.qShape(), ref.dq), tol,
             what + " query gradient");
  expectNear(asF64(got.dk), make(DType::F64, p.kShape(), ref.dk), tol,
             what + " key gradient");
  expectNear(asF64(got.dv), make(DType::F64, p.vShape(), ref.dv), tol,
             what + " value gradient");
}

/// The row p.hiddenRow (every key masked) in every batch and head: output
/// and query gradient 0, logsumexp -inf; then the other rows as usual.
void checkHiddenRow(const Problem &p, DType dtype) {
  const Inputs in = makeInputs(p, dtype);
  const Results got = runCuda(p, in, dtype);
  for (int64_t bh = 0; bh < p.batch * p.queryHeads; ++bh) {
    const int64_t row = bh * p.querySeq + p.hiddenRow;
    EXPECT_EQ(getElement(got.lse.view(), row), -kInf) << "head " << bh;
    for (int64_t d = 0; d < p.valueDim; ++d)
      EXPECT_EQ(getElement(got.out.view(), row * p.valueDim + d), 0.0);
    for (int64_t d = 0; d < p.headDim; ++d)
      EXPECT_EQ(getElement(got.dq.view(), row * p.headDim + d), 0.0);
  }
  check(p, dtype);
}

/// Two runs of the same problem give the same bits in every result.
void checkTwoRunsBitwiseEqual(const Problem &p, DType dtype) {
  const Inputs in = makeInputs(p, dtype);
  const Results first = runCuda(p, in, dtype);
  const Results second = runCuda(p, in, dtype);
  const std::string what = p.name(dtype);
  expectSame(second.out, first.out, what + " output");
  expectSame(second.lse, first.lse, what + " logsumexp");
  expectSame(second.dq, first.dq, what + " query gradient");
  expectSame(second.dk, first.dk, what + " key gradient");
  expectSame(second.dv, first.dv, what + " value gradient");
}

Problem shape(int64_t b, int64_t hq, int64_t hkv, int64_t sq, int64_t sk,
              int64_t d, int64_t dv) {
  Problem p;
  p.batch = b;
  p.queryHeads = hq;
  p.kvHeads = hkv;
  p.querySeq = sq;
  p.keySeq = sk;
  p.headDim = d;
  p.valueDim = dv;
  return p;
}

// The reference itself, on the host (runs without a GPU): its gradients
// are those of loss = sum(out * dout), by central differences.
TEST(AttentionReference, GradientsMatchFiniteDifferences) {
  Problem p = shape(1, 2, 1, 3, 4, 3, 2);
  p.causal = true;
  p.hasMask = true;
  p.maskShape = {3, 4};
  p.ratio = 0.3;
  Inputs in = makeInputs(p, DType::F64);
  const Reference ref = reference(p, in);
  const std::vector<double> dout = values(in.dout);
  auto loss = [&] {
    const std::vector<double> out = reference(p, in).out;
    double sum = 0;
    for (size_t e = 0; e < out.size(); ++e)
      sum += out[e] * dout[e];
    return sum;
  };
  const double eps = 1e-6;
  const struct {
    Tensor &x;
    const std::vector<double> &grad;
    const char *name;
  } operands[] = {{in.q, ref.dq, "q"}, {in.k, ref.dk, "k"}, {in.v, ref.dv, "v"}};
  for (const auto &operand : operands) {
    double largest = 0; // the check must not pass on all-zero gradients
    for (double g : operand.grad)
      largest = std::max(largest, std::abs(g));
    EXPECT_GT(largest, 1e-2) << operand.name;
    for (int64_t e = 0; e < operand.x.numel(); ++e) {
      const double x = getElement(operand.x.view(), e);
      setElement(operand.x.view(), e, x + eps);
      const double up = loss();
      setElement(operand.x.view(), e, x - eps);
      const double down = loss();
      setElement(operand.x.view(), e, x);
      EXPECT_NEAR(operand.grad[e], (up - down) / (2 * eps), 1e-6)
          << operand.name << " element " << e;
    }
  }
}

TEST_F(CudaAttention, MatchesTheReferenceOffTileBoundaries) {
  // 64-row blocks and 32-row stages: lengths on neither boundary, Sq != Sk
  // both ways, D != Dv.
  for (DType dtype : {DType::F32, DType::F64})
    for (Problem p : {shape(2, 2, 2, 37, 53, 16, 24), shape(1, 3, 3, 70, 33, 8, 8),
                      shape(1, 1, 1, 1, 1, 5, 3), shape(1, 2, 2, 130, 97, 32, 32)})
      check(p, dtype);
}

TEST_F(CudaAttention, Causal) {
  for (DType dtype : {DType::F32, DType::F64})
    for (Problem p : {shape(1, 2, 2, 70, 70, 16, 16), shape(2, 1, 1, 40, 90, 8, 12),
                      shape(1, 2, 2, 90, 40, 8, 8), shape(1, 1, 1, 129, 129, 32, 32)}) {
      p.causal = true;
      check(p, dtype);
    }
}

TEST_F(CudaAttention, BroadcastMasks) {
  const int64_t b = 2, h = 3, sq = 45, sk = 38;
  for (Shape mask : {Shape{b, h, sq, sk}, Shape{1, 1, sq, sk}, Shape{b, 1, 1, sk},
                     Shape{sk}, Shape{h, sq, 1}})
    for (bool causal : {false, true}) {
      Problem p = shape(b, h, h, sq, sk, 16, 16);
      p.hasMask = true;
      p.maskShape = mask;
      p.causal = causal;
      check(p, DType::F32);
    }
}

TEST_F(CudaAttention, GroupedQueryHeads) {
  for (DType dtype : {DType::F32, DType::F64}) {
    check(shape(2, 6, 2, 33, 41, 16, 16), dtype); // three query heads per kv
    Problem p = shape(1, 4, 1, 50, 50, 8, 8);     // one kv head for all
    p.causal = true;
    check(p, dtype);
  }
}

TEST_F(CudaAttention, FullyMaskedRowGivesZeroAndMinusInfinity) {
  Problem p = shape(1, 2, 2, 20, 30, 8, 8);
  p.hasMask = true;
  p.maskShape = {20, 30};
  p.hiddenRow = 3;
  checkHiddenRow(p, DType::F32);
  check(p, DType::F64);
}

TEST_F(CudaAttention, DropoutRegeneratesTheMaskInTheBackward) {
  for (DType dtype : {DType::F32, DType::F64})
    for (bool causal : {false, true}) {
      Problem p = shape(2, 4, 2, 37, 45, 16, 16);
      p.ratio = 0.3;
      p.step = 11;
      p.causal = causal;
      check(p, dtype);
    }
}

TEST_F(CudaAttention, LargerHeadSizes) {
  check(shape(1, 2, 2, 40, 70, 64, 64), DType::F32);
  check(shape(1, 2, 1, 70, 40, 128, 128), DType::F32);
  check(shape(1, 1, 1, 33, 33, 100, 72), DType::F64);
  Problem p = shape(1, 1, 1, 4, 4, 129, 8);
  const Inputs in = makeInputs(p, DType::F32);
  EXPECT_THROW(runCuda(p, in, DType::F32), RuntimeError);
}

TEST_F(CudaAttention, SixteenBitStorage) {
  for (DType dtype : {DType::BF16, DType::F16})
    for (int64_t d : {int64_t(64), int64_t(128)}) {
      Problem p = shape(1, 4, 2, 77, 65, d, d);
      check(p, dtype);
      p.causal = true;
      p.hasMask = true;
      p.maskShape = {1, 1, 77, 65};
      check(p, dtype);
      p.ratio = 0.1;
      check(p, dtype);
    }
}

// The fast paths (AttentionTensorCore.cu for 16-bit storage,
// AttentionTiled.cu for fp32) take calls without dropout whose head sizes
// are equal and one of 32, 64, 128: their tiles' edges, grouped heads, the
// causal flag, HF's lowest-value causal mask and a padding mask.
TEST_F(CudaAttention, FastPaths) {
  for (DType dtype : {DType::F32, DType::BF16, DType::F16})
    for (int64_t d : {int64_t(32), int64_t(64), int64_t(128)}) {
      check(shape(2, 4, 2, 130, 97, d, d), dtype);
      check(shape(1, 2, 2, 1, 1, d, d), dtype);
      Problem causal = shape(1, 1, 1, 65, 200, d, d);
      causal.causal = true;
      check(causal, dtype);
      Problem lowest = shape(1, 2, 2, 150, 150, d, d);
      lowest.hasMask = true;
      lowest.lowestCausalMask = true;
      lowest.maskShape = {1, 1, 150, 150};
      check(lowest, dtype);
      Problem padding = shape(2, 2, 1, 70, 70, d, d);
      padding.hasMask = true;
      padding.maskShape = {2, 1, 1, 70};
      check(padding, dtype);
    }
}

TEST_F(CudaAttention, FastPathFullyMaskedRowGivesZeroAndMinusInfinity) {
  for (DType dtype : {DType::F32, DType::BF16}) {
    Problem p = shape(1, 2, 2, 80, 90, 64, 64);
    p.hasMask = true;
    p.maskShape = {80, 90};
    p.hiddenRow = 67;
    checkHiddenRow(p, dtype);
  }
}

TEST_F(CudaAttention, FastPathTwoRunsAreBitwiseEqual) {
  for (DType dtype : {DType::F32, DType::BF16}) {
    Problem p = shape(2, 4, 2, 150, 130, 64, 64);
    p.hasMask = true;
    p.maskShape = {1, 1, 150, 130};
    p.lowestCausalMask = true;
    checkTwoRunsBitwiseEqual(p, dtype);
  }
}

TEST_F(CudaAttention, TwoRunsAreBitwiseEqual) {
  for (DType dtype : {DType::F32, DType::BF16}) {
    Problem p = shape(2, 4, 2, 150, 130, 64, 64);
    p.causal = true;
    p.ratio = 0.2;
    checkTwoRunsBitwiseEqual(p, dtype);
  }
}

// The bindings pass an empty view for a result nothing reads: the forward's
// logsumexp without a backward, a gradient of the backward nobody needs.
TEST_F(CudaAttention, AbsentResultsAreNotWritten) {
  const Problem p = shape(1, 4, 2, 70, 70, 64, 64);
  const Inputs in = makeInputs(p, DType::F32);
  const Results full = runCuda(p, in, DType::F32);
  DeviceTensor q(in.q), k(in.k), v(in.v), dout(in.dout);
  DeviceTensor stepTensor(make(DType::I64, {1}, {double(p.step)}));
  const auto *step = static_cast<const uint64_t *>(stepTensor.view().data);

  DeviceTensor out(DType::F32, p.outShape());
  cuda::attention(q.view(), k.view(), v.view(), TensorView(), out.view(),
                  TensorView(), p.scale(), p.causal, p.ratio, kSeed, kStream,
                  step);
  DeviceTensor lse(DType::F32, p.lseShape()), dq(DType::F32, p.qShape()),
      dv(DType::F32, p.vShape());
  cuda::attention(q.view(), k.view(), v.view(), TensorView(), out.view(),
                  lse.view(), p.scale(), p.causal, p.ratio, kSeed, kStream,
                  step);
  cuda::attentionBackward(q.view(), k.view(), v.view(), TensorView(),
                          out.view(), lse.view(), dout.view(), dq.view(),
                          TensorView(), TensorView(), p.scale(), p.causal,
                          p.ratio, kSeed, kStream, step);
  syncDevice();
  expectSame(out.host(), full.out, "output without logsumexp");
  expectSame(dq.host(), full.dq, "query gradient alone");
  cuda::attentionBackward(q.view(), k.view(), v.view(), TensorView(),
                          out.view(), lse.view(), dout.view(), TensorView(),
                          TensorView(), dv.view(), p.scale(), p.causal,
                          p.ratio, kSeed, kStream, step);
  syncDevice();
  expectSame(dv.host(), full.dv, "value gradient alone");
}

TEST_F(CudaAttention, RejectsMismatchedOperands) {
  DeviceTensor q(DType::F32, {1, 3, 4, 8}), k(DType::F32, {1, 2, 4, 8}),
      v(DType::F32, {1, 2, 4, 8}), out(DType::F32, {1, 3, 4, 8}),
      lse(DType::F32, {1, 3, 4});
  // 3 query heads do not group over 2 kv heads.
  EXPECT_THROW(cuda::attention(q.view(), k.view(), v.view(), TensorView(),
                               out.view(), lse.view(), 1.0, false, 0, 0, 0,
                               nullptr),
               RuntimeError);
  // A mask that does not broadcast to the scores.
  DeviceTensor q2(DType::F32, {1, 2, 4, 8}), out2(DType::F32, {1, 2, 4, 8}),
      lse2(DType::F32, {1, 2, 4}), mask(DType::F32, {3, 4});
  EXPECT_THROW(cuda::attention(q2.view(), k.view(), v.view(), mask.view(),
                               out2.view(), lse2.view(), 1.0, false, 0, 0, 0,
                               nullptr),
               RuntimeError);
  // BF16 inputs need an F32 logsumexp.
  DeviceTensor qb(DType::BF16, {1, 2, 4, 8}), kb(DType::BF16, {1, 2, 4, 8}),
      vb(DType::BF16, {1, 2, 4, 8}), outb(DType::BF16, {1, 2, 4, 8}),
      lseb(DType::BF16, {1, 2, 4});
  EXPECT_THROW(cuda::attention(qb.view(), kb.view(), vb.view(), TensorView(),
                               outb.view(), lseb.view(), 1.0, false, 0, 0, 0,
                               nullptr),
               RuntimeError);
}

} // namespace
