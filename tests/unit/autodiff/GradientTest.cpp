//===- GradientTest.cpp - Finite-difference checks of every gradient rule -===//
//
// For every differentiable op of the remat dialect: a small float64
// @forward using it, differentiated by remat-autodiff and checked against
// central differences (GradCheck.h). Non-scalar op outputs reach the loss
// through a fixed random weighting, loss = reduce_sum(op(x) * R), so every
// output element matters with its own weight.
//
// Default tolerance: max|g - g_fd| <= 1e-6 * max(1, max|g_fd|) with h = 1e-6.
// In float64 the central difference's truncation error is O(h^2) ~ 1e-12
// and its rounding error ~ eps * |loss| / h ~ 1e-10 * |loss|, both far below
// 1e-6 for these small, O(1)-valued graphs. Values are kept away from kinks
// (relu, abs, max, pooling) by much more than h.
//
//===----------------------------------------------------------------------===//

#include "ForwardBuilder.h"
#include "GradCheck.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>
#include <tuple>
#include <string>
#include <vector>

using namespace remat;
using namespace remat::gradcheck;

namespace {

//===----------------------------------------------------------------------===//
// Elementwise unary ops
//===----------------------------------------------------------------------===//

struct UnaryCase {
  const char *op;
  const char *attrs;
  rt::Shape shape;
  Fill fill;
};

void PrintTo(const UnaryCase &c, std::ostream *os) { *os << c.op << c.attrs; }

class UnaryGradient : public ::testing::TestWithParam<UnaryCase> {};

TEST_P(UnaryGradient, MatchesFiniteDifferences) {
  const UnaryCase &c = GetParam();
  Forward f;
  f.param("x", c.shape);
  f.op(std::string("%y = remat.") + c.op + " %x " + c.attrs + " : (" +
       T(c.shape) + ") -> " + T(c.shape));
  GradCheck(f.weighted("%y", c.shape)).fill("x", c.fill).run();
}

INSTANTIATE_TEST_SUITE_P(
    Ops, UnaryGradient,
    ::testing::Values(
        UnaryCase{"neg", "", {2, 3, 4}, uniform(-2, 2)},
        UnaryCase{"abs", "", {3, 5}, awayFromZero()},
        UnaryCase{"sqrt", "", {2, 3, 4}, uniform(0.3, 3)},
        UnaryCase{"exp", "", {7}, uniform(-2, 2)},
        UnaryCase{"log", "", {4, 3}, uniform(0.3, 3)},
        UnaryCase{"reciprocal", "", {2, 5}, awayFromZero(0.3, 2)},
        UnaryCase{"erf", "", {2, 3, 4}, uniform(-2, 2)},
        UnaryCase{"tanh", "", {3, 4}, uniform(-2, 2)},
        UnaryCase{"sigmoid", "", {5, 2}, uniform(-3, 3)},
        UnaryCase{"relu", "", {4, 5}, awayFromZero(0.05, 2)},
        UnaryCase{"gelu", "{approximate = \"none\"}", {2, 3, 4}, uniform(-3, 3)},
        UnaryCase{"gelu", "{approximate = \"tanh\"}", {2, 3, 4}, uniform(-3, 3)},
        // The activations with kinks are sampled away from them.
        UnaryCase{"leaky_relu", "{alpha = 0.2}", {4, 5}, awayFromZero(0.05, 2)},
        UnaryCase{"elu", "{alpha = 0.7}", {4, 5}, awayFromZero(0.05, 2)},
        UnaryCase{"selu", "", {4, 5}, awayFromZero(0.05, 2)},
        UnaryCase{"softplus", "", {2, 3, 4}, uniform(-4, 4)},
        UnaryCase{"softsign", "", {2, 3, 4}, uniform(-3, 3)},
        UnaryCase{"hard_sigmoid", "{alpha = 0.25, beta = 0.4}", {3, 7},
                  awayFrom(-4, 4, {-1.6, 2.4})},
        UnaryCase{"clip", "{max = 0.75, min = -0.5}", {3, 7},
                  awayFrom(-2, 2, {-0.5, 0.75})},
        UnaryCase{"sin", "", {2, 3, 4}, uniform(-4, 4)},
        UnaryCase{"cos", "", {2, 3, 4}, uniform(-4, 4)}),
    [](const ::testing::TestParamInfo<UnaryCase> &info) {
      std::string name = info.param.op;
      if (std::string(info.param.attrs).find("tanh") != std::string::npos)
        name += "_tanh";
      return name;
    });

//===----------------------------------------------------------------------===//
// Elementwise binary ops (broadcasting, scalars, both operands parameters)
//===----------------------------------------------------------------------===//

struct BinaryShapes {
  const char *name;
  rt::Shape lhs, rhs, out;
};

const BinaryShapes kBinaryShapes[] = {
    {"Broadcast", {3, 1, 4}, {2, 4}, {3, 2, 4}},
    {"SameShape", {4, 5}, {4, 5}, {4, 5}},
    {"ScalarRhs", {2, 3}, {}, {2, 3}},
    {"ScalarLhs", {}, {3, 2}, {3, 2}},
    {"BothSingleton", {2, 1}, {1, 3}, {2, 3}},
};

struct BinaryCase {
  const char *op;
  Fill lhsFill, rhsFill;
};

void PrintTo(const BinaryShapes &s, std::ostream *os) { *os << s.name; }
void PrintTo(const BinaryCase &c, std::ostream *os) { *os << c.op; }

class BinaryGradient
    : public ::testing::TestWithParam<std::tuple<BinaryCase, BinaryShapes>> {};

TEST_P(BinaryGradient, MatchesFiniteDifferences) {
  const auto &[c, s] = GetParam();
  Forward f;
  f.param("a", s.lhs).param("b", s.rhs);
  f.op(std::string("%y = remat.") + c.op + " %a, %b : (" + T(s.lhs) + ", " +
       T(s.rhs) + ") -> " + T(s.out));
  GradCheck(f.weighted("%y", s.out))
      .fill("a", c.lhsFill)
      .fill("b", c.rhsFill)
      .run();
}

INSTANTIATE_TEST_SUITE_P(
    Ops, BinaryGradient,
    ::testing::Combine(
        ::testing::Values(
            BinaryCase{"add", uniform(-2, 2), uniform(-2, 2)},
            BinaryCase{"sub", uniform(-2, 2), uniform(-2, 2)},
            BinaryCase{"mul", uniform(-2, 2), uniform(-2, 2)},
            BinaryCase{"div", uniform(-2, 2), awayFromZero(0.5, 2)},
            // Random reals: |a - b| > h everywhere (no ties) for these seeds.
            BinaryCase{"max", uniform(-2, 2), uniform(-2, 2)},
            BinaryCase{"min", uniform(-2, 2), uniform(-2, 2)},
            // Float exponent, positive base: d/da and d/db both exist.
            BinaryCase{"pow", uniform(0.5, 2), uniform(-1.5, 2.5)}),
        ::testing::ValuesIn(kBinaryShapes)),
    [](const ::testing::TestParamInfo<std::tuple<BinaryCase, BinaryShapes>> &info) {
      return std::string(std::get<0>(info.param).op) + "_" +
             std::get<1>(info.param).name;
    });

// PRelu: the slope broadcasts one way to x, so its gradient is summed over
// the broadcast axes; x is kept away from the kink at 0.
TEST(ElementwiseGradient, PReluInputAndSlope) {
  const rt::Shape x = {2, 3, 4};
  for (const rt::Shape &slope : {rt::Shape{2, 3, 4}, rt::Shape{4},
                                 rt::Shape{3, 1}, rt::Shape{}}) {
    SCOPED_TRACE(T(slope));
    Forward f;
    f.param("x", x).param("slope", slope);
    f.op("%y = remat.prelu %x, %slope : (" + T(x) + ", " + T(slope) + ") -> " +
         T(x));
    GradCheck(f.weighted("%y", x))
        .fill("x", awayFromZero(0.05, 2))
        .fill("slope", uniform(-1, 1))
        .run();
  }
}

// Clip with min > max is max everywhere: no gradient reaches x (PyTorch's
// clamp gives none either, as no x satisfies min <= x <= max).
TEST(ElementwiseGradient, ClipWithInvertedBoundsPassesNothing) {
  Forward f;
  f.param("x", {2, 3});
  f.op("%y = remat.clip %x {max = -1.0, min = 1.0} : (" + T({2, 3}) + ") -> " +
       T({2, 3}));
  f.op("%z = remat.mul %x, %y : (" + T({2, 3}) + ", " + T({2, 3}) + ") -> " +
       T({2, 3}));
  GradCheck(f.weighted("%z", {2, 3})).run();
}

// Max and min of a value with itself: every element is a tie, which the rule
// splits evenly between the operands (as torch.maximum); both halves reach
// the same parameter and add up to max(a, a)' = 1.
TEST(ElementwiseGradient, MaxMinTiesSplitEvenly) {
  for (const char *op : {"max", "min"}) {
    SCOPED_TRACE(op);
    Forward f;
    f.param("a", {2, 3});
    f.op("%y = remat." + std::string(op) + " %a, %a : (" + T({2, 3}) + ", " +
         T({2, 3}) + ") -> " + T({2, 3}));
    GradCheck(f.weighted("%y", {2, 3})).run();
  }
}

TEST(ElementwiseGradient, WhereBroadcastCondition) {
  // cond [3,1] broadcast over on_true [3,4] and on_false [4].
  Forward f;
  f.input("c", T({3, 1}, "i1")).param("t", {3, 4}).param("e", {4});
  f.op("%y = remat.where %c, %t, %e : (" + T({3, 1}, "i1") + ", " + T({3, 4}) +
       ", " + T({4}) + ") -> " + T({3, 4}));
  GradCheck(f.weighted("%y", {3, 4}))
      .value("c", boolTensor({3, 1}, {true, false, true}))
      .run();
}

TEST(ElementwiseGradient, WhereConditionFromComparison) {
  // where(x > 0, x * x, -x): both branches from one parameter.
  Forward f;
  f.param("x", {2, 5});
  std::string X = T({2, 5});
  f.op("%zero = remat.constant dense<0.0> : tensor<f64>");
  f.op("%c = remat.greater %x, %zero : (" + X + ", tensor<f64>) -> " + T({2, 5}, "i1"));
  f.op("%sq = remat.mul %x, %x : (" + X + ", " + X + ") -> " + X);
  f.op("%n = remat.neg %x : (" + X + ") -> " + X);
  f.op("%y = remat.where %c, %sq, %n : (" + T({2, 5}, "i1") + ", " + X + ", " +
       X + ") -> " + X);
  GradCheck(f.weighted("%y", {2, 5})).fill("x", awayFromZero(0.1, 2)).run();
}

TEST(ElementwiseGradient, CastF64ToF32ToF64) {
  // The f32 step rounds the value to 24 bits, so the loss is a staircase at
  // the 1e-7 scale and h = 1e-6 would measure rounding, not slope. The
  // chain is linear in x (loss = sum(R * x) up to rounding), so a large
  // h = 1e-2 has no truncation error; what remains is the rounding of
  // x +- h to f32 (|x| < 2: <= 1.2e-7 each), |R| <= 1.5:
  // 1.5 * 2.4e-7 / 2e-2 ~ 2e-5, and the analytic gradient R cast through
  // f32 (relative 6e-8). Hence tol = 5e-5.
  Forward f;
  f.param("x", {3, 4});
  f.op("%a = remat.cast %x : (" + T({3, 4}) + ") -> " + T({3, 4}, "f32"));
  f.op("%b = remat.cast %a : (" + T({3, 4}, "f32") + ") -> " + T({3, 4}));
  GradCheck(f.weighted("%b", {3, 4})).step(1e-2).tolerance(5e-5).run();
}

TEST(ElementwiseGradient, Dropout) {
  // The mask depends on (seed, stream, step, index) only, so every forward
  // evaluation draws the same one and the loss is smooth in x.
  Forward f;
  f.param("x", {4, 6});
  std::string X = T({4, 6});
  f.op("%t = remat.tanh %x : (" + X + ") -> " + X);
  f.op("%y, %m = remat.dropout %t {ratio = 0.3 : f64, seed = 42 : i64, "
       "stream = 0 : i64} : (" + X + ") -> (" + X + ", " + T({4, 6}, "i1") + ")");
  GradCheck(f.weighted("%y", {4, 6})).run();
}

//===----------------------------------------------------------------------===//
// MatMul
//===----------------------------------------------------------------------===//

struct MatMulCase {
  const char *name;
  rt::Shape lhs, rhs, out;
  bool transposeLhs, transposeRhs;
};

void PrintTo(const MatMulCase &c, std::ostream *os) { *os << c.name; }

class MatMulGradient : public ::testing::TestWithParam<MatMulCase> {};

TEST_P(MatMulGradient, MatchesFiniteDifferences) {
  const MatMulCase &c = GetParam();
  Forward f;
  f.param("a", c.lhs).param("b", c.rhs);
  f.op("%y = remat.matmul %a, %b {transpose_lhs = " +
       std::string(c.transposeLhs ? "true" : "false") + ", transpose_rhs = " +
       (c.transposeRhs ? "true" : "false") + "} : (" + T(c.lhs) + ", " +
       T(c.rhs) + ") -> " + T(c.out));
  GradCheck(f.weighted("%y", c.out)).run();
}

INSTANTIATE_TEST_SUITE_P(
    Cases, MatMulGradient,
    ::testing::Values(
        MatMulCase{"NN", {3, 4}, {4, 5}, {3, 5}, false, false},
        MatMulCase{"TN", {4, 3}, {4, 5}, {3, 5}, true, false},
        MatMulCase{"NT", {3, 4}, {5, 4}, {3, 5}, false, true},
        MatMulCase{"TT", {4, 3}, {5, 4}, {3, 5}, true, true},
        MatMulCase{"BatchedBroadcast", {2, 1, 3, 4}, {5, 4, 6}, {2, 5, 3, 6}, false, false},
        MatMulCase{"BatchedBroadcastTT", {2, 1, 4, 3}, {5, 6, 4}, {2, 5, 3, 6}, true, true},
        MatMulCase{"BatchedBroadcastTN", {1, 3, 4, 2}, {2, 1, 4, 3}, {2, 3, 2, 3}, true, false},
        MatMulCase{"BatchedLhsOnlyNT", {3, 2, 4}, {5, 4}, {3, 2, 5}, false, true},
        MatMulCase{"BatchedRhsOnly", {2, 4}, {3, 4, 5}, {3, 2, 5}, false, false}),
    [](const ::testing::TestParamInfo<MatMulCase> &info) { return info.param.name; });

//===----------------------------------------------------------------------===//
// Softmax and normalisation
//===----------------------------------------------------------------------===//

TEST(NormalizationGradient, SoftmaxAndLogSoftmax) {
  for (const char *op : {"softmax", "log_softmax"})
    for (int axis : {0, 1, 2}) {
      SCOPED_TRACE(std::string(op) + " axis " + std::to_string(axis));
      Forward f;
      f.param("x", {2, 3, 4});
      f.op(std::string("%y = remat.") + op + " %x {axis = " + std::to_string(axis) +
           " : i64} : (" + T({2, 3, 4}) + ") -> " + T({2, 3, 4}));
      GradCheck(f.weighted("%y", {2, 3, 4})).fill("x", uniform(-3, 3)).run();
    }
}

struct LayerNormCase {
  const char *name;
  rt::Shape input;
  int axis;
  rt::Shape scale;
  std::optional<rt::Shape> bias;
};

void PrintTo(const LayerNormCase &c, std::ostream *os) { *os << c.name; }

class LayerNormGradient : public ::testing::TestWithParam<LayerNormCase> {};

TEST_P(LayerNormGradient, MatchesFiniteDifferences) {
  const LayerNormCase &c = GetParam();
  rt::Shape stats = c.input;
  for (size_t d = c.axis; d < stats.size(); ++d)
    stats[d] = 1;
  Forward f;
  f.param("x", c.input).param("g", c.scale);
  std::string operands = "%x, %g", types = T(c.input) + ", " + T(c.scale);
  if (c.bias) {
    f.param("b", *c.bias);
    operands += ", %b";
    types += ", " + T(*c.bias);
  }
  f.op("%y, %mean, %inv = remat.layer_norm " + operands + " {axis = " +
       std::to_string(c.axis) + " : i64, epsilon = 1.0e-05 : f64} : (" + types +
       ") -> (" + T(c.input) + ", " + T(stats) + ", " + T(stats) + ")");
  GradCheck(f.weighted("%y", c.input)).run();
}

INSTANTIATE_TEST_SUITE_P(
    Cases, LayerNormGradient,
    ::testing::Values(
        LayerNormCase{"Axis1WithBias", {2, 3, 4}, 1, {3, 4}, rt::Shape{3, 4}},
        LayerNormCase{"Axis1NoBias", {2, 3, 4}, 1, {3, 4}, std::nullopt},
        LayerNormCase{"Axis1BroadcastScale", {2, 3, 4}, 1, {4}, rt::Shape{1, 4}},
        LayerNormCase{"Axis1BroadcastScaleNoBias", {2, 3, 4}, 1, {3, 1}, std::nullopt},
        LayerNormCase{"Axis2", {2, 3, 5}, 2, {5}, rt::Shape{5}},
        LayerNormCase{"Axis0", {3, 4}, 0, {3, 4}, rt::Shape{4}}),
    [](const ::testing::TestParamInfo<LayerNormCase> &info) { return info.param.name; });

TEST(NormalizationGradient, BatchNormInference) {
  for (rt::Shape shape : {rt::Shape{2, 3, 4}, rt::Shape{2, 3, 2, 2}, rt::Shape{4, 3}}) {
    SCOPED_TRACE(rt::shapeToString(shape));
    Forward f;
    f.param("x", shape).param("g", {3}).param("b", {3});
    f.buffer("mean", {3}).buffer("var", {3});
    std::string C = T({3});
    f.op("%y = remat.batch_norm_inference %x, %g, %b, %mean, %var {epsilon = "
         "1.0e-05 : f64} : (" + T(shape) + ", " + C + ", " + C + ", " + C + ", " +
         C + ") -> " + T(shape));
    GradCheck(f.weighted("%y", shape)).fill("var", uniform(0.5, 2)).run();
  }
}

TEST(NormalizationGradient, BatchNormTraining) {
  // dx goes through the batch mean and variance; dscale and dbias too.
  for (rt::Shape shape : {rt::Shape{3, 2, 2, 2}, rt::Shape{4, 3, 3}, rt::Shape{5, 2}}) {
    SCOPED_TRACE(rt::shapeToString(shape));
    int64_t channels = shape[1];
    std::string C = T({channels});
    Forward f;
    f.param("x", shape).param("g", {channels}).param("b", {channels});
    f.buffer("mean", {channels}).buffer("var", {channels});
    f.op("%y, %rm, %rv, %sm, %si = remat.batch_norm_training %x, %g, %b, %mean, "
         "%var {epsilon = 1.0e-05 : f64, momentum = 0.9 : f64} : (" +
         T(shape) + ", " + C + ", " + C + ", " + C + ", " + C + ") -> (" +
         T(shape) + ", " + C + ", " + C + ", " + C + ", " + C + ")");
    GradCheck(f.weighted("%y", shape)).fill("var", uniform(0.5, 2)).run();
  }
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

struct AttentionCase {
  const char *name;
  rt::Shape query, key, value; // [B, Hq, Sq, D], [B, Hkv, Sk, D], [.., Dv]
  bool causal;
  std::optional<rt::Shape> mask; // an input: the op has no mask gradient
  double dropout = 0;
};

void PrintTo(const AttentionCase &c, std::ostream *os) { *os << c.name; }

class AttentionGradient : public ::testing::TestWithParam<AttentionCase> {};

TEST_P(AttentionGradient, MatchesFiniteDifferences) {
  const AttentionCase &c = GetParam();
  const rt::Shape out{c.query[0], c.query[1], c.query[2], c.value[3]};
  const rt::Shape lse{c.query[0], c.query[1], c.query[2]};
  Forward f;
  f.param("q", c.query).param("k", c.key).param("v", c.value);
  std::string operands = "%q, %k, %v",
              types = T(c.query) + ", " + T(c.key) + ", " + T(c.value);
  if (c.mask) {
    f.input("m", T(*c.mask));
    operands += ", %m";
    types += ", " + T(*c.mask);
  }
  f.op("%o, %lse = remat.attention " + operands + " {scale = 0.6 : f64, "
       "causal = " + (c.causal ? "true" : "false") + ", dropout_ratio = " +
       std::to_string(c.dropout) + " : f64, seed = 7 : i64} : (" + types +
       ") -> (" + T(out) + ", " + T(lse) + ")");
  GradCheck check(f.weighted("%o", out));
  if (c.mask) {
    // Additive values with some pairs hidden (-inf), none a whole row.
    rt::Tensor mask(rt::DType::F64, *c.mask);
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> dist(-1, 1);
    for (int64_t i = 0; i < mask.numel(); ++i)
      mask.as<double>()[i] =
          i % 5 == 3 ? -std::numeric_limits<double>::infinity() : dist(rng);
    check.value("m", std::move(mask));
  }
  check.run();
}

INSTANTIATE_TEST_SUITE_P(
    Cases, AttentionGradient,
    ::testing::Values(
        AttentionCase{"Plain", {2, 2, 3, 4}, {2, 2, 5, 4}, {2, 2, 5, 3}, false,
                      std::nullopt},
        AttentionCase{"Causal", {1, 2, 5, 3}, {1, 2, 4, 3}, {1, 2, 4, 2}, true,
                      std::nullopt},
        AttentionCase{"MaskBroadcast", {2, 2, 3, 4}, {2, 2, 5, 4}, {2, 2, 5, 4},
                      false, rt::Shape{2, 1, 3, 5}},
        AttentionCase{"GroupedCausalMask", {1, 4, 4, 3}, {1, 2, 6, 3},
                      {1, 2, 6, 5}, true, rt::Shape{4, 6}},
        AttentionCase{"MultiQuery", {2, 4, 3, 2}, {2, 1, 4, 2}, {2, 1, 4, 3},
                      false, std::nullopt},
        // The mask is a pure function of the element index, as for dropout.
        AttentionCase{"Dropout", {1, 2, 4, 3}, {1, 2, 5, 3}, {1, 2, 5, 3}, true,
                      std::nullopt, 0.3}),
    [](const ::testing::TestParamInfo<AttentionCase> &info) {
      return info.param.name;
    });

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

struct ReduceCase {
  std::vector<int64_t> axes;
  bool keepdims;
};

TEST(ReductionGradient, SumMeanMax) {
  const rt::Shape input = {2, 3, 4};
  const ReduceCase cases[] = {{{1}, true},     {{1}, false},   {{0, 2}, true},
                              {{0, 2}, false}, {{2}, false},   {{0, 1, 2}, false},
                              {{0, 1, 2}, true}};
  for (const char *op : {"reduce_sum", "reduce_mean", "reduce_max"})
    for (const ReduceCase &c : cases) {
      rt::Shape out;
      for (int64_t d = 0; d < int64_t(input.size()); ++d) {
        bool reduced = std::find(c.axes.begin(), c.axes.end(), d) != c.axes.end();
        if (!reduced)
          out.push_back(input[d]);
        else if (c.keepdims)
          out.push_back(1);
      }
      SCOPED_TRACE(std::string(op) + " axes " + i64Array(c.axes) +
                   (c.keepdims ? " keepdims" : ""));
      Forward f;
      f.param("x", input);
      f.op(std::string("%y = remat.") + op + " %x {axes = " + i64Array(c.axes) +
           ", keepdims = " + (c.keepdims ? "true" : "false") + "} : (" +
           T(input) + ") -> " + T(out));
      // Distinct values: reduce_max has no ties.
      GradCheck(f.weighted("%y", out)).fill("x", distinct()).run();
    }
}

TEST(ReductionGradient, CumSumEveryDirection) {
  for (int64_t axis : {0, 1, 2})
    for (bool exclusive : {false, true})
      for (bool reverse : {false, true}) {
        SCOPED_TRACE("axis " + std::to_string(axis) +
                     (exclusive ? " exclusive" : "") +
                     (reverse ? " reverse" : ""));
        Forward f;
        f.param("x", {2, 3, 4});
        f.op("%y = remat.cumsum %x {axis = " + std::to_string(axis) +
             " : i64, exclusive = " + (exclusive ? "true" : "false") +
             ", reverse = " + (reverse ? "true" : "false") + "} : (" +
             T({2, 3, 4}) + ") -> " + T({2, 3, 4}));
        GradCheck(f.weighted("%y", {2, 3, 4})).run();
      }
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

struct ConvCase {
  const char *name;
  rt::Shape input, weight, out;
  std::vector<int64_t> strides, pads, dilations;
  int64_t group;
  bool bias;
};

void PrintTo(const ConvCase &c, std::ostream *os) { *os << c.name; }

class ConvGradient : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvGradient, MatchesFiniteDifferences) {
  const ConvCase &c = GetParam();
  Forward f;
  f.param("x", c.input).param("w", c.weight);
  std::string operands = "%x, %w", types = T(c.input) + ", " + T(c.weight);
  if (c.bias) {
    f.param("b", {c.weight[0]});
    operands += ", %b";
    types += ", " + T({c.weight[0]});
  }
  f.op("%y = remat.conv " + operands + " {strides = " + i64Array(c.strides) +
       ", pads = " + i64Array(c.pads) + ", dilations = " + i64Array(c.dilations) +
       ", group = " + std::to_string(c.group) + " : i64} : (" + types + ") -> " +
       T(c.out));
  GradCheck(f.weighted("%y", c.out)).run();
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ConvGradient,
    ::testing::Values(
        // H: (7 + 1 + 2 - 3) / 2 + 1 = 4; W: (6 + 0 + 1 - 3) / 1 + 1 = 5.
        ConvCase{"Conv2DStrideAsymPadDilationGroup2Bias", {1, 4, 7, 6}, {4, 2, 3, 2},
                 {1, 4, 4, 5}, {2, 1}, {1, 0, 2, 1}, {1, 2}, 2, true},
        // (6 + 2 + 2 - 3) / 2 + 1 = 4 both ways.
        ConvCase{"Conv2DStride2Group2NoBias", {2, 4, 6, 6}, {2, 2, 3, 3},
                 {2, 2, 4, 4}, {2, 2}, {1, 1, 2, 2}, {1, 1}, 2, false},
        ConvCase{"Conv2DPlain", {2, 2, 4, 4}, {3, 2, 3, 3}, {2, 3, 4, 4},
                 {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true},
        // (9 + 2 + 1 - 5) / 2 + 1 = 4.
        ConvCase{"Conv1DStrideAsymPadDilationBias", {2, 3, 9}, {4, 3, 3}, {2, 4, 4},
                 {2}, {2, 1}, {2}, 1, true},
        // Depthwise: group = channels; (8 + 0 + 1 - 3) / 3 + 1 = 3.
        ConvCase{"Conv1DDepthwise", {2, 4, 8}, {4, 1, 3}, {2, 4, 3}, {3}, {0, 1},
                 {1}, 4, true},
        // D: (3 - 2) + 1 = 3 (pads 0, 1); H: (4 + 1 - 2) / 2 + 1 = 2;
        // W: (3 + 1 - 3) + 1 = 2.
        ConvCase{"Conv3DGroup2", {1, 2, 3, 4, 3}, {2, 1, 2, 2, 2}, {1, 2, 3, 2, 2},
                 {1, 2, 1}, {0, 1, 1, 1, 0, 0}, {1, 1, 2}, 2, true}),
    [](const ::testing::TestParamInfo<ConvCase> &info) { return info.param.name; });

struct PoolCase {
  const char *name;
  rt::Shape input, out;
  std::vector<int64_t> kernel, strides, pads, dilations;
  bool ceilMode;
};

void PrintTo(const PoolCase &c, std::ostream *os) { *os << c.name; }

class MaxPoolGradient : public ::testing::TestWithParam<PoolCase> {};

TEST_P(MaxPoolGradient, MatchesFiniteDifferences) {
  const PoolCase &c = GetParam();
  Forward f;
  f.param("x", c.input);
  f.op("%y, %idx = remat.max_pool %x {kernel_shape = " + i64Array(c.kernel) +
       ", strides = " + i64Array(c.strides) + ", pads = " + i64Array(c.pads) +
       ", dilations = " + i64Array(c.dilations) + ", ceil_mode = " +
       (c.ceilMode ? "true" : "false") + "} : (" + T(c.input) + ") -> (" +
       T(c.out) + ", " + T(c.out, "i64") + ")");
  // Distinct values: every window has a unique maximum.
  GradCheck(f.weighted("%y", c.out)).fill("x", distinct()).run();
}

INSTANTIATE_TEST_SUITE_P(
    Cases, MaxPoolGradient,
    ::testing::Values(
        // H: (5 + 2 - 3) / 2 + 1 = 3; W: (6 + 1 - 2) / 2 + 1 = 3.
        PoolCase{"Padded2D", {1, 2, 5, 6}, {1, 2, 3, 3}, {3, 2}, {2, 2},
                 {1, 0, 1, 1}, {1, 1}, false},
        // Overlapping windows (stride 1) share maxima: gradients accumulate.
        PoolCase{"Overlapping2D", {2, 1, 4, 4}, {2, 1, 3, 3}, {2, 2}, {1, 1},
                 {0, 0, 0, 0}, {1, 1}, false},
        // W with dilation 2: span 3, (6 + 1 + 1 - 3) / 2 + 1 = 3.
        PoolCase{"Dilated2D", {1, 2, 4, 6}, {1, 2, 2, 3}, {2, 2}, {2, 2},
                 {0, 1, 0, 1}, {1, 2}, false},
        // ceil((7 + 1 - 3) / 2) + 1 = 4 (the last window starts at 6 < 8).
        PoolCase{"CeilMode1D", {2, 3, 7}, {2, 3, 4}, {3}, {2}, {1, 0}, {1}, true},
        // D: 3 - 2 + 1 = 2; H: (4 + 1 - 2) / 2 + 1 = 2; W: (4 + 1 - 2) / 2 + 1 = 2.
        PoolCase{"Padded3D", {1, 2, 3, 4, 4}, {1, 2, 2, 2, 2}, {2, 2, 2}, {1, 2, 2},
                 {0, 0, 1, 0, 1, 0}, {1, 1, 1}, false}),
    [](const ::testing::TestParamInfo<PoolCase> &info) { return info.param.name; });

struct AvgPoolCase {
  const char *name;
  rt::Shape input, out;
  std::vector<int64_t> kernel, strides, pads, dilations;
  bool ceilMode;
};

void PrintTo(const AvgPoolCase &c, std::ostream *os) { *os << c.name; }

class AveragePoolGradient
    : public ::testing::TestWithParam<std::tuple<AvgPoolCase, bool>> {};

TEST_P(AveragePoolGradient, MatchesFiniteDifferences) {
  const auto &[c, countIncludePad] = GetParam();
  Forward f;
  f.param("x", c.input);
  f.op("%y = remat.average_pool %x {kernel_shape = " + i64Array(c.kernel) +
       ", strides = " + i64Array(c.strides) + ", pads = " + i64Array(c.pads) +
       ", dilations = " + i64Array(c.dilations) +
       ", ceil_mode = " + (c.ceilMode ? "true" : "false") +
       ", count_include_pad = " + (countIncludePad ? "true" : "false") + "} : (" +
       T(c.input) + ") -> " + T(c.out));
  GradCheck(f.weighted("%y", c.out)).run();
}

INSTANTIATE_TEST_SUITE_P(
    Cases, AveragePoolGradient,
    ::testing::Combine(
        ::testing::Values(
            // H: (5 + 2 - 3) / 2 + 1 = 3; W: (6 + 1 - 3) / 2 + 1 = 3.
            AvgPoolCase{"Padded2D", {1, 2, 5, 6}, {1, 2, 3, 3}, {3, 3}, {2, 2},
                        {1, 1, 1, 0}, {1, 1}, false},
            // H: ceil((5 + 1 - 3) / 2) + 1 = 3 (floor: 2); W: ceil((6 + 0 - 3)
            // / 2) + 1 = 3 (floor: 2): the last windows hang over the end.
            AvgPoolCase{"CeilMode2D", {1, 2, 5, 6}, {1, 2, 3, 3}, {3, 3}, {2, 2},
                        {1, 0, 0, 0}, {1, 1}, true},
            // ceil((9 + 1 - 3) / 2) + 1 = 5 (floor: 4).
            AvgPoolCase{"CeilMode1DPadded", {2, 2, 9}, {2, 2, 5}, {3}, {2}, {1, 0},
                        {1}, true},
            // D: 3 - 2 + 1 = 2; H: (4 + 1 - 2) / 2 + 1 = 2;
            // W: (4 + 2 - 2) / 2 + 1 = 3.
            AvgPoolCase{"Padded3D", {1, 2, 3, 4, 4}, {1, 2, 2, 2, 3}, {2, 2, 2},
                        {1, 2, 2}, {0, 1, 1, 0, 0, 1}, {1, 1, 1}, false},
            // Dilated windows (AveragePool-19), spans 3 and 5:
            // H: (7 + 1 - 3) / 1 + 1 = 6; W: (6 + 1 - 5) / 2 + 1 = 2.
            AvgPoolCase{"Dilated2D", {1, 2, 7, 6}, {1, 2, 6, 2}, {2, 3}, {1, 2},
                        {1, 0, 0, 1}, {2, 2}, false},
            // Span 5: ceil((9 + 1 - 5) / 2) + 1 = 4 (floor: 3), so the last
            // window's taps overhang the input.
            AvgPoolCase{"DilatedCeilMode1D", {2, 2, 9}, {2, 2, 4}, {3}, {2},
                        {1, 0}, {2}, true}),
        ::testing::Bool()),
    [](const ::testing::TestParamInfo<std::tuple<AvgPoolCase, bool>> &info) {
      return std::string(std::get<0>(info.param).name) +
             (std::get<1>(info.param) ? "_CountIncludePad" : "_ExcludePad");
    });

TEST(PoolGradient, GlobalAveragePool) {
  for (rt::Shape shape : {rt::Shape{2, 3, 4, 5}, rt::Shape{2, 3, 6}}) {
    SCOPED_TRACE(rt::shapeToString(shape));
    rt::Shape out = shape;
    for (size_t d = 2; d < out.size(); ++d)
      out[d] = 1;
    Forward f;
    f.param("x", shape);
    f.op("%y = remat.global_average_pool %x : (" + T(shape) + ") -> " + T(out));
    GradCheck(f.weighted("%y", out)).run();
  }
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

TEST(DataMovementGradient, Reshape) {
  Forward f;
  f.param("x", {2, 3, 4});
  f.op("%y = remat.reshape %x : (" + T({2, 3, 4}) + ") -> " + T({4, 6}));
  f.op("%z = remat.tanh %y : (" + T({4, 6}) + ") -> " + T({4, 6}));
  GradCheck(f.weighted("%z", {4, 6})).run();
}

TEST(DataMovementGradient, Transpose) {
  for (std::vector<int64_t> perm : {std::vector<int64_t>{2, 0, 1},
                                    std::vector<int64_t>{1, 2, 0},
                                    std::vector<int64_t>{0, 2, 1}}) {
    rt::Shape input = {2, 3, 4}, out;
    for (int64_t p : perm)
      out.push_back(input[p]);
    SCOPED_TRACE(i64Array(perm));
    Forward f;
    f.param("x", input);
    f.op("%y = remat.transpose %x {permutation = " + i64Array(perm) + "} : (" +
         T(input) + ") -> " + T(out));
    GradCheck(f.weighted("%y", out)).run();
  }
}

TEST(DataMovementGradient, ConcatToAllInputs) {
  {
    Forward f;
    f.param("a", {2, 3}).param("b", {2, 1}).param("c", {2, 4});
    f.op("%y = remat.concat %a, %b, %c {axis = 1 : i64} : (" + T({2, 3}) + ", " +
         T({2, 1}) + ", " + T({2, 4}) + ") -> " + T({2, 8}));
    GradCheck(f.weighted("%y", {2, 8})).run();
  }
  {
    // One input twice, and along the leading axis.
    Forward f;
    f.param("a", {1, 2, 3}).param("b", {2, 2, 3});
    f.op("%y = remat.concat %a, %b, %a {axis = 0 : i64} : (" + T({1, 2, 3}) +
         ", " + T({2, 2, 3}) + ", " + T({1, 2, 3}) + ") -> " + T({4, 2, 3}));
    GradCheck(f.weighted("%y", {4, 2, 3})).run();
  }
}

TEST(DataMovementGradient, SplitSomeOutputsUsed) {
  Forward f;
  f.param("x", {2, 7});
  f.op("%a, %b, %c = remat.split %x {axis = 1 : i64} : (" + T({2, 7}) + ") -> (" +
       T({2, 2}) + ", " + T({2, 3}) + ", " + T({2, 2}) + ")");
  // %b does not reach the loss: its part of dx is zero.
  std::string ta = f.term("%a", {2, 2});
  std::string tc = f.term("%c", {2, 2});
  GradCheck(f.loss({ta, tc})).run();
}

TEST(DataMovementGradient, SplitLastOutputOnly) {
  Forward f;
  f.param("x", {6, 2});
  f.op("%a, %b = remat.split %x {axis = 0 : i64} : (" + T({6, 2}) + ") -> (" +
       T({4, 2}) + ", " + T({2, 2}) + ")");
  GradCheck(f.weighted("%b", {2, 2})).run();
}

TEST(DataMovementGradient, SliceNegativeSteps) {
  struct Case {
    std::vector<int64_t> starts, limits, steps;
    rt::Shape out;
  };
  // x [5, 6]
  const Case cases[] = {
      // rows 4, 2, 0; columns 1, 3, 5
      {{4, 1}, {-1, 6}, {-2, 2}, {3, 3}},
      // rows 1..3; columns 5, 4, 3, 2
      {{1, 5}, {4, 1}, {1, -1}, {3, 4}},
      // rows 3, 0 (step -3); all columns reversed
      {{3, 5}, {-1, -1}, {-3, -1}, {2, 6}},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(i64Array(c.starts) + " " + i64Array(c.limits) + " " +
                 i64Array(c.steps));
    Forward f;
    f.param("x", {5, 6});
    f.op("%y = remat.slice %x {starts = " + i64Array(c.starts) + ", limits = " +
         i64Array(c.limits) + ", steps = " + i64Array(c.steps) + "} : (" +
         T({5, 6}) + ") -> " + T(c.out));
    GradCheck(f.weighted("%y", c.out)).run();
  }
}

TEST(DataMovementGradient, GatherRepeatedAndNegativeIndices) {
  {
    // Row 1 is gathered twice (once as -4): its gradient is the sum.
    Forward f;
    f.param("x", {5, 3}).input("i", T({5}, "i64"));
    f.op("%y = remat.gather %x, %i {axis = 0 : i64} : (" + T({5, 3}) + ", " +
         T({5}, "i64") + ") -> " + T({5, 3}));
    GradCheck(f.weighted("%y", {5, 3}))
        .value("i", i64Tensor({5}, {1, -1, 3, -4, 1}))
        .run();
  }
  {
    // Axis 1 with 2-D indices: [2, 4, 3] x [2, 2] -> [2, 2, 2, 3].
    Forward f;
    f.param("x", {2, 4, 3}).input("i", T({2, 2}, "i64"));
    f.op("%y = remat.gather %x, %i {axis = 1 : i64} : (" + T({2, 4, 3}) + ", " +
         T({2, 2}, "i64") + ") -> " + T({2, 2, 2, 3}));
    GradCheck(f.weighted("%y", {2, 2, 2, 3}))
        .value("i", i64Tensor({2, 2}, {0, -1, 3, 0}))
        .run();
  }
  {
    // Last axis, 0-d index.
    Forward f;
    f.param("x", {3, 4}).input("i", T({}, "i64"));
    f.op("%y = remat.gather %x, %i {axis = 1 : i64} : (" + T({3, 4}) +
         ", tensor<i64>) -> " + T({3}));
    GradCheck(f.weighted("%y", {3})).value("i", i64Tensor({}, {-2})).run();
  }
}

TEST(DataMovementGradient, GatherElementsRepeatedNegativeAndSmallerIndices) {
  {
    // Along axis 1, with repeats (0 and -3 name the same column) that
    // accumulate.
    Forward f;
    f.param("x", {2, 3}).input("i", T({2, 4}, "i64"));
    f.op("%y = remat.gather_elements %x, %i {axis = 1 : i64} : (" + T({2, 3}) +
         ", " + T({2, 4}, "i64") + ") -> " + T({2, 4}));
    GradCheck(f.weighted("%y", {2, 4}))
        .value("i", i64Tensor({2, 4}, {0, -3, 2, 0, 1, 1, -1, 2}))
        .run();
  }
  {
    // Along axis 0 of a 3-D input, indices smaller along the other dims:
    // the elements outside them get no gradient.
    Forward f;
    f.param("x", {4, 3, 2}).input("i", T({2, 2, 1}, "i64"));
    f.op("%y = remat.gather_elements %x, %i {axis = 0 : i64} : (" +
         T({4, 3, 2}) + ", " + T({2, 2, 1}, "i64") + ") -> " + T({2, 2, 1}));
    GradCheck(f.weighted("%y", {2, 2, 1}))
        .value("i", i64Tensor({2, 2, 1}, {3, -4, 0, 3}))
        .run();
  }
}

TEST(DataMovementGradient, Expand) {
  struct Case {
    rt::Shape input, out;
  };
  const Case cases[] = {{{3, 1}, {2, 3, 4}}, {{1, 4}, {3, 4}}, {{}, {2, 3}},
                        {{2, 1, 3}, {2, 4, 3}}};
  for (const Case &c : cases) {
    SCOPED_TRACE(rt::shapeToString(c.input) + " -> " + rt::shapeToString(c.out));
    Forward f;
    f.param("x", c.input);
    f.op("%y = remat.expand %x : (" + T(c.input) + ") -> " + T(c.out));
    GradCheck(f.weighted("%y", c.out)).run();
  }
}

TEST(DataMovementGradient, PadEveryMode) {
  struct Case {
    const char *mode;
    std::vector<int64_t> pads; // begins, then ends
    rt::Shape out;
  };
  // x [3, 4]
  const Case cases[] = {
      {"constant", {1, 0, 2, 3}, {6, 7}},
      // cropping: the cropped elements get no gradient
      {"constant", {-1, 2, 1, -2}, {3, 4}},
      {"reflect", {2, 1, 1, 3}, {6, 8}},
      // pads beyond the input: reflected again (period 2 * (4 - 1))
      {"reflect", {0, 7, 0, 5}, {3, 16}},
      {"edge", {2, 0, 1, 3}, {6, 7}},
      // crop one side, pad the other, reading the cropped input
      {"edge", {-1, 2, 2, -1}, {4, 5}},
      {"wrap", {1, 5, 2, 6}, {6, 15}},
      {"reflect", {-1, -2, 1, 3}, {3, 5}},
      {"wrap", {0, -1, 0, 4}, {3, 7}},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(std::string(c.mode) + " " + i64Array(c.pads));
    Forward f;
    f.param("x", {3, 4});
    f.op("%y = remat.pad %x {mode = \"" + std::string(c.mode) + "\", pads = " +
         i64Array(c.pads) + ", value = 0.5 : f64} : (" + T({3, 4}) + ") -> " +
         T(c.out));
    GradCheck(f.weighted("%y", c.out)).run();
  }
}

TEST(DataMovementGradient, PadSingleElementDims) {
  // A size-1 dim: reflect and edge repeat its element in every position.
  for (const char *mode : {"reflect", "edge", "wrap"}) {
    SCOPED_TRACE(mode);
    Forward f;
    f.param("x", {1, 2, 3});
    f.op("%y = remat.pad %x {mode = \"" + std::string(mode) +
         "\", pads = array<i64: 2, 1, 0, 1, 0, 2>} : (" + T({1, 2, 3}) +
         ") -> " + T({4, 3, 5}));
    GradCheck(f.weighted("%y", {4, 3, 5})).run();
  }
}

TEST(DataMovementGradient, TileSumsTheTiles) {
  struct Case {
    rt::Shape input;
    std::vector<int64_t> repeats;
    rt::Shape out;
  };
  const Case cases[] = {{{2, 3}, {3, 2}, {6, 6}},
                        {{2, 1, 3}, {1, 4, 2}, {2, 4, 6}},
                        {{4}, {1}, {4}},
                        {{3, 2}, {2, 0}, {6, 0}}};
  for (const Case &c : cases) {
    SCOPED_TRACE(i64Array(c.repeats));
    Forward f;
    f.param("x", c.input);
    f.op("%y = remat.tile %x {repeats = " + i64Array(c.repeats) + "} : (" +
         T(c.input) + ") -> " + T(c.out));
    // A tanh after the tile, so that a zero-sized tile still has a loss.
    f.op("%z = remat.tanh %x : (" + T(c.input) + ") -> " + T(c.input));
    std::string ty = f.term("%y", c.out), tz = f.term("%z", c.input);
    GradCheck(f.loss({ty, tz})).run();
  }
}

TEST(DataMovementGradient, TriluUpperAndLower) {
  for (bool upper : {true, false})
    for (int64_t k : {-1, 0, 2}) {
      SCOPED_TRACE(std::string(upper ? "upper" : "lower") + " k " +
                   std::to_string(k));
      Forward f;
      f.param("x", {2, 3, 4});
      f.op("%y = remat.trilu %x {upper = " + std::string(upper ? "true" : "false") +
           ", k = " + std::to_string(k) + " : i64} : (" + T({2, 3, 4}) +
           ") -> " + T({2, 3, 4}));
      GradCheck(f.weighted("%y", {2, 3, 4})).run();
    }
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

struct LossCase {
  const char *name;
  const char *reduction;
  bool weights;
  std::optional<int64_t> ignoreIndex;
  rt::Shape scores; // [N, C, d...]
  std::vector<int64_t> labels;
};

void PrintTo(const LossCase &c, std::ostream *os) { *os << c.name; }

rt::Shape labelShape(const rt::Shape &scores) {
  rt::Shape shape = {scores[0]};
  shape.insert(shape.end(), scores.begin() + 2, scores.end());
  return shape;
}

const LossCase kLossCases[] = {
    {"Mean", "mean", false, std::nullopt, {4, 5}, {0, 3, 4, 3}},
    {"Sum", "sum", false, std::nullopt, {4, 5}, {1, 1, 2, 0}},
    {"None", "none", false, std::nullopt, {4, 5}, {4, 0, 2, 1}},
    {"MeanWeights", "mean", true, std::nullopt, {4, 5}, {0, 3, 4, 3}},
    {"SumWeights", "sum", true, std::nullopt, {4, 5}, {2, 3, 1, 1}},
    {"NoneWeights", "none", true, std::nullopt, {4, 5}, {4, 0, 2, 1}},
    // Labels equal to ignore_index contribute nothing (and leave the mean's
    // denominator).
    {"MeanIgnoreIndex", "mean", false, 2, {5, 4}, {2, 0, 3, 2, 1}},
    {"MeanWeightsIgnoreIndex", "mean", true, 2, {5, 4}, {2, 0, 3, 2, 1}},
    {"SumIgnoreNegative", "sum", true, -100, {4, 3}, {-100, 0, 2, -100}},
    {"NoneIgnoreIndex", "none", false, 0, {4, 3}, {0, 1, 2, 0}},
    // Spatial: scores [N, C, d], labels [N, d].
    {"SpatialMean", "mean", false, std::nullopt, {2, 4, 3}, {0, 3, 1, 2, 2, 0}},
    {"SpatialNoneWeightsIgnore", "none", true, 1, {2, 3, 2}, {1, 0, 2, 1}},
};

/// The loss op's line and the shape of its loss result.
std::string lossOp(const std::string &op, const LossCase &c, rt::Shape &lossShape) {
  rt::Shape labels = labelShape(c.scores);
  lossShape = std::string(c.reduction) == "none" ? labels : rt::Shape{};
  std::string operands = "%s, %l", types = T(c.scores) + ", " + T(labels, "i64");
  if (c.weights) {
    operands += ", %w";
    types += ", " + T({c.scores[1]});
  }
  std::string attrs = "{reduction = \"" + std::string(c.reduction) + "\"";
  if (c.ignoreIndex)
    attrs += ", ignore_index = " + std::to_string(*c.ignoreIndex) + " : i64";
  attrs += "}";
  std::string results = T(lossShape);
  if (op == "softmax_cross_entropy_loss")
    return "%loss, %logp = remat." + op + " " + operands + " " + attrs + " : (" +
           types + ") -> (" + results + ", " + T(c.scores) + ")";
  return "%loss = remat." + op + " " + operands + " " + attrs + " : (" + types +
         ") -> " + results;
}

Forward lossModel(const LossCase &c) {
  Forward f;
  f.param("s", c.scores).input("l", T(labelShape(c.scores), "i64"));
  if (c.weights)
    f.input("w", T({c.scores[1]}));
  return f;
}

class LossGradient : public ::testing::TestWithParam<LossCase> {
protected:
  GradCheck check(const std::string &source) {
    const LossCase &c = GetParam();
    GradCheck gc(source);
    gc.value("l", i64Tensor(labelShape(c.scores), c.labels));
    gc.fill("w", uniform(0.5, 2)); // class weights are positive
    return gc;
  }
};

TEST_P(LossGradient, SoftmaxCrossEntropy) {
  rt::Shape lossShape;
  Forward f = lossModel(GetParam());
  f.op(lossOp("softmax_cross_entropy_loss", GetParam(), lossShape));
  check(f.weighted("%loss", lossShape)).run();
}

TEST_P(LossGradient, SoftmaxCrossEntropyWithLogProbUsed) {
  // Both results reach the loss: dscores adds the log-softmax backward of
  // dlog_prob to the loss's own gradient.
  const LossCase &c = GetParam();
  rt::Shape lossShape;
  Forward f = lossModel(c);
  f.op(lossOp("softmax_cross_entropy_loss", c, lossShape));
  std::string t0 = f.term("%loss", lossShape);
  std::string t1 = f.term("%logp", c.scores);
  check(f.loss({t0, t1})).run();
}

TEST_P(LossGradient, NllLoss) {
  // The input is any float tensor (usually log-probabilities); the loss is
  // linear in it (NllOfLogSoftmax below has the usual pairing).
  const LossCase &c = GetParam();
  rt::Shape lossShape;
  Forward f = lossModel(c);
  f.op(lossOp("nll_loss", c, lossShape));
  check(f.weighted("%loss", lossShape)).run();
}

INSTANTIATE_TEST_SUITE_P(Cases, LossGradient, ::testing::ValuesIn(kLossCases),
                         [](const ::testing::TestParamInfo<LossCase> &info) {
                           return info.param.name;
                         });

TEST(LossGradient, NllOfLogSoftmax) {
  Forward f;
  f.param("x", {3, 4}).input("l", T({3}, "i64"));
  f.op("%s = remat.log_softmax %x {axis = 1 : i64} : (" + T({3, 4}) + ") -> " +
       T({3, 4}));
  f.op("%loss = remat.nll_loss %s, %l {reduction = \"mean\"} : (" + T({3, 4}) +
       ", " + T({3}, "i64") + ") -> tensor<f64>");
  GradCheck(f.returning("%loss", "tensor<f64>"))
      .value("l", i64Tensor({3}, {2, 0, 3}))
      .run();
}

TEST(LossGradient, SoftmaxCrossEntropyOnlyLogProbUsed) {
  // The loss result does not reach the loss; log_prob alone carries dy.
  Forward f;
  f.param("s", {3, 4}).input("l", T({3}, "i64"));
  f.op("%loss, %logp = remat.softmax_cross_entropy_loss %s, %l {reduction = "
       "\"mean\"} : (" + T({3, 4}) + ", " + T({3}, "i64") + ") -> (tensor<f64>, " +
       T({3, 4}) + ")");
  GradCheck(f.weighted("%logp", {3, 4})).value("l", i64Tensor({3}, {1, 0, 3})).run();
}

//===----------------------------------------------------------------------===//
// Ops where only some operands are parameters (the rules' needsGradient
// paths): each operand that is not a parameter is an input.
//===----------------------------------------------------------------------===//

/// Declares each of `names` (with `shapes`) as a parameter if `mask` has its
/// bit set, as an input otherwise.
void declare(Forward &f, const std::vector<std::string> &names,
             const std::vector<rt::Shape> &shapes, unsigned mask) {
  for (size_t i = 0; i < names.size(); ++i)
    f.arg(names[i], T(shapes[i]), (mask >> i) & 1 ? "parameter" : "input");
}

TEST(PartialGradient, MatMul) {
  for (unsigned mask : {1u, 2u}) {
    SCOPED_TRACE(mask);
    Forward f;
    declare(f, {"a", "b"}, {{2, 1, 3, 4}, {5, 6, 4}}, mask);
    f.op("%y = remat.matmul %a, %b {transpose_rhs = true} : (" + T({2, 1, 3, 4}) +
         ", " + T({5, 6, 4}) + ") -> " + T({2, 5, 3, 6}));
    GradCheck(f.weighted("%y", {2, 5, 3, 6})).run();
  }
}

TEST(PartialGradient, Conv) {
  for (unsigned mask : {1u, 2u, 4u}) {
    SCOPED_TRACE(mask);
    Forward f;
    declare(f, {"x", "w", "b"}, {{1, 4, 5, 6}, {4, 2, 2, 3}, {4}}, mask);
    // H: (5 + 1 + 0 - 2) / 2 + 1 = 3; W: (6 + 1 + 1 - 3) / 2 + 1 = 3.
    f.op("%y = remat.conv %x, %w, %b {strides = array<i64: 2, 2>, pads = "
         "array<i64: 1, 1, 0, 1>, dilations = array<i64: 1, 1>, group = 2 : i64} : (" +
         T({1, 4, 5, 6}) + ", " + T({4, 2, 2, 3}) + ", " + T({4}) + ") -> " +
         T({1, 4, 3, 3}));
    GradCheck(f.weighted("%y", {1, 4, 3, 3})).run();
  }
}

TEST(PartialGradient, LayerNorm) {
  for (unsigned mask : {1u, 2u, 4u, 6u}) {
    SCOPED_TRACE(mask);
    Forward f;
    declare(f, {"x", "g", "b"}, {{2, 3, 4}, {4}, {3, 4}}, mask);
    f.op("%y, %m, %i = remat.layer_norm %x, %g, %b {axis = 1 : i64, epsilon = "
         "1.0e-05 : f64} : (" + T({2, 3, 4}) + ", " + T({4}) + ", " + T({3, 4}) +
         ") -> (" + T({2, 3, 4}) + ", " + T({2, 1, 1}) + ", " + T({2, 1, 1}) + ")");
    GradCheck(f.weighted("%y", {2, 3, 4})).run();
  }
}

TEST(PartialGradient, BatchNorm) {
  for (const char *op : {"batch_norm_inference", "batch_norm_training"})
    for (unsigned mask : {1u, 2u, 4u, 6u}) {
      SCOPED_TRACE(std::string(op) + " " + std::to_string(mask));
      bool training = std::string(op) == "batch_norm_training";
      std::string C = T({3}), X = T({4, 3, 2});
      Forward f;
      declare(f, {"x", "g", "b"}, {{4, 3, 2}, {3}, {3}}, mask);
      f.buffer("mean", {3}).buffer("var", {3});
      std::string results = training ? "%y, %rm, %rv, %sm, %si" : "%y";
      std::string attrs = training ? "{epsilon = 1.0e-05 : f64, momentum = 0.9 : f64}"
                                   : "{epsilon = 1.0e-05 : f64}";
      std::string types = training ? "(" + X + ", " + C + ", " + C + ", " + C +
                                         ", " + C + ")"
                                   : X;
      f.op(results + " = remat." + op + " %x, %g, %b, %mean, %var " + attrs +
           " : (" + X + ", " + C + ", " + C + ", " + C + ", " + C + ") -> " + types);
      GradCheck(f.weighted("%y", {4, 3, 2})).fill("var", uniform(0.5, 2)).run();
    }
}

TEST(PartialGradient, WhereOnFalseOnly) {
  Forward f;
  f.input("c", T({2, 3}, "i1")).input("t", T({2, 3})).param("e", {1, 3});
  f.op("%y = remat.where %c, %t, %e : (" + T({2, 3}, "i1") + ", " + T({2, 3}) +
       ", " + T({1, 3}) + ") -> " + T({2, 3}));
  GradCheck(f.weighted("%y", {2, 3}))
      .value("c", boolTensor({2, 3}, {true, false, false, true, false, true}))
      .run();
}

TEST(PartialGradient, PowIntegerExponent) {
  // An i64 exponent has no gradient; the base's rule casts it to f64.
  Forward f;
  f.param("a", {2, 3}).input("n", T({3}, "i64"));
  f.op("%y = remat.pow %a, %n : (" + T({2, 3}) + ", " + T({3}, "i64") + ") -> " +
       T({2, 3}));
  GradCheck(f.weighted("%y", {2, 3}))
      .fill("a", awayFromZero(0.5, 2))
      .value("n", i64Tensor({3}, {2, 3, -1}))
      .run();
}

TEST(PartialGradient, PowConstantExponent) {
  // x ^ 1.5 with a constant exponent (only the base is differentiated).
  Forward f;
  f.param("a", {4});
  f.op("%e = remat.constant dense<1.5> : tensor<f64>");
  f.op("%y = remat.pow %a, %e : (" + T({4}) + ", tensor<f64>) -> " + T({4}));
  GradCheck(f.weighted("%y", {4})).fill("a", uniform(0.5, 2)).run();
}

//===----------------------------------------------------------------------===//
// Whole graphs
//===----------------------------------------------------------------------===//

TEST(GraphGradient, TiedWeightUsedTwice) {
  // y = tanh(x W) W^T: W gets the sum of both uses' gradients.
  Forward f;
  f.input("x", T({4, 3})).param("w", {3, 5});
  f.op("%h = remat.matmul %x, %w : (" + T({4, 3}) + ", " + T({3, 5}) + ") -> " +
       T({4, 5}));
  f.op("%a = remat.tanh %h : (" + T({4, 5}) + ") -> " + T({4, 5}));
  f.op("%y = remat.matmul %a, %w {transpose_rhs = true} : (" + T({4, 5}) + ", " +
       T({3, 5}) + ") -> " + T({4, 3}));
  GradCheck(f.weighted("%y", {4, 3})).run();
}

TEST(GraphGradient, TiedEmbeddingAndProjection) {
  // The embedding table is gathered and used as the output projection.
  Forward f;
  f.input("ids", T({3}, "i64")).param("e", {6, 4});
  f.op("%h = remat.gather %e, %ids {axis = 0 : i64} : (" + T({6, 4}) + ", " +
       T({3}, "i64") + ") -> " + T({3, 4}));
  f.op("%logits = remat.matmul %h, %e {transpose_rhs = true} : (" + T({3, 4}) +
       ", " + T({6, 4}) + ") -> " + T({3, 6}));
  f.op("%p = remat.log_softmax %logits {axis = 1 : i64} : (" + T({3, 6}) +
       ") -> " + T({3, 6}));
  GradCheck(f.weighted("%p", {3, 6})).value("ids", i64Tensor({3}, {2, 5, 2})).run();
}

TEST(GraphGradient, ParameterUsedTwiceInOneOp) {
  // x * x and x + x: both operand gradients go to the same parameter.
  Forward f;
  f.param("x", {3, 4});
  std::string X = T({3, 4});
  f.op("%sq = remat.mul %x, %x : (" + X + ", " + X + ") -> " + X);
  f.op("%d = remat.add %sq, %x : (" + X + ", " + X + ") -> " + X);
  f.op("%y = remat.div %d, %sq : (" + X + ", " + X + ") -> " + X);
  GradCheck(f.weighted("%y", {3, 4})).fill("x", awayFromZero(0.5, 2)).run();
}

TEST(GraphGradient, MlpWithAppendedCrossEntropy) {
  // Two layers; the pass appends a mean cross-entropy over the logits and a
  // `labels` input, which the check provides.
  Forward f;
  f.input("x", T({4, 3}))
      .param("w1", {3, 5})
      .param("b1", {5})
      .param("w2", {5, 3})
      .param("b2", {3});
  f.op("%0 = remat.matmul %x, %w1 : (" + T({4, 3}) + ", " + T({3, 5}) + ") -> " +
       T({4, 5}));
  f.op("%1 = remat.add %0, %b1 : (" + T({4, 5}) + ", " + T({5}) + ") -> " +
       T({4, 5}));
  f.op("%2 = remat.tanh %1 : (" + T({4, 5}) + ") -> " + T({4, 5}));
  f.op("%3 = remat.matmul %2, %w2 : (" + T({4, 5}) + ", " + T({5, 3}) + ") -> " +
       T({4, 3}));
  f.op("%4 = remat.add %3, %b2 : (" + T({4, 3}) + ", " + T({3}) + ") -> " +
       T({4, 3}));
  GradCheck(f.returning("%4", T({4, 3})))
      .loss("cross-entropy")
      .value("labels", i64Tensor({4}, {2, 0, 1, 2}))
      .run();
}

TEST(GraphGradient, MlpWithReluAndAppendedCrossEntropy) {
  // ReLU hidden layer; rank-3 logits [B, T, V] are flattened by the pass.
  Forward f;
  f.input("x", T({2, 3, 4})).param("w1", {4, 6}).param("w2", {6, 5});
  f.op("%0 = remat.matmul %x, %w1 : (" + T({2, 3, 4}) + ", " + T({4, 6}) +
       ") -> " + T({2, 3, 6}));
  f.op("%1 = remat.relu %0 : (" + T({2, 3, 6}) + ") -> " + T({2, 3, 6}));
  f.op("%2 = remat.matmul %1, %w2 : (" + T({2, 3, 6}) + ", " + T({6, 5}) +
       ") -> " + T({2, 3, 5}));
  GradCheck(f.returning("%2", T({2, 3, 5})))
      .loss("cross-entropy")
      .value("labels", i64Tensor({2, 3}, {4, 0, 1, 3, 3, 2}))
      .run();
}

TEST(GraphGradient, ResidualConvBatchNormReluBlock) {
  // A ResNet BasicBlock: conv, batch norm, relu, conv, batch norm, + x,
  // relu. The relu gradients are relu_backward from the relu outputs, the
  // batch-norm input gradients pass through the batch statistics.
  const rt::Shape xs{2, 2, 3, 3}, ws{2, 2, 3, 3};
  const std::string X = T(xs), W = T(ws), C = T({2});
  Forward f;
  f.param("x", xs).param("w1", ws).param("w2", ws);
  f.param("g1", {2}).param("b1", {2}).param("g2", {2}).param("b2", {2});
  f.buffer("m1", {2}).buffer("v1", {2}).buffer("m2", {2}).buffer("v2", {2});
  const std::string conv = " {strides = array<i64: 1, 1>, pads = array<i64: "
                           "1, 1, 1, 1>, dilations = array<i64: 1, 1>, group "
                           "= 1 : i64} : (" + X + ", " + W + ") -> " + X;
  const std::string bn = " {epsilon = 1.0e-05 : f64, momentum = 0.9 : f64} : (" +
                         X + ", " + C + ", " + C + ", " + C + ", " + C +
                         ") -> (" + X + ", " + C + ", " + C + ", " + C + ", " +
                         C + ")";
  f.op("%c1 = remat.conv %x, %w1" + conv);
  f.op("%n1, %rm1, %rv1, %sm1, %si1 = remat.batch_norm_training %c1, %g1, %b1, "
       "%m1, %v1" + bn);
  f.op("%r1 = remat.relu %n1 : (" + X + ") -> " + X);
  f.op("%c2 = remat.conv %r1, %w2" + conv);
  f.op("%n2, %rm2, %rv2, %sm2, %si2 = remat.batch_norm_training %c2, %g2, %b2, "
       "%m2, %v2" + bn);
  f.op("%s = remat.add %n2, %x : (" + X + ", " + X + ") -> " + X);
  f.op("%y = remat.relu %s : (" + X + ") -> " + X);
  GradCheck(f.weighted("%y", xs))
      .fill("v1", uniform(0.5, 2))
      .fill("v2", uniform(0.5, 2))
      .fill("g1", uniform(0.5, 1.5))
      .fill("g2", uniform(0.5, 1.5))
      .run();
}

TEST(GraphGradient, AppendedMse) {
  Forward f;
  f.input("x", T({3, 2})).param("w", {2, 4});
  f.op("%0 = remat.matmul %x, %w : (" + T({3, 2}) + ", " + T({2, 4}) + ") -> " +
       T({3, 4}));
  f.op("%1 = remat.sigmoid %0 : (" + T({3, 4}) + ") -> " + T({3, 4}));
  GradCheck(f.returning("%1", T({3, 4}))).loss("mse").run();
}

} // namespace
