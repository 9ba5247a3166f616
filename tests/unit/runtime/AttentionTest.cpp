//===- AttentionTest.cpp - Fused attention against float64 references -----===//
//
// The tiled kernels against a naive float64 reference that materialises the
// scores and the softmax, and whose backward is the chain rule through the
// unfused ops (matmul, softmax, dropout, matmul) rather than the fused
// D = rowsum(dO * O) shortcut. Dropout's reference mask comes from the
// dropout kernel itself, applied to [B, Hq, Sq, Sk], which is the keying the
// attention op promises.
//
// F16/BF16 inputs (F32 logsumexp): the output against that reference by the
// rule in TestUtil.h (n = 1: the kernel computes in double, in another
// order); the gradients against the float64 backward kernel (checked above)
// on the same operands widened, the 16-bit output and F32 logsumexp
// included, with n = 0.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "remat/runtime/KernelScratch.h"

#include <algorithm>
#include <cstring>
#include <limits>

using namespace remat::rt;
using namespace remat::rt::test;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Case {
  const char *name;
  int64_t batch, queryHeads, keyValueHeads, querySeq, keySeq, headDim,
      valueDim;
  bool causal = false;
  Shape maskShape = {}; // none when empty
  double dropout = 0;
  /// Mask out every key of this query row (needs a mask with a row dim).
  int64_t hiddenRow = -1;
};

void PrintTo(const Case &c, std::ostream *os) { *os << c.name; }

/// The operands of one case, with values from fixed seeds.
struct Inputs {
  Tensor q, k, v, mask, dout;
  bool hasMask;
  double scale;
};

Inputs makeInputs(const Case &c, DType dtype) {
  Inputs in{randomTensor(dtype, {c.batch, c.queryHeads, c.querySeq, c.headDim}, 1, -2, 2),
            randomTensor(dtype, {c.batch, c.keyValueHeads, c.keySeq, c.headDim}, 2, -2, 2),
            randomTensor(dtype, {c.batch, c.keyValueHeads, c.keySeq, c.valueDim}, 3),
            Tensor(dtype, c.maskShape.empty() ? Shape{1} : c.maskShape),
            randomTensor(dtype, {c.batch, c.queryHeads, c.querySeq, c.valueDim}, 4),
            !c.maskShape.empty(), 1.0 / std::sqrt(double(c.headDim))};
  if (in.hasMask) {
    std::vector<double> m = randomValues(numElements(c.maskShape), 5, -1, 1);
    // Some hidden pairs (-inf), and optionally one fully hidden row.
    for (size_t i = 0; i < m.size(); i += 7)
      m[i] = -kInf;
    if (c.hiddenRow >= 0) {
      const int64_t rowDim = static_cast<int64_t>(c.maskShape.size()) - 2;
      for (int64_t i = 0; i < in.mask.numel(); ++i)
        if (unravel(i, c.maskShape)[rowDim] == c.hiddenRow)
          m[i] = -kInf;
    }
    in.mask = make(dtype, c.maskShape, m);
  }
  return in;
}

TensorView maskView(const Inputs &in) {
  return in.hasMask ? in.mask.view() : TensorView();
}

/// The dropout kernel's keep decisions over [B, Hq, Sq, Sk] (all ones
/// without dropout).
std::vector<double> keepMask(const Case &c, uint64_t seed, uint64_t stream,
                             uint64_t step) {
  const Shape scores{c.batch, c.queryHeads, c.querySeq, c.keySeq};
  Tensor ones = make(DType::F64, scores,
                     std::vector<double>(numElements(scores), 1.0));
  Tensor y(DType::F64, scores), mask(DType::Bool, scores);
  dropout(ones.view(), y.view(), mask.view(), c.dropout, seed, stream, step);
  return values(mask);
}

/// Float64 results of the unfused composition.
struct Reference {
  std::vector<double> out, lse, dq, dk, dv;
};

