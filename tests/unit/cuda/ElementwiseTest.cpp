//===- ElementwiseTest.cpp - CUDA unary, binary, where, cast, fill --------===//
//
// Exact where both backends do the same IEEE operations (integer ops,
// add/sub/mul/div, comparisons, where, casts, fill); within tolerance() for
// transcendental functions, whose CUDA and glibc versions differ in the last
// bits.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtil.h"

#include <cstring>
#include <limits>

using namespace remat::rt;
using namespace remat::rt::cudatest;
namespace rt = remat::rt;

namespace {

using CudaElementwise = CudaTest;

Tensor cudaUnary(UnaryOp op, const Tensor &x) {
  DeviceTensor dx(x), dy(x.dtype(), x.shape());
  cuda::unary(op, dx.view(), dy.view());
  return dy.host();
}

Tensor cpuUnary(UnaryOp op, const Tensor &x) {
  Tensor y(x.dtype(), x.shape());
  rt::unary(op, x.view(), y.view());
  return y;
}

TEST_F(CudaElementwise, UnaryFloatOps) {
  const UnaryOp exactOps[] = {UnaryOp::Neg, UnaryOp::Abs, UnaryOp::Relu,
                              UnaryOp::Sqrt, UnaryOp::Reciprocal};
  const UnaryOp approxOps[] = {
      UnaryOp::Exp,     UnaryOp::Log,     UnaryOp::Erf,     UnaryOp::Tanh,
      UnaryOp::Sigmoid, UnaryOp::GeluErf, UnaryOp::GeluTanh};
  for (DType dtype : {DType::F32, DType::F64}) {
    Tensor x = randomTensor(dtype, {7, 129}, 1, -4, 4);
    Tensor positive = randomTensor(dtype, {7, 129}, 2, 0.01, 9);
    for (UnaryOp op : exactOps) {
      const Tensor &in = op == UnaryOp::Sqrt ? positive : x;
      // sqrt and division are correctly rounded on both backends.
      expectSame(cudaUnary(op, in), cpuUnary(op, in),
                 "op " + std::to_string(static_cast<int>(op)));
    }
    for (UnaryOp op : approxOps) {
      const Tensor &in = op == UnaryOp::Log ? positive : x;
      expectNear(cudaUnary(op, in), cpuUnary(op, in), tolerance(dtype),
                 "op " + std::to_string(static_cast<int>(op)));
    }
  }
}

TEST_F(CudaElementwise, ParameterisedUnaryOps) {
  UnaryParams leaky, elu, selu, hard, clip, inverted;
  leaky.alpha = 0.1;
  elu.alpha = 0.7;
  selu.alpha = 1.6732632423543772;
  selu.gamma = 1.0507009873554805;
  hard.alpha = 0.2;
  hard.beta = 0.5;
  clip.lower = -0.5;
  clip.upper = 1.25;
  inverted.lower = 1; // min > max: max everywhere
  inverted.upper = -1;
  const std::pair<UnaryOp, UnaryParams> cases[] = {
      {UnaryOp::LeakyRelu, leaky}, {UnaryOp::Elu, elu},
      {UnaryOp::Selu, selu},       {UnaryOp::Softplus, {}},
      {UnaryOp::Softsign, {}},     {UnaryOp::HardSigmoid, hard},
      {UnaryOp::Clip, clip},       {UnaryOp::Clip, inverted},
      {UnaryOp::Clip, {}},         {UnaryOp::Sin, {}},
      {UnaryOp::Cos, {}}};
  for (DType dtype : {DType::F32, DType::F64}) {
    Tensor x = randomTensor(dtype, {7, 129}, 5, -8, 8);
    for (const auto &[op, params] : cases) {
      DeviceTensor dx(x), dy(dtype, x.shape());
      cuda::unary(op, dx.view(), dy.view(), params);
      Tensor expected(dtype, x.shape());
      rt::unary(op, x.view(), expected.view(), params);
      expectNear(dy.host(), expected, tolerance(dtype),
                 "op " + std::to_string(static_cast<int>(op)));
    }
  }
  Tensor ints = randomIntegers(DType::I32, {4}, 6, -3, 3);
  EXPECT_THROW(cudaUnary(UnaryOp::LeakyRelu, ints), RuntimeError);
}

TEST_F(CudaElementwise, UnaryIntegerOpsWrap) {
  Tensor x =
      make(DType::I32, {5},
           {-5, 0, 7, static_cast<double>(std::numeric_limits<int32_t>::min()),
            static_cast<double>(std::numeric_limits<int32_t>::max())});
  Tensor x64 = randomIntegers(DType::I64, {33}, 3, -1000, 1000);
  for (UnaryOp op : {UnaryOp::Neg, UnaryOp::Abs, UnaryOp::Relu}) {
    expectSame(cudaUnary(op, x), cpuUnary(op, x));
    expectSame(cudaUnary(op, x64), cpuUnary(op, x64));
  }
  Tensor b = make(DType::Bool, {4}, {0, 1, 1, 0});
  expectSame(cudaUnary(UnaryOp::Not, b), cpuUnary(UnaryOp::Not, b));
  EXPECT_THROW(cudaUnary(UnaryOp::Exp, x), RuntimeError);
}

struct BinaryCase {
  Shape a, b, out;
};
const BinaryCase kBroadcastCases[] = {
    {{2, 3, 4, 5}, {2, 3, 4, 5}, {2, 3, 4, 5}}, // same shape
    {{2, 3, 4, 5}, {}, {2, 3, 4, 5}},           // scalar
    {{2, 3, 4, 5}, {3, 1, 5}, {2, 3, 4, 5}},    // middle broadcast
    {{4, 1}, {1, 6}, {4, 6}},                   // outer product
    {{1, 3, 1, 2, 1, 2, 1, 2},
     {2, 1, 2, 1, 2, 1, 2, 1},
     {2, 3, 2, 2, 2, 2, 2, 2}}, // 8 dims that cannot merge: the limit
};

Tensor runBinary(bool onCuda, BinaryOp op, const Tensor &a, const Tensor &b,
                 DType outType, const Shape &outShape) {
  Tensor out(outType, outShape);
  if (!onCuda) {
    rt::binary(op, a.view(), b.view(), out.view());
    return out;
  }
  DeviceTensor da(a), db(b), dout(outType, outShape);
  cuda::binary(op, da.view(), db.view(), dout.view());
  return dout.host();
}

TEST_F(CudaElementwise, BinaryArithmeticBroadcasts) {
  const BinaryOp ops[] = {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul,
                          BinaryOp::Div, BinaryOp::Max, BinaryOp::Min};
  unsigned seed = 10;
  for (const BinaryCase &c : kBroadcastCases)
    for (DType dtype : {DType::F32, DType::F64, DType::I64, DType::I32}) {
      const bool isInt = dtype == DType::I64 || dtype == DType::I32;
      Tensor a = isInt ? randomIntegers(dtype, c.a, ++seed, -50, 50)
                       : randomTensor(dtype, c.a, ++seed, -3, 3);
      // Divisors without zero.
      Tensor b = isInt ? randomIntegers(dtype, c.b, ++seed, 1, 9)
                       : randomTensor(dtype, c.b, ++seed, 0.5, 3);
      for (BinaryOp op : ops)
        expectSame(runBinary(true, op, a, b, dtype, c.out),
                   runBinary(false, op, a, b, dtype, c.out),
                   std::string(dtypeName(dtype)) + " op " +
                       std::to_string(static_cast<int>(op)) + " out " +
                       shapeToString(c.out));
    }
}

/// Elements [first, first + n) of a one-dim tensor, as a tensor.
Tensor sliceOf(const Tensor &t, int64_t first, int64_t n) {
  Tensor out(t.dtype(), {n});
  const size_t e = dtypeSize(t.dtype());
  std::memcpy(out.data(), static_cast<const char *>(t.data()) + first * e,
              static_cast<size_t>(n) * e);
  return out;
}

/// A view of elements [first, first + n) of a one-dim buffer.
TensorView viewAt(const TensorView &whole, int64_t first, int64_t n) {
  return TensorView(whole.dtype, {n},
                    static_cast<char *>(whole.data) +
                        first * static_cast<int64_t>(dtypeSize(whole.dtype)));
}

// Contiguous operands of the output's shape and type go through 16-byte
// packs (runtime/cuda/Pack.cuh) when every pointer is 16-byte aligned, and
// element by element otherwise: both, with a tail shorter than a pack, and
// in place, equal the CPU's bits.
TEST_F(CudaElementwise, PackedUnalignedAndInPlaceOperands) {
  const int64_t n = 1003; // a multiple of no pack size
  for (DType dtype : {DType::F32, DType::F64, DType::I32}) {
    const bool isInt = dtype == DType::I32;
    Tensor a = isInt ? randomIntegers(dtype, {n + 1}, 41, -50, 50)
                     : randomTensor(dtype, {n + 1}, 41, -3, 3);
    Tensor b = isInt ? randomIntegers(dtype, {n + 1}, 42, 1, 9)
                     : randomTensor(dtype, {n + 1}, 42, 0.5, 3);
    for (int64_t first : {0, 1}) { // 0: aligned (packs); 1: 4 or 8 bytes off
      const std::string what = std::string(dtypeName(dtype)) +
                               (first ? " unaligned" : " aligned");
      const Tensor ha = sliceOf(a, first, n), hb = sliceOf(b, first, n);
      DeviceTensor da(a), db(b), dout(dtype, {n + 1});
      const TensorView va = viewAt(da.view(), first, n);
      const TensorView vb = viewAt(db.view(), first, n);
      const TensorView vout = viewAt(dout.view(), first, n);

      Tensor product(dtype, {n});
      rt::binary(BinaryOp::Mul, ha.view(), hb.view(), product.view());
      cuda::binary(BinaryOp::Mul, va, vb, vout);
      expectSame(sliceOf(dout.host(), first, n), product, what + " mul");

      Tensor negated(dtype, {n});
      rt::unary(UnaryOp::Neg, ha.view(), negated.view());
      cuda::unary(UnaryOp::Neg, va, vout);
      expectSame(sliceOf(dout.host(), first, n), negated, what + " neg");

      // In place: the sum over a.
      Tensor sum(dtype, {n});
      rt::binary(BinaryOp::Add, ha.view(), hb.view(), sum.view());
      cuda::binary(BinaryOp::Add, va, vb, va);
      expectSame(sliceOf(da.host(), first, n), sum, what + " add in place");
    }
  }
  // Casts between the float types: packs of 8 when both sides are aligned.
  const std::pair<DType, DType> casts[] = {{DType::F32, DType::BF16},
                                           {DType::BF16, DType::F32},
                                           {DType::F32, DType::F16},
                                           {DType::F16, DType::BF16}};
  for (auto [from, to] : casts)
    for (int64_t first : {0, 1}) {
      const Tensor x = randomTensor(from, {n + 1}, 43, -70000, 70000);
      Tensor expected(to, {n});
      rt::cast(sliceOf(x, first, n).view(), expected.view());
      DeviceTensor dx(x), dy(to, {n + 1});
      cuda::cast(viewAt(dx.view(), first, n), viewAt(dy.view(), first, n));
      expectSame(sliceOf(dy.host(), first, n), expected,
                 std::string(dtypeName(from)) + " -> " + dtypeName(to) +
                     (first ? " unaligned" : " aligned"));
    }
}

TEST_F(CudaElementwise, RowBroadcastPacksMatchTheCpuBitwise) {
  // [rows, width] op [width] and [width] op [rows, width] with width a
  // multiple of the pack (4 floats, 8 bf16), also as [1, width]: the
  // row-broadcast packed kernel; a width of 6 (not a multiple) takes the
  // general kernel. Sub and Div tell the operand order apart.
  for (DType dtype : {DType::F32, DType::BF16})
    for (const Shape &row : {Shape{16}, Shape{6}, Shape{1, 16}})
      for (BinaryOp op : {BinaryOp::Sub, BinaryOp::Div})
        for (bool rowFirst : {false, true}) {
          const Shape full = {7, row.back()};
          Tensor x = randomTensor(dtype, full, 60, -3, 3);
          Tensor r = randomTensor(dtype, row, 61, 0.5, 2);
          const Tensor &a = rowFirst ? r : x, &b = rowFirst ? x : r;
          expectSame(runBinary(true, op, a, b, dtype, full),
                     runBinary(false, op, a, b, dtype, full),
                     std::string(dtypeName(dtype)) + " " +
                         shapeToString(a.shape()) + " op " +
                         shapeToString(b.shape()));
        }
}

TEST_F(CudaElementwise, PReluBroadcastsTheSlope) {
  for (DType dtype : {DType::F32, DType::F64})
    for (const Shape &slope : {Shape{2, 3, 4, 5}, Shape{5}, Shape{3, 1, 1}}) {
      Tensor x = randomTensor(dtype, {2, 3, 4, 5}, 7, -3, 3);
      Tensor s = randomTensor(dtype, slope, 8, -1, 1);
      // A compare and one multiply: the same IEEE result on both backends.
      expectSame(runBinary(true, BinaryOp::PRelu, x, s, dtype, x.shape()),
                 runBinary(false, BinaryOp::PRelu, x, s, dtype, x.shape()),
                 shapeToString(slope));
    }
}

TEST_F(CudaElementwise, MoreThanEightUnmergeableDimsAreRejected) {
  // A rank-9 operand is refused where its view is made, before any kernel:
  // the runtime's shapes hold at most eight dimensions.
  try {
    const Shape a = {1, 3, 1, 2, 1, 2, 1, 2, 1},
                b = {2, 1, 2, 1, 2, 1, 2, 1, 2};
    DeviceTensor da(DType::F32, a), db(DType::F32, b),
        out(DType::F32, {2, 3, 2, 2, 2, 2, 2, 2, 2});
    cuda::binary(BinaryOp::Add, da.view(), db.view(), out.view());
    ADD_FAILURE() << "a rank-9 broadcast was accepted";
  } catch (const RuntimeError &e) {
    EXPECT_NE(std::string(e.what()).find("maximum rank 8"), std::string::npos)
        << e.what();
  }
}

TEST_F(CudaElementwise, BinaryEdgeCases) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor a = make(DType::F32, {4}, {nan, 1, -2, 0});
  Tensor b = make(DType::F32, {4}, {1, nan, 3, -0.0});
  for (BinaryOp op : {BinaryOp::Max, BinaryOp::Min, BinaryOp::Div})
    expectSame(runBinary(true, op, a, b, DType::F32, {4}),
               runBinary(false, op, a, b, DType::F32, {4}));
  // Integer division truncates toward zero; min / -1 wraps.
  Tensor ia = make(DType::I32, {4}, {7, -7, -2147483648.0, 9});
  Tensor ib = make(DType::I32, {4}, {2, 2, -1, -4});
  expectSame(runBinary(true, BinaryOp::Div, ia, ib, DType::I32, {4}),
             runBinary(false, BinaryOp::Div, ia, ib, DType::I32, {4}));
  // Division by zero is reported by checkDeviceErrors.
  Tensor zero = make(DType::I32, {4}, {1, 0, 1, 1});
  DeviceTensor da(ia), db(zero), out(DType::I32, {4});
  cuda::binary(BinaryOp::Div, da.view(), db.view(), out.view());
  EXPECT_THROW(syncDevice(), RuntimeError);
  EXPECT_NO_THROW(syncDevice()); // the error was cleared
}

