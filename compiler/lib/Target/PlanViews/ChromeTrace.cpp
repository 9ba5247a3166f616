//===- ChromeTrace.cpp - The plan as Chrome trace events (--emit=trace) ---===//
//
// The Trace Event Format that Perfetto and chrome://tracing open: one
// complete ("X") slice per op at its estimated start and duration, recomputed
// ops in their own category, and a counter ("C") of device memory by
// category after each op's allocations. Times are the cost model's
// estimates in microseconds, not measurements.
//
//===----------------------------------------------------------------------===//

#include "remat/Target/PlanViews.h"

#include "llvm/Support/JSON.h"

namespace remat {

static constexpr int kProcess = 1;
static constexpr int kScheduleThread = 1;

void writeChromeTrace(const PlanTimeline &timeline, const PlanReport &report,
                      llvm::raw_ostream &os) {
  llvm::json::OStream json(os);
  auto metadata = [&](llvm::StringRef kind, int tid, llvm::StringRef name) {
    json.object([&] {
      json.attribute("ph", "M");
      json.attribute("name", kind);
      json.attribute("pid", kProcess);
      json.attribute("tid", tid);
      json.attributeObject("args", [&] { json.attribute("name", name); });
    });
  };
  // A counter sample: live bytes by category (persistent and workspace are
  // constant over the step).
  auto memory = [&](double ts, size_t index) {
    json.object([&] {
      json.attribute("ph", "C");
      json.attribute("name", "device memory (bytes)");
      json.attribute("pid", kProcess);
      json.attribute("ts", ts);
      json.attributeObject("args", [&] {
        json.attribute("persistent", timeline.persistentBytes);
        for (size_t c = 0; c < size_t(MemoryCategory::Count); ++c)
          json.attribute(categoryName(MemoryCategory(c)),
                         timeline.liveByCategory[index][c]);
        json.attribute("workspace", timeline.workspaceBytes);
      });
    });
  };

  json.object([&] {
    json.attribute("displayTimeUnit", "ms");
    json.attributeObject("otherData", [&] {
      json.attribute("generator", "remat-opt --emit=trace");
      json.attribute("strategy", report.strategy);
      json.attribute("target", report.target);
      json.attribute("budget_bytes", report.budgetBytes);
      json.attribute("peak_bytes", report.peakBytes);
      json.attribute("persistent_bytes", report.persistentBytes);
      json.attribute("arena_bytes", report.arenaBytes);
      json.attribute("workspace_bytes", report.workspaceBytes);
      json.attribute("lower_bound_bytes", report.lowerBoundBytes);
      json.attribute("estimated_step_seconds", report.estimatedStepSeconds);
      json.attribute("times", "estimated by the cost model, not measured");
    });
    json.attributeArray("traceEvents", [&] {
      metadata("process_name", kScheduleThread,
               "remat plan (" + report.strategy + ", " + report.target + ")");
      metadata("thread_name", kScheduleThread, "schedule");
      memory(0, 0);
      for (size_t step = 0; step < timeline.ops.size(); ++step) {
        const TimelineOp &op = timeline.ops[step];
        const double ts = op.startSeconds * 1e6;
        json.object([&] {
          json.attribute("ph", "X");
          json.attribute("name", op.name);
          json.attribute("cat", op.recomputeOf.empty()
                                    ? (op.forward ? "forward" : "backward")
                                    : "recompute");
          json.attribute("pid", kProcess);
          json.attribute("tid", kScheduleThread);
          json.attribute("ts", ts);
          json.attribute("dur", op.seconds * 1e6);
          json.attributeObject("args", [&] {
            json.attribute("step", static_cast<int64_t>(step));
            json.attribute("op", op.op);
            if (!op.recomputeOf.empty())
              json.attribute("recompute_of", op.recomputeOf);
          });
        });
        memory(ts, step + 1);
      }
      // The budget as a flat counter, to read the peak against.
      for (double ts : {0.0, timeline.stepSeconds * 1e6})
        json.object([&] {
          json.attribute("ph", "C");
          json.attribute("name", "budget (bytes)");
          json.attribute("pid", kProcess);
          json.attribute("ts", ts);
          json.attributeObject(
              "args", [&] { json.attribute("budget", report.budgetBytes); });
        });
    });
  });
  os << "\n";
}

} // namespace remat
