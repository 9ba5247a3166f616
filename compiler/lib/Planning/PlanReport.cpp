//===- PlanReport.cpp - Text and JSON forms of a plan report --------------===//
//
// The JSON keys are a stable interface (tests/lit/planning/report.test pins them):
// add keys, never rename or remove them.
//
//===----------------------------------------------------------------------===//

#include "remat/Planning/ByteSize.h"
#include "remat/Planning/TrainStepPlanner.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <vector>

namespace remat {

static std::string percent(double part, double whole) {
  if (whole <= 0)
    return "0.0%";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f%%", 100.0 * part / whole);
  return buffer;
}

static std::string gapPercent(double gap) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f%%", 100.0 * gap);
  return buffer;
}

static std::string seconds(double s) {
  char buffer[32];
  if (s >= 1)
    std::snprintf(buffer, sizeof buffer, "%.3f s", s);
  else if (s >= 1e-3)
    std::snprintf(buffer, sizeof buffer, "%.3f ms", s * 1e3);
  else
    std::snprintf(buffer, sizeof buffer, "%.1f us", s * 1e6);
  return buffer;
}

static std::string flops(double f) {
  char buffer[32];
  if (f >= 1e12)
    std::snprintf(buffer, sizeof buffer, "%.2f TFLOP", f / 1e12);
  else if (f >= 1e9)
    std::snprintf(buffer, sizeof buffer, "%.2f GFLOP", f / 1e9);
  else
    std::snprintf(buffer, sizeof buffer, "%.2f MFLOP", f / 1e6);
  return buffer;
}

void printPlanReport(const PlanReport &r, llvm::raw_ostream &os) {
  auto row = [&](llvm::StringRef label, const std::string &value) {
    os << "  " << llvm::left_justify(label, 28) << value << "\n";
  };
  os << (r.feasible ? "FITS" : "DOES NOT FIT") << ": planned peak "
     << formatBytes(r.peakBytes) << " against a budget of "
     << formatBytes(r.budgetBytes) << " (" << r.strategy << " strategy, "
     << r.target << " target)\n";
  if (!r.feasible)
    os << "  minimum feasible budget: "
       << formatBytes(r.minimumFeasibleBytes.value_or(r.peakBytes))
       << "\n  why: " << r.infeasibleReason << "\n";
  os << "\nSummary\n";
  row("parameters", std::to_string(r.parameterCount) + " (" +
                        formatBytes(r.parameterBytes) + ")");
  row("precision", r.precision == "fp32"
                       ? std::string("fp32")
                       : r.precision + " compute, fp32 master weights and "
                                       "optimizer state, loss scaling " +
                             r.lossScale);
  row("ops in the step", std::to_string(r.numOps));
  row("fused attention",
      std::to_string(r.fusedAttention) + " block" +
          (r.fusedAttention == 1 ? "" : "s") +
          (r.fusedAttention > 0
               ? ", " + formatBytes(r.fusedAttentionBytes) +
                     " of seq x seq tensors no longer kept for backward"
               : std::string()));
  if (r.unfusedAttentionBaselineBytes > 0)
    row("baseline unfused",
        formatBytes(r.unfusedAttentionBaselineBytes) +
            " without attention fusion (fusion saves " +
            formatBytes(r.unfusedAttentionBaselineBytes - r.baselinePeakBytes) +
            ")");
  row("baseline peak", formatBytes(r.baselinePeakBytes) +
                           " (no recomputation, same schedule)");
  if (r.plainOrderPeakBytes > 0)
    row("peak in plain order",
        formatBytes(r.plainOrderPeakBytes) + " (updates after all of backward; "
        "early updates save " +
            formatBytes(std::max<int64_t>(0, r.plainOrderPeakBytes - r.baselinePeakBytes)) + ")");
  row("planned peak", formatBytes(r.peakBytes) + " (" +
                          formatBinaryBytes(r.peakBytes) + ")");
  row("  persistent", formatBytes(r.persistentBytes) +
                          " (parameters, optimizer state, buffers, constants)");
  row("  arena", formatBytes(r.arenaBytes) + ", lower bound " +
                     formatBytes(r.lowerBoundBytes) + ", fragmentation " +
                     percent(r.arenaBytes - r.lowerBoundBytes, r.lowerBoundBytes) +
                     " (" + r.memoryAlgorithm + ")");
  for (const auto &[category, bytes] : r.peakBreakdown)
    row("    " + category + " at peak", formatBytes(bytes));
  row("  workspace", formatBytes(r.workspaceBytes));
  if (r.precision != "fp32") {
    auto byDType = [](const std::map<std::string, int64_t> &bytes) {
      std::string text;
      for (const auto &[dtype, n] : bytes)
        text += (text.empty() ? "" : ", ") + dtype + " " + formatBytes(n);
      return text;
    };
    row("  persistent by dtype", byDType(r.persistentBytesByDType));
    row("  arena peak by dtype", byDType(r.peakArenaBytesByDType));
  }
  if (r.simulatedPeakBytes > 0)
    row("simulated peak", formatBytes(r.simulatedPeakBytes) +
                              " (the strategy's estimate before the arena "
                              "layout; detail only)");
  row("FLOPs per step", flops(r.forwardFlops) + " forward, " +
                            flops(r.backwardFlops) + " backward, " +
                            flops(r.recomputeFlops) + " recompute");
  row("estimated step time", seconds(r.estimatedStepSeconds) + " (baseline " +
                                 seconds(r.baselineStepSeconds) + ")");
  row("recompute overhead",
      percent(r.recomputeFlops, r.forwardFlops + r.backwardFlops) + " of FLOPs, " +
          percent(r.estimatedStepSeconds - r.baselineStepSeconds,
                  r.baselineStepSeconds) +
          " of time");
  row("memory saved", formatBytes(std::max<int64_t>(0, r.baselinePeakBytes - r.peakBytes)));
  if (r.feasible)
    row("minimum feasible budget",
        r.minimumFeasibleBytes
            ? formatBytes(*r.minimumFeasibleBytes) +
                  " (lowest peak of the floor search)"
            : std::string("not searched (the budget fits; --report-floor "
                          "searches it)"));
  if (r.optimalityBoundSeconds) {
    std::string verdict;
    if (r.optimalityGap)
      verdict = *r.optimalityGap <= 1e-6
                    ? ": the plan is optimal"
                    : ": the plan is within " + gapPercent(*r.optimalityGap) +
                          " of the optimum";
    row("optimality bound", seconds(*r.optimalityBoundSeconds) +
                                " (no plan within the budget is faster)" +
                                verdict);
  }
  if (!r.optimalityBoundNote.empty())
    row("bound note", r.optimalityBoundNote);
  if (r.strategy == "milp")
    row("MILP", std::string(r.milpProvedOptimal ? "optimal" : "not proven optimal") +
                    ", gap " + percent(r.milpGap, 1));
  if (!r.strategyNote.empty())
    row("strategy note", r.strategyNote);
  row("planner time", seconds(r.plannerSeconds));

  if (r.recomputedOps > 0) {
    os << "\nRecomputed ops (" << r.recomputedOps << ")\n";
    std::vector<std::pair<std::string, int64_t>> byType(r.recomputedByType.begin(),
                                                        r.recomputedByType.end());
    std::sort(byType.begin(), byType.end(),
              [](auto &a, auto &b) { return a.second > b.second; });
    for (const auto &[type, count] : byType)
      row(type, std::to_string(count));
  } else {
    os << "\nNothing is recomputed.\n";
  }
}

