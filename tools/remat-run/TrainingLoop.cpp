//===- TrainingLoop.cpp - remat-run --train -------------------------------===//

#include "TrainingLoop.h"

#include "ModelLoader.h"
#include "TensorChecks.h"
#include "ToolSupport.h"

#include "remat/Dialect/RematOps.h"
#include "remat/Interpreter/Interpreter.h"
#include "remat/Interpreter/TensorConversion.h"
#include "remat/Passes/Passes.h"
#include "remat/Planning/ByteSize.h"
#include "remat/runtime/Kernels.h"
#include "remat/runtime/WeightWriter.h"
#include "remat/Tools/PlanPipeline.h"

#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

using namespace mlir;

namespace remat::run {
namespace {

/// The persistent state of training, by role; results are fed back into it.
struct TrainingState {
  std::map<std::string, rt::Tensor> weights; // parameters and buffers
  std::map<std::string, rt::Tensor> optimizerState;
  /// Dynamic loss scaling: the scale and its growth tracker.
  std::map<std::string, rt::Tensor> lossScaleState;
  rt::Tensor step{rt::DType::I64, {}};
  std::map<std::string, rt::Tensor> gradients; // of the first step
  std::set<std::string> parameters, buffers, updatedBuffers;
};

bool appendsLoss(const TrainOptions &train) { return train.autodiff.loss != "auto"; }

remat::AutodiffOptions autodiffOptions(const TrainOptions &train) {
  remat::AutodiffOptions o = train.autodiff;
  o.returnGradients =
      !train.dumpGrads.empty() || !train.checkGrads.empty();
  return o;
}

/// A float with the digits that round-trip it (9 significant).
std::string formatFloat(float value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.9g", static_cast<double>(value));
  return buffer;
}

std::string formatLoss(double loss) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.6f", loss);
  return buffer;
}

/// Binds every argument of @train_step to a tensor: inputs from the files,
/// weights and state from `state`. `forwardArgs` is the number of @forward's
/// arguments; `input` arguments past them are the appended loss's labels.
std::vector<const rt::TensorView *>
bindArguments(func::FuncOp step, unsigned forwardArgs, LoadedModel &loaded,
              TrainingState &state) {
  std::vector<const rt::TensorView *> args;
  size_t nextInput = 0; // .mlir: inputs bind in argument order
  const size_t labelFile = loaded.dataInputs.size();
  for (unsigned i = 0; i < step.getNumArguments(); ++i) {
    const std::string name = argString(step, i, RematDialect::kNameAttr);
    std::string role = argString(step, i, RematDialect::kRoleAttr);
    if (role.empty())
      role = "input";
    auto type = llvm::cast<RankedTensorType>(step.getArgument(i).getType());
    const std::string label =
        name.empty() ? "argument " + std::to_string(i) : "'" + name + "'";

    if (role == "input") {
      const rt::Tensor *tensor = nullptr;
      if (loaded.mlirInput) {
        if (nextInput < loaded.inputTensors.size())
          tensor = &loaded.inputTensors[nextInput];
        ++nextInput;
      } else if (i >= forwardArgs) {
        // The labels of the appended loss: the file after the graph inputs.
        if (labelFile < loaded.inputTensors.size())
          tensor = &loaded.inputTensors[labelFile];
      } else if (auto it = loaded.inputByName.find(name);
                 it != loaded.inputByName.end()) {
        tensor = &loaded.inputTensors[it->second];
      }
      if (!tensor)
        throw ToolError(
            "input " + label + " of the training step has no value: " +
            (loaded.inputsDir.empty()
                 ? std::string("no --inputs directory was given")
                 : "'" + loaded.inputsDir + "' holds only " +
                       std::to_string(loaded.inputTensors.size()) +
                       " input_<i>.pb file(s)") +
            (i >= forwardArgs ? " (the labels of --loss come from the file "
                                "after the graph inputs)"
                              : ""));
      args.push_back(&tensor->view());
      continue;
    }
    if (role == "parameter" || role == "buffer") {
      (role == "parameter" ? state.parameters : state.buffers).insert(name);
      auto it = state.weights.find(name);
      if (it == state.weights.end())
        it = state.weights.emplace(name, loadWeight(loaded, name, role)).first;
      args.push_back(&it->second.view());
      continue;
    }
    if (role == "optimizer_state") {
      auto it = state.optimizerState.find(name);
      if (it == state.optimizerState.end())
        it = state.optimizerState
                 .emplace(name, rt::Tensor(remat::dtypeOf(type),
                                           remat::shapeOf(type)))
                 .first; // zero-initialised
      args.push_back(&it->second.view());
      continue;
    }
    if (role == "step") {
      args.push_back(&state.step.view());
      continue;
    }
    if (role == "loss_scale") {
      auto it = state.lossScaleState.find(name);
      if (it == state.lossScaleState.end()) {
        rt::Tensor initial(remat::dtypeOf(type), remat::shapeOf(type));
        if (auto value = step.getArgAttrOfType<FloatAttr>(
                i, RematDialect::kInitialValueAttr))
          rt::fill(initial.view(), value.getValueAsDouble());
        it = state.lossScaleState.emplace(name, std::move(initial)).first;
      }
      args.push_back(&it->second.view());
      continue;
    }
    throw ToolError("argument " + label + " of the training step has unknown "
                    "role '" + role + "'");
  }
  if (loaded.mlirInput && nextInput != loaded.inputTensors.size())
    throw ToolError("'" + loaded.inputsDir + "' holds " +
                    std::to_string(loaded.inputTensors.size()) +
                    " input_<i>.pb files but the training step takes " +
                    std::to_string(nextInput) + " inputs");
  return args;
}

/// Feeds one step's results back into `state`; returns the loss.
double absorbResults(func::FuncOp step, std::vector<rt::Tensor> &results,
                     bool firstStep, TrainingState &state) {
  double loss = NAN;
  for (unsigned i = 0; i < results.size(); ++i) {
    const std::string name = resultString(step, i, RematDialect::kNameAttr);
    const std::string role = resultString(step, i, RematDialect::kRoleAttr);
    rt::Tensor &result = results[i];
    auto replace = [&](std::map<std::string, rt::Tensor> &map) {
      auto it = map.find(name);
      if (it == map.end())
        throw ToolError("result '" + name + "' (" + role +
                        ") of the training step matches no argument");
      if (it->second.dtype() != result.dtype() ||
          it->second.shape() != result.shape())
        throw ToolError("result '" + name + "' is " + describe(result.view()) +
                        " but its argument is " + describe(it->second.view()));
      // Move-assigning keeps the Tensor object, so argument pointers to
      // its view stay valid.
      it->second = std::move(result);
    };
    if (role == "loss") {
      if (result.numel() != 1 || !rt::isFloat(result.dtype()))
        throw ToolError("the loss is " + describe(result.view()) +
                        ", not a float scalar");
      loss = elementAsDouble(result.view(), 0);
    } else if (role == "parameter") {
      replace(state.weights);
    } else if (role == "buffer") {
      state.updatedBuffers.insert(name);
      replace(state.weights);
    } else if (role == "optimizer_state") {
      replace(state.optimizerState);
    } else if (role == "loss_scale") {
      replace(state.lossScaleState);
    } else if (role == "step") {
      if (result.dtype() != rt::DType::I64 || result.numel() != 1)
        throw ToolError("the step result is " + describe(result.view()));
      state.step = std::move(result);
    } else if (role == "gradient") {
      if (firstStep)
        state.gradients[name] = std::move(result);
    } else {
      throw ToolError("result " + std::to_string(i) +
                      " of the training step has unknown role '" + role + "'");
    }
  }
  return loss;
}

/// Plans @train_step under --budget (the pipeline remat-opt --budget runs)
/// and prints the plan's summary line. Throws when no plan fits.
void planStep(ModuleOp module, const Options &options) {
  const TrainOptions &train = options.train;
  remat::PlanReport report;
  const int status = remat::planTrainStepPipeline(module, train.plan, report);
  if (status == 1)
    throw ReportedError("remat-plan failed on '" + options.model + "'");
  if (!options.quiet || status != 0)
    std::cout << "plan: " << (report.feasible ? "FITS" : "DOES NOT FIT")
              << " planned peak " << report.peakBytes << " bytes ("
              << remat::formatBytes(report.peakBytes) << ": persistent "
              << remat::formatBytes(report.persistentBytes) << " + arena "
              << remat::formatBytes(report.arenaBytes) << " + workspace "
              << remat::formatBytes(report.workspaceBytes)
              << ") against a budget of " << report.budgetBytes
              << " bytes, baseline peak " << report.baselinePeakBytes
              << " bytes, " << report.recomputedOps << " recomputed op"
              << (report.recomputedOps == 1 ? "" : "s") << " ("
              << report.strategy << " strategy, " << report.target
              << " target)" << std::endl;
  if (status != 0)
    throw ReportedError("no plan fits the budget " + train.plan.budget);
}

/// Whether `got` is within 1e-5 * max(1, |want|) of `want`.
bool lossMatches(double got, double want) {
  return std::fabs(got - want) <= 1e-5 * std::max(1.0, std::fabs(want));
}

} // namespace

