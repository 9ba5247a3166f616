//===- ElementwiseTest.cpp - unary, binary, where, cast, copy, fill -------===//
//
// F16/BF16 results are checked by the rule in TestUtil.h with n = 4 (a
// formula of a few fp32 operations) and M the larger of |reference| and the
// operands' magnitudes.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <string>

using namespace remat::rt;
using namespace remat::rt::test;

namespace {

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

struct UnaryCase {
  UnaryOp op;
  std::function<double(double)> ref;
  double lo, hi;
};

std::vector<UnaryCase> floatUnaryCases() {
  return {
      {UnaryOp::Neg, [](double x) { return -x; }, -3, 3},
      {UnaryOp::Abs, [](double x) { return std::fabs(x); }, -3, 3},
      {UnaryOp::Sqrt, [](double x) { return std::sqrt(x); }, 0, 9},
      {UnaryOp::Exp, [](double x) { return std::exp(x); }, -5, 5},
      {UnaryOp::Log, [](double x) { return std::log(x); }, 0.01, 10},
      {UnaryOp::Reciprocal, [](double x) { return 1 / x; }, 0.5, 4},
      {UnaryOp::Erf, [](double x) { return std::erf(x); }, -3, 3},
      {UnaryOp::Tanh, [](double x) { return std::tanh(x); }, -3, 3},
      {UnaryOp::Sigmoid, [](double x) { return 1 / (1 + std::exp(-x)); },
       -30, 30},
      {UnaryOp::Relu, [](double x) { return x > 0 ? x : 0; }, -3, 3},
      {UnaryOp::GeluErf,
       [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); },
       -4, 4},
      {UnaryOp::GeluTanh,
       [](double x) {
         return 0.5 * x *
                (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
       },
       -4, 4},
  };
}

/// The rule's M for an elementwise result: the larger of |reference| and
/// the operands' magnitudes.
std::vector<double> elementwiseMagnitude(const std::vector<double> &reference,
                                         const std::vector<double> &a,
                                         const std::vector<double> &b = {}) {
  std::vector<double> m(reference.size());
  for (size_t i = 0; i < m.size(); ++i)
    m[i] = std::max({std::abs(reference[i]), std::abs(a[i]),
                     b.empty() ? 0.0 : std::abs(b[i])});
  return m;
}

TEST(ElementwiseTest, UnaryFloatOpsMatchReference) {
  for (DType dt : {DType::F32, DType::F64}) {
    const double tol = dt == DType::F32 ? 2e-6 : 1e-13;
    for (const UnaryCase &c : floatUnaryCases()) {
      Tensor x = randomTensor(dt, {7, 9}, 11, c.lo, c.hi);
      Tensor y(dt, {7, 9});
      unary(c.op, x.view(), y.view());
      std::vector<double> xs = values(x), expected(xs.size());
      for (size_t i = 0; i < xs.size(); ++i)
        expected[i] = c.ref(xs[i]);
      SCOPED_TRACE(static_cast<int>(c.op));
      expectAllNear(values(y), expected, tol);
    }
  }
}

//===----------------------------------------------------------------------===//
// Parameterised activations and trigonometric ops: ONNX's formulas written
// out in float64 (not the kernels' rearrangements: expm1, log1p, ...).
//===----------------------------------------------------------------------===//

UnaryParams withAlpha(double alpha, double beta = 0, double gamma = 0) {
  UnaryParams p;
  p.alpha = alpha;
  p.beta = beta;
  p.gamma = gamma;
  return p;
}

UnaryParams withBounds(double lower, double upper) {
  UnaryParams p;
  p.lower = lower;
  p.upper = upper;
  return p;
}

struct ParamUnaryCase {
  const char *name;
  UnaryOp op;
  UnaryParams params;
  std::function<double(double)> ref;
  double lo, hi;
};

std::vector<ParamUnaryCase> paramUnaryCases() {
  const double inf = std::numeric_limits<double>::infinity();
  return {
      {"leaky_relu", UnaryOp::LeakyRelu, withAlpha(0.1),
       [](double x) { return x >= 0 ? x : 0.1 * x; }, -3, 3},
      {"elu", UnaryOp::Elu, withAlpha(0.7),
       [](double x) { return x >= 0 ? x : 0.7 * (std::exp(x) - 1); }, -4, 3},
      {"selu", UnaryOp::Selu, withAlpha(1.6732632423543772, 0, 1.0507009873554805),
       [](double x) {
         const double a = 1.6732632423543772, g = 1.0507009873554805;
         return x > 0 ? g * x : g * (a * std::exp(x) - a);
       },
       -4, 3},
      {"softplus", UnaryOp::Softplus, {},
       [](double x) { return std::log(std::exp(x) + 1); }, -20, 20},
      {"softsign", UnaryOp::Softsign, {},
       [](double x) { return x / (1 + std::fabs(x)); }, -5, 5},
      {"hard_sigmoid", UnaryOp::HardSigmoid, withAlpha(0.2, 0.5),
       [](double x) { return std::max(0.0, std::min(1.0, 0.2 * x + 0.5)); },
       -5, 5},
      {"clip", UnaryOp::Clip, withBounds(-0.5, 1.25),
       [](double x) { return std::max(-0.5, std::min(1.25, x)); }, -3, 3},
      {"clip_lower_only", UnaryOp::Clip, withBounds(0.25, inf),
       [](double x) { return std::max(0.25, x); }, -3, 3},
      {"sin", UnaryOp::Sin, {}, [](double x) { return std::sin(x); }, -7, 7},
      {"cos", UnaryOp::Cos, {}, [](double x) { return std::cos(x); }, -7, 7},
  };
}

TEST(ElementwiseTest, ParameterisedUnaryOpsMatchReference) {
  for (DType dt : {DType::F32, DType::F64}) {
    const double tol = dt == DType::F32 ? 2e-6 : 1e-13;
    for (const ParamUnaryCase &c : paramUnaryCases()) {
      SCOPED_TRACE(std::string(c.name) + " " + dtypeName(dt));
      Tensor x = randomTensor(dt, {7, 9}, 13, c.lo, c.hi);
      Tensor y(dt, {7, 9});
      unary(c.op, x.view(), y.view(), c.params);
      std::vector<double> xs = values(x), expected(xs.size());
      for (size_t i = 0; i < xs.size(); ++i)
        expected[i] = c.ref(xs[i]);
      expectAllNear(values(y), expected, tol);
      // In place (the ops are InPlaceElementwise).
      unary(c.op, x.view(), x.view(), c.params);
      expectAllNear(values(x), expected, tol);
    }
  }
}

TEST(ElementwiseTest, UnaryOpsOnHalfStorage) {
  std::vector<UnaryCase> cases = floatUnaryCases();
  for (const ParamUnaryCase &c : paramUnaryCases())
    cases.push_back({c.op, c.ref, c.lo, c.hi});
  const std::vector<ParamUnaryCase> withParams = paramUnaryCases();
  for (DType dt : kHalfTypes)
    for (size_t k = 0; k < cases.size(); ++k) {
      const UnaryCase &c = cases[k];
      const size_t firstParam = cases.size() - withParams.size();
      const UnaryParams params =
          k >= firstParam ? withParams[k - firstParam].params : UnaryParams{};
      SCOPED_TRACE(std::string(dtypeName(dt)) + " op " +
                   std::to_string(static_cast<int>(c.op)));
      Tensor x = randomTensor(dt, {7, 9}, 11, c.lo, c.hi);
      Tensor y(dt, {7, 9});
      unary(c.op, x.view(), y.view(), params);
      std::vector<double> xs = values(x), expected(xs.size());
      for (size_t i = 0; i < xs.size(); ++i)
        expected[i] = c.ref(xs[i]);
      expectHalfNear(values(y), expected, dt, 4,
                     elementwiseMagnitude(expected, xs));
      unary(c.op, x.view(), x.view(), params); // in place
      expectHalfNear(values(x), expected, dt, 4,
                     elementwiseMagnitude(expected, xs));
    }
}

TEST(ElementwiseTest, ParameterisedUnaryEdgeCases) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto run = [](UnaryOp op, const UnaryParams &p, std::vector<double> in) {
    Tensor x = make(DType::F32, {static_cast<int64_t>(in.size())}, in);
    Tensor y(DType::F32, x.shape());
    unary(op, x.view(), y.view(), p);
    return values(y);
  };
  // Softplus neither overflows nor loses the tail.
  std::vector<double> sp = run(UnaryOp::Softplus, {}, {-30, 100, 1000});
  EXPECT_NEAR(sp[0], std::exp(-30.0), 1e-6 * std::exp(-30.0));
  EXPECT_EQ(sp[1], 100.0f);
  EXPECT_EQ(sp[2], 1000.0f);
  // min > max gives max everywhere (numpy.clip); NaN stays NaN.
  EXPECT_EQ(run(UnaryOp::Clip, withBounds(2, 1), {-5, 1.5, 5}),
            (std::vector<double>{1, 1, 1}));
  for (UnaryOp op : {UnaryOp::LeakyRelu, UnaryOp::Elu, UnaryOp::Selu,
                     UnaryOp::Softplus, UnaryOp::HardSigmoid, UnaryOp::Clip})
    EXPECT_TRUE(std::isnan(run(op, withAlpha(0.5, 0.5, 1), {nan})[0]))
        << static_cast<int>(op);
  // Unbounded Clip passes infinities through.
  EXPECT_EQ(run(UnaryOp::Clip, {}, {-inf, inf}),
            (std::vector<double>{-inf, inf}));
}

