//===- Harness.cpp - The training executable's main ------------------------===//
//
// harnessMain is what a generated training executable runs: the generated
// code supplies the ProgramSpec (layout, arguments, results, constants) and
// the step function; this file does everything else, the way remat-run
// --train does with the interpreter:
//   1. parse the flags (HarnessOptions.cpp), check the program's layout
//      (ProgramChecks.cpp), open the weights file and the batches before any
//      device work, so that mistakes are reported quickly;
//   2. allocate the arena and the persistent region once, reserve the
//      workspace, copy the constants in, load parameters and buffers
//      (WeightLoading.cpp); optimizer state and the step counter stay zero
//      (Device::allocate zero-fills);
//   3. per step: copy the batch into the arena (the previous step overwrote
//      it), set the step counter, run, read the loss back, print
//      `step <i>/<N> loss <value> (<ms> ms)`;
//   4. dump / save the trained weights and print the summary (Report.cpp).
// Errors are `<program>: error: <message>` on stderr with exit status 1.
//
//===----------------------------------------------------------------------===//

#include "AllocationCounter.h"
#include "BatchSource.h"
#include "HarnessOptions.h"
#include "ProgramChecks.h"
#include "Report.h"
#include "WeightLoading.h"

#include "remat/runtime/Device.h"
#include "remat/runtime/Kernels.h"
#include "remat/runtime/Program.h"
#include "remat/runtime/TensorDump.h"
#include "remat/runtime/OnnxWire.h"

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <new>
#include <vector>

namespace fs = std::filesystem;

