//===- Elementwise.cpp - Unary, binary, where, cast, copy, fill -----------===//
//
// Float math runs in the compute type of the storage type (FloatStorage.h):
// F32 and F64 in their own precision, F16 and BF16 widened to float on load
// and rounded to nearest even on store.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/Kernels.h"

#include "DTypeDispatch.h"
#include "common/StridedLoop.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace remat::rt {
using namespace cpu;

namespace {

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

/// y[i] = op(x[i]) with op on T's compute type.
template <typename T, typename Op>
void unaryLoop(const TensorView &x, const TensorView &y, Op op) {
  const T *in = x.as<const T>();
  T *out = y.as<T>();
  for (int64_t i = 0, n = x.numel(); i < n; ++i)
    out[i] = fromCompute<T>(op(toCompute(in[i])));
}

// Integer negation/abs wrap on the minimum value instead of overflowing (UB).
template <typename T> T wrapNeg(T v) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(U(0) - static_cast<U>(v));
}

template <typename T> void unaryInteger(UnaryOp op, const TensorView &x,
                                        const TensorView &y) {
  switch (op) {
  case UnaryOp::Neg: return unaryLoop<T>(x, y, [](T v) { return wrapNeg(v); });
  case UnaryOp::Abs:
    return unaryLoop<T>(x, y, [](T v) { return v < 0 ? wrapNeg(v) : v; });
  case UnaryOp::Relu:
    return unaryLoop<T>(x, y, [](T v) { return v > 0 ? v : T(0); });
  default: fail("unary", "op is not defined on integer dtypes");
  }
}

template <typename T> void unaryFloat(UnaryOp op, const TensorView &x,
                                      const TensorView &y,
                                      const UnaryParams &params) {
  // The parameters in the compute precision, so that fp32 math stays fp32.
  using C = ComputeType<T>;
  const C alpha = static_cast<C>(params.alpha);
  const C beta = static_cast<C>(params.beta);
  const C gamma = static_cast<C>(params.gamma);
  const C lower = static_cast<C>(params.lower);
  const C upper = static_cast<C>(params.upper);
  switch (op) {
  case UnaryOp::Neg: return unaryLoop<T>(x, y, [](C v) { return -v; });
  case UnaryOp::Abs: return unaryLoop<T>(x, y, [](C v) { return std::abs(v); });
  case UnaryOp::Sqrt:
    return unaryLoop<T>(x, y, [](C v) { return std::sqrt(v); });
  case UnaryOp::Exp: return unaryLoop<T>(x, y, [](C v) { return std::exp(v); });
  case UnaryOp::Log: return unaryLoop<T>(x, y, [](C v) { return std::log(v); });
  case UnaryOp::Reciprocal:
    return unaryLoop<T>(x, y, [](C v) { return C(1) / v; });
  case UnaryOp::Erf: return unaryLoop<T>(x, y, [](C v) { return std::erf(v); });
  case UnaryOp::Tanh:
    return unaryLoop<T>(x, y, [](C v) { return std::tanh(v); });
  case UnaryOp::Sigmoid:
    // Split by sign so exp never overflows.
    return unaryLoop<T>(x, y, [](C v) {
      if (v >= 0)
        return C(1) / (C(1) + std::exp(-v));
      C e = std::exp(v);
      return e / (C(1) + e);
    });
  case UnaryOp::Relu:
    // Written so NaN propagates (v > 0 is false for NaN, but v < 0 is too).
    return unaryLoop<T>(x, y, [](C v) { return v < 0 ? C(0) : v; });
  case UnaryOp::GeluErf:
    return unaryLoop<T>(x, y, [](C v) {
      return v * C(0.5) * (C(1) + std::erf(v * C(0.7071067811865476)));
    });
  case UnaryOp::GeluTanh:
    return unaryLoop<T>(x, y, [](C v) {
      const C k = C(0.7978845608028654); // sqrt(2 / pi)
      return v * C(0.5) * (C(1) + std::tanh(k * (v + C(0.044715) * v * v * v)));
    });
  // The comparisons are written so that NaN propagates.
  case UnaryOp::LeakyRelu:
    return unaryLoop<T>(x, y, [=](C v) { return v < 0 ? alpha * v : v; });
  case UnaryOp::Elu:
    return unaryLoop<T>(x, y,
                        [=](C v) { return v < 0 ? alpha * std::expm1(v) : v; });
  case UnaryOp::Selu:
    return unaryLoop<T>(x, y, [=](C v) {
      return v > 0 ? gamma * v : gamma * alpha * std::expm1(v);
    });
  case UnaryOp::Softplus:
    // max(x, 0) + log1p(exp(-|x|)): exp never overflows.
    return unaryLoop<T>(x, y, [](C v) {
      return (v > 0 ? v : C(0)) + std::log1p(std::exp(-std::abs(v)));
    });
  case UnaryOp::Softsign:
    return unaryLoop<T>(x, y, [](C v) { return v / (C(1) + std::abs(v)); });
  case UnaryOp::HardSigmoid:
    return unaryLoop<T>(x, y, [=](C v) {
      const C u = alpha * v + beta;
      return u < 0 ? C(0) : u > 1 ? C(1) : u;
    });
  case UnaryOp::Clip:
    return unaryLoop<T>(x, y, [=](C v) {
      const C low = v < lower ? lower : v;
      return low > upper ? upper : low;
    });
  case UnaryOp::Sin: return unaryLoop<T>(x, y, [](C v) { return std::sin(v); });
  case UnaryOp::Cos: return unaryLoop<T>(x, y, [](C v) { return std::cos(v); });
  case UnaryOp::Not: fail("unary", "Not is defined on bool only");
  }
  fail("unary", "unknown op");
}