TEST(ElementwiseTest, ParameterisedUnaryOpsAreFloatOnly) {
  Tensor x = make(DType::I64, {2}, {-1, 1});
  Tensor y(DType::I64, {2});
  for (UnaryOp op : {UnaryOp::LeakyRelu, UnaryOp::Clip, UnaryOp::Sin})
    EXPECT_THROW(unary(op, x.view(), y.view(), withBounds(0, 1)), RuntimeError);
}

TEST(ElementwiseTest, PReluBroadcastsTheSlope) {
  for (DType dt : {DType::F32, DType::F64}) {
    const Shape xs = {2, 3, 4};
    for (const Shape &ss : {Shape{2, 3, 4}, Shape{4}, Shape{3, 1}, Shape{}}) {
      SCOPED_TRACE(shapeToString(ss) + " " + dtypeName(dt));
      Tensor x = randomTensor(dt, xs, 3, -2, 2);
      Tensor slope = randomTensor(dt, ss, 4, -1, 1);
      Tensor out(dt, xs);
      binary(BinaryOp::PRelu, x.view(), slope.view(), out.view());
      std::vector<double> xv = values(x), sv = values(slope);
      std::vector<double> expected(xv.size());
      for (size_t i = 0; i < xv.size(); ++i) {
        const double s = sv[broadcastSource(unravel(i, xs), ss)];
        expected[i] = xv[i] < 0 ? s * xv[i] : xv[i];
      }
      expectAllNear(values(out), expected, dt == DType::F32 ? 1e-6 : 1e-14);
    }
  }
  Tensor i(DType::I64, {2}), o(DType::I64, {2});
  EXPECT_THROW(binary(BinaryOp::PRelu, i.view(), i.view(), o.view()),
               RuntimeError);
}