namespace remat::rt {
namespace {

using namespace harness;

/// A failure already printed in its own format (a step's error).
struct ReportedFailure {};

/// Where progress and notes go: stdout, except with --json, whose stdout is
/// the one JSON object.
struct Output {
  std::FILE *info = stdout;
  bool quiet = false;
};

char *regionBase(Region region, char *arena, char *persistent) {
  return region == Region::Arena ? arena : persistent;
}

/// Copies every constant into its persistent slot; a splat's one element is
/// repeated numel times.
void copyConstants(const ProgramSpec &program, Device &device,
                   char *persistent) {
  for (const ConstantSpec &c : program.constants) {
    const size_t element = dtypeSize(c.dtype);
    const size_t count = static_cast<size_t>(numElements(c.shape));
    if (!c.splat) {
      device.copyToDevice(persistent + c.offset, c.data, count * element);
      continue;
    }
    std::vector<char> bytes(count * element);
    for (size_t i = 0; i < count; ++i)
      std::memcpy(bytes.data() + i * element, c.data, element);
    device.copyToDevice(persistent + c.offset, bytes.data(), bytes.size());
  }
}

/// Persistent state that does not start at zero (the loss scale): each
/// element set to its argument's initial value.
void initializeState(const ProgramSpec &program, Device &device,
                     char *persistent) {
  for (const ArgumentSpec &arg : program.arguments) {
    if (arg.initialValue == 0 || !isPersistentRole(arg.role))
      continue;
    Tensor host(arg.dtype, arg.shape);
    fill(host.view(), arg.initialValue);
    device.copyToDevice(persistent + arg.offset, host.data(), host.bytes());
  }
}

/// The first element of a device tensor, as double.
double readAsDouble(DType dtype, const Shape &shape, const char *address,
                    Device &device) {
  Tensor host(dtype, shape);
  device.copyToHost(host.data(), address, host.bytes());
  Tensor wide(DType::F64, shape);
  cast(host.view(), wide.view());
  return wide.as<double>()[0];
}

/// A 0-d persistent value read back after a step (the step counter, the
/// loss scale).
double readScalar(const ArgumentSpec &arg, Device &device, char *persistent) {
  return readAsDouble(arg.dtype, arg.shape, persistent + arg.offset, device);
}

/// Opens the weights file: --weights if given (it must exist), else the
/// model the program was compiled from, which may be absent only with
/// --random-weights (an executable copied to another machine).
void openWeights(const ProgramSpec &program, const HarnessOptions &options,
                 WeightSource &source, const Output &out) {
  bool needed = !options.saveWeights.empty();
  for (const ArgumentSpec &arg : program.arguments)
    needed |= std::string(arg.role) == "parameter" ||
              std::string(arg.role) == "buffer";
  if (!options.weightsPath.empty()) {
    openWeightSource(options.weightsPath, source);
    return;
  }
  const std::string path = program.modelPath ? program.modelPath : "";
  if (!needed)
    return;
  if (!path.empty() && fs::exists(path)) {
    openWeightSource(path, source);
    return;
  }
  if (options.randomWeights && options.saveWeights.empty()) {
    if (!out.quiet)
      std::fprintf(out.info,
                   "note: '%s' (the model this program was compiled from) "
                   "is absent; all parameters start random\n",
                   path.c_str());
    return;
  }
  throw RuntimeError(
      "cannot open weights file '" + path +
      "' (the model this program was compiled from): no such file; pass "
      "--weights MODEL.onnx" +
      (options.saveWeights.empty() ? ", or --random-weights" : "") +
      (options.saveWeights.empty()
           ? ""
           : " (--save-weights writes into a copy of it)"));
}

/// The loss of the step just run, as double.
double readLoss(const ResultSpec &loss, Device &device, char *arena,
                char *persistent) {
  return readAsDouble(loss.dtype, loss.shape,
                      regionBase(loss.region, arena, persistent) + loss.offset,
                      device);
}

/// Host copies of the trained parameters and the buffers the step updates.
struct TrainedState {
  std::vector<Tensor> tensors;
  NamedTensors params, updatedBuffers;
};

void readTrainedState(const ProgramSpec &program, Device &device,
                      char *persistent, TrainedState &state) {
  std::vector<const ArgumentSpec *> params, buffers;
  for (const ArgumentSpec &arg : program.arguments)
    if (std::string(arg.role) == "parameter")
      params.push_back(&arg);
  for (const ResultSpec &result : program.results)
    if (std::string(result.role) == "buffer")
      buffers.push_back(&program.arguments[result.argument]);
  // Reserved up front: NamedTensors point into the vector.
  state.tensors.reserve(params.size() + buffers.size());
  auto read = [&](const ArgumentSpec *arg, NamedTensors &into) {
    Tensor &host = state.tensors.emplace_back(arg->dtype, arg->shape);
    device.copyToHost(host.data(), persistent + arg->offset, host.bytes());
    into[arg->name] = &host.view();
  };
  for (const ArgumentSpec *arg : params)
    read(arg, state.params);
  for (const ArgumentSpec *arg : buffers)
    read(arg, state.updatedBuffers);
}

int64_t hostPeakRssBytes() {
  struct rusage usage;
  if (getrusage(RUSAGE_SELF, &usage) != 0)
    return 0;
  return static_cast<int64_t>(usage.ru_maxrss) * 1024; // KiB on Linux
}

int runHarness(const std::string &programName, const ProgramSpec &program,
               const HarnessOptions &options) {
  Output out;
  out.info = options.json ? stderr : stdout;
  out.quiet = options.quiet;

  // Everything that can fail without a device first.
  checkProgram(program);
  const ResultSpec &loss = program.results[lossResult(program)];
  WeightSource weights;
  openWeights(program, options, weights, out);
  BatchSource batches(program, options.inputsDir, options.dataFile);

  std::unique_ptr<Device> device = createDevice();
  RunReport report;
  report.deviceName = device->name();
  report.data = batches.description();
  report.weights = weights.loaded ? weights.path : "";

  char *arena = static_cast<char *>(
      device->allocate(static_cast<size_t>(program.arenaBytes)));
  char *persistent = static_cast<char *>(
      device->allocate(static_cast<size_t>(program.persistentBytes)));
  device->reserveWorkspace(static_cast<size_t>(program.workspaceBytes));
  copyConstants(program, *device, persistent);
  const WeightLoadCounts counts =
      loadWeights(program, weights, options.randomWeights, *device, persistent);
  report.loadedTensors = counts.loaded;
  report.randomTensors = counts.random;
  initializeState(program, *device, persistent);
  // The step counter (a step skipped for overflowing gradients leaves it)
  // and the dynamic loss scale, read after each step.
  const ArgumentSpec *stepCounter = nullptr, *lossScale = nullptr;
  for (const ArgumentSpec &arg : program.arguments) {
    if (std::string(arg.role) == "step")
      stepCounter = &arg;
    if (std::string(arg.role) == "loss_scale" &&
        std::string(arg.name) == "loss_scale")
      lossScale = &arg;
  }

  if (!options.quiet) {
    std::fprintf(out.info,
                 "%s: %s, arena %lld + persistent %lld + workspace %lld "
                 "bytes (planned peak %s%s%s); weights: %s (%d loaded, %d "
                 "random); data: %s\n",
                 programName.c_str(), report.deviceName.c_str(),
                 static_cast<long long>(program.arenaBytes),
                 static_cast<long long>(program.persistentBytes),
                 static_cast<long long>(program.workspaceBytes),
                 formatBytes(program.plannedPeakBytes).c_str(),
                 program.budgetBytes > 0 ? ", budget " : "",
                 program.budgetBytes > 0
                     ? formatBytes(program.budgetBytes).c_str()
                     : "",
                 weights.loaded ? weights.path.c_str() : "none",
                 counts.loaded, counts.random, report.data.c_str());
    std::fflush(out.info);
  }

  StepContext context;
  context.arena = arena;
  context.persistent = persistent;
  int64_t stepsBefore = 0; // the step counter's value before each step
  for (int64_t i = 0; i < options.steps; ++i) {
    const std::vector<Tensor> &batch = batches.batch(i);
    for (size_t k = 0; k < batch.size(); ++k) {
      const ArgumentSpec &arg = *batches.inputs()[k];
      device->copyToDevice(regionBase(arg.region, arena, persistent) +
                               arg.offset,
                           batch[k].data(), batch[k].bytes());
    }
    // Dropout masks are keyed by the number of steps taken so far.
    context.step = static_cast<uint64_t>(i);
    context.currentOp = -1;
    const auto start = std::chrono::steady_clock::now();
    try {
      // Steps must not touch the heap (scratch is in the workspace); the
      // count is reported as step_allocations.
      beginCountingAllocations();
      device->runStep(program.trainStep, context);
      endCountingAllocations();
    } catch (const std::exception &e) {
      endCountingAllocations();
      std::string where;
      if (context.currentOp >= 0 &&
          context.currentOp < static_cast<int>(program.ops.size()) &&
          program.ops[context.currentOp])
        where = std::string(" (in op ") + program.ops[context.currentOp] + ")";
      std::fflush(stdout);
      std::fprintf(stderr, "%s: error: step %lld: %s%s\n",
                   programName.c_str(), static_cast<long long>(i + 1),
                   e.what(), where.c_str());
      throw ReportedFailure();
    }
    const double seconds = std::chrono::duration<double>(
                               std::chrono::steady_clock::now() - start)
                               .count();
    const double value = readLoss(loss, *device, arena, persistent);
    report.losses.push_back(value);
    report.stepSeconds.push_back(seconds);
    const bool skipped =
        stepCounter && readScalar(*stepCounter, *device, persistent) ==
                           static_cast<double>(stepsBefore);
    report.skipped.push_back(skipped);
    stepsBefore += skipped ? 0 : 1;
    if (lossScale)
      report.lossScales.push_back(readScalar(*lossScale, *device, persistent));
    if (!options.quiet) {
      std::fprintf(out.info, "step %lld/%lld loss %.6f (%.3f ms)%s",
                   static_cast<long long>(i + 1),
                   static_cast<long long>(options.steps), value,
                   seconds * 1e3,
                   skipped ? " skipped: inf/NaN gradients" : "");
      if (lossScale)
        std::fprintf(out.info, ", loss scale %.9g", report.lossScales.back());
      std::fprintf(out.info, "\n");
      std::fflush(out.info);
    }
  }
  report.peakBytes = device->measuredPeakBytes();
  report.hostPeakRssBytes = hostPeakRssBytes();
  report.stepAllocations = countedAllocations();

  if (!options.dumpParams.empty() || !options.dumpBuffers.empty() ||
      !options.saveWeights.empty()) {
    TrainedState trained;
    readTrainedState(program, *device, persistent, trained);
    if (!options.dumpParams.empty())
      dumpTensors(options.dumpParams, trained.params);
    if (!options.dumpBuffers.empty())
      dumpTensors(options.dumpBuffers, trained.updatedBuffers);
    if (!options.saveWeights.empty()) {
      NamedTensors all = trained.params;
      all.insert(trained.updatedBuffers.begin(), trained.updatedBuffers.end());
      wire::saveWeights(weights.model, weights.dir, all, options.saveWeights);
      if (!options.quiet)
        std::fprintf(out.info, "weights written to %s\n",
                     options.saveWeights.c_str());
    }
  }

  if (options.json)
    printJson(stdout, program, report);
  else
    printSummary(stdout, program, report);
  return 0;
}

} // namespace

int harnessMain(int argc, char **argv, const ProgramSpec &program) {
  const std::string name =
      argc > 0 && argv[0] ? fs::path(argv[0]).filename().string() : "train";
  harness::HarnessOptions options;
  try {
    options = harness::parseHarnessOptions(argc, argv);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "%s: error: %s\n%s", name.c_str(), e.what(),
                 harness::harnessUsage(name).c_str());
    return 1;
  }
  if (options.help) {
    std::fputs(harness::harnessUsage(name).c_str(), stdout);
    return 0;
  }
  try {
    return runHarness(name, program, options);
  } catch (const ReportedFailure &) {
  } catch (const std::bad_alloc &) {
    std::fprintf(stderr, "%s: error: out of host memory\n", name.c_str());
  } catch (const std::exception &e) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: error: %s\n", name.c_str(), e.what());
  }
  return 1;
}

} // namespace remat::rt
