//===- MemoryProfileTest.cpp - Liveness with in-place sharing -------------===//
//
// computeMemoryProfile on small hand-written steps: which results share a
// dying operand's buffer (compiler/include/remat/Dialect/InPlace.h) and
// which do not, and the peak that follows, worked out by hand.
//
//===----------------------------------------------------------------------===//

#include "remat/Analysis/MemoryProfile.h"
#include "remat/Dialect/RematDialect.h"
#include "remat/Dialect/RematOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace remat;

namespace {

class MemoryProfileTest : public ::testing::Test {
protected:
  MemoryProfileTest() { context.loadDialect<RematDialect, func::FuncDialect>(); }

  func::FuncOp parse(const char *source) {
    module = parseSourceString<ModuleOp>(source, ParserConfig(&context));
    if (!module)
      return nullptr;
    return *module->getOps<func::FuncOp>().begin();
  }

  /// The op named `name` (remat.name) in `func`.
  static Operation *named(func::FuncOp func, StringRef name) {
    Operation *found = nullptr;
    func.walk([&](Operation *op) {
      if (auto attr = op->getAttrOfType<StringAttr>(RematDialect::kNameAttr))
        if (attr.getValue() == name)
          found = op;
    });
    return found;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

// 64 x f32 = 256 bytes; 4 x f32 = 16 bytes.
constexpr const char *kElementwise = R"mlir(
func.func @step(%x: tensor<64xf32> {remat.name = "x", remat.role = "input"},
                %w: tensor<64xf32> {remat.name = "w", remat.role = "parameter"},
                %v: tensor<1xf32> {remat.name = "v", remat.role = "input"})
    -> (tensor<64xf64> {remat.name = "y", remat.role = "output"}) {
  %a = remat.mul %x, %w {remat.name = "a"} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %b = remat.exp %a {remat.name = "b"} : (tensor<64xf32>) -> tensor<64xf32>
  %t = remat.tanh %b {remat.name = "t"} : (tensor<64xf32>) -> tensor<64xf32>
  %s = remat.add %t, %b {remat.name = "s"} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %r = remat.add %v, %s {remat.name = "r"} : (tensor<1xf32>, tensor<64xf32>) -> tensor<64xf32>
  %c = remat.constant dense<2.0> : tensor<64xf32>
  %m = remat.mul %c, %r {remat.name = "m"} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %k = remat.cast %m {remat.name = "k"} : (tensor<64xf32>) -> tensor<64xf64>
  return %k : tensor<64xf64>
}
)mlir";

TEST_F(MemoryProfileTest, ResultsShareTheBufferOfAnOperandThatDiesThere) {
  func::FuncOp func = parse(kElementwise);
  ASSERT_TRUE(func);
  MemoryProfile profile = computeMemoryProfile(func, /*alignment=*/0);
  auto bufferOf = [&](StringRef name) {
    return profile.bufferOf.lookup(named(func, name)->getResult(0));
  };
  // %x is the caller's input: the product gets a buffer of its own.
  EXPECT_NE(bufferOf("a"), profile.bufferOf.lookup(func.getArgument(0)));
  // exp writes over %a, which dies at it.
  EXPECT_EQ(bufferOf("b"), bufferOf("a"));
  // tanh cannot write over %b: the add reads it afterwards.
  EXPECT_NE(bufferOf("t"), bufferOf("b"));
  // Both operands of the add die there; it takes the first one's buffer.
  EXPECT_EQ(bufferOf("s"), bufferOf("t"));
  // The broadcast %v (1 element) is not written over; %s is.
  EXPECT_EQ(bufferOf("r"), bufferOf("s"));
  // A constant lives outside the arena; %r is written over instead.
  EXPECT_EQ(bufferOf("m"), bufferOf("r"));
  // A cast to another type cannot write over its operand.
  EXPECT_NE(bufferOf("k"), bufferOf("m"));

  // Steps: a 0, b 1, t 2, s 3, r 4, the constant 5, m 6, k 7, return 8.
  // Buffers: x [-1, 0], v [-1, 4], (a, b) [0, 3], (t, s, r, m) [2, 7],
  // k [7, 8]; none for the constant (the persistent region holds it).
  Operation *constant = named(func, "m")->getOperand(0).getDefiningOp();
  EXPECT_FALSE(profile.bufferOf.count(constant->getResult(0)));
  EXPECT_EQ(profile.buffers.size(), 5u);
  const BufferLifetime &ab = profile.buffers[bufferOf("a")];
  EXPECT_EQ(ab.begin, 0);
  EXPECT_EQ(ab.end, 3); // %b's last read, by the add at step 3
  const BufferLifetime &ts = profile.buffers[bufferOf("t")];
  EXPECT_EQ(ts.begin, 2);
  EXPECT_EQ(ts.end, 7); // %m's last read, by the cast at step 7
  // The peak is step 7: (t, s, r, m) 256 bytes and k, 64 x f64, 512.
  // Without sharing, step 3 would hold v, b, t and s: 772.
  EXPECT_EQ(profile.peakBytes, 768);
}

TEST_F(MemoryProfileTest,
       ConstantsAndViewsOfStorageOutsideTheArenaHaveNoBuffer) {
  // The emitter and the interpreter keep constants in the persistent region
  // and make a reshape a view of its input's storage, wherever that is; the
  // planner's step graph counts constants as persistent. An arena buffer
  // for either would be counted twice (HF Llama on h100: 4.6 KB).
  func::FuncOp func = parse(R"mlir(
func.func @step(%x: tensor<64xf32> {remat.name = "x", remat.role = "input"},
                %w: tensor<8x8xf32> {remat.name = "w", remat.role = "parameter"})
    -> (tensor<64xf32> {remat.name = "y", remat.role = "output"}) {
  %wf = remat.reshape %w {remat.name = "wf"} : (tensor<8x8xf32>) -> tensor<64xf32>
  %c = remat.constant {remat.name = "c"} dense<2.0> : tensor<8x8xf32>
  %cf = remat.reshape %c {remat.name = "cf"} : (tensor<8x8xf32>) -> tensor<64xf32>
  %a = remat.mul %x, %wf {remat.name = "a"} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %a2 = remat.reshape %a {remat.name = "a2"} : (tensor<64xf32>) -> tensor<8x8xf32>
  %af = remat.reshape %a2 {remat.name = "af"} : (tensor<8x8xf32>) -> tensor<64xf32>
  %y = remat.mul %af, %cf {remat.name = "y"} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return %y : tensor<64xf32>
}
)mlir");
  ASSERT_TRUE(func);
  MemoryProfile profile = computeMemoryProfile(func, /*alignment=*/0);
  auto has = [&](StringRef name) {
    return profile.bufferOf.count(named(func, name)->getResult(0)) != 0;
  };
  EXPECT_FALSE(has("wf")); // a view of the parameter
  EXPECT_FALSE(has("c"));
  EXPECT_FALSE(has("cf")); // a view of the constant
  // Views of an arena value share its buffer, through a chain of reshapes.
  ASSERT_TRUE(has("af"));
  EXPECT_EQ(profile.bufferOf.lookup(named(func, "af")->getResult(0)),
            profile.bufferOf.lookup(named(func, "a")->getResult(0)));
  // Steps: wf 0, c 1, cf 2, a 3, a2 4, af 5, y 6. Buffers: x [-1, 3] and
  // (a, a2, af, y) [3, 7] (y writes over af, which dies at it), 256 bytes
  // each, both live at step 3.
  EXPECT_EQ(profile.buffers.size(), 2u);
  EXPECT_EQ(profile.peakBytes, 512);
}

TEST_F(MemoryProfileTest, OnlyTheFirstResultOfAMultiResultOpIsWrittenInPlace) {
  // layer_norm_backward's dx may take over dy; its scale gradient has the
  // type of the (computed, dying) scale but is not the first result.
  func::FuncOp func = parse(R"mlir(
func.func @step(%x: tensor<2x8xf32> {remat.name = "x", remat.role = "input"},
                %p: tensor<8xf32> {remat.name = "p", remat.role = "parameter"},
                %m: tensor<2x1xf32> {remat.name = "m", remat.role = "input"},
                %i: tensor<2x1xf32> {remat.name = "i", remat.role = "input"})
    -> (tensor<2x8xf32> {remat.name = "dx", remat.role = "output"},
        tensor<8xf32> {remat.name = "ds", remat.role = "output"}) {
  %s = remat.exp %p {remat.name = "s"} : (tensor<8xf32>) -> tensor<8xf32>
  %dy = remat.neg %x {remat.name = "dy"} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %dx, %ds, %db = remat.layer_norm_backward %x, %s, %m, %i, %dy {axis = 1 : i64, remat.name = "ln"} : (tensor<2x8xf32>, tensor<8xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %dx, %ds : tensor<2x8xf32>, tensor<8xf32>
}
)mlir");
  ASSERT_TRUE(func);
  MemoryProfile profile = computeMemoryProfile(func, /*alignment=*/0);
  Operation *ln = named(func, "ln");
  auto bufferOf = [&](Value v) { return profile.bufferOf.lookup(v); };
  // %x is an argument; %dy dies at the op: dx takes %dy's buffer.
  EXPECT_EQ(bufferOf(ln->getResult(0)), bufferOf(named(func, "dy")->getResult(0)));
  EXPECT_NE(bufferOf(ln->getResult(1)), bufferOf(named(func, "s")->getResult(0)));
}

TEST_F(MemoryProfileTest, AnAssignedPlanSharesOnlyWhereTheOffsetsAgree) {
  // %b is at %a's offset (in place), %t is not at %b's.
  func::FuncOp func = parse(R"mlir(
func.func @step(%x: tensor<64xf32> {remat.name = "x", remat.role = "input", remat.arena_offset = 0 : i64})
    -> (tensor<64xf32> {remat.name = "y", remat.role = "output"})
    attributes {remat.arena_bytes = 768 : i64} {
  %a = remat.neg %x {remat.name = "a", remat.arena_offsets = array<i64: 256>} : (tensor<64xf32>) -> tensor<64xf32>
  %b = remat.exp %a {remat.name = "b", remat.arena_offsets = array<i64: 256>} : (tensor<64xf32>) -> tensor<64xf32>
  %t = remat.tanh %b {remat.name = "t", remat.arena_offsets = array<i64: 512>} : (tensor<64xf32>) -> tensor<64xf32>
  return %t : tensor<64xf32>
}
)mlir");
  ASSERT_TRUE(func);
  auto bufferOf = [&](const MemoryProfile &profile, StringRef name) {
    return profile.bufferOf.lookup(named(func, name)->getResult(0));
  };
  MemoryProfile assigned =
      computeMemoryProfile(func, 0, InPlaceSharing::AsAssigned);
  EXPECT_EQ(bufferOf(assigned, "b"), bufferOf(assigned, "a"));
  EXPECT_NE(bufferOf(assigned, "t"), bufferOf(assigned, "b"));
  // x, then (a, b), then t: step 2 holds (a, b) and t.
  EXPECT_EQ(assigned.peakBytes, 512);
  // Planning from scratch shares every legal pair, t over b too.
  MemoryProfile allowed = computeMemoryProfile(func, 0);
  EXPECT_EQ(bufferOf(allowed, "t"), bufferOf(allowed, "a"));
  EXPECT_EQ(allowed.peakBytes, 512); // step 0: x and (a, b, t)
}

} // namespace