//===----------------------------------------------------------------------===//
// activationBackward: dy times the derivative, written out in float64
//===----------------------------------------------------------------------===//

struct DerivativeCase {
  const char *name;
  UnaryOp op;
  UnaryParams params;
  std::function<double(double)> derivative;
  double lo, hi;
};

std::vector<DerivativeCase> derivativeCases() {
  auto sigmoid = [](double x) { return 1 / (1 + std::exp(-x)); };
  return {
      {"relu", UnaryOp::Relu, {}, [](double x) { return x > 0 ? 1 : 0; }, -3,
       3},
      {"leaky_relu", UnaryOp::LeakyRelu, withAlpha(0.1),
       [](double x) { return x > 0 ? 1 : 0.1; }, -3, 3},
      {"elu", UnaryOp::Elu, withAlpha(0.7),
       [](double x) { return x > 0 ? 1 : 0.7 * std::exp(x); }, -4, 3},
      {"selu", UnaryOp::Selu, withAlpha(1.5, 0, 1.2),
       [](double x) { return x > 0 ? 1.2 : 1.2 * 1.5 * std::exp(x); }, -4, 3},
      {"softplus", UnaryOp::Softplus, {}, sigmoid, -20, 20},
      {"softsign", UnaryOp::Softsign, {},
       [](double x) { return 1 / ((1 + std::fabs(x)) * (1 + std::fabs(x))); },
       -5, 5},
      {"hard_sigmoid", UnaryOp::HardSigmoid, withAlpha(0.2, 0.5),
       [](double x) {
         const double u = 0.2 * x + 0.5;
         return u > 0 && u < 1 ? 0.2 : 0.0;
       },
       -5, 5},
      {"clip", UnaryOp::Clip, withBounds(-0.5, 1.25),
       [](double x) { return x >= -0.5 && x <= 1.25 ? 1.0 : 0.0; }, -3, 3},
      {"sin", UnaryOp::Sin, {}, [](double x) { return std::cos(x); }, -7, 7},
      {"cos", UnaryOp::Cos, {}, [](double x) { return -std::sin(x); }, -7, 7},
  };
}

