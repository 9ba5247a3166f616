//===- InterpreterTest.cpp - Tests of the remat IR interpreter ------------===//

#include "AllocationCounter.h"

#include "remat/Dialect/RematOps.h"
#include "remat/Interpreter/Interpreter.h"
#include "remat/Interpreter/TensorConversion.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <regex>

using namespace mlir;
using namespace remat;

namespace {

class InterpreterTest : public ::testing::Test {
protected:
  InterpreterTest() {
    context.loadDialect<RematDialect, func::FuncDialect>();
    context.allowUnregisteredDialects();
  }

  /// Parses `source` and returns its first function (fails the test if the
  /// text does not parse).
  func::FuncOp parse(const std::string &source) {
    module = parseSourceString<ModuleOp>(source, ParserConfig(&context));
    if (!module) {
      ADD_FAILURE() << "failed to parse:\n" << source;
      return {};
    }
    for (auto func : module->getOps<func::FuncOp>())
      return func;
    ADD_FAILURE() << "no function in:\n" << source;
    return {};
  }

  static std::vector<const rt::TensorView *>
  views(const std::vector<rt::Tensor> &tensors) {
    std::vector<const rt::TensorView *> result;
    for (const rt::Tensor &t : tensors)
      result.push_back(&t.view());
    return result;
  }

  static rt::Tensor tensorF32(rt::Shape shape, const std::vector<float> &data) {
    rt::Tensor t(rt::DType::F32, std::move(shape));
    EXPECT_EQ(static_cast<size_t>(t.numel()), data.size());
    std::memcpy(t.data(), data.data(), data.size() * sizeof(float));
    return t;
  }

  static rt::Tensor randomF32(rt::Shape shape, unsigned seed) {
    rt::Tensor t(rt::DType::F32, std::move(shape));
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
    for (int64_t i = 0; i < t.numel(); ++i)
      t.as<float>()[i] = dist(gen);
    return t;
  }

  static std::vector<float> values(const rt::Tensor &t) {
    return std::vector<float>(t.as<float>(), t.as<float>() + t.numel());
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(InterpreterTest, MatMulAddRelu) {
  func::FuncOp func = parse(R"mlir(
    func.func @forward(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>,
                       %b: tensor<4xf32>) -> tensor<2x4xf32> {
      %0 = remat.matmul %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
      %1 = remat.add %0, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
      %2 = remat.relu %1 : (tensor<2x4xf32>) -> tensor<2x4xf32>
      return %2 : tensor<2x4xf32>
    })mlir");
  ASSERT_TRUE(func);
  std::vector<rt::Tensor> args;
  args.push_back(randomF32({2, 3}, 1));
  args.push_back(randomF32({3, 4}, 2));
  args.push_back(randomF32({4}, 3));
  Interpreter interp(func);
  std::vector<rt::Tensor> out = interp.run(views(args));
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].shape(), (rt::Shape{2, 4}));
  ASSERT_EQ(out[0].dtype(), rt::DType::F32);
  const float *x = args[0].as<float>(), *w = args[1].as<float>(),
              *b = args[2].as<float>();
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j) {
      double acc = b[j];
      for (int k = 0; k < 3; ++k)
        acc += double(x[i * 3 + k]) * w[k * 4 + j];
      EXPECT_NEAR(out[0].as<float>()[i * 4 + j], std::max(acc, 0.0), 1e-5);
    }
  EXPECT_EQ(interp.liveBytes(), 0u);
}

TEST_F(InterpreterTest, HandComputedMatMul) {
  func::FuncOp func = parse(R"mlir(
    func.func @f(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
      %0 = remat.matmul %a, %b {transpose_rhs = true} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
      return %0 : tensor<2x2xf32>
    })mlir");
  ASSERT_TRUE(func);
  std::vector<rt::Tensor> args;
  args.push_back(tensorF32({2, 2}, {1, 2, 3, 4}));
  args.push_back(tensorF32({2, 2}, {5, 6, 7, 8}));
  std::vector<rt::Tensor> out = Interpreter(func).run(views(args));
  // a * b^T = [[1*5+2*6, 1*7+2*8], [3*5+4*6, 3*7+4*8]]
  EXPECT_EQ(values(out[0]), (std::vector<float>{17, 23, 39, 53}));
}

