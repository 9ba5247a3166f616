//===- Options.h - remat-run's command-line options -------------*- C++ -*-===//

#ifndef REMAT_TOOLS_REMAT_RUN_OPTIONS_H
#define REMAT_TOOLS_REMAT_RUN_OPTIONS_H

#include "remat/Passes/Passes.h"
#include "remat/Tools/PlanPipeline.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace remat::run {

/// `--train`'s settings: the autodiff and planning passes' own options
/// (Passes.td), the step loop, and what to write or check afterwards.
struct TrainOptions {
  TrainOptions() { plan.target = "cpu"; }
  bool enabled = false;
  int64_t steps = 1;
  /// remat-autodiff (negative lr / weight decay: the pass's defaults).
  AutodiffOptions autodiff;
  /// --precision (remat-mixed-precision) and --loss-scale as given (empty:
  /// the precision's default, see defaultLossScale).
  std::string precision = "fp32";
  std::string lossScale;
  // Outputs.
  std::string dumpGrads, dumpParams, dumpBuffers, saveWeights;
  // Checks against reference tensors: pass iff max|a-b| <= tolerance *
  // max|ref|, per tensor.
  std::string checkGrads, checkParams, checkBuffers;
  double tolerance = 1e-4;
  /// --check-params leaves out elements whose gradient in --check-grads's
  /// directory is below this in magnitude (see GradientMask); 0: none.
  double skipGradBelow = 0;
  /// --zero-gradient NAME: gradients that are zero in exact arithmetic
  /// (an attention key bias, a bias right before a BatchNorm), whose
  /// reference is rounding noise: --check-grads measures them against the
  /// largest reference gradient of all instead of their own.
  std::vector<std::string> zeroGradients;
  std::optional<double> maxFinalLoss;
  /// --check-exact: the --check-* comparisons require identical bytes.
  bool checkExact = false;
  /// remat-plan under --budget (target cpu unless --target): the step then
  /// runs in the plan's arena. Empty budget: no planning ("none" is the only
  /// strategy allowed).
  PlanTrainStepOptions plan;
  /// --check-arena: the interpreter's overlap check on every arena write.
  bool checkArena = false;
};

struct Options {
  std::string model;
  std::string inputsDir, outputsDir, expectDir;
  std::vector<std::string> shapeFlags, frozen, paddingIdx;
  int64_t batch = -1;
  double rtol = 1e-4, atol = 1e-5;
  uint64_t step = 0;
  bool stepGiven = false;
  bool quiet = false, verbose = false;
  /// Forward: the scalar output; training: the loss of the first step.
  /// Fails if |loss - V| > 1e-5 * max(1, |V|).
  std::optional<double> expectLoss;
  /// Fusions of the loader's cleanup (remat-fuse-attention on by default).
  FusionOptions fusion;
  TrainOptions train;
};

} // namespace remat::run

#endif // REMAT_TOOLS_REMAT_RUN_OPTIONS_H