Reference reference(const Case &c, const Inputs &in,
                    const std::vector<double> &keep) {
  const std::vector<double> q = values(in.q), k = values(in.k),
                            v = values(in.v), dout = values(in.dout);
  const std::vector<double> mask = in.hasMask ? values(in.mask)
                                              : std::vector<double>{};
  const int64_t Sq = c.querySeq, Sk = c.keySeq, D = c.headDim,
                Dv = c.valueDim, group = c.queryHeads / c.keyValueHeads;
  const Shape scores{c.batch, c.queryHeads, Sq, Sk};
  const double kept = 1 / (1 - c.dropout);
  Reference r;
  r.out.assign(c.batch * c.queryHeads * Sq * Dv, 0);
  r.lse.assign(c.batch * c.queryHeads * Sq, 0);
  r.dq.assign(q.size(), 0);
  r.dk.assign(k.size(), 0);
  r.dv.assign(v.size(), 0);
  std::vector<double> s(Sk), p(Sk), dp(Sk);
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t h = 0; h < c.queryHeads; ++h)
      for (int64_t i = 0; i < Sq; ++i) {
        const int64_t g = h / group;
        const double *qi = &q[((b * c.queryHeads + h) * Sq + i) * D];
        const int64_t kv = (b * c.keyValueHeads + g) * Sk;
        const int64_t row = (b * c.queryHeads + h) * Sq + i;
        // S = scale * q k^T + mask, hidden -> -inf; P = softmax(S).
        double maxS = -kInf;
        for (int64_t j = 0; j < Sk; ++j) {
          double dot = 0;
          for (int64_t x = 0; x < D; ++x)
            dot += qi[x] * k[(kv + j) * D + x];
          s[j] = in.scale * dot;
          if (in.hasMask)
            s[j] += mask[broadcastSource({b, h, i, j}, c.maskShape)];
          if (c.causal && j > i)
            s[j] = -kInf;
          maxS = std::max(maxS, s[j]);
        }
        if (maxS == -kInf) { // nothing visible: zero output and gradients
          r.lse[row] = -kInf;
          continue;
        }
        double sum = 0;
        for (int64_t j = 0; j < Sk; ++j)
          sum += std::exp(s[j] - maxS);
        r.lse[row] = maxS + std::log(sum);
        for (int64_t j = 0; j < Sk; ++j)
          p[j] = std::exp(s[j] - maxS) / sum;
        // O = dropout(P) V.
        const double *gi = &dout[row * Dv];
        for (int64_t j = 0; j < Sk; ++j) {
          const double m = keep[row * Sk + j] * kept;
          for (int64_t e = 0; e < Dv; ++e)
            r.out[row * Dv + e] += p[j] * m * v[(kv + j) * Dv + e];
          // dV += dropout(P)^T dO; dP = dropout'(dO V^T).
          double g = 0;
          for (int64_t e = 0; e < Dv; ++e) {
            r.dv[(kv + j) * Dv + e] += p[j] * m * gi[e];
            g += gi[e] * v[(kv + j) * Dv + e];
          }
          dp[j] = g * m;
        }
        // Softmax backward: dS = P * (dP - sum_j P_j dP_j).
        double pdp = 0;
        for (int64_t j = 0; j < Sk; ++j)
          pdp += p[j] * dp[j];
        for (int64_t j = 0; j < Sk; ++j) {
          const double ds = in.scale * p[j] * (dp[j] - pdp);
          for (int64_t x = 0; x < D; ++x) {
            r.dq[row * D + x] += ds * k[(kv + j) * D + x];
            r.dk[(kv + j) * D + x] += ds * qi[x];
          }
        }
      }
  return r;
}

/// The fused kernels' results.
struct Fused {
  Tensor out, lse, dq, dk, dv;
};

Fused runFused(const Case &c, const Inputs &in, uint64_t seed = 11,
               uint64_t stream = 3, uint64_t step = 5) {
  const DType dtype = in.q.dtype();
  const bool half = dtype == DType::F16 || dtype == DType::BF16;
  Fused f{Tensor(dtype, {c.batch, c.queryHeads, c.querySeq, c.valueDim}),
          Tensor(half ? DType::F32 : dtype,
                 {c.batch, c.queryHeads, c.querySeq}),
          Tensor(dtype, in.q.shape()), Tensor(dtype, in.k.shape()),
          Tensor(dtype, in.v.shape())};
  attention(in.q.view(), in.k.view(), in.v.view(), maskView(in), f.out.view(),
            f.lse.view(), in.scale, c.causal, c.dropout, seed, stream, step);
  attentionBackward(in.q.view(), in.k.view(), in.v.view(), maskView(in),
                    f.out.view(), f.lse.view(), in.dout.view(), f.dq.view(),
                    f.dk.view(), f.dv.view(), in.scale, c.causal, c.dropout,
                    seed, stream, step);
  return f;
}