TEST_F(InterpreterTest, SoftmaxRowsSumToOne) {
  func::FuncOp func = parse(R"mlir(
    func.func @f(%x: tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<3x5xf32>) {
      %0 = remat.softmax %x {axis = 1 : i64} : (tensor<3x5xf32>) -> tensor<3x5xf32>
      %1 = remat.log_softmax %x {axis = 1 : i64} : (tensor<3x5xf32>) -> tensor<3x5xf32>
      return %0, %1 : tensor<3x5xf32>, tensor<3x5xf32>
    })mlir");
  ASSERT_TRUE(func);
  std::vector<rt::Tensor> args;
  args.push_back(randomF32({3, 5}, 7));
  std::vector<rt::Tensor> out = Interpreter(func).run(views(args));
  ASSERT_EQ(out.size(), 2u);
  const float *x = args[0].as<float>();
  for (int r = 0; r < 3; ++r) {
    double sum = 0, denom = 0;
    for (int c = 0; c < 5; ++c)
      denom += std::exp(double(x[r * 5 + c]));
    for (int c = 0; c < 5; ++c) {
      float p = out[0].as<float>()[r * 5 + c];
      sum += p;
      EXPECT_NEAR(p, std::exp(double(x[r * 5 + c])) / denom, 1e-6);
      EXPECT_NEAR(out[1].as<float>()[r * 5 + c],
                  double(x[r * 5 + c]) - std::log(denom), 1e-5);
    }
    EXPECT_NEAR(sum, 1.0, 1e-5);
  }
}