void printPlanReportJson(const PlanReport &r, llvm::raw_ostream &os) {
  llvm::json::Object recomputed;
  for (const auto &[type, count] : r.recomputedByType)
    recomputed[type] = count;
  llvm::json::Object breakdown;
  for (const auto &[category, bytes] : r.peakBreakdown)
    breakdown[category] = bytes;
  auto byDType = [](const std::map<std::string, int64_t> &bytes) {
    llvm::json::Object object;
    for (const auto &[dtype, n] : bytes)
      object[dtype] = n;
    return object;
  };
  llvm::json::Object root{
      {"feasible", r.feasible},
      {"strategy", r.strategy},
      {"target", r.target},
      {"budget_bytes", r.budgetBytes},
      {"peak_bytes", r.peakBytes},
      {"baseline_peak_bytes", r.baselinePeakBytes},
      {"simulated_peak_bytes", r.simulatedPeakBytes},
      {"plain_order_peak_bytes", r.plainOrderPeakBytes},
      // null when the floor search did not run (the budget fits and
      // --report-floor was not given).
      {"minimum_feasible_bytes",
       r.minimumFeasibleBytes ? llvm::json::Value(*r.minimumFeasibleBytes)
                              : llvm::json::Value(nullptr)},
      {"lower_bound_bytes", r.lowerBoundBytes},
      {"arena_bytes", r.arenaBytes},
      {"fragmentation", r.fragmentation},
      {"memory_algorithm", r.memoryAlgorithm},
      {"persistent_bytes", r.persistentBytes},
      {"workspace_bytes", r.workspaceBytes},
      {"peak_breakdown_bytes", std::move(breakdown)},
      {"precision", r.precision},
      {"loss_scale", r.lossScale},
      {"persistent_bytes_by_dtype", byDType(r.persistentBytesByDType)},
      {"peak_arena_bytes_by_dtype", byDType(r.peakArenaBytesByDType)},
      {"parameter_count", r.parameterCount},
      {"parameter_bytes", r.parameterBytes},
      {"num_ops", r.numOps},
      {"forward_flops", r.forwardFlops},
      {"backward_flops", r.backwardFlops},
      {"recompute_flops", r.recomputeFlops},
      {"estimated_step_seconds", r.estimatedStepSeconds},
      {"baseline_step_seconds", r.baselineStepSeconds},
      {"planner_seconds", r.plannerSeconds},
      {"recomputed_ops", r.recomputedOps},
      {"fused_attention", r.fusedAttention},
      {"fused_attention_bytes", r.fusedAttentionBytes},
      // 0 when not measured (no attention was fused).
      {"unfused_attention_baseline_peak_bytes",
       r.unfusedAttentionBaselineBytes},
      {"recomputed_ops_by_type", std::move(recomputed)},
      {"milp_proved_optimal", r.milpProvedOptimal},
      {"milp_gap", r.milpGap},
      // null when proven that nothing fits; the gap also when the plan does
      // not fit or lies outside the bound's class.
      {"optimality_bound_seconds",
       r.optimalityBoundSeconds ? llvm::json::Value(*r.optimalityBoundSeconds)
                                : llvm::json::Value(nullptr)},
      {"optimality_gap", r.optimalityGap ? llvm::json::Value(*r.optimalityGap)
                                         : llvm::json::Value(nullptr)},
      {"optimality_bound_note", r.optimalityBoundNote},
      {"strategy_note", r.strategyNote},
      {"infeasible_reason", r.infeasibleReason},
  };
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
}

} // namespace remat