TEST(ElementwiseTest, ActivationBackwardMatchesReference) {
  for (DType dt : {DType::F32, DType::F64}) {
    const double tol = dt == DType::F32 ? 2e-6 : 1e-13;
    for (const DerivativeCase &c : derivativeCases()) {
      SCOPED_TRACE(std::string(c.name) + " " + dtypeName(dt));
      Tensor x = randomTensor(dt, {5, 11}, 17, c.lo, c.hi);
      Tensor dy = randomTensor(dt, {5, 11}, 18, -2, 2);
      Tensor dx(dt, {5, 11});
      activationBackward(c.op, x.view(), dy.view(), dx.view(), c.params);
      std::vector<double> xs = values(x), gs = values(dy);
      std::vector<double> expected(xs.size());
      for (size_t i = 0; i < xs.size(); ++i)
        expected[i] = gs[i] * c.derivative(xs[i]);
      expectAllNear(values(dx), expected, tol);
      // dx may be written over dy.
      activationBackward(c.op, x.view(), dy.view(), dy.view(), c.params);
      expectAllNear(values(dy), expected, tol);
    }
  }
}

TEST(ElementwiseTest, ActivationBackwardOnHalfStorage) {
  for (DType dt : kHalfTypes)
    for (const DerivativeCase &c : derivativeCases()) {
      SCOPED_TRACE(std::string(c.name) + " " + dtypeName(dt));
      Tensor x = randomTensor(dt, {5, 11}, 17, c.lo, c.hi);
      Tensor dy = randomTensor(dt, {5, 11}, 18, -2, 2);
      Tensor dx(dt, {5, 11});
      activationBackward(c.op, x.view(), dy.view(), dx.view(), c.params);
      std::vector<double> xs = values(x), gs = values(dy);
      std::vector<double> expected(xs.size());
      for (size_t i = 0; i < xs.size(); ++i)
        expected[i] = gs[i] * c.derivative(xs[i]);
      const std::vector<double> m = elementwiseMagnitude(expected, gs);
      expectHalfNear(values(dx), expected, dt, 4, m);
      activationBackward(c.op, x.view(), dy.view(), dy.view(), c.params);
      expectHalfNear(values(dy), expected, dt, 4, m);
    }
}

TEST(ElementwiseTest, ActivationBackwardAtTheKinks) {
  // PyTorch's one-sided choices: x <= 0 takes the negative side; HardSigmoid
  // is 0 where it saturates exactly; Clip includes both bounds.
  auto run = [](UnaryOp op, const UnaryParams &p, std::vector<double> in) {
    const int64_t n = static_cast<int64_t>(in.size());
    Tensor x = make(DType::F64, {n}, in);
    Tensor dy = make(DType::F64, {n}, std::vector<double>(in.size(), 2.0));
    Tensor dx(DType::F64, {n});
    activationBackward(op, x.view(), dy.view(), dx.view(), p);
    return values(dx);
  };
  // Relu: 0 at 0, and where x is NaN (relu_backward passes relu's output,
  // which is NaN exactly where the input is).
  std::vector<double> relu = run(UnaryOp::Relu, {}, {0, -0.5, 0.5, NAN});
  EXPECT_EQ(relu, (std::vector<double>{0, 0, 2, 0}));
  EXPECT_EQ(run(UnaryOp::LeakyRelu, withAlpha(0.25), {0}),
            (std::vector<double>{0.5}));
  EXPECT_EQ(run(UnaryOp::Elu, withAlpha(0.25), {0}), (std::vector<double>{0.5}));
  EXPECT_EQ(run(UnaryOp::Selu, withAlpha(0.25, 0, 2), {0}),
            (std::vector<double>{1.0}));
  EXPECT_EQ(run(UnaryOp::HardSigmoid, withAlpha(0.25, 0.5), {-2, 2, 0}),
            (std::vector<double>{0, 0, 0.5}));
  EXPECT_EQ(run(UnaryOp::Clip, withBounds(-1, 1), {-1, 1, -1.5, 1.5}),
            (std::vector<double>{2, 2, 0, 0}));
}