TEST_F(InterpreterTest, DataMovementPipeline) {
  // x [2,3,4] -> reshape [6,4] -> transpose [4,6] -> slice rows 1..3, every
  // other column [2,3] -> concat with a constant row [3,3] -> gather rows
  // [2, 0] -> [2,3].
  func::FuncOp func = parse(R"mlir(
    func.func @f(%x: tensor<2x3x4xf32>) -> tensor<2x3xf32> {
      %0 = remat.reshape %x : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
      %1 = remat.transpose %0 {permutation = array<i64: 1, 0>} : (tensor<6x4xf32>) -> tensor<4x6xf32>
      %2 = remat.slice %1 {starts = array<i64: 1, 0>, limits = array<i64: 3, 6>, steps = array<i64: 1, 2>} : (tensor<4x6xf32>) -> tensor<2x3xf32>
      %c = remat.constant dense<[[100.0, 200.0, 300.0]]> : tensor<1x3xf32>
      %3 = remat.concat %2, %c {axis = 0 : i64} : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<3x3xf32>
      %i = remat.constant dense<[2, 0]> : tensor<2xi64>
      %4 = remat.gather %3, %i {axis = 0 : i64} : (tensor<3x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
      return %4 : tensor<2x3xf32>
    })mlir");
  ASSERT_TRUE(func);
  std::vector<float> data(24);
  for (int i = 0; i < 24; ++i)
    data[i] = float(i);
  std::vector<rt::Tensor> args;
  args.push_back(tensorF32({2, 3, 4}, data));
  std::vector<rt::Tensor> out = Interpreter(func).run(views(args));
  // reshaped[r][c] = 4r + c; transposed[c][r] = 4r + c; slice rows c = 1, 2
  // and columns r = 0, 2, 4: [[1, 9, 17], [2, 10, 18]].
  EXPECT_EQ(out[0].shape(), (rt::Shape{2, 3}));
  EXPECT_EQ(values(out[0]), (std::vector<float>{100, 200, 300, 1, 9, 17}));
}

TEST_F(InterpreterTest, SplitExpandWhereCast) {
  func::FuncOp func = parse(R"mlir(
    func.func @f(%x: tensor<4xf32>) -> (tensor<2x3xf32>, tensor<2xi32>) {
      %a, %b = remat.split %x {axis = 0 : i64} : (tensor<4xf32>) -> (tensor<1xf32>, tensor<3xf32>)
      %e = remat.expand %b : (tensor<3xf32>) -> tensor<2x3xf32>
      %z = remat.constant dense<0.0> : tensor<f32>
      %m = remat.greater %e, %z : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xi1>
      %n = remat.neg %e : (tensor<2x3xf32>) -> tensor<2x3xf32>
      %w = remat.where %m, %e, %n : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
      %s = remat.add %w, %a : (tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x3xf32>
      %c = remat.cast %x : (tensor<4xf32>) -> tensor<4xi32>
      %c2 = remat.slice %c {starts = array<i64: 3>, limits = array<i64: 0>, steps = array<i64: -2>} : (tensor<4xi32>) -> tensor<2xi32>
      return %s, %c2 : tensor<2x3xf32>, tensor<2xi32>
    })mlir");
  ASSERT_TRUE(func);
  std::vector<rt::Tensor> args;
  args.push_back(tensorF32({4}, {10, -1.5f, 2.7f, -3.2f}));
  std::vector<rt::Tensor> out = Interpreter(func).run(views(args));
  // |b| + a = [11.5, 12.7, 13.2] in both rows.
  std::vector<float> got = values(out[0]);
  std::vector<float> want = {11.5f, 12.7f, 13.2f, 11.5f, 12.7f, 13.2f};
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-5);
  ASSERT_EQ(out[1].dtype(), rt::DType::I32);
  // cast truncates toward zero: [10, -1, 2, -3]; elements 3 and 1.
  EXPECT_EQ(out[1].as<int32_t>()[0], -3);
  EXPECT_EQ(out[1].as<int32_t>()[1], -1);
}

TEST_F(InterpreterTest, ReduceWithoutKeepdims) {
  func::FuncOp func = parse(R"mlir(
    func.func @f(%x: tensor<2x3x4xf32>) -> (tensor<3xf32>, tensor<2x1x4xf32>, tensor<2x4xf32>) {
      %0 = remat.reduce_sum %x {axes = array<i64: 0, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<3xf32>
      %1 = remat.reduce_mean %x {axes = array<i64: 1>} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
      %2 = remat.reduce_max %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
      return %0, %1, %2 : tensor<3xf32>, tensor<2x1x4xf32>, tensor<2x4xf32>
    })mlir");
  ASSERT_TRUE(func);
  std::vector<rt::Tensor> args;
  args.push_back(randomF32({2, 3, 4}, 11));
  std::vector<rt::Tensor> out = Interpreter(func).run(views(args));
  const float *x = args[0].as<float>();
  auto at = [&](int i, int j, int k) { return double(x[(i * 3 + j) * 4 + k]); };
  for (int j = 0; j < 3; ++j) {
    double sum = 0;
    for (int i = 0; i < 2; ++i)
      for (int k = 0; k < 4; ++k)
        sum += at(i, j, k);
    EXPECT_NEAR(out[0].as<float>()[j], sum, 1e-5);
  }
  EXPECT_EQ(out[1].shape(), (rt::Shape{2, 1, 4}));
  EXPECT_EQ(out[2].shape(), (rt::Shape{2, 4}));
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 4; ++k) {
      double sum = 0, max = -1e30;
      for (int j = 0; j < 3; ++j) {
        sum += at(i, j, k);
        max = std::max(max, at(i, j, k));
      }
      EXPECT_NEAR(out[1].as<float>()[i * 4 + k], sum / 3, 1e-5);
      EXPECT_EQ(out[2].as<float>()[i * 4 + k], float(max));
    }
}

TEST_F(InterpreterTest, LayerNormWithUnusedStatistics) {
  func::FuncOp func = parse(R"mlir(
    func.func @f(%x: tensor<2x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
      %y, %mean, %inv = remat.layer_norm %x, %g, %b {axis = 1 : i64, epsilon = 1.0e-5 : f64} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
      return %y : tensor<2x4xf32>
    })mlir");
  ASSERT_TRUE(func);
  std::vector<rt::Tensor> args;
  args.push_back(randomF32({2, 4}, 5));
  args.push_back(randomF32({4}, 6));
  args.push_back(randomF32({4}, 7));
  Interpreter interp(func);
  std::vector<rt::Tensor> out = interp.run(views(args));
  const float *x = args[0].as<float>(), *g = args[1].as<float>(),
              *b = args[2].as<float>();
  for (int r = 0; r < 2; ++r) {
    double mean = 0, var = 0;
    for (int c = 0; c < 4; ++c)
      mean += x[r * 4 + c] / 4.0;
    for (int c = 0; c < 4; ++c)
      var += (x[r * 4 + c] - mean) * (x[r * 4 + c] - mean) / 4.0;
    for (int c = 0; c < 4; ++c)
      EXPECT_NEAR(out[0].as<float>()[r * 4 + c],
                  (x[r * 4 + c] - mean) / std::sqrt(var + 1e-5) * g[c] + b[c],
                  1e-5);
  }
  // The unused statistics were never allocated: only the output was.
  EXPECT_EQ(interp.peakLiveBytes(), 2u * 4 * sizeof(float));
}

TEST_F(InterpreterTest, SoftmaxCrossEntropyLoss) {
  func::FuncOp func = parse(R"mlir(
    func.func @f(%s: tensor<3x4xf32>, %l: tensor<3xi64>) -> tensor<f32> {
      %loss, %lp = remat.softmax_cross_entropy_loss %s, %l {reduction = "mean"} : (tensor<3x4xf32>, tensor<3xi64>) -> (tensor<f32>, tensor<3x4xf32>)
      return %loss : tensor<f32>
    })mlir");
  ASSERT_TRUE(func);
  std::vector<rt::Tensor> args;
  args.push_back(randomF32({3, 4}, 9));
  rt::Tensor labels(rt::DType::I64, {3});
  int64_t lab[3] = {0, 3, 1};
  std::memcpy(labels.data(), lab, sizeof lab);
  args.push_back(std::move(labels));
  std::vector<rt::Tensor> out = Interpreter(func).run(views(args));
  const float *s = args[0].as<float>();
  double total = 0;
  for (int n = 0; n < 3; ++n) {
    double denom = 0;
    for (int c = 0; c < 4; ++c)
      denom += std::exp(double(s[n * 4 + c]));
    total += std::log(denom) - s[n * 4 + lab[n]];
  }
  EXPECT_EQ(out[0].shape(), rt::Shape{});
  EXPECT_NEAR(out[0].as<float>()[0], total / 3, 1e-5);
}

TEST_F(InterpreterTest, DropoutIsReproducible) {
  func::FuncOp func = parse(R"mlir(
    func.func @f(%x: tensor<4096xf32>) -> (tensor<4096xf32>, tensor<4096xi1>) {
      %y, %m = remat.dropout %x {ratio = 0.25 : f64, seed = 1234 : i64, stream = 3 : i64} : (tensor<4096xf32>) -> (tensor<4096xf32>, tensor<4096xi1>)
      return %y, %m : tensor<4096xf32>, tensor<4096xi1>
    })mlir");
  ASSERT_TRUE(func);
  std::vector<rt::Tensor> args;
  args.push_back(randomF32({4096}, 13));
  Interpreter interp(func);
  interp.setStep(5);
  std::vector<rt::Tensor> a = interp.run(views(args));
  std::vector<rt::Tensor> b = interp.run(views(args));
  interp.setStep(6);
  std::vector<rt::Tensor> c = interp.run(views(args));

  EXPECT_EQ(values(a[0]), values(b[0]));
  EXPECT_EQ(std::memcmp(a[1].data(), b[1].data(), 4096), 0);
  EXPECT_NE(std::memcmp(a[1].data(), c[1].data(), 4096), 0);

  int kept = 0;
  const float *x = args[0].as<float>();
  for (int i = 0; i < 4096; ++i) {
    const bool keep = a[1].as<uint8_t>()[i] != 0;
    kept += keep;
    EXPECT_FLOAT_EQ(a[0].as<float>()[i], keep ? x[i] / 0.75f : 0.0f);
  }
  EXPECT_NEAR(kept / 4096.0, 0.75, 0.03);
}

TEST_F(InterpreterTest, ValuesAreFreedAfterLastUse) {
  // 40 ops on 4 KiB values: without freeing the chain would hold 160 KiB.
  std::string body;
  std::string prev = "%x";
  for (int i = 0; i < 40; ++i) {
    std::string name = "%v" + std::to_string(i);
    body += "      " + name + " = remat." + (i % 2 ? "neg" : "tanh") + " " +
            prev + " : (tensor<1024xf32>) -> tensor<1024xf32>\n";
    prev = name;
  }
  func::FuncOp func = parse(
      "func.func @f(%x: tensor<1024xf32>) -> tensor<1024xf32> {\n" + body +
      "      return " + prev + " : tensor<1024xf32>\n    }");
  ASSERT_TRUE(func);
  std::vector<rt::Tensor> args;
  args.push_back(randomF32({1024}, 17));
  Interpreter interp(func);
  std::vector<rt::Tensor> out = interp.run(views(args));
  // One op's operand and result at a time.
  EXPECT_EQ(interp.peakLiveBytes(), 2u * 4096);
  EXPECT_EQ(interp.liveBytes(), 0u);
  double v = args[0].as<float>()[7];
  for (int i = 0; i < 40; ++i)
    v = i % 2 ? -v : std::tanh(v);
  EXPECT_NEAR(out[0].as<float>()[7], v, 1e-6);
}

TEST_F(InterpreterTest, ValuesLiveUntilTheirLastUse) {
  // %a is used at the end, so it stays live through the chain.
  func::FuncOp func = parse(R"mlir(
    func.func @f(%x: tensor<256xf32>) -> tensor<256xf32> {
      %a = remat.exp %x : (tensor<256xf32>) -> tensor<256xf32>
      %b = remat.neg %a : (tensor<256xf32>) -> tensor<256xf32>
      %c = remat.neg %b : (tensor<256xf32>) -> tensor<256xf32>
      %d = remat.neg %c : (tensor<256xf32>) -> tensor<256xf32>
      %e = remat.add %d, %a : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
      return %e : tensor<256xf32>
    })mlir");
  ASSERT_TRUE(func);
  std::vector<rt::Tensor> args;
  args.push_back(randomF32({256}, 19));
  Interpreter interp(func);
  std::vector<rt::Tensor> out = interp.run(views(args));
  EXPECT_EQ(interp.peakLiveBytes(), 3u * 1024);
  for (int i = 0; i < 256; ++i)
    EXPECT_FLOAT_EQ(out[0].as<float>()[i], 0.0f);
}

TEST_F(InterpreterTest, ReshapeAliasesItsOperand) {
  func::FuncOp func = parse(R"mlir(
    func.func @f(%x: tensor<4x8xf32>) -> tensor<32xf32> {
      %0 = remat.exp %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
      %1 = remat.reshape %0 : (tensor<4x8xf32>) -> tensor<2x16xf32>
      %2 = remat.reshape %1 : (tensor<2x16xf32>) -> tensor<32xf32>
      return %2 : tensor<32xf32>
    })mlir");
  ASSERT_TRUE(func);
  std::vector<rt::Tensor> args;
  args.push_back(randomF32({4, 8}, 23));
  Interpreter interp(func);
  std::vector<rt::Tensor> out = interp.run(views(args));
  EXPECT_EQ(interp.peakLiveBytes(), 32u * 4);
  ASSERT_EQ(out[0].shape(), rt::Shape{32});
  for (int i = 0; i < 32; ++i)
    EXPECT_FLOAT_EQ(out[0].as<float>()[i], std::exp(args[0].as<float>()[i]));
}

TEST_F(InterpreterTest, ReturnsArgumentsAndDuplicates) {
  func::FuncOp func = parse(R"mlir(
    func.func @f(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<1x3xf32>) {
      %0 = remat.abs %x : (tensor<3xf32>) -> tensor<3xf32>
      %1 = remat.reshape %x : (tensor<3xf32>) -> tensor<1x3xf32>
      return %x, %0, %0, %1 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<1x3xf32>
    })mlir");
  ASSERT_TRUE(func);
  std::vector<rt::Tensor> args;
  args.push_back(tensorF32({3}, {-1, 2, -3}));
  std::vector<rt::Tensor> out = Interpreter(func).run(views(args));
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(values(out[0]), (std::vector<float>{-1, 2, -3}));
  EXPECT_NE(out[0].data(), args[0].data());
  EXPECT_EQ(values(out[1]), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(values(out[2]), (std::vector<float>{1, 2, 3}));
  EXPECT_NE(out[1].data(), out[2].data());
  EXPECT_EQ(out[3].shape(), (rt::Shape{1, 3}));
  EXPECT_EQ(values(out[3]), (std::vector<float>{-1, 2, -3}));
}

TEST_F(InterpreterTest, Constants) {
  func::FuncOp func = parse(R"mlir(
    func.func @f() -> (tensor<2x2xf32>, tensor<3xi1>, tensor<4xi1>, tensor<2xi64>, tensor<3xf32>, tensor<2xf16>) {
      %0 = remat.constant dense<[[1.5, 2.5], [3.5, 4.5]]> : tensor<2x2xf32>
      %1 = remat.constant dense<[true, false, true]> : tensor<3xi1>
      %2 = remat.constant dense<true> : tensor<4xi1>
      %3 = remat.constant dense<[-7, 9]> : tensor<2xi64>
      %4 = remat.constant dense_resource<blob> : tensor<3xf32>
      %5 = remat.constant dense<[1.0, -2.0]> : tensor<2xf16>
      return %0, %1, %2, %3, %4, %5 : tensor<2x2xf32>, tensor<3xi1>, tensor<4xi1>, tensor<2xi64>, tensor<3xf32>, tensor<2xf16>
    }
    {-#
      dialect_resources: {
        builtin: {
          blob: "0x040000000000803F0000004000004040"
        }
      }
    #-})mlir");
  ASSERT_TRUE(func);
  std::vector<rt::Tensor> out = Interpreter(func).run({});
  ASSERT_EQ(out.size(), 6u);
  EXPECT_EQ(values(out[0]), (std::vector<float>{1.5, 2.5, 3.5, 4.5}));
  ASSERT_EQ(out[1].dtype(), rt::DType::Bool);
  EXPECT_EQ(out[1].as<uint8_t>()[0], 1);
  EXPECT_EQ(out[1].as<uint8_t>()[1], 0);
  EXPECT_EQ(out[1].as<uint8_t>()[2], 1);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(out[2].as<uint8_t>()[i], 1);
  EXPECT_EQ(out[3].as<int64_t>()[0], -7);
  EXPECT_EQ(out[3].as<int64_t>()[1], 9);
  EXPECT_EQ(values(out[4]), (std::vector<float>{1, 2, 3}));
  ASSERT_EQ(out[5].dtype(), rt::DType::F16);
  EXPECT_EQ(rt::halfToFloat(out[5].as<uint16_t>()[0]), 1.0f);
  EXPECT_EQ(rt::halfToFloat(out[5].as<uint16_t>()[1]), -2.0f);
}

TEST_F(InterpreterTest, HalfPrecisionMathRunsInF32) {
  // The CPU kernels take f16/bf16 operands, compute in f32 and round each
  // result once.
  func::FuncOp func = parse(R"mlir(
    func.func @f(%a: tensor<2x2xf16>, %b: tensor<2x2xf16>) -> (tensor<2x2xf16>, tensor<2x2xbf16>, tensor<2x2xi1>) {
      %0 = remat.matmul %a, %b : (tensor<2x2xf16>, tensor<2x2xf16>) -> tensor<2x2xf16>
      %1 = remat.max %0, %a : (tensor<2x2xf16>, tensor<2x2xf16>) -> tensor<2x2xf16>
      %2 = remat.cast %1 : (tensor<2x2xf16>) -> tensor<2x2xbf16>
      %3 = remat.sqrt %2 : (tensor<2x2xbf16>) -> tensor<2x2xbf16>
      %4 = remat.less %a, %b : (tensor<2x2xf16>, tensor<2x2xf16>) -> tensor<2x2xi1>
      return %1, %3, %4 : tensor<2x2xf16>, tensor<2x2xbf16>, tensor<2x2xi1>
    })mlir");
  ASSERT_TRUE(func);
  const float a[4] = {1, 2, 3, 40}, b[4] = {0.5f, -1, 0.25f, 0};
  std::vector<rt::Tensor> args;
  args.emplace_back(rt::DType::F16, rt::Shape{2, 2});
  args.emplace_back(rt::DType::F16, rt::Shape{2, 2});
  for (int i = 0; i < 4; ++i) {
    args[0].as<uint16_t>()[i] = rt::floatToHalf(a[i]);
    args[1].as<uint16_t>()[i] = rt::floatToHalf(b[i]);
  }
  std::vector<rt::Tensor> out = Interpreter(func).run(views(args));
  ASSERT_EQ(out[0].dtype(), rt::DType::F16);
  ASSERT_EQ(out[1].dtype(), rt::DType::BF16);
  // a @ b = [[1, -1], [11.5, -3]]; max with a = [[1, 2], [11.5, 40]].
  const float want[4] = {1, 2, 11.5f, 40};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(rt::halfToFloat(out[0].as<uint16_t>()[i]), want[i]) << i;
    EXPECT_EQ(rt::bfloat16ToFloat(out[1].as<uint16_t>()[i]),
              rt::bfloat16ToFloat(rt::floatToBfloat16(std::sqrt(want[i]))))
        << i;
    EXPECT_EQ(out[2].as<uint8_t>()[i], a[i] < b[i] ? 1 : 0) << i;
  }
}

/// matmul -> add -> gelu -> reduce_sum, on `dtype` ("bf16", "f32").
std::string linearGeluSum(const std::string &dtype) {
  return std::regex_replace(R"mlir(
    func.func @f(%x: tensor<8x64xDT>, %w: tensor<64x32xDT>, %b: tensor<32xDT>) -> tensor<32xDT> {
      %0 = remat.matmul %x, %w : (tensor<8x64xDT>, tensor<64x32xDT>) -> tensor<8x32xDT>
      %1 = remat.add %0, %b : (tensor<8x32xDT>, tensor<32xDT>) -> tensor<8x32xDT>
      %2 = remat.gelu %1 : (tensor<8x32xDT>) -> tensor<8x32xDT>
      %3 = remat.reduce_sum %2 {axes = array<i64: 0>, keepdims = false} : (tensor<8x32xDT>) -> tensor<32xDT>
      return %3 : tensor<32xDT>
    })mlir",
                            std::regex("DT"), dtype);
}

/// Random values in [-1, 1) that bf16 holds exactly.
std::vector<float> bf16Values(int64_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = rt::bfloat16ToFloat(rt::floatToBfloat16(dist(gen)));
  return v;
}

rt::Tensor tensorOf(rt::DType dtype, rt::Shape shape,
                    const std::vector<float> &data) {
  rt::Tensor t(dtype, std::move(shape));
  for (size_t i = 0; i < data.size(); ++i) {
    if (dtype == rt::DType::BF16)
      t.as<uint16_t>()[i] = rt::floatToBfloat16(data[i]);
    else
      t.as<float>()[i] = data[i];
  }
  return t;
}

TEST_F(InterpreterTest, Bf16StepMatchesFloat64Evaluation) {
  // Each op's kernel reads bf16, computes in fp32 and rounds its result to
  // bf16 once; the chain is compared with the same chain in float64 from
  // the same (exact) input values, within the bound that rounding allows:
  // per op, half a bf16 ulp of its result (u = 2^-8 relative), the fp32
  // arithmetic (n 2^-22 of its terms' magnitude, as in the runtime kernel
  // tests), and the error of its inputs carried through (gelu's slope is at
  // most 1.13).
  func::FuncOp func = parse(linearGeluSum("bf16"));
  ASSERT_TRUE(func);
  const int64_t R = 8, K = 64, N = 32;
  const std::vector<float> x = bf16Values(R * K, 1), w = bf16Values(K * N, 2),
                           b = bf16Values(N, 3);
  std::vector<rt::Tensor> args;
  args.push_back(tensorOf(rt::DType::BF16, {R, K}, x));
  args.push_back(tensorOf(rt::DType::BF16, {K, N}, w));
  args.push_back(tensorOf(rt::DType::BF16, {N}, b));
  std::vector<rt::Tensor> out = Interpreter(func).run(views(args));
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].dtype(), rt::DType::BF16);

  const double u = 0x1p-8, f32 = 0x1p-22;
  for (int64_t j = 0; j < N; ++j) {
    double sum = 0, sumAbs = 0, bound = 0;
    for (int64_t i = 0; i < R; ++i) {
      double mm = 0, mmAbs = 0;
      for (int64_t k = 0; k < K; ++k) {
        mm += double(x[i * K + k]) * w[k * N + j];
        mmAbs += std::abs(double(x[i * K + k]) * w[k * N + j]);
      }
      const double h = mm + b[j];
      const double g = 0.5 * h * (1 + std::erf(h / std::sqrt(2.0)));
      const double errMm = u * std::abs(mm) + K * f32 * mmAbs;
      const double errH =
          u * std::abs(h) + f32 * (std::abs(mm) + std::abs(b[j])) + errMm;
      const double errG = u * std::abs(g) +
                          4 * f32 * std::max(std::abs(g), std::abs(h)) +
                          1.13 * errH;
      sum += g;
      sumAbs += std::abs(g);
      bound += errG;
    }
    bound += u * std::abs(sum) + R * f32 * sumAbs;
    EXPECT_NEAR(rt::bfloat16ToFloat(out[0].as<uint16_t>()[j]), sum, bound)
        << "output " << j;
  }
}

