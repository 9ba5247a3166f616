//===- Report.h - What a training run prints at the end ----------*- C++ -*-===//
//
// The summary of a run: median step time, throughput, measured against
// planned peak memory; as one text line, or as one JSON object (--json) with
// stable keys for scripts that sweep budgets and compare plans.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_HARNESS_REPORT_H
#define REMAT_RUNTIME_HARNESS_REPORT_H

#include "remat/runtime/Program.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace remat::rt::harness {

struct RunReport {
  std::vector<double> losses;       // per step
  std::vector<double> stepSeconds;  // per step: runStep alone
  int64_t peakBytes = 0;            // Device::measuredPeakBytes()
  int64_t hostPeakRssBytes = 0;     // the process's max resident set
  int64_t stepAllocations = 0;      // heap allocations inside steps (-1:
                                    // not countable in this build)
  std::string deviceName;
  std::string data;                 // BatchSource::description()
  std::string weights;              // the weights file, or "" if none
  int loadedTensors = 0, randomTensors = 0;
  /// Loss scaling: steps skipped because a gradient overflowed (the step
  /// counter did not advance), and the dynamic scale after each step
  /// (empty without dynamic loss scaling).
  std::vector<bool> skipped;
  std::vector<double> lossScales;
};

/// Median of the step times (mean of the middle two for an even count);
/// nothing is excluded, so the CUDA warm-up and capture steps count once
/// each and the median hides them from N >= 3 on.
double medianSeconds(const std::vector<double> &seconds);

/// `trained N steps (...): median X ms/step, Y samples/s, peak ...`.
void printSummary(std::FILE *out, const ProgramSpec &program,
                  const RunReport &report);

/// One JSON object (and a newline). Keys: losses, step_seconds,
/// step_seconds_median, samples_per_second, samples_per_step, peak_bytes,
/// planned_peak_bytes, arena_bytes, persistent_bytes, workspace_bytes,
/// budget_bytes, host_peak_rss_bytes, step_allocations, steps, device,
/// backend, optimizer, precision, skipped_steps, loss_scales (null without
/// dynamic loss scaling), strategy, data, weights, loaded_tensors,
/// random_tensors. Floats are
/// printed with %.9g (losses round-trip as float32; non-finite values are
/// null, which JSON requires).
void printJson(std::FILE *out, const ProgramSpec &program,
               const RunReport &report);

/// "1.50 MiB": bytes for people (powers of 1024).
std::string formatBytes(int64_t bytes);

} // namespace remat::rt::harness

#endif // REMAT_RUNTIME_HARNESS_REPORT_H