TEST_F(CudaElementwise, PowWithFloatAndIntegerExponents) {
  for (DType base : {DType::F32, DType::F64}) {
    Tensor a = randomTensor(base, {3, 17}, 20, 0.1, 3);
    for (DType exponent : {DType::F32, DType::F64, DType::I64, DType::I32}) {
      Tensor b = exponent == DType::I64 || exponent == DType::I32
                     ? randomIntegers(exponent, {17}, 21, -3, 4)
                     : randomTensor(exponent, {17}, 21, -2, 2);
      expectNear(runBinary(true, BinaryOp::Pow, a, b, base, {3, 17}),
                 runBinary(false, BinaryOp::Pow, a, b, base, {3, 17}),
                 tolerance(base), dtypeName(exponent));
    }
  }
}

TEST_F(CudaElementwise, ComparisonsAndLogic) {
  for (const BinaryCase &c : kBroadcastCases) {
    for (DType dtype : {DType::F32, DType::F64, DType::I64, DType::I32}) {
      Tensor a = randomIntegers(dtype, c.a, 30, -2, 2);
      Tensor b = randomIntegers(dtype, c.b, 31, -2, 2);
      for (BinaryOp op : {BinaryOp::Equal, BinaryOp::Less, BinaryOp::Greater})
        expectSame(runBinary(true, op, a, b, DType::Bool, c.out),
                   runBinary(false, op, a, b, DType::Bool, c.out));
    }
    Tensor a = randomIntegers(DType::Bool, c.a, 32, 0, 1);
    Tensor b = randomIntegers(DType::Bool, c.b, 33, 0, 1);
    for (BinaryOp op : {BinaryOp::And, BinaryOp::Or, BinaryOp::Equal})
      expectSame(runBinary(true, op, a, b, DType::Bool, c.out),
                 runBinary(false, op, a, b, DType::Bool, c.out));
  }
}