TEST_F(InterpreterTest, Bf16StepAllocatesWhatTheF32StepDoes) {
  // The same function on bf16 and on f32 values: the interpreter's own
  // bookkeeping (result buffers, value slots) is the same, so equal counts
  // mean that the bf16 kernels allocate nothing and that nothing is widened
  // into temporaries. Each is run once first, so the workspace has grown.
  if (!rt::harness::allocationCountingAvailable())
    GTEST_SKIP() << "a sanitizer owns the allocator";
  std::vector<int64_t> counts;
  for (rt::DType dtype : {rt::DType::BF16, rt::DType::F32}) {
    func::FuncOp func =
        parse(linearGeluSum(dtype == rt::DType::BF16 ? "bf16" : "f32"));
    ASSERT_TRUE(func);
    std::vector<rt::Tensor> args;
    args.push_back(tensorOf(dtype, {8, 64}, bf16Values(8 * 64, 1)));
    args.push_back(tensorOf(dtype, {64, 32}, bf16Values(64 * 32, 2)));
    args.push_back(tensorOf(dtype, {32}, bf16Values(32, 3)));
    Interpreter interp(func);
    (void)interp.run(views(args));
    const int64_t before = rt::harness::countedAllocations();
    rt::harness::beginCountingAllocations();
    std::vector<rt::Tensor> out = interp.run(views(args));
    rt::harness::endCountingAllocations();
    counts.push_back(rt::harness::countedAllocations() - before);
  }
  EXPECT_EQ(counts[0], counts[1]) << "bf16 vs f32 allocations in one run";
  EXPECT_GT(counts[1], 0) << "the counter sees the interpreter's buffers";
}