/// max |actual - expected| / max |expected|, with -inf allowed where both
/// are -inf.
double relativeError(const std::vector<double> &actual,
                     const std::vector<double> &expected) {
  EXPECT_EQ(actual.size(), expected.size());
  double maxDiff = 0, maxRef = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    if (std::isinf(expected[i])) {
      EXPECT_EQ(actual[i], expected[i]) << "at flat index " << i;
      continue;
    }
    maxDiff = std::max(maxDiff, std::abs(actual[i] - expected[i]));
    maxRef = std::max(maxRef, std::abs(expected[i]));
  }
  return maxRef > 0 ? maxDiff / maxRef : maxDiff;
}

const Case kCases[] = {
    {"Tiny", 1, 1, 1, 5, 7, 3, 3},
    {"UnevenTiles", 2, 2, 2, 70, 130, 8, 5},
    {"CausalMoreQueries", 1, 2, 2, 130, 70, 8, 8, true},
    {"CausalMoreKeys", 1, 2, 2, 70, 130, 6, 9, true},
    {"MaskPerPair", 1, 2, 2, 65, 67, 4, 4, false, {65, 67}},
    {"MaskPerKey", 2, 2, 2, 20, 90, 4, 3, false, {2, 1, 1, 90}},
    {"MaskPerHeadAndRow", 2, 2, 2, 33, 40, 5, 5, true, {1, 2, 33, 1}},
    {"GroupedHeads", 2, 4, 2, 40, 70, 8, 6, true, {40, 70}},
    {"MultiQuery", 1, 4, 1, 70, 40, 4, 7, false, {1, 4, 70, 40}},
    {"HiddenRow", 1, 2, 1, 9, 70, 4, 4, false, {9, 70}, 0, 3},
    {"Dropout", 2, 4, 2, 70, 66, 5, 4, true, {70, 66}, 0.25},
};

class AttentionTest : public ::testing::TestWithParam<Case> {};

void checkAgainstReference(const Case &c, DType dtype, double tolerance) {
  const Inputs in = makeInputs(c, dtype);
  const Reference ref = reference(c, in, keepMask(c, 11, 3, 5));
  const Fused f = runFused(c, in);
  EXPECT_LE(relativeError(values(f.out), ref.out), tolerance) << "output";
  EXPECT_LE(relativeError(values(f.lse), ref.lse), tolerance) << "logsumexp";
  EXPECT_LE(relativeError(values(f.dq), ref.dq), tolerance) << "dq";
  EXPECT_LE(relativeError(values(f.dk), ref.dk), tolerance) << "dk";
  EXPECT_LE(relativeError(values(f.dv), ref.dv), tolerance) << "dv";
}

TEST_P(AttentionTest, Float32MatchesFloat64Reference) {
  checkAgainstReference(GetParam(), DType::F32, 1e-5);
}

TEST_P(AttentionTest, Float64MatchesFloat64Reference) {
  checkAgainstReference(GetParam(), DType::F64, 1e-12);
}

