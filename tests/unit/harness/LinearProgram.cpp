//===- LinearProgram.cpp - A hand-written training executable -------------===//
//
// The shape of the code remat-opt --emit=cpp generates, written by hand for
// LinearModel.h's model: a ProgramSpec (arena and persistent layout at
// 256-byte aligned offsets, arguments, results, constants) and a
// straight-line step of runtime kernel calls. Linked against
// Remat::HarnessCPU like a generated project (the package test builds this
// very file against the installed package).
//
//===----------------------------------------------------------------------===//

#include "LinearModel.h"

#include "remat/runtime/Kernels.h"
#include "remat/runtime/Program.h"

#include <cstdint>
#include <vector>

namespace {

namespace kernels = remat::rt;
using remat::rt::DType;
using namespace remat::test;

remat::rt::TensorView T(DType dtype, remat::rt::Shape shape, char *data) {
  return remat::rt::TensorView(dtype, std::move(shape), data);
}

// Arena: the batch, then the step's values.
constexpr int64_t kX = 0, kY = 256, kPred = 512, kDiff = 768, kSquare = 1024,
                  kLoss = 1280, kDPred = 1536, kDW = 1792, kNextStep = 2048,
                  kDecayedVar = 2304, kDecayedLoss = 2560, kArenaBytes = 2564;
// Persistent: the parameter, the step counter, the buffer, three constants.
constexpr int64_t kW = 0, kStep = 256, kScale = 512, kOne = 768,
                  kRunningVar = 1024, kDecayConstant = 1280,
                  kComplementConstant = 1536, kPersistentBytes = 1792;

const std::vector<remat::rt::ArgumentSpec> kArguments = {
    {"x", "input", DType::F32, {kBatch, kFeatures}, remat::rt::Region::Arena,
     kX, 0, 0},
    {"y", "input", DType::F32, {kBatch, 1}, remat::rt::Region::Arena, kY, 1,
     0},
    {"w", "parameter", DType::F32, {kFeatures, 1},
     remat::rt::Region::Persistent, kW, -1, 0},
    {"step", "step", DType::I64, {}, remat::rt::Region::Persistent, kStep, -1,
     0},
    {"running_var", "buffer", DType::F32, {1}, remat::rt::Region::Persistent,
     kRunningVar, -1, 0},
};

const std::vector<remat::rt::ResultSpec> kResults = {
    {"loss", "loss", DType::F32, {}, remat::rt::Region::Arena, kLoss, -1},
    {"w", "parameter", DType::F32, {kFeatures, 1},
     remat::rt::Region::Persistent, kW, 2},
    {"step", "step", DType::I64, {}, remat::rt::Region::Persistent, kStep, 3},
    {"running_var", "buffer", DType::F32, {1}, remat::rt::Region::Persistent,
     kRunningVar, 4},
};

// d mean(diff^2) / d diff = 2 / B * diff: a splat; and the step increment,
// stored in full.
const float kScaleValue = 2.0f / kBatch;
const int64_t kOneValue = 1;
const float kDecayValue = kDecay, kComplementValue = 1 - kDecay;
const std::vector<remat::rt::ConstantSpec> kConstants = {
    {DType::F32, {}, kScale, &kScaleValue, true},
    {DType::I64, {}, kOne, &kOneValue, false},
    {DType::F32, {1}, kDecayConstant, &kDecayValue, true},
    {DType::F32, {1}, kComplementConstant, &kComplementValue, true},
};

const std::vector<const char *> kOps = {
    "remat.matmul at 'pred'",   "remat.sub at 'diff'",
    "remat.mul at 'square'",    "remat.reduce_mean at 'loss'",
    "remat.mul at 'dpred'",     "remat.matmul at 'dw'",
    "remat.add at 'next_step'", "remat.sgd at 'w'",
    "remat.copy at 'step'",     "remat.mul at 'decayed_var'",
    "remat.mul at 'decayed_loss'", "remat.add at 'running_var'",
};

void trainStep(remat::rt::StepContext &ctx) {
  char *const A = ctx.arena;
  char *const P = ctx.persistent;
  ctx.currentOp = 0;
  kernels::matmul(T(DType::F32, {kBatch, kFeatures}, A + kX),
                  T(DType::F32, {kFeatures, 1}, P + kW),
                  T(DType::F32, {kBatch, 1}, A + kPred), false, false);
  ctx.currentOp = 1;
  kernels::binary(kernels::BinaryOp::Sub, T(DType::F32, {kBatch, 1}, A + kPred),
                  T(DType::F32, {kBatch, 1}, A + kY),
                  T(DType::F32, {kBatch, 1}, A + kDiff));
  ctx.currentOp = 2;
  kernels::binary(kernels::BinaryOp::Mul, T(DType::F32, {kBatch, 1}, A + kDiff),
                  T(DType::F32, {kBatch, 1}, A + kDiff),
                  T(DType::F32, {kBatch, 1}, A + kSquare));
  ctx.currentOp = 3;
  kernels::reduce(kernels::ReduceOp::Mean,
                  T(DType::F32, {kBatch, 1}, A + kSquare),
                  T(DType::F32, {1, 1}, A + kLoss), {0, 1});
  ctx.currentOp = 4;
  kernels::binary(kernels::BinaryOp::Mul, T(DType::F32, {kBatch, 1}, A + kDiff),
                  T(DType::F32, {}, P + kScale),
                  T(DType::F32, {kBatch, 1}, A + kDPred));
  ctx.currentOp = 5;
  kernels::matmul(T(DType::F32, {kBatch, kFeatures}, A + kX),
                  T(DType::F32, {kBatch, 1}, A + kDPred),
                  T(DType::F32, {kFeatures, 1}, A + kDW), true, false);
  ctx.currentOp = 6;
  kernels::binary(kernels::BinaryOp::Add, T(DType::I64, {}, P + kStep),
                  T(DType::I64, {}, P + kOne),
                  T(DType::I64, {}, A + kNextStep));
  ctx.currentOp = 7;
  kernels::SgdOptions sgd;
  sgd.lr = kLearningRate;
  kernels::sgdUpdate(T(DType::F32, {kFeatures, 1}, P + kW),
                     T(DType::F32, {kFeatures, 1}, A + kDW), {},
                     T(DType::F32, {kFeatures, 1}, P + kW), {},
                     static_cast<int64_t>(ctx.step) + 1, sgd);
  ctx.currentOp = 8;
  kernels::copy(T(DType::I64, {}, A + kNextStep), T(DType::I64, {}, P + kStep));
  ctx.currentOp = 9;
  kernels::binary(kernels::BinaryOp::Mul, T(DType::F32, {1}, P + kRunningVar),
                  T(DType::F32, {1}, P + kDecayConstant),
                  T(DType::F32, {1}, A + kDecayedVar));
  ctx.currentOp = 10;
  kernels::binary(kernels::BinaryOp::Mul, T(DType::F32, {1}, A + kLoss),
                  T(DType::F32, {1}, P + kComplementConstant),
                  T(DType::F32, {1}, A + kDecayedLoss));
  ctx.currentOp = 11;
  kernels::binary(kernels::BinaryOp::Add, T(DType::F32, {1}, A + kDecayedVar),
                  T(DType::F32, {1}, A + kDecayedLoss),
                  T(DType::F32, {1}, P + kRunningVar));
}

} // namespace

int main(int argc, char **argv) {
  remat::rt::ProgramSpec program;
  program.modelPath = kDefaultModelPath;
  program.backend = remat::rt::Backend::Cpu;
  program.optimizer = "sgd";
  program.strategy = "hand-written";
  program.arenaBytes = kArenaBytes;
  program.persistentBytes = kPersistentBytes;
  program.workspaceBytes = 512;
  program.plannedPeakBytes = kArenaBytes + kPersistentBytes + 512;
  program.budgetBytes = 8192;
  program.samplesPerStep = kBatch;
  program.arguments = kArguments;
  program.results = kResults;
  program.constants = kConstants;
  program.ops = kOps;
  program.trainStep = trainStep;
  return remat::rt::harnessMain(argc, argv, program);
}