//===----------------------------------------------------------------------===//
// Binary
//===----------------------------------------------------------------------===//

// Integer arithmetic wraps (two's complement) rather than invoking UB.
template <typename T, typename F> T wrapping(T a, T b, F f) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(f(static_cast<U>(a), static_cast<U>(b)));
}

struct AddOp {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>)
      return wrapping(a, b, [](auto x, auto y) { return x + y; });
    else
      return a + b;
  }
};
struct SubOp {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>)
      return wrapping(a, b, [](auto x, auto y) { return x - y; });
    else
      return a - b;
  }
};
struct MulOp {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>)
      return wrapping(a, b, [](auto x, auto y) { return x * y; });
    else
      return a * b;
  }
};
struct DivOp {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0)
        fail("binary", "integer division by zero");
      if (b == -1) // min / -1 overflows
        return wrapNeg(a);
    }
    return a / b; // C++ integer division truncates toward zero, as ONNX
  }
};
// Max/Min propagate NaN (as numpy.maximum) instead of depending on order.
struct MaxOp {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(a) || std::isnan(b))
        return a + b;
    return a < b ? b : a;
  }
};
struct MinOp {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(a) || std::isnan(b))
        return a + b;
    return b < a ? b : a;
  }
};
/// PRelu: the slope applies to negative inputs (NaN propagates).
struct PReluOp {
  template <typename T> T operator()(T a, T slope) const {
    return a < 0 ? a * slope : a;
  }
};
struct PowOp {
  template <typename T, typename E> T operator()(T a, E b) const {
    return static_cast<T>(std::pow(a, static_cast<T>(b)));
  }
};
struct EqualOp {
  template <typename T> Bool operator()(T a, T b) const { return {a == b}; }
};
struct LessOp {
  template <typename T> Bool operator()(T a, T b) const { return {a < b}; }
};
struct GreaterOp {
  template <typename T> Bool operator()(T a, T b) const { return {a > b}; }
};

/// op on the operands' compute types, its result stored as R (a Bool
/// result as it is).
template <typename R, typename Op> struct Widened {
  Op op;
  template <typename A, typename B> R operator()(A a, B b) const {
    return fromCompute<R>(op(toCompute(a), toCompute(b)));
  }
};

/// One broadcast run. The special cases let the compiler vectorise the common
/// same-shape and scalar-operand loops.
template <typename A, typename B, typename R, typename Op>
void binaryRun(const A *a, int64_t as, const B *b, int64_t bs, R *out,
               int64_t n, Op computeOp) {
  const Widened<R, Op> op{computeOp};
  if (as == 1 && bs == 1) {
    for (int64_t i = 0; i < n; ++i)
      out[i] = op(a[i], b[i]);
  } else if (as == 1 && bs == 0) {
    const B bv = *b;
    for (int64_t i = 0; i < n; ++i)
      out[i] = op(a[i], bv);
  } else if (as == 0 && bs == 1) {
    const A av = *a;
    for (int64_t i = 0; i < n; ++i)
      out[i] = op(av, b[i]);
  } else {
    for (int64_t i = 0; i < n; ++i)
      out[i] = op(a[i * as], b[i * bs]);
  }
}

template <typename A, typename B, typename R, typename Op>
void broadcastBinary(const TensorView &a, const TensorView &b,
                     const TensorView &out, Op op) {
  const A *pa = a.as<const A>();
  const B *pb = b.as<const B>();
  R *po = out.as<R>();
  std::array<Strides, 3> strides = {
      broadcastStrides(a.shape, out.shape, "binary"),
      broadcastStrides(b.shape, out.shape, "binary"),
      contiguousStrides(out.shape)};
  forEachRun<3>(out.shape, strides,
                [&](const std::array<int64_t, 3> &off,
                    const std::array<int64_t, 3> &st, int64_t n) {
                  binaryRun(pa + off[0], st[0], pb + off[1], st[1],
                            po + off[2], n, op);
                });
}

