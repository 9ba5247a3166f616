//===- Report.cpp - What a training run prints at the end -----------------===//

#include "Report.h"

#include <algorithm>
#include <cmath>

namespace remat::rt::harness {
namespace {

const char *backendName(Backend backend) {
  return backend == Backend::Cuda ? "cuda" : "cpu";
}

const char *orEmpty(const char *text) { return text ? text : ""; }

std::string jsonString(const std::string &text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\t': out += "\\t"; break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        char escaped[8];
        std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
        out += escaped;
      } else {
        out += c;
      }
    }
  }
  return out + "\"";
}

std::string jsonNumber(double value) {
  if (!std::isfinite(value))
    return "null";
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
}

std::string jsonList(const std::vector<double> &values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i)
    out += (i ? ", " : "") + jsonNumber(values[i]);
  return out + "]";
}

double samplesPerSecond(const ProgramSpec &program, double median) {
  return median > 0 ? program.samplesPerStep / median : 0;
}

int64_t skippedSteps(const RunReport &report) {
  return std::count(report.skipped.begin(), report.skipped.end(), true);
}

/// ", bf16, 2 steps skipped (inf/NaN gradients), loss scale 16384": what
/// mixed precision adds to the summary (nothing for fp32).
std::string precisionSummary(const ProgramSpec &program,
                             const RunReport &report) {
  std::string text;
  const std::string precision = orEmpty(program.precision);
  if (!precision.empty() && precision != "fp32")
    text += ", " + precision;
  const int64_t skipped = skippedSteps(report);
  if (skipped > 0 || !report.lossScales.empty())
    text += ", " + std::to_string(skipped) + " step" +
            (skipped == 1 ? "" : "s") + " skipped (inf/NaN gradients)";
  if (!report.lossScales.empty()) {
    char scale[32];
    std::snprintf(scale, sizeof scale, "%.9g", report.lossScales.back());
    text += std::string(", loss scale ") + scale;
  }
  return text;
}

} // namespace

double medianSeconds(const std::vector<double> &seconds) {
  if (seconds.empty())
    return 0;
  std::vector<double> sorted = seconds;
  std::sort(sorted.begin(), sorted.end());
  const size_t mid = sorted.size() / 2;
  return sorted.size() % 2 ? sorted[mid]
                           : 0.5 * (sorted[mid - 1] + sorted[mid]);
}

std::string formatBytes(int64_t bytes) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (std::fabs(value) >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, unit ? "%.2f %s" : "%.0f %s", value,
                units[unit]);
  return text;
}

void printSummary(std::FILE *out, const ProgramSpec &program,
                  const RunReport &report) {
  const size_t steps = report.stepSeconds.size();
  const double median = medianSeconds(report.stepSeconds);
  std::string budget =
      program.budgetBytes > 0
          ? ", budget " + formatBytes(program.budgetBytes)
          : std::string();
  std::fprintf(
      out,
      "trained %zu step%s (%s, %s plan%s) on %s: median %.3f ms/step%s, "
      "%.1f samples/s, peak %lld bytes (%s) %s vs %lld (%s) planned%s, "
      "process high-water %s, %lld heap allocations in steps, "
      "final loss %.6f\n",
      steps, steps == 1 ? "" : "s", orEmpty(program.optimizer),
      orEmpty(program.strategy),
      precisionSummary(program, report).c_str(), report.deviceName.c_str(),
      median * 1e3,
      steps == 1 ? " (a single step: includes warm-up)" : "",
      samplesPerSecond(program, median),
      static_cast<long long>(report.peakBytes),
      formatBytes(report.peakBytes).c_str(),
      // On the CPU the peak is what the harness allocated (a step allocates
      // nothing else); on a GPU it is read from the device.
      report.deviceName == "cpu" ? "allocated" : "measured",
      static_cast<long long>(program.plannedPeakBytes),
      formatBytes(program.plannedPeakBytes).c_str(), budget.c_str(),
      formatBytes(report.hostPeakRssBytes).c_str(),
      static_cast<long long>(report.stepAllocations),
      report.losses.empty() ? NAN : report.losses.back());
  std::fflush(out);
}

void printJson(std::FILE *out, const ProgramSpec &program,
               const RunReport &report) {
  const double median = medianSeconds(report.stepSeconds);
  auto integer = [](int64_t value) { return std::to_string(value); };
  const std::vector<std::pair<const char *, std::string>> fields = {
      {"steps", integer(static_cast<int64_t>(report.stepSeconds.size()))},
      {"losses", jsonList(report.losses)},
      {"step_seconds", jsonList(report.stepSeconds)},
      {"step_seconds_median", jsonNumber(median)},
      {"samples_per_step", integer(program.samplesPerStep)},
      {"samples_per_second", jsonNumber(samplesPerSecond(program, median))},
      {"peak_bytes", integer(report.peakBytes)},
      {"planned_peak_bytes", integer(program.plannedPeakBytes)},
      {"arena_bytes", integer(program.arenaBytes)},
      {"persistent_bytes", integer(program.persistentBytes)},
      {"workspace_bytes", integer(program.workspaceBytes)},
      {"budget_bytes", integer(program.budgetBytes)},
      {"host_peak_rss_bytes", integer(report.hostPeakRssBytes)},
      {"step_allocations", integer(report.stepAllocations)},
      {"device", jsonString(report.deviceName)},
      {"backend", jsonString(backendName(program.backend))},
      {"optimizer", jsonString(orEmpty(program.optimizer))},
      {"precision", jsonString(orEmpty(program.precision))},
      {"skipped_steps", integer(skippedSteps(report))},
      {"loss_scales",
       report.lossScales.empty() ? "null" : jsonList(report.lossScales)},
      {"strategy", jsonString(orEmpty(program.strategy))},
      {"data", jsonString(report.data)},
      {"weights", jsonString(report.weights)},
      {"loaded_tensors", integer(report.loadedTensors)},
      {"random_tensors", integer(report.randomTensors)},
  };
  std::string text = "{";
  for (size_t i = 0; i < fields.size(); ++i)
    text += std::string(i ? ", " : "") + "\"" + fields[i].first +
            "\": " + fields[i].second;
  std::fprintf(out, "%s}\n", text.c_str());
  std::fflush(out);
}

} // namespace remat::rt::harness
