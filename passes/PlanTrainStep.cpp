//===- PlanTrainStep.cpp - Plan @train_step under a memory budget ---------===//

#include "remat/Passes/Passes.h"

#include "remat/Dialect/RematOps.h"
#include "remat/Planning/ByteSize.h"
#include "remat/Planning/TrainStepPlanner.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace remat {
#define GEN_PASS_DEF_PLANTRAINSTEP
#include "remat/Passes/Passes.h.inc"
} // namespace remat

using namespace mlir;
using namespace remat;

namespace {

struct PlanTrainStepPass : remat::impl::PlanTrainStepBase<PlanTrainStepPass> {
  using PlanTrainStepBase::PlanTrainStepBase;
  PlanTrainStepPass(const PlanTrainStepOptions &options, PlanReport *out,
                    int64_t plainOrderPeakBytes)
      : PlanTrainStepBase(options), out(out),
        plainOrderPeakBytes(plainOrderPeakBytes) {}

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto step = module.lookupSymbol<func::FuncOp>("train_step");
    if (!step) {
      module.emitError("remat-plan: no @train_step to plan; run remat-autodiff "
                       "first");
      return signalPassFailure();
    }
    std::string error;
    std::optional<int64_t> budgetBytes = parseByteSize(budget, error);
    if (budget.empty() || !budgetBytes) {
      module.emitError("remat-plan: --budget ")
          << (budget.empty() ? std::string("is required") : error);
      return signalPassFailure();
    }
    std::optional<plan::Strategy> chosen = plan::parseStrategy(strategy);
    if (!chosen) {
      module.emitError("remat-plan: unknown strategy '")
          << strategy << "' (valid: none, all, sqrt, milp, auto)";
      return signalPassFailure();
    }
    const TargetSpec *spec = lookupTarget(target);
    if (!spec) {
      module.emitError("remat-plan: unknown target '")
          << target << "' (valid: h100, h200, a100, cpu)";
      return signalPassFailure();
    }
    CostModel costModel(*spec);
    if (!costTable.empty() && !costModel.loadCostTable(costTable, error)) {
      module.emitError("remat-plan: ") << error;
      return signalPassFailure();
    }
    PlannerOptions options;
    options.budgetBytes = *budgetBytes;
    options.strategy = *chosen;
    options.strategyOptions.milp.timeLimitSeconds = milpSeconds;
    options.plainOrderPeakBytes = plainOrderPeakBytes;
    options.reportFloor = reportFloor;
    if (auto optimizer = step->getAttrOfType<StringAttr>("remat.optimizer"))
      options.optimizer = optimizer.str();
    int64_t defaultWorkspace = spec->name == "cpu" ? 0 : 64ll << 20;
    options.workspaceBytes = defaultWorkspace;
    if (!workspace.empty()) {
      std::optional<int64_t> bytes = parseByteSize(workspace, error);
      if (!bytes) {
        module.emitError("remat-plan: --workspace ") << error;
        return signalPassFailure();
      }
      options.workspaceBytes = *bytes;
    }

    FailureOr<PlanReport> report = planTrainStep(step, costModel, options);
    if (failed(report))
      return signalPassFailure();
    // remat-fuse-attention marked @forward, which @train_step was cloned from.
    if (auto n = step->getAttrOfType<IntegerAttr>("remat.fused_attention"))
      report->fusedAttention = n.getInt();
    if (auto n = step->getAttrOfType<IntegerAttr>("remat.fused_attention_bytes"))
      report->fusedAttentionBytes = n.getInt();
    Builder b(&getContext());
    step->setAttr("remat.plan",
                  b.getDictionaryAttr({
                      b.getNamedAttr("feasible", b.getBoolAttr(report->feasible)),
                      b.getNamedAttr("strategy", b.getStringAttr(report->strategy)),
                      b.getNamedAttr("budget_bytes", b.getI64IntegerAttr(report->budgetBytes)),
                      b.getNamedAttr("peak_bytes", b.getI64IntegerAttr(report->peakBytes)),
                      b.getNamedAttr("baseline_peak_bytes",
                                     b.getI64IntegerAttr(report->baselinePeakBytes)),
                      b.getNamedAttr("recomputed_ops",
                                     b.getI64IntegerAttr(report->recomputedOps)),
                  }));
    if (out)
      *out = *report;
    if (!report->feasible) {
      step.emitError("remat-plan: no plan fits ")
          << formatBytes(report->budgetBytes) << ": the minimum is "
          << formatBytes(
                 report->minimumFeasibleBytes.value_or(report->peakBytes))
          << "; "
          << report->infeasibleReason;
      return signalPassFailure();
    }
  }

  PlanReport *out = nullptr;
  int64_t plainOrderPeakBytes = 0;
};

} // namespace

std::unique_ptr<Pass> remat::createPlanTrainStepWithReport(
    const PlanTrainStepOptions &options, PlanReport *out,
    int64_t plainOrderPeakBytes) {
  return std::make_unique<PlanTrainStepPass>(options, out, plainOrderPeakBytes);
}