// Bool operands are read as their byte; comparisons and logic produce Bool.
struct BoolAndOp {
  Bool operator()(Bool a, Bool b) const { return {a.value && b.value}; }
};
struct BoolOrOp {
  Bool operator()(Bool a, Bool b) const { return {a.value || b.value}; }
};

template <typename Op>
void arithmeticBinary(const TensorView &a, const TensorView &b,
                      const TensorView &out, Op op) {
  requireDType(out, a.dtype, "binary", "output");
  dispatchArithStorage(a.dtype, "binary", [&](auto tag) {
    using T = typename decltype(tag)::type;
    broadcastBinary<T, T, T>(a, b, out, op);
  });
}

template <typename Op>
void comparisonBinary(const TensorView &a, const TensorView &b,
                      const TensorView &out, Op op) {
  requireDType(out, DType::Bool, "binary", "output");
  if (a.dtype == DType::Bool) {
    broadcastBinary<uint8_t, uint8_t, Bool>(a, b, out, op);
    return;
  }
  dispatchArithStorage(a.dtype, "binary", [&](auto tag) {
    using T = typename decltype(tag)::type;
    broadcastBinary<T, T, Bool>(a, b, out, op);
  });
}

//===----------------------------------------------------------------------===//
// Scalar conversion for cast and fill: every storage type goes through
// double (floats) or int64_t (integers); Bool becomes 0/1.
//===----------------------------------------------------------------------===//

template <typename T> auto widen(T v) {
  if constexpr (std::is_same_v<T, Half>)
    return static_cast<double>(halfToFloat(v.bits));
  else if constexpr (std::is_same_v<T, BFloat16>)
    return static_cast<double>(bfloat16ToFloat(v.bits));
  else if constexpr (std::is_same_v<T, Bool>)
    return static_cast<int64_t>(v.value != 0);
  else if constexpr (std::is_floating_point_v<T>)
    return static_cast<double>(v);
  else
    return static_cast<int64_t>(v);
}

/// Float to integer truncates toward zero; out-of-range values saturate and
/// NaN becomes 0 (ONNX leaves both undefined; C++ would make them UB).
template <typename I> I saturatingTruncate(double v) {
  if (std::isnan(v))
    return 0;
  if (v <= static_cast<double>(std::numeric_limits<I>::min()))
    return std::numeric_limits<I>::min();
  if (v >= static_cast<double>(std::numeric_limits<I>::max()))
    return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

template <typename D, typename W> D narrow(W v) {
  if constexpr (std::is_same_v<D, Bool>)
    return {static_cast<uint8_t>(v != 0)};
  else if constexpr (std::is_same_v<D, Half>)
    return {floatToHalf(static_cast<float>(v))};
  else if constexpr (std::is_same_v<D, BFloat16>)
    return {floatToBfloat16(static_cast<float>(v))};
  else if constexpr (std::is_floating_point_v<D>)
    return static_cast<D>(v);
  else if constexpr (std::is_floating_point_v<W>)
    return saturatingTruncate<D>(v);
  else
    return static_cast<D>(v); // integer to integer wraps
}

} // namespace

void unary(UnaryOp op, const TensorView &x, const TensorView &y,
           const UnaryParams &params) {
  requireDType(y, x.dtype, "unary", "output");
  requireNumel(y, x.numel(), "unary", "output");
  if (op == UnaryOp::Not) {
    requireDType(x, DType::Bool, "unary", "Not input");
    return unaryLoop<uint8_t>(x, y, [](uint8_t v) { return uint8_t(v == 0); });
  }
  switch (x.dtype) {
  case DType::F32: return unaryFloat<float>(op, x, y, params);
  case DType::F64: return unaryFloat<double>(op, x, y, params);
  case DType::F16: return unaryFloat<Half>(op, x, y, params);
  case DType::BF16: return unaryFloat<BFloat16>(op, x, y, params);
  case DType::I64: return unaryInteger<int64_t>(op, x, y);
  case DType::I32: return unaryInteger<int32_t>(op, x, y);
  default: unsupportedDType("unary", x.dtype);
  }
}