TEST(ElementwiseTest, ActivationBackwardRejectsOtherOpsAndBadOperands) {
  Tensor x(DType::F32, {3}), dy(DType::F32, {3}), dx(DType::F32, {3});
  EXPECT_THROW(activationBackward(UnaryOp::Tanh, x.view(), dy.view(),
                                  dx.view(), {}),
               RuntimeError);
  Tensor wrongShape(DType::F32, {4}), wrongType(DType::F64, {3});
  EXPECT_THROW(activationBackward(UnaryOp::Sin, x.view(), wrongShape.view(),
                                  dx.view(), {}),
               RuntimeError);
  EXPECT_THROW(activationBackward(UnaryOp::Sin, x.view(), dy.view(),
                                  wrongType.view(), {}),
               RuntimeError);
}

TEST(ElementwiseTest, SigmoidIsStableForLargeMagnitudes) {
  Tensor x = make(DType::F32, {4}, {-1000, -90, 90, 1000});
  Tensor y(DType::F32, {4});
  unary(UnaryOp::Sigmoid, x.view(), y.view());
  std::vector<double> v = values(y);
  EXPECT_EQ(v[0], 0.0);
  EXPECT_GE(v[1], 0.0);
  EXPECT_LT(v[1], 1e-30);
  EXPECT_EQ(v[2], 1.0);
  EXPECT_EQ(v[3], 1.0);
}

TEST(ElementwiseTest, UnaryIntegerOps) {
  for (DType dt : {DType::I64, DType::I32}) {
    Tensor x = make(dt, {5}, {-7, -1, 0, 3, 42});
    Tensor y(dt, {5});
    unary(UnaryOp::Neg, x.view(), y.view());
    EXPECT_EQ(values(y), (std::vector<double>{7, 1, 0, -3, -42}));
    unary(UnaryOp::Abs, x.view(), y.view());
    EXPECT_EQ(values(y), (std::vector<double>{7, 1, 0, 3, 42}));
    unary(UnaryOp::Relu, x.view(), y.view());
    EXPECT_EQ(values(y), (std::vector<double>{0, 0, 0, 3, 42}));
    EXPECT_THROW(unary(UnaryOp::Exp, x.view(), y.view()), RuntimeError);
  }
}

TEST(ElementwiseTest, NotOnBool) {
  Tensor x = make(DType::Bool, {3}, {1, 0, 1});
  Tensor y(DType::Bool, {3});
  unary(UnaryOp::Not, x.view(), y.view());
  EXPECT_EQ(values(y), (std::vector<double>{0, 1, 0}));
  Tensor f(DType::F32, {3});
  EXPECT_THROW(unary(UnaryOp::Not, f.view(), f.view()), RuntimeError);
}

TEST(ElementwiseTest, UnaryRejectsUnsupportedDtype) {
  Tensor h(DType::U8, {2});
  try {
    unary(UnaryOp::Exp, h.view(), h.view());
    FAIL() << "expected RuntimeError";
  } catch (const RuntimeError &e) {
    EXPECT_NE(std::string(e.what()).find("unary"), std::string::npos);
  }
}

//===----------------------------------------------------------------------===//
// Binary: every arithmetic op, several broadcast patterns, all arith dtypes,
// against a naive loop over output indices.
//===----------------------------------------------------------------------===//

double refBinary(BinaryOp op, double a, double b, bool integer) {
  switch (op) {
  case BinaryOp::Add: return a + b;
  case BinaryOp::Sub: return a - b;
  case BinaryOp::Mul: return a * b;
  case BinaryOp::Div: return integer ? std::trunc(a / b) : a / b;
  case BinaryOp::Max: return std::max(a, b);
  case BinaryOp::Min: return std::min(a, b);
  case BinaryOp::Pow: return std::pow(a, b);
  case BinaryOp::Equal: return a == b;
  case BinaryOp::Less: return a < b;
  case BinaryOp::Greater: return a > b;
  case BinaryOp::And: return a != 0 && b != 0;
  case BinaryOp::Or: return a != 0 || b != 0;
  case BinaryOp::PRelu: return a < 0 ? a * b : a;
  }
  return 0;
}

struct ShapeCase {
  Shape a, b, out;
};

