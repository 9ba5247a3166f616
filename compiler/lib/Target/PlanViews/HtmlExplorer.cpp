//===- HtmlExplorer.cpp - The plan explorer page (--emit=html) ------------===//
//
// One self-contained HTML file: the template (explorer.html, compiled in)
// draws the plans from a JSON document embedded in the page. The data is
// compact arrays, not objects, because a Llama-7B step has tens of
// thousands of buffers.
//
//===----------------------------------------------------------------------===//

#include "remat/Target/PlanViews.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <string>

namespace remat {

static constexpr llvm::StringLiteral kTemplate =
#include "ExplorerTemplate.inc"
    ;
static constexpr llvm::StringLiteral kPlaceholder = "/*REMAT_PLAN_DATA*/";

/// The report as the JSON report prints it, so the page and
/// `--emit=json` agree key for key.
static llvm::json::Value reportValue(const PlanReport &report) {
  std::string text;
  llvm::raw_string_ostream os(text);
  printPlanReportJson(report, os);
  auto value = llvm::json::parse(text);
  if (!value) {
    llvm::consumeError(value.takeError());
    return llvm::json::Object{};
  }
  return std::move(*value);
}

static void writePlan(const ExplorerPlan &plan, llvm::json::OStream &json) {
  const PlanTimeline &t = plan.timeline;
  json.object([&] {
    json.attribute("label", plan.label);
    json.attribute("report", reportValue(plan.report));
    json.attribute("persistent", t.persistentBytes);
    json.attribute("workspace", t.workspaceBytes);
    json.attribute("stepSeconds", t.stepSeconds);
    // ops: [name, op, flags (1 recompute, 2 forward), start, duration]
    json.attributeArray("ops", [&] {
      for (const TimelineOp &op : t.ops)
        json.array([&] {
          json.value(op.name);
          json.value(op.op);
          json.value(int64_t((op.recomputeOf.empty() ? 0 : 1) |
                             (op.forward ? 2 : 0)));
          json.value(op.startSeconds);
          json.value(op.seconds);
        });
    });
    // live: arena bytes by category (MemoryCategory order) per step index.
    json.attributeArray("live", [&] {
      for (const auto &live : t.liveByCategory)
        json.array([&] {
          for (int64_t bytes : live)
            json.value(bytes);
        });
    });
    // buffers: [name, category, offset, bytes, begin, end, recomputed]
    json.attributeArray("buffers", [&] {
      for (const TimelineBuffer &b : t.buffers)
        json.array([&] {
          json.value(b.name);
          json.value(int64_t(b.category));
          json.value(b.offset);
          json.value(b.bytes);
          json.value(int64_t(b.begin));
          json.value(int64_t(b.end));
          json.value(b.recomputed);
        });
    });
  });
}

void writeHtmlExplorer(llvm::StringRef model,
                       const std::vector<ExplorerPlan> &plans,
                       const std::vector<SweepPoint> &sweep,
                       llvm::raw_ostream &os) {
  std::string data;
  {
    llvm::raw_string_ostream out(data);
    llvm::json::OStream json(out);
    json.object([&] {
      json.attribute("model", model);
      json.attributeArray("plans", [&] {
        for (const ExplorerPlan &plan : plans)
          writePlan(plan, json);
      });
      json.attributeArray("sweep", [&] {
        for (const SweepPoint &p : sweep)
          json.object([&] {
            json.attribute("strategy", p.strategy);
            json.attribute("budget_bytes", p.budgetBytes);
            json.attribute("feasible", p.feasible);
            json.attribute("estimated_step_seconds", p.estimatedStepSeconds);
          });
      });
    });
  }
  // Inside <script>, "</" could end the element early: "<\/" is the same
  // JSON string.
  std::string safe;
  safe.reserve(data.size());
  for (size_t i = 0; i < data.size(); ++i) {
    safe += data[i];
    if (data[i] == '<' && i + 1 < data.size() && data[i + 1] == '/')
      safe += '\\';
  }
  llvm::StringRef page(kTemplate);
  size_t at = page.find(kPlaceholder);
  os << page.take_front(at) << safe << page.drop_front(at + kPlaceholder.size());
}

} // namespace remat