TEST_F(InterpreterTest, DTypeMapping) {
  for (rt::DType dtype :
       {rt::DType::F32, rt::DType::F64, rt::DType::F16, rt::DType::BF16,
        rt::DType::I64, rt::DType::I32, rt::DType::I8, rt::DType::U8,
        rt::DType::Bool}) {
    Type type = typeFromDType(dtype, &context);
    ASSERT_TRUE(type);
    EXPECT_EQ(dtypeFromType(type), dtype) << rt::dtypeName(dtype);
  }
  EXPECT_FALSE(dtypeFromType(IntegerType::get(&context, 16)));
}

TEST_F(InterpreterTest, UnknownOpIsNamed) {
  func::FuncOp func = parse(R"mlir(
    func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
      %0 = "test.mystery"(%x) : (tensor<3xf32>) -> tensor<3xf32>
      return %0 : tensor<3xf32>
    })mlir");
  ASSERT_TRUE(func);
  try {
    Interpreter interp(func);
    FAIL() << "expected an error";
  } catch (const InterpreterError &e) {
    EXPECT_NE(std::string(e.what()).find("'test.mystery'"), std::string::npos)
        << e.what();
  }
}

TEST_F(InterpreterTest, KernelErrorsNameTheOp) {
  func::FuncOp func = parse(R"mlir(
    func.func @f(%x: tensor<3xf32>) -> tensor<2xf32> {
      %i = remat.constant dense<[0, 7]> : tensor<2xi64>
      %0 = remat.gather %x, %i {axis = 0 : i64} : (tensor<3xf32>, tensor<2xi64>) -> tensor<2xf32> loc("my_gather_node")
      return %0 : tensor<2xf32>
    })mlir");
  ASSERT_TRUE(func);
  std::vector<rt::Tensor> args;
  args.push_back(tensorF32({3}, {1, 2, 3}));
  Interpreter interp(func);
  try {
    interp.run(views(args));
    FAIL() << "expected an error";
  } catch (const rt::RuntimeError &e) {
    std::string message = e.what();
    EXPECT_NE(message.find("remat.gather"), std::string::npos) << message;
    EXPECT_NE(message.find("my_gather_node"), std::string::npos) << message;
  }
  EXPECT_EQ(interp.liveBytes(), 0u);
}