TEST_F(CudaElementwise, WhereBroadcastsEveryElementSize) {
  Tensor cond = randomIntegers(DType::Bool, {3, 1, 5}, 40, 0, 1);
  for (DType dtype : {DType::F32, DType::F64, DType::F16, DType::I8, DType::I64,
                      DType::Bool}) {
    Tensor x = randomIntegers(dtype, {4, 5}, 41, 0, 1);
    Tensor y = randomIntegers(dtype, {3, 4, 1}, 42, 0, 1);
    if (dtype != DType::Bool) {
      x = randomIntegers(dtype, {4, 5}, 41, -100, 100);
      y = randomIntegers(dtype, {3, 4, 1}, 42, -100, 100);
    }
    Tensor expected(dtype, {3, 4, 5});
    rt::where(cond.view(), x.view(), y.view(), expected.view());
    DeviceTensor dc(cond), dx(x), dy(y), dout(dtype, {3, 4, 5});
    cuda::where(dc.view(), dx.view(), dy.view(), dout.view());
    expectSame(dout.host(), expected, dtypeName(dtype));
  }
}

TEST_F(CudaElementwise, CastIsBitwiseTheCpusForEveryPair) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Rounding ties, 16-bit subnormals and overflow, saturation, NaN.
  const std::vector<double> values = {0.0,
                                      -0.0,
                                      1.0,
                                      -1.5,
                                      2.5,
                                      0.1,
                                      65504.0,
                                      65520.0,
                                      1e-7,
                                      6e-8,
                                      3e-5,
                                      1.00048828125,
                                      1.0009765625 + 1e-9,
                                      300.7,
                                      -129.5,
                                      255.5,
                                      1e10,
                                      -3e9,
                                      2147483647.0,
                                      9.3e18,
                                      -9.3e18,
                                      inf,
                                      -inf,
                                      nan,
                                      1e-40,
                                      3.4e38,
                                      1e300};
  const DType all[] = {DType::F32,  DType::F64, DType::F16,
                       DType::BF16, DType::I64, DType::I32,
                       DType::I8,   DType::U8,  DType::Bool};
  for (DType from : all) {
    Tensor x(from, {static_cast<int64_t>(values.size())});
    // Stored with the CPU's cast from f64, so every source holds its
    // dtype's version of the values.
    Tensor source = make(DType::F64, x.shape(), values);
    rt::cast(source.view(), x.view());
    for (DType to : all) {
      Tensor expected(to, x.shape());
      rt::cast(x.view(), expected.view());
      DeviceTensor dx(x), dy(to, x.shape());
      cuda::cast(dx.view(), dy.view());
      expectSame(dy.host(), expected,
                 std::string(dtypeName(from)) + " -> " + dtypeName(to));
    }
  }
}

TEST_F(CudaElementwise, CopyAndFill) {
  Tensor x = randomTensor(DType::F32, {6, 7}, 50);
  DeviceTensor dx(x), dy(DType::F32, {42});
  cuda::copy(dx.view(), dy.view());
  Tensor back = dy.host();
  EXPECT_EQ(std::memcmp(back.data(), x.data(), x.bytes()), 0);

  for (DType dtype :
       {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I64, DType::I32,
        DType::I8, DType::U8, DType::Bool})
    for (double value : {0.0, 1.0, -2.75, 300.5, 1e20,
                         -std::numeric_limits<double>::infinity()}) {
      Tensor expected(dtype, {37});
      rt::fill(expected.view(), value);
      DeviceTensor d(dtype, {37});
      cuda::fill(d.view(), value);
      expectSame(d.host(), expected,
                 std::string(dtypeName(dtype)) + " " + std::to_string(value));
    }
}

} // namespace