TEST_P(AttentionTest, HalfStorageMatchesFloat64) {
  const Case &c = GetParam();
  for (DType dt : kHalfTypes) {
    SCOPED_TRACE(dtypeName(dt));
    const Inputs in = makeInputs(c, dt);
    const Reference ref = reference(c, in, keepMask(c, 11, 3, 5));
    const Fused f = runFused(c, in);
    expectHalfNear(values(f.out), ref.out, dt, 1);
    EXPECT_LE(relativeError(values(f.lse), ref.lse), 1e-6) << "logsumexp";
    Tensor q = widened(in.q), k = widened(in.k), v = widened(in.v),
           mask = widened(in.mask), out = widened(f.out),
           lse = widened(f.lse), dout = widened(in.dout);
    Tensor dq(DType::F64, q.shape()), dk(DType::F64, k.shape()),
        dv(DType::F64, v.shape());
    attentionBackward(q.view(), k.view(), v.view(),
                      in.hasMask ? mask.view() : TensorView(), out.view(),
                      lse.view(), dout.view(), dq.view(), dk.view(),
                      dv.view(), in.scale, c.causal, c.dropout, 11, 3, 5);
    expectHalfNear(values(f.dq), values(dq), dt, 0);
    expectHalfNear(values(f.dk), values(dk), dt, 0);
    expectHalfNear(values(f.dv), values(dv), dt, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, AttentionTest, ::testing::ValuesIn(kCases),
                         [](const auto &info) { return info.param.name; });

TEST(AttentionKernelTest, FullyHiddenRowGivesZeroOutputAndMinusInfinity) {
  const Case c{"HiddenRow", 1, 1, 1, 4, 70, 3, 2, false, {4, 70}, 0, 2};
  const Inputs in = makeInputs(c, DType::F32);
  const Fused f = runFused(c, in);
  EXPECT_EQ(getElement(f.lse.view(), 2), -kInf);
  for (int64_t e = 0; e < c.valueDim; ++e)
    EXPECT_EQ(getElement(f.out.view(), 2 * c.valueDim + e), 0.0);
  for (int64_t x = 0; x < c.headDim; ++x)
    EXPECT_EQ(getElement(f.dq.view(), 2 * c.headDim + x), 0.0);
  for (double g : values(f.dk))
    EXPECT_TRUE(std::isfinite(g));
}

TEST(AttentionKernelTest, DropoutDependsOnSeedStreamAndStep) {
  const Case c{"Dropout", 1, 2, 2, 20, 30, 4, 4, false, {}, 0.5};
  const Inputs in = makeInputs(c, DType::F64);
  const std::vector<double> base = values(runFused(c, in, 1, 2, 3).out);
  EXPECT_NE(values(runFused(c, in, 9, 2, 3).out), base) << "seed";
  EXPECT_NE(values(runFused(c, in, 1, 9, 3).out), base) << "stream";
  EXPECT_NE(values(runFused(c, in, 1, 2, 9).out), base) << "step";
}

bool bitwiseEqual(const Tensor &a, const Tensor &b) {
  return a.view().bytes() == b.view().bytes() &&
         std::memcmp(a.view().data, b.view().data, a.view().bytes()) == 0;
}

TEST(AttentionKernelTest, TwoRunsAreBitwiseEqual) {
  const Case c{"Everything", 2, 4, 2, 150, 140, 16, 8, true, {150, 140}, 0.1};
  const Inputs in = makeInputs(c, DType::F32);
  const Fused a = runFused(c, in), b = runFused(c, in);
  EXPECT_TRUE(bitwiseEqual(a.out, b.out));
  EXPECT_TRUE(bitwiseEqual(a.lse, b.lse));
  EXPECT_TRUE(bitwiseEqual(a.dq, b.dq));
  EXPECT_TRUE(bitwiseEqual(a.dk, b.dk));
  EXPECT_TRUE(bitwiseEqual(a.dv, b.dv));
}

TEST(AttentionKernelTest, ScratchGrowsWithBlockTimesSequenceNotItsSquare) {
  for (int64_t seq : {512, 4096, 16384}) {
    const int64_t dim = 64;
    const TensorView q(DType::F32, {1, 1, seq, dim}, nullptr);
    const size_t forward = attentionScratchBytes(q, q, q);
    const size_t backward = attentionBackwardScratchBytes(q, q, q);
    const double scores = double(seq) * double(seq) * sizeof(float);
    std::printf("S=%lld D=%lld: forward %zu bytes, backward %zu bytes, "
                "one fp32 score matrix %.0f bytes\n",
                static_cast<long long>(seq), static_cast<long long>(dim),
                forward, backward, scores);
    // Forward: tiles only, independent of the sequence length.
    EXPECT_EQ(forward, attentionScratchBytes(
                           TensorView(DType::F32, {1, 1, 64, dim}, nullptr),
                           q, q));
    // Backward: one head's key and value gradients in double, O(seq * dim).
    EXPECT_LT(double(backward), 2.0 * seq * (2 * dim) * sizeof(double));
  }
  const TensorView q(DType::F32, {1, 1, 4096, 64}, nullptr);
  EXPECT_LT(double(attentionBackwardScratchBytes(q, q, q)),
            4096.0 * 4096.0 * 4.0 / 8);
}

TEST(AttentionKernelTest, RunsInExactlyTheScratchItDeclares) {
  const Case c{"Declared", 1, 2, 1, 100, 90, 8, 8, true, {100, 90}, 0.2};
  const Inputs in = makeInputs(c, DType::F32);
  const size_t bytes =
      std::max(attentionScratchBytes(in.q.view(), in.k.view(), in.v.view()),
               attentionBackwardScratchBytes(in.q.view(), in.k.view(),
                                             in.v.view()));
  std::vector<double> storage(bytes / sizeof(double) + 8);
  void *aligned = reinterpret_cast<void *>(
      (reinterpret_cast<uintptr_t>(storage.data()) + kScratchAlignment - 1) /
      kScratchAlignment * kScratchAlignment);
  setWorkspace(aligned, bytes);
  const Fused fixed = runFused(c, in);
  setWorkspace(nullptr, 0);
  useGrowableWorkspace();
  const Fused grown = runFused(c, in);
  EXPECT_TRUE(bitwiseEqual(fixed.dq, grown.dq));
  EXPECT_TRUE(bitwiseEqual(fixed.out, grown.out));
}

/// The RuntimeError message of `run`, or "" if it did not throw.
template <typename F> std::string errorOf(F &&run) {
  try {
    run();
  } catch (const RuntimeError &e) {
    return e.what();
  }
  return "";
}

TEST(AttentionKernelTest, BadArgumentsNameTheKernel) {
  Tensor q(DType::F32, {1, 3, 4, 8}), k(DType::F32, {1, 2, 5, 8}),
      v(DType::F32, {1, 2, 5, 8}), out(DType::F32, {1, 3, 4, 8}),
      lse(DType::F32, {1, 3, 4});
  auto run = [&](const TensorView &qv, const TensorView &kv,
                 const TensorView &mask, double scale, double ratio) {
    return errorOf([&] {
      attention(qv, kv, v.view(), mask, out.view(), lse.view(), scale, false,
                ratio, 0, 0, 0);
    });
  };
  EXPECT_NE(run(q.view(), k.view(), {}, 1, 0).find("attention: query heads (3)"),
            std::string::npos);
  Tensor q2(DType::F32, {1, 2, 4, 8}), out2(DType::F32, {1, 2, 4, 8});
  Tensor k3(DType::F32, {1, 2, 5, 7}), rank3(DType::F32, {2, 4, 8});
  EXPECT_NE(run(q2.view(), k3.view(), {}, 1, 0).find("attention: key has shape"),
            std::string::npos);
  EXPECT_NE(run(rank3.view(), k.view(), {}, 1, 0).find("attention: query, key"),
            std::string::npos);
  Tensor badMask(DType::F32, {3, 5});
  EXPECT_NE(run(q2.view(), k.view(), badMask.view(), 1, 0)
                .find("attention: cannot broadcast"),
            std::string::npos);
  const std::string zeroScale = errorOf([&] {
    attention(q2.view(), k.view(), v.view(), {}, out2.view(), {}, 0, false, 0,
              0, 0, 0);
  });
  EXPECT_NE(zeroScale.find("attention: scale"), std::string::npos);
  const std::string ratioOne = errorOf([&] {
    attention(q2.view(), k.view(), v.view(), {}, out2.view(), {}, 1, false, 1,
              0, 0, 0);
  });
  EXPECT_NE(ratioOne.find("attention: dropout ratio"), std::string::npos);
  Tensor lse2(DType::F32, {1, 2, 4}), dout(DType::F32, {1, 2, 4, 7});
  const std::string badGrad = errorOf([&] {
    attentionBackward(q2.view(), k.view(), v.view(), {}, out2.view(),
                      lse2.view(), dout.view(), {}, {}, {}, 1, false, 0, 0, 0,
                      0);
  });
  EXPECT_NE(badGrad.find("attentionBackward: output gradient"),
            std::string::npos);
}

} // namespace