const std::vector<ShapeCase> &broadcastCases() {
  static const std::vector<ShapeCase> cases = {
      {{2, 3, 4}, {2, 3, 4}, {2, 3, 4}}, // same shape
      {{2, 3, 4}, {}, {2, 3, 4}},        // scalar right
      {{1}, {2, 3, 4}, {2, 3, 4}},       // scalar-like left
      {{2, 3, 4}, {4}, {2, 3, 4}},       // row vector (bias add)
      {{2, 3, 4}, {3, 1}, {2, 3, 4}},    // column
      {{3, 1}, {1, 4}, {3, 4}},          // outer product pattern
      {{2, 1, 4}, {1, 3, 1}, {2, 3, 4}}, // both broadcast, interleaved
      {{5, 1, 1, 2}, {3, 1, 1}, {5, 3, 1, 2}},
  };
  return cases;
}

void checkBinary(BinaryOp op, DType dt, DType outDt, const ShapeCase &sc,
                 double lo, double hi) {
  const bool integer = dt == DType::I64 || dt == DType::I32;
  std::vector<double> av = randomValues(numElements(sc.a), 1, lo, hi);
  std::vector<double> bv = randomValues(numElements(sc.b), 2, lo, hi);
  if (integer) {
    for (double &v : av)
      v = std::round(v);
    for (double &v : bv)
      v = std::round(v) == 0 ? 3 : std::round(v); // no division by zero
  }
  Tensor a = make(dt, sc.a, av), b = make(dt, sc.b, bv);
  Tensor out(outDt, sc.out);
  binary(op, a.view(), b.view(), out.view());
  std::vector<double> ra = values(a), rb = values(b);
  std::vector<double> expected(out.numel()), aOut(out.numel()),
      bOut(out.numel());
  for (int64_t i = 0; i < out.numel(); ++i) {
    std::vector<int64_t> idx = unravel(i, sc.out);
    aOut[i] = ra[broadcastSource(idx, sc.a)];
    bOut[i] = rb[broadcastSource(idx, sc.b)];
    expected[i] = refBinary(op, aOut[i], bOut[i], integer);
  }
  if (dt == DType::F16 || dt == DType::BF16) {
    expectHalfNear(values(out), expected, dt, 4,
                   elementwiseMagnitude(expected, aOut, bOut));
    return;
  }
  const double tol = dt == DType::F32 ? 1e-6 : 1e-13;
  expectAllNear(values(out), expected, tol);
}

TEST(ElementwiseTest, BinaryArithmeticBroadcasts) {
  for (BinaryOp op : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul,
                      BinaryOp::Div, BinaryOp::Max, BinaryOp::Min})
    for (DType dt : {DType::F32, DType::F64, DType::I64, DType::I32})
      for (const ShapeCase &sc : broadcastCases()) {
        SCOPED_TRACE(shapeToString(sc.a) + " op " + shapeToString(sc.b));
        checkBinary(op, dt, dt, sc, -20, 20);
      }
}

TEST(ElementwiseTest, BinaryComparisonsProduceBool) {
  for (BinaryOp op : {BinaryOp::Equal, BinaryOp::Less, BinaryOp::Greater})
    for (DType dt : {DType::F32, DType::F64, DType::I64, DType::I32})
      for (const ShapeCase &sc : broadcastCases())
        checkBinary(op, dt, DType::Bool, sc, -2, 2); // integers collide often
}

TEST(ElementwiseTest, BinaryOpsOnHalfStorage) {
  for (DType dt : kHalfTypes)
    for (const ShapeCase &sc : broadcastCases()) {
      SCOPED_TRACE(std::string(dtypeName(dt)) + " " + shapeToString(sc.a) +
                   " op " + shapeToString(sc.b));
      for (BinaryOp op : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul,
                          BinaryOp::Div, BinaryOp::Max, BinaryOp::Min,
                          BinaryOp::PRelu})
        checkBinary(op, dt, dt, sc, -20, 20);
      // Comparisons of the widened values are exact.
      for (BinaryOp op : {BinaryOp::Equal, BinaryOp::Less, BinaryOp::Greater})
        checkBinary(op, dt, DType::Bool, sc, -2, 2);
    }
}

TEST(ElementwiseTest, BinaryLogicalOnBool) {
  Tensor a = make(DType::Bool, {2, 2}, {0, 0, 1, 1});
  Tensor b = make(DType::Bool, {2}, {0, 1});
  Tensor out(DType::Bool, {2, 2});
  binary(BinaryOp::And, a.view(), b.view(), out.view());
  EXPECT_EQ(values(out), (std::vector<double>{0, 0, 0, 1}));
  binary(BinaryOp::Or, a.view(), b.view(), out.view());
  EXPECT_EQ(values(out), (std::vector<double>{0, 1, 1, 1}));
}