TEST_F(InterpreterTest, ArgumentMismatchIsReported) {
  func::FuncOp func = parse(R"mlir(
    func.func @f(%x: tensor<3xf32> {remat.name = "input_x", remat.role = "input"}) -> tensor<3xf32> {
      %0 = remat.exp %x : (tensor<3xf32>) -> tensor<3xf32>
      return %0 : tensor<3xf32>
    })mlir");
  ASSERT_TRUE(func);
  Interpreter interp(func);
  rt::Tensor wrong(rt::DType::F32, {4});
  try {
    interp.run({&wrong.view()});
    FAIL() << "expected an error";
  } catch (const InterpreterError &e) {
    EXPECT_NE(std::string(e.what()).find("input_x"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(interp.run({}), InterpreterError);
}

TEST_F(InterpreterTest, ConvAndPooling) {
  func::FuncOp func = parse(R"mlir(
    func.func @f(%x: tensor<1x1x3x3xf32>, %w: tensor<1x1x2x2xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32>) {
      %c = remat.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
      %m, %idx = remat.max_pool %c {kernel_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x1x2x2xf32>) -> (tensor<1x1x1x1xf32>, tensor<1x1x1x1xi64>)
      %g = remat.global_average_pool %c : (tensor<1x1x2x2xf32>) -> tensor<1x1x1x1xf32>
      return %c, %m, %g : tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32>
    })mlir");
  ASSERT_TRUE(func);
  std::vector<rt::Tensor> args;
  args.push_back(tensorF32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}));
  args.push_back(tensorF32({1, 1, 2, 2}, {1, 0, 0, -1}));
  std::vector<rt::Tensor> out = Interpreter(func).run(views(args));
  // x[i][j] - x[i+1][j+1] = -4 everywhere.
  EXPECT_EQ(values(out[0]), (std::vector<float>{-4, -4, -4, -4}));
  EXPECT_EQ(values(out[1]), (std::vector<float>{-4}));
  EXPECT_EQ(values(out[2]), (std::vector<float>{-4}));
}

// Arena mode with --check-arena: a result written over an operand that dies
// at its op (an in-place pair) runs, reading the operand before its bytes
// are overwritten; the same offsets with the operand read afterwards are an
// overlap the check reports. 4 x f32 = 16 bytes per tensor.
constexpr const char *kInPlaceStep = R"mlir(
    func.func @f(%x: tensor<4xf32> {remat.name = "x", remat.role = "input", remat.arena_offset = 0 : i64})
        -> (tensor<4xf32> {remat.name = "y", remat.role = "output"})
        attributes {remat.arena_bytes = 48 : i64} {
      %a = remat.exp %x {remat.arena_offsets = array<i64: 16>} : (tensor<4xf32>) -> tensor<4xf32>
      %r = remat.relu %a {remat.arena_offsets = array<i64: 32>} : (tensor<4xf32>) -> tensor<4xf32>
      %dx = remat.relu_backward %r, %a {remat.arena_offsets = array<i64: 16>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %s = remat.add %dx, %LAST {remat.arena_offsets = array<i64: 16>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %s : tensor<4xf32>
    })mlir";

TEST_F(InterpreterTest, ArenaCheckAllowsExactlyInPlacePairs) {
  // %dx over %a (its last use), %s over %dx (both add operands die there).
  std::string legal = kInPlaceStep;
  legal.replace(legal.find("%LAST"), 5, "%dx");
  func::FuncOp func = parse(legal);
  ASSERT_TRUE(func);
  std::vector<rt::Tensor> args;
  args.push_back(tensorF32({4}, {-1, 0, 1, 2}));
  Interpreter interp(func);
  interp.setCheckArena(true);
  std::vector<rt::Tensor> out = interp.run(views(args));
  // exp(x) > 0, so relu_backward passes it: s = 2 exp(x), as unplanned.
  std::vector<float> expected;
  for (float x : {-1.0f, 0.0f, 1.0f, 2.0f})
    expected.push_back(2 * std::exp(x));
  EXPECT_EQ(values(out[0]), expected);
  EXPECT_EQ(values(Interpreter(parse(legal)).run(views(args))[0]), expected);

  // %a read again by the add: relu_backward may not write over it.
  std::string illegal = kInPlaceStep;
  illegal.replace(illegal.find("%LAST"), 5, "%a");
  func = parse(illegal);
  ASSERT_TRUE(func);
  Interpreter checked(func);
  checked.setCheckArena(true);
  try {
    checked.run(views(args));
    FAIL() << "expected an arena overlap";
  } catch (const InterpreterError &e) {
    EXPECT_NE(std::string(e.what()).find("arena overlap: remat.relu_backward"),
              std::string::npos)
        << e.what();
  }
}

} // namespace