int runTraining(MLIRContext &context, const Options &options) {
  const TrainOptions &train = options.train;
  LoadedModel loaded;
  loadModel(context, options, appendsLoss(train) ? 1 : 0, loaded);
  checkWeightsHaveData(loaded, loaded.forward);
  if (loaded.forward.getSymName() != "forward")
    loaded.forward.setSymName("forward"); // remat-autodiff differentiates @forward
  const unsigned forwardArgs = loaded.forward.getNumArguments();
  if (!loaded.mlirInput && appendsLoss(train) &&
      loaded.inputFiles.size() != loaded.dataInputs.size() + 1)
    throw ToolError("--loss " + train.autodiff.loss + " needs the labels in input_" +
                    std::to_string(loaded.dataInputs.size()) + ".pb after " +
                    "the model's " + std::to_string(loaded.dataInputs.size()) +
                    " graph input(s); '" + options.inputsDir + "' holds " +
                    std::to_string(loaded.inputFiles.size()) + " file(s)");

  const Clock::time_point compileStart = Clock::now();
  if (loaded.module->lookupSymbol("train_step"))
    throw ToolError("'" + options.model + "' already has a @train_step");
  // The loader has fused already (or was told not to).
  remat::FusionOptions fusion;
  fusion.attention = false;
  if (failed(remat::buildTrainStep(*loaded.module, autodiffOptions(train),
                                   fusion, train.precision)))
    throw ReportedError("remat-autodiff failed on '" + options.model + "'");
  auto step = loaded.module->lookupSymbol<func::FuncOp>("train_step");
  if (!step)
    throw ToolError("remat-autodiff produced no @train_step");
  if (!train.plan.budget.empty())
    planStep(*loaded.module, options);

  TrainingState state;
  std::vector<const rt::TensorView *> args =
      bindArguments(step, forwardArgs, loaded, state);
  remat::Interpreter interpreter(step);
  interpreter.setCheckArena(train.checkArena);
  const double compileMs = millisecondsSince(compileStart);

  std::vector<double> losses;
  double runMs = 0;
  int64_t skippedSteps = 0;
  for (int64_t i = 0; i < train.steps; ++i) {
    // Dropout masks are keyed by the number of steps taken so far.
    const int64_t stepsTaken = *state.step.as<int64_t>();
    interpreter.setStep(static_cast<uint64_t>(stepsTaken));
    const Clock::time_point stepStart = Clock::now();
    std::vector<rt::Tensor> results = interpreter.run(args);
    runMs += millisecondsSince(stepStart);
    double loss = absorbResults(step, results, i == 0, state);
    losses.push_back(loss);
    std::cout << "step " << (i + 1) << " loss " << formatLoss(loss);
    // Loss scaling: a step whose gradients overflowed leaves the counter.
    if (train.autodiff.lossScale != "none") {
      const bool skipped = *state.step.as<int64_t>() == stepsTaken;
      skippedSteps += skipped;
      if (skipped)
        std::cout << " (skipped: inf/NaN gradients)";
      if (auto it = state.lossScaleState.find("loss_scale");
          it != state.lossScaleState.end())
        std::cout << " loss scale " << formatFloat(*it->second.as<float>());
    }
    std::cout << std::endl;
  }

  if (!options.quiet) {
    std::ostringstream summary;
    summary.precision(2);
    summary << std::fixed << "trained " << train.steps << " step"
            << (train.steps == 1 ? "" : "s") << " (" << train.autodiff.optimizer
            << "): " << runMs / std::max<int64_t>(train.steps, 1)
            << " ms/step (import " << loaded.importMs << " ms, "
            << (train.plan.budget.empty() ? "autodiff " : "autodiff and plan ")
            << compileMs << " ms, peak "
            << interpreter.peakLiveBytes() / 1024.0
            << " KiB of intermediates), final loss "
            << (losses.empty() ? std::string("-") : formatLoss(losses.back()));
    if (train.precision != "fp32")
      summary << ", " << train.precision;
    if (train.autodiff.lossScale != "none")
      summary << ", " << skippedSteps << " step"
              << (skippedSteps == 1 ? "" : "s") << " skipped";
    std::cout << summary.str() << std::endl;
  }

  // Named views for dumps and checks.
  NamedTensors grads, params, buffers, updatedBuffers;
  for (const std::string &name : state.parameters) {
    params[name] = &state.weights.at(name).view();
  }
  for (const std::string &name : state.buffers) {
    buffers[name] = &state.weights.at(name).view();
    if (state.updatedBuffers.count(name))
      updatedBuffers[name] = &state.weights.at(name).view();
  }
  // A parameter that does not reach the loss has no gradient: zero.
  std::vector<rt::Tensor> zeroGradients;
  zeroGradients.reserve(state.parameters.size());
  for (const std::string &name : state.parameters) {
    if (auto it = state.gradients.find(name); it != state.gradients.end()) {
      grads[name] = &it->second.view();
      continue;
    }
    const rt::Tensor &param = state.weights.at(name);
    zeroGradients.emplace_back(param.dtype(), param.shape());
    grads[name] = &zeroGradients.back().view();
  }

  if (!train.dumpGrads.empty())
    dumpTensors(train.dumpGrads, grads);
  if (!train.dumpParams.empty())
    dumpTensors(train.dumpParams, params);
  if (!train.dumpBuffers.empty())
    dumpTensors(train.dumpBuffers, updatedBuffers);
  if (!train.saveWeights.empty()) {
    if (!loaded.haveWeights)
      throw ToolError("--save-weights needs an ONNX model to write the "
                      "weights into");
    NamedTensors trained = params;
    trained.insert(updatedBuffers.begin(), updatedBuffers.end());
    rt::saveWeights(loaded.weights.modelPath, loaded.weights.modelDir, trained,
                    train.saveWeights);
    std::cout << "weights written to " << train.saveWeights << std::endl;
  }

  bool pass = true;
  if (!train.checkGrads.empty()) {
    GradientMask zeroGradients;
    zeroGradients.exactZero.insert(train.zeroGradients.begin(),
                                   train.zeroGradients.end());
    pass &= checkTensors("grads", train.checkGrads, grads, train.tolerance,
                         options.verbose, zeroGradients, train.checkExact);
  }
  if (!train.checkParams.empty()) {
    std::map<std::string, rt::Tensor> referenceGradients;
    GradientMask mask;
    if (train.skipGradBelow > 0) {
      referenceGradients = readTensorDirectory(train.checkGrads);
      mask.referenceGradients = &referenceGradients;
      mask.below = train.skipGradBelow;
    }
    pass &= checkTensors("params", train.checkParams, params, train.tolerance,
                         options.verbose, mask, train.checkExact);
  }
  if (!train.checkBuffers.empty())
    pass &= checkTensors("buffers", train.checkBuffers, buffers,
                         train.tolerance, options.verbose, {},
                         train.checkExact);
  if (options.expectLoss && !losses.empty()) {
    const bool ok = lossMatches(losses.front(), *options.expectLoss);
    std::cout << (ok ? "" : "FAIL ") << "loss at step 1 "
              << formatLoss(losses.front()) << ", expected "
              << formatLoss(*options.expectLoss) << " (|diff| "
              << formatNumber(std::fabs(losses.front() - *options.expectLoss))
              << ")\n";
    pass &= ok;
  }
  if (train.maxFinalLoss && !losses.empty()) {
    const bool ok = losses.back() <= *train.maxFinalLoss;
    std::cout << (ok ? "" : "FAIL ") << "final loss "
              << formatLoss(losses.back()) << (ok ? " <= " : " > ")
              << "--max-final-loss " << formatNumber(*train.maxFinalLoss)
              << "\n";
    pass &= ok;
  }
  if (interpreter.usesArena()) {
    // What the planned step actually touched of its arena, over all steps.
    const int64_t highWater =
        static_cast<int64_t>(interpreter.arenaHighWaterBytes());
    const int64_t planned = interpreter.plannedArenaBytes();
    const bool ok = highWater <= planned;
    std::cout << (ok ? "" : "FAIL ") << "arena high-water " << highWater
              << " of planned " << planned << "\n";
    pass &= ok;
  }
  std::cout << std::flush;
  return pass ? 0 : kExitFail;
}

} // namespace remat::run