void binary(BinaryOp op, const TensorView &a, const TensorView &b,
            const TensorView &out) {
  if (op != BinaryOp::Pow)
    requireDType(b, a.dtype, "binary", "second operand");
  switch (op) {
  case BinaryOp::Add: return arithmeticBinary(a, b, out, AddOp{});
  case BinaryOp::Sub: return arithmeticBinary(a, b, out, SubOp{});
  case BinaryOp::Mul: return arithmeticBinary(a, b, out, MulOp{});
  case BinaryOp::Div: return arithmeticBinary(a, b, out, DivOp{});
  case BinaryOp::Max: return arithmeticBinary(a, b, out, MaxOp{});
  case BinaryOp::Min: return arithmeticBinary(a, b, out, MinOp{});
  case BinaryOp::Pow:
    requireDType(out, a.dtype, "binary", "output");
    return dispatchFloatStorage(a.dtype, "binary(Pow)", [&](auto baseTag) {
      using T = typename decltype(baseTag)::type;
      dispatchArithStorage(b.dtype, "binary(Pow) exponent", [&](auto expTag) {
        using E = typename decltype(expTag)::type;
        broadcastBinary<T, E, T>(a, b, out, PowOp{});
      });
    });
  case BinaryOp::PRelu:
    requireDType(out, a.dtype, "binary", "output");
    return dispatchFloatStorage(a.dtype, "binary(PRelu)", [&](auto tag) {
      using T = typename decltype(tag)::type;
      broadcastBinary<T, T, T>(a, b, out, PReluOp{});
    });
  case BinaryOp::Equal: return comparisonBinary(a, b, out, EqualOp{});
  case BinaryOp::Less: return comparisonBinary(a, b, out, LessOp{});
  case BinaryOp::Greater: return comparisonBinary(a, b, out, GreaterOp{});
  case BinaryOp::And:
  case BinaryOp::Or:
    requireDType(a, DType::Bool, "binary", "logical operand");
    requireDType(out, DType::Bool, "binary", "output");
    if (op == BinaryOp::And)
      broadcastBinary<Bool, Bool, Bool>(a, b, out, BoolAndOp{});
    else
      broadcastBinary<Bool, Bool, Bool>(a, b, out, BoolOrOp{});
    return;
  }
  fail("binary", "unknown op");
}

void where(const TensorView &cond, const TensorView &x, const TensorView &y,
           const TensorView &out) {
  requireDType(cond, DType::Bool, "where", "condition");
  requireDType(x, out.dtype, "where", "x");
  requireDType(y, out.dtype, "where", "y");
  const uint8_t *pc = cond.as<const uint8_t>();
  dispatchBySize(out.dtype, "where", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *px = x.as<const T>();
    const T *py = y.as<const T>();
    T *po = out.as<T>();
    std::array<Strides, 4> strides = {
        broadcastStrides(cond.shape, out.shape, "where"),
        broadcastStrides(x.shape, out.shape, "where"),
        broadcastStrides(y.shape, out.shape, "where"),
        contiguousStrides(out.shape)};
    forEachRun<4>(out.shape, strides,
                  [&](const std::array<int64_t, 4> &off,
                      const std::array<int64_t, 4> &st, int64_t n) {
                    const uint8_t *c = pc + off[0];
                    const T *a = px + off[1];
                    const T *b = py + off[2];
                    T *o = po + off[3];
                    for (int64_t i = 0; i < n; ++i)
                      o[i] = c[i * st[0]] ? a[i * st[1]] : b[i * st[2]];
                  });
  });
}

void cast(const TensorView &x, const TensorView &y) {
  requireNumel(y, x.numel(), "cast", "output");
  if (x.dtype == y.dtype)
    return copy(x, y);
  dispatchAll(x.dtype, "cast", [&](auto srcTag) {
    using S = typename decltype(srcTag)::type;
    dispatchAll(y.dtype, "cast", [&](auto dstTag) {
      using D = typename decltype(dstTag)::type;
      const S *in = x.as<const S>();
      D *out = y.as<D>();
      for (int64_t i = 0, n = x.numel(); i < n; ++i)
        out[i] = narrow<D>(widen(in[i]));
    });
  });
}

void copy(const TensorView &x, const TensorView &y) {
  requireDType(y, x.dtype, "copy", "output");
  requireNumel(y, x.numel(), "copy", "output");
  if (x.data != y.data && x.bytes() != 0)
    std::memmove(y.data, x.data, x.bytes());
}

void fill(const TensorView &y, double value) {
  dispatchAll(y.dtype, "fill", [&](auto tag) {
    using T = typename decltype(tag)::type;
    // Integers go through int64_t so large integral values stay exact.
    T v;
    if constexpr (std::is_integral_v<T>)
      v = static_cast<T>(saturatingTruncate<int64_t>(value));
    else
      v = narrow<T>(value);
    T *out = y.as<T>();
    for (int64_t i = 0, n = y.numel(); i < n; ++i)
      out[i] = v;
  });
}

} // namespace remat::rt