TEST(ElementwiseTest, IntegerDivisionTruncatesTowardZero) {
  Tensor a = make(DType::I64, {4}, {-7, 7, -7, 7});
  Tensor b = make(DType::I64, {4}, {2, -2, -2, 2});
  Tensor out(DType::I64, {4});
  binary(BinaryOp::Div, a.view(), b.view(), out.view());
  EXPECT_EQ(values(out), (std::vector<double>{-3, -3, 3, 3}));
  Tensor zero = make(DType::I64, {1}, {0});
  EXPECT_THROW(binary(BinaryOp::Div, a.view(), zero.view(), out.view()),
               RuntimeError);
}

TEST(ElementwiseTest, PowWithFloatAndIntegerExponent) {
  Tensor base = make(DType::F32, {2, 3}, {1, 2, 3, 0.5, 4, 9});
  Tensor expInt = make(DType::I64, {3}, {0, 2, 3});
  Tensor out(DType::F32, {2, 3});
  binary(BinaryOp::Pow, base.view(), expInt.view(), out.view());
  expectAllNear(values(out), {1, 4, 27, 1, 16, 729}, 1e-6);
  Tensor expHalf = make(DType::F32, {}, {0.5});
  binary(BinaryOp::Pow, base.view(), expHalf.view(), out.view());
  expectAllNear(values(out),
                {1, std::sqrt(2.0), std::sqrt(3.0), std::sqrt(0.5), 2, 3},
                1e-6);
}

TEST(ElementwiseTest, PowOnHalfStorage) {
  for (DType dt : kHalfTypes) {
    SCOPED_TRACE(dtypeName(dt));
    Tensor base = randomTensor(dt, {4, 5}, 21, 0.25, 3);
    Tensor out(dt, {4, 5});
    // Integer exponent, a float exponent of the base's dtype, and one of
    // another float dtype.
    const std::vector<double> ints = {0, 1, 2, 3, -2};
    Tensor expInt = make(DType::I64, {5}, ints);
    Tensor expHalf = randomTensor(dt, {4, 5}, 22, -2, 2);
    Tensor expF32 = make(DType::F32, {}, {0.5});
    for (const Tensor *e : {&expInt, &expHalf, &expF32}) {
      binary(BinaryOp::Pow, base.view(), e->view(), out.view());
      std::vector<double> bv = values(base), ev = values(*e);
      std::vector<double> expected(bv.size());
      for (size_t i = 0; i < bv.size(); ++i)
        expected[i] = std::pow(
            bv[i], ev[broadcastSource(unravel(i, {4, 5}), e->shape())]);
      expectHalfNear(values(out), expected, dt, 4);
    }
  }
}

TEST(ElementwiseTest, MaxMinPropagateNan) {
  const double nan = std::nan("");
  Tensor a = make(DType::F64, {3}, {nan, 1, 2});
  Tensor b = make(DType::F64, {3}, {1, nan, 0});
  Tensor out(DType::F64, {3});
  for (BinaryOp op : {BinaryOp::Max, BinaryOp::Min}) {
    binary(op, a.view(), b.view(), out.view());
    std::vector<double> v = values(out);
    EXPECT_TRUE(std::isnan(v[0]));
    EXPECT_TRUE(std::isnan(v[1]));
    EXPECT_EQ(v[2], op == BinaryOp::Max ? 2 : 0);
  }
}

TEST(ElementwiseTest, BinaryRejectsBadShapesAndDtypes) {
  Tensor a(DType::F32, {2, 3}), b(DType::F32, {4}), out(DType::F32, {2, 3});
  EXPECT_THROW(binary(BinaryOp::Add, a.view(), b.view(), out.view()),
               RuntimeError);
  Tensor c(DType::F64, {3});
  EXPECT_THROW(binary(BinaryOp::Add, a.view(), c.view(), out.view()),
               RuntimeError);
  Tensor u(DType::U8, {3});
  EXPECT_THROW(binary(BinaryOp::Add, u.view(), u.view(), u.view()),
               RuntimeError);
}

//===----------------------------------------------------------------------===//
// Where, cast, copy, fill
//===----------------------------------------------------------------------===//

