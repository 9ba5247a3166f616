//===- PlanPipeline.cpp - The drivers' planning pipeline ------------------===//

#include "remat/Tools/PlanPipeline.h"

#include "remat/Analysis/MemoryProfile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace remat {

/// Set by remat-fuse-attention on @forward (and so on @train_step).
static constexpr llvm::StringLiteral kFusedAttentionAttr =
    "remat.fused_attention";
/// Set here on @train_step: the arena the step would need unfused.
static constexpr llvm::StringLiteral kUnfusedArenaAttr =
    "remat.unfused_attention_arena_bytes";

/// Runs `pm`, with the standard command-line instrumentation
/// (--mlir-print-ir-after-all, --mlir-timing, ...) when asked.
static LogicalResult runPipeline(PassManager &pm, ModuleOp module,
                                 bool commandLineOptions) {
  if (commandLineOptions) {
    if (failed(applyPassManagerCLOptions(pm)))
      return failure();
    applyDefaultTimingPassManagerCLOptions(pm);
  }
  return pm.run(module);
}

/// The arena @train_step of `module` needs with its updates scheduled early
/// and nothing recomputed (how the planner's baseline schedules it), measured
/// on a copy; nullopt if that cannot be built.
static std::optional<int64_t> scheduledArenaBytes(ModuleOp module) {
  OwningOpRef<ModuleOp> copy = module.clone();
  PassManager pm(module.getContext());
  pm.addNestedPass<func::FuncOp>(createScheduleUpdates());
  auto step = copy->lookupSymbol<func::FuncOp>("train_step");
  if (!step || failed(pm.run(*copy)))
    return std::nullopt;
  return planArena(computeMemoryProfile(step)).arenaBytes;
}

/// remat-mixed-precision on @forward, unless the step stays fp32.
static void addMixedPrecision(PassManager &pm, StringRef precision) {
  if (precision == "fp32")
    return;
  MixedPrecisionOptions options;
  options.precision = precision.str();
  pm.addNestedPass<func::FuncOp>(createMixedPrecision(options));
}

void addForwardCleanup(OpPassManager &pm, const FusionOptions &fusion) {
  pm.addNestedPass<func::FuncOp>(createFuseGelu());
  if (fusion.attention) {
    FuseAttentionOptions attention;
    attention.explain = fusion.explainAttention;
    pm.addNestedPass<func::FuncOp>(createFuseAttention(attention));
  }
  pm.addNestedPass<func::FuncOp>(createFoldTransposeIntoMatMul());
}

/// What the step would need without remat-fuse-attention: `unfused` (the
/// module before fusion) gets the rest of the pipeline, silently (errors
/// there were reported on the fused step already, or do not matter).
static std::optional<int64_t>
unfusedArenaBytes(ModuleOp unfused, const AutodiffOptions &autodiff,
                  StringRef precision) {
  ScopedDiagnosticHandler quiet(unfused.getContext(),
                                [](Diagnostic &) { return success(); });
  PassManager pm(unfused.getContext());
  FusionOptions noAttention;
  noAttention.attention = false;
  addForwardCleanup(pm, noAttention);
  addMixedPrecision(pm, precision);
  pm.addPass(createAutodiff(autodiff));
  if (failed(pm.run(unfused)))
    return std::nullopt;
  return scheduledArenaBytes(unfused);
}

std::string defaultLossScale(StringRef precision, StringRef lossScale) {
  if (!lossScale.empty())
    return lossScale.str();
  return precision == "fp16" ? "dynamic" : "none";
}

LogicalResult buildTrainStep(ModuleOp module, const AutodiffOptions &autodiff,
                             const FusionOptions &fusion, StringRef precision,
                             bool commandLineOptions) {
  if (module.lookupSymbol("train_step")) {
    // A training step read from the model (ONNX training ops, or .mlir)
    // has its dtypes already.
    if (precision != "fp32")
      return module.emitError("--precision ")
             << precision
             << " applies when remat builds the training step; this module "
                "already has a @train_step";
    return success();
  }
  // Kept for the report's with/without comparison.
  OwningOpRef<ModuleOp> unfused;
  if (fusion.attention)
    unfused = module.clone();
  PassManager pm(module.getContext());
  addForwardCleanup(pm, fusion);
  addMixedPrecision(pm, precision);
  pm.addPass(createAutodiff(autodiff));
  if (failed(runPipeline(pm, module, commandLineOptions)))
    return failure();
  auto step = module.lookupSymbol<func::FuncOp>("train_step");
  if (unfused && step && step->hasAttr(kFusedAttentionAttr))
    if (auto bytes = unfusedArenaBytes(*unfused, autodiff, precision))
      step->setAttr(kUnfusedArenaAttr,
                    Builder(module.getContext()).getI64IntegerAttr(*bytes));
  return success();
}

int planTrainStepPipeline(ModuleOp module, const PlanTrainStepOptions &options,
                          PlanReport &report, bool commandLineOptions) {
  auto step = module.lookupSymbol<func::FuncOp>("train_step");
  if (!step) {
    module.emitError("no @train_step to plan; run remat-autodiff first");
    return 1;
  }
  // The peak before updates move up, for the report, measured like the
  // baseline: the arena that order needs (live bytes alone would leave out
  // fragmentation and understate what early updates save).
  const int64_t plainOrderPeak =
      planArena(computeMemoryProfile(step)).arenaBytes;
  std::optional<int64_t> unfusedArena, fusedArena;
  if (auto bytes = step->getAttrOfType<IntegerAttr>(kUnfusedArenaAttr)) {
    unfusedArena = bytes.getInt();
    fusedArena = scheduledArenaBytes(module);
  }

  report = PlanReport();
  PassManager pm(module.getContext());
  pm.addNestedPass<func::FuncOp>(createScheduleUpdates());
  pm.addPass(createPlanTrainStepWithReport(options, &report, 0));
  // Every plan the drivers produce is proven safe from the IR itself before
  // anything runs or is generated from it.
  pm.addNestedPass<func::FuncOp>(createVerifyMemoryPlan());
  const bool planned =
      succeeded(runPipeline(pm, module, commandLineOptions));
  // A usage or IR error (reported already): the pass failed before it had
  // a report, or with a plan that fits (the IR verifier or
  // remat-verify-memory-plan rejected it).
  if (!planned && (report.budgetBytes == 0 || report.feasible))
    return 1;
  // The plain-order peak is measured on the same footing as the planned one:
  // persistent state + arena + workspace.
  if (report.plainOrderPeakBytes == 0)
    report.plainOrderPeakBytes =
        plainOrderPeak + report.persistentBytes + report.workspaceBytes;
  // Attention fusion's effect on the baseline, both arenas measured alike
  // (on the step as remat-plan received it) over the same persistent state
  // and workspace.
  if (unfusedArena && fusedArena)
    report.unfusedAttentionBaselineBytes =
        *unfusedArena - *fusedArena + report.baselinePeakBytes;
  return report.feasible ? 0 : 2;
}

std::optional<CostModel> planCostModel(const PlanTrainStepOptions &options) {
  const TargetSpec *target = lookupTarget(options.target);
  if (!target) {
    llvm::errs() << "remat-opt: error: unknown target '" << options.target
                 << "'\n";
    return std::nullopt;
  }
  CostModel costModel(*target);
  std::string error;
  if (!options.costTable.empty() &&
      !costModel.loadCostTable(options.costTable, error)) {
    llvm::errs() << "remat-opt: error: " << error << "\n";
    return std::nullopt;
  }
  return costModel;
}

} // namespace remat