TEST(ElementwiseTest, WhereBroadcastsAllOperands) {
  for (DType dt : {DType::F32, DType::I64, DType::F16, DType::U8}) {
    Tensor cond = make(DType::Bool, {3, 1}, {1, 0, 1});
    Tensor x = make(dt, {4}, {1, 2, 3, 4});
    Tensor y = make(dt, {2, 1, 1}, {10, 20});
    Tensor out(dt, {2, 3, 4});
    where(cond.view(), x.view(), y.view(), out.view());
    std::vector<double> expected;
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 4; ++k)
          expected.push_back(j != 1 ? k + 1 : 10 * (i + 1));
    EXPECT_EQ(values(out), expected);
  }
}

TEST(ElementwiseTest, CastConversions) {
  Tensor f = make(DType::F32, {6}, {-2.7, -0.5, 0, 0.5, 2.7, 300.2});
  Tensor i(DType::I32, {6});
  cast(f.view(), i.view());
  EXPECT_EQ(values(i), (std::vector<double>{-2, 0, 0, 0, 2, 300}));
  Tensor b(DType::Bool, {6});
  cast(f.view(), b.view());
  EXPECT_EQ(values(b), (std::vector<double>{1, 1, 0, 1, 1, 1}));
  Tensor back(DType::F64, {6});
  cast(b.view(), back.view());
  EXPECT_EQ(values(back), (std::vector<double>{1, 1, 0, 1, 1, 1}));
  // Integer narrowing wraps (two's complement).
  Tensor big = make(DType::I64, {3}, {300, -129, 127});
  Tensor small(DType::I8, {3});
  cast(big.view(), small.view());
  EXPECT_EQ(values(small), (std::vector<double>{44, 127, 127}));
  // Large int64 values survive a round trip through F64 exactly.
  Tensor wide(DType::I64, {1});
  wide.as<int64_t>()[0] = (int64_t(1) << 52) + 1;
  Tensor d(DType::F64, {1});
  cast(wide.view(), d.view());
  Tensor wide2(DType::I64, {1});
  cast(d.view(), wide2.view());
  EXPECT_EQ(wide2.as<int64_t>()[0], (int64_t(1) << 52) + 1);
}

TEST(ElementwiseTest, CastThroughHalfAndBfloat16) {
  std::vector<double> v = {1, -2.5, 0.1, 1000, 65504, 3.14159};
  Tensor f = make(DType::F32, {6}, v);
  for (DType narrow : {DType::F16, DType::BF16}) {
    Tensor h(narrow, {6}), r(DType::F32, {6});
    cast(f.view(), h.view());
    cast(h.view(), r.view());
    std::vector<double> out = values(r);
    for (size_t k = 0; k < v.size(); ++k) {
      float in = static_cast<float>(v[k]);
      float expected = narrow == DType::F16
                           ? halfToFloat(floatToHalf(in))
                           : bfloat16ToFloat(floatToBfloat16(in));
      EXPECT_EQ(out[k], expected);
      EXPECT_NEAR(out[k], v[k], std::abs(v[k]) * (narrow == DType::F16
                                                      ? 0x1p-11
                                                      : 0x1p-8));
    }
    // Half to int truncates too.
    Tensor i(DType::I64, {6});
    cast(h.view(), i.view());
    EXPECT_EQ(values(i)[1], -2);
  }
}

TEST(ElementwiseTest, CopyReshapesAndFillConverts) {
  Tensor x = make(DType::I32, {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor y(DType::I32, {3, 2});
  copy(x.view(), y.view());
  EXPECT_EQ(values(y), values(x));
  Tensor wrong(DType::I32, {5});
  EXPECT_THROW(copy(x.view(), wrong.view()), RuntimeError);

  Tensor f(DType::F32, {4});
  fill(f.view(), 2.5);
  EXPECT_EQ(values(f), (std::vector<double>(4, 2.5)));
  Tensor i(DType::I64, {2});
  fill(i.view(), -3.9);
  EXPECT_EQ(values(i), (std::vector<double>(2, -3)));
  Tensor h(DType::F16, {2});
  fill(h.view(), 0.333);
  EXPECT_EQ(values(h)[0], halfToFloat(floatToHalf(0.333f)));
  Tensor b(DType::Bool, {2});
  fill(b.view(), 7);
  EXPECT_EQ(values(b), (std::vector<double>(2, 1)));
}

} // namespace
