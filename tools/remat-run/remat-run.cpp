//===- remat-run.cpp - Run or train a model with the reference interpreter ===//
//
//   remat-run MODEL.onnx --inputs DIR --outputs DIR [--shape NAME=AxB ...]
//             [--batch N] [--expect DIR [--rtol R] [--atol A]] [--step N]
//             [--expect-loss V] [--quiet]
//   remat-run MODEL.onnx --train --inputs DIR [--steps N] [--optimizer ...]
//             [--dump-grads DIR] [--check-grads DIR] [--save-weights OUT] ...
//             [--budget SIZE [--strategy S] [--target T] [--check-arena]]
//
// Imports the model (or parses a .mlir file in the remat dialect), runs the
// same cleanup as the compiler (remat-fuse-gelu, remat-fuse-attention unless
// --no-fuse-attention, remat-fold-transpose-into-matmul, canonicalize),
// binds the
// inputs from DIR/input_<i>.pb (the ONNX backend-test layout) and the
// weights from the model's initializers, interprets `@forward` with the
// runtime's CPU kernels and writes DIR/output_<i>.pb. With --expect, compares
// each output with DIR/output_<i>.pb and prints PASS or FAIL.
//
// With --train, builds @train_step (remat-autodiff) and runs it for N steps
// on the batch (TrainingLoop.cpp). With --budget, the step is first planned
// like `remat-opt --budget` does (remat-schedule-updates, remat-plan) and run
// in the plan's arena.
//
// Exit status: 0 success (and PASS), 1 FAIL (outputs differ, a check
// failed), 2 error.
//
//===----------------------------------------------------------------------===//

#include "ModelLoader.h"
#include "Options.h"
#include "ToolSupport.h"
#include "TrainingLoop.h"

#include "remat/Dialect/RematOps.h"
#include "remat/Interpreter/Interpreter.h"
#include "remat/runtime/TensorProtoIO.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace mlir;
using namespace remat::run;

namespace {

const char *const kUsage =
    "usage: remat-run MODEL.onnx|MODEL.mlir [--inputs DIR] [--outputs DIR]\n"
    "                 [--shape NAME=AxB ...] [--batch N] [--frozen NAME ...]\n"
    "                 [--padding-idx NAME=ROW ...]\n"
    "                 [--expect DIR [--rtol R] [--atol A]] [--step N] "
    "[--quiet]\n"
    "       remat-run MODEL --train --inputs DIR [--steps N] [training "
    "options]\n"
    "\n"
    "  --inputs DIR    input_<i>.pb files for the model's graph inputs (ONNX\n"
    "                  backend-test layout; for .mlir, the `input` arguments)\n"
    "  --outputs DIR   where to write output_<i>.pb\n"
    "  --shape N=AxB   bind an input's shape (input files bind their own)\n"
    "  --batch N       bind the symbolic batch dim of inputs\n"
    "  --frozen NAME   treat an initializer as a constant buffer\n"
    "  --padding-idx NAME=ROW\n"
    "                  an embedding's padding row gets no gradient\n"
    "                  (torch.nn.Embedding's padding_idx; exporters drop it)\n"
    "  --expect DIR    compare with DIR/output_<i>.pb: |a-b| <= atol + "
    "rtol*|b|\n"
    "  --rtol R        relative tolerance (default 1e-4)\n"
    "  --atol A        absolute tolerance (default 1e-5)\n"
    "  --step N        training step keying the dropout RNG (default 0)\n"
    "  --expect-loss V fail unless the scalar output (with --train: the loss\n"
    "                  of step 1) is within 1e-5*max(1,|V|) of V\n"
    "  --quiet         no summary line (forward: on stderr; --train: the\n"
    "                  `trained N steps` line on stdout)\n"
    "  --no-fuse-attention\n"
    "                  keep exported attention as written (no\n"
    "                  remat-fuse-attention)\n"
    "  --explain-attention-fusion\n"
    "                  print, per softmax, whether its attention was fused\n"
    "                  and why not\n"
    "\n"
    "training (--train): runs N steps of @train_step (remat-autodiff) on the\n"
    "batch in --inputs and prints `step <i> loss <value>` per step\n"
    "  --steps N            number of steps (default 1)\n"
    "  --loss auto|cross-entropy|mse\n"
    "                       auto: the model's scalar output is the loss;\n"
    "                       otherwise it is appended to the logits and its\n"
    "                       labels come from the input file after the graph\n"
    "                       inputs\n"
    "  --labels NAME        name of the appended labels input (default labels)\n"
    "  --logits NAME        output the appended loss reads (default: the only "
    "one)\n"
    "  --optimizer sgd|adam|adamw   (default sgd)\n"
    "  --lr LR              learning rate (default 0.01 sgd, 1e-3 adam/adamw)\n"
    "  --momentum M --dampening D --nesterov   SGD momentum\n"
    "  --beta1 B1 --beta2 B2 --eps E           Adam (0.9, 0.999, 1e-8)\n"
    "  --weight-decay W     (default 0; 0.01 for adamw)\n"
    "  --precision fp32|bf16|fp16\n"
    "                       compute dtypes (remat-mixed-precision; default\n"
    "                       fp32): bf16/fp16 run matmul, conv and attention\n"
    "                       in 16 bits with fp32 master weights and optimizer\n"
    "  --loss-scale dynamic|none|S\n"
    "                       loss scaling: dynamic is torch.amp.GradScaler's\n"
    "                       (2^16, x2 after 2000 finite steps, x0.5 and the\n"
    "                       step skipped on inf/NaN; the fp16 default), S a\n"
    "                       fixed scale (overflowing steps still skipped)\n"
    "  --growth-interval N  finite steps before a dynamic scale grows\n"
    "                       (default 2000)\n"
    "  --init-loss-scale S  a dynamic scale's first value (default 65536)\n"
    "  --dump-grads DIR     first step's gradients as DIR/<param>.pb\n"
    "  --dump-params DIR    parameters after the last step\n"
    "  --dump-buffers DIR   updated buffers (BatchNorm running stats) after\n"
    "                       the last step\n"
    "  --save-weights OUT   the model with the trained initializers (checked\n"
    "                       with the ONNX checker)\n"
    "  --check-grads DIR, --check-params DIR, --check-buffers DIR\n"
    "                       compare with every DIR/<name>.pb: pass iff\n"
    "                       max|a-b| <= tolerance * max|ref| per tensor\n"
    "  --tolerance T        (default 1e-4)\n"
    "  --skip-grad-below G  --check-params ignores elements whose reference\n"
    "                       gradient (--check-grads DIR) is below G in\n"
    "                       magnitude: Adam's first step turns the rounding\n"
    "                       of a gradient near eps into an O(lr) update\n"
    "  --zero-gradient NAME a gradient that is zero in exact arithmetic (its\n"
    "                       reference is rounding noise): --check-grads\n"
    "                       compares it with tolerance * the largest\n"
    "                       reference gradient of all; repeatable\n"
    "  --max-final-loss V   fail if the last step's loss is above V\n"
    "  --check-exact        the --check-* comparisons require identical\n"
    "                       bytes (tolerance and masks do not apply)\n"
    "  --verbose            print each checked tensor's error\n"
    "\n"
    "planning (--train --budget): plans the step like `remat-opt --budget`\n"
    "(remat-schedule-updates, remat-plan), prints the plan's summary line,\n"
    "runs the planned step in its arena and ends with `arena high-water <B>\n"
    "of planned <B>` (exit 1 if the high-water exceeds the plan; exit 2 if no\n"
    "plan fits the budget)\n"
    "  --budget SIZE        peak memory: 40GB, 1.5GiB, 512MB or bytes\n"
    "  --strategy S         none, all, sqrt, milp or auto (default auto;\n"
    "                       without --budget only none, the unplanned step)\n"
    "  --target T           cost model: cpu (default), h100, h200, a100\n"
    "  --milp-seconds S     MILP time limit (default 10)\n"
    "  --workspace SIZE     runtime workspace counted against the budget\n"
    "  --check-arena        check on every arena write that no live value is\n"
    "                       overwritten (and poison the bytes first)\n"
    "\n"
    "exit status: 0 ok / PASS, 1 FAIL, 2 error\n";

//===----------------------------------------------------------------------===//
// Command line
//===----------------------------------------------------------------------===//

double parseDouble(const std::string &flag, const std::string &text,
                   bool allowNegative = false) {
  char *end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(value) ||
      (value < 0 && !allowNegative))
    throw ToolError(flag + " expects a" +
                    (allowNegative ? std::string("") : " non-negative") +
                    " number, got '" + text + "'");
  return value;
}

int64_t parseInt(const std::string &flag, const std::string &text) {
  int64_t value;
  if (llvm::StringRef(text).getAsInteger(10, value) || value < 0)
    throw ToolError(flag + " expects a non-negative integer, got '" + text +
                    "'");
  return value;
}

/// Returns nullopt when --help was asked for.
std::optional<Options> parseCommandLine(int argc, char **argv) {
  Options options;
  TrainOptions &train = options.train;
  std::vector<std::string> positional;
  std::set<std::string> trainFlagsGiven;
  static const std::set<std::string> trainOnly = {
      "--steps",        "--loss",         "--labels",       "--logits",
      "--optimizer",    "--lr",           "--momentum",     "--dampening",
      "--nesterov",     "--beta1",        "--beta2",        "--eps",
      "--weight-decay", "--dump-grads",   "--dump-params",  "--dump-buffers",
      "--save-weights", "--check-grads",  "--check-params", "--check-buffers",
      "--tolerance",    "--max-final-loss", "--verbose",
      "--skip-grad-below", "--check-exact", "--budget", "--strategy",
      "--target", "--milp-seconds", "--workspace", "--check-arena",
      "--precision", "--loss-scale", "--growth-interval",
      "--init-loss-scale", "--zero-gradient"};
  static const std::set<std::string> forwardOnly = {"--outputs", "--expect",
                                                    "--rtol", "--atol",
                                                    "--step"};
  std::set<std::string> forwardFlagsGiven;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help" || arg == "-help")
      return std::nullopt;
    if (arg.size() < 2 || arg[0] != '-' || arg == "-") {
      positional.push_back(arg);
      continue;
    }
    // --flag=value or --flag value
    std::string flag = arg, value;
    bool hasValue = false;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      flag = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      hasValue = true;
    }
    if (flag.rfind("--", 0) != 0 && flag.size() > 1)
      flag = "-" + flag; // accept -inputs as --inputs
    if (flag == "--q")
      flag = "--quiet";
    if (trainOnly.count(flag))
      trainFlagsGiven.insert(flag);
    if (forwardOnly.count(flag))
      forwardFlagsGiven.insert(flag);
    static const std::set<std::string> switches = {
        "--quiet", "--train", "--nesterov", "--verbose", "--check-exact",
        "--check-arena", "--no-fuse-attention", "--explain-attention-fusion"};
    if (switches.count(flag)) {
      if (hasValue)
        throw ToolError(flag + " takes no value");
      if (flag == "--quiet")
        options.quiet = true;
      else if (flag == "--train")
        train.enabled = true;
      else if (flag == "--nesterov")
        train.autodiff.nesterov = true;
      else if (flag == "--verbose")
        options.verbose = true;
      else if (flag == "--check-exact")
        train.checkExact = true;
      else if (flag == "--check-arena")
        train.checkArena = true;
      else if (flag == "--no-fuse-attention")
        options.fusion.attention = false;
      else if (flag == "--explain-attention-fusion")
        options.fusion.explainAttention = true;
      continue;
    }
    static const std::set<std::string> valued = {
        "--inputs",       "--outputs",      "--shape",         "--batch",
        "--frozen",       "--expect",       "--rtol",          "--atol",
        "--step",         "--expect-loss",  "--steps",         "--loss",
        "--labels",       "--logits",       "--optimizer",     "--lr",
        "--momentum",     "--dampening",    "--beta1",         "--beta2",
        "--eps",          "--weight-decay", "--dump-grads",    "--dump-params",
        "--dump-buffers", "--save-weights", "--check-grads",   "--check-params",
        "--check-buffers", "--tolerance",   "--max-final-loss",
        "--skip-grad-below", "--budget",    "--strategy",      "--target",
        "--milp-seconds", "--workspace",    "--precision",     "--loss-scale",
        "--growth-interval", "--init-loss-scale", "--zero-gradient",
        "--padding-idx"};
    if (!valued.count(flag))
      throw ToolError("unknown option '" + arg + "' (see --help)");
    if (!hasValue) {
      if (i + 1 >= argc)
        throw ToolError(flag + " expects a value");
      value = argv[++i];
    }
    if (flag == "--inputs")
      options.inputsDir = value;
    else if (flag == "--outputs")
      options.outputsDir = value;
    else if (flag == "--expect")
      options.expectDir = value;
    else if (flag == "--shape")
      options.shapeFlags.push_back(value);
    else if (flag == "--frozen")
      options.frozen.push_back(value);
    else if (flag == "--padding-idx")
      options.paddingIdx.push_back(value);
    else if (flag == "--batch")
      options.batch = parseInt(flag, value);
    else if (flag == "--step") {
      options.step = static_cast<uint64_t>(parseInt(flag, value));
      options.stepGiven = true;
    } else if (flag == "--rtol")
      options.rtol = parseDouble(flag, value);
    else if (flag == "--atol")
      options.atol = parseDouble(flag, value);
    else if (flag == "--expect-loss")
      options.expectLoss = parseDouble(flag, value, /*allowNegative=*/true);
    else if (flag == "--steps")
      train.steps = parseInt(flag, value);
    else if (flag == "--loss")
      train.autodiff.loss = value;
    else if (flag == "--labels")
      train.autodiff.labels = value;
    else if (flag == "--logits")
      train.autodiff.logits = value;
    else if (flag == "--optimizer")
      train.autodiff.optimizer = value;
    else if (flag == "--lr")
      train.autodiff.lr = parseDouble(flag, value);
    else if (flag == "--momentum")
      train.autodiff.momentum = parseDouble(flag, value);
    else if (flag == "--dampening")
      train.autodiff.dampening = parseDouble(flag, value);
    else if (flag == "--beta1")
      train.autodiff.beta1 = parseDouble(flag, value);
    else if (flag == "--beta2")
      train.autodiff.beta2 = parseDouble(flag, value);
    else if (flag == "--eps")
      train.autodiff.eps = parseDouble(flag, value);
    else if (flag == "--weight-decay")
      train.autodiff.weightDecay = parseDouble(flag, value);
    else if (flag == "--dump-grads")
      train.dumpGrads = value;
    else if (flag == "--dump-params")
      train.dumpParams = value;
    else if (flag == "--dump-buffers")
      train.dumpBuffers = value;
    else if (flag == "--save-weights")
      train.saveWeights = value;
    else if (flag == "--check-grads")
      train.checkGrads = value;
    else if (flag == "--check-params")
      train.checkParams = value;
    else if (flag == "--check-buffers")
      train.checkBuffers = value;
    else if (flag == "--tolerance")
      train.tolerance = parseDouble(flag, value);
    else if (flag == "--skip-grad-below")
      train.skipGradBelow = parseDouble(flag, value);
    else if (flag == "--zero-gradient")
      train.zeroGradients.push_back(value);
    else if (flag == "--max-final-loss")
      train.maxFinalLoss = parseDouble(flag, value, /*allowNegative=*/true);
    else if (flag == "--budget")
      train.plan.budget = value;
    else if (flag == "--strategy")
      train.plan.strategy = value;
    else if (flag == "--target")
      train.plan.target = value;
    else if (flag == "--milp-seconds")
      train.plan.milpSeconds = parseDouble(flag, value);
    else if (flag == "--workspace")
      train.plan.workspace = value;
    else if (flag == "--precision")
      train.precision = value;
    else if (flag == "--loss-scale")
      train.lossScale = value;
    else if (flag == "--growth-interval")
      train.autodiff.growthInterval = parseInt(flag, value);
    else if (flag == "--init-loss-scale")
      train.autodiff.initLossScale = parseDouble(flag, value);
  }
  if (positional.size() != 1)
    throw ToolError(positional.empty()
                        ? "no model given (see --help)"
                        : "expected one model file, got " +
                              std::to_string(positional.size()) +
                              " positional arguments");
  options.model = positional.front();
  if (!train.enabled && !trainFlagsGiven.empty())
    throw ToolError(*trainFlagsGiven.begin() + " needs --train");
  if (train.enabled && !forwardFlagsGiven.empty())
    throw ToolError(*forwardFlagsGiven.begin() +
                    " does not apply to --train (the step counter starts at "
                    "0; see --help)");
  if (train.enabled) {
    if (train.steps < 1)
      throw ToolError("--steps must be at least 1");
    if (train.autodiff.optimizer != "sgd" && train.autodiff.optimizer != "adam" &&
        train.autodiff.optimizer != "adamw")
      throw ToolError("unknown optimizer '" + train.autodiff.optimizer +
                      "' (valid: sgd, adam, adamw)");
    if (train.autodiff.loss != "auto" && train.autodiff.loss != "cross-entropy" &&
        train.autodiff.loss != "mse")
      throw ToolError("unknown loss '" + train.autodiff.loss +
                      "' (valid: auto, cross-entropy, mse)");
    if (train.precision != "fp32" && train.precision != "bf16" &&
        train.precision != "fp16")
      throw ToolError("unknown precision '" + train.precision +
                      "' (valid: fp32, bf16, fp16)");
    train.autodiff.lossScale =
        remat::defaultLossScale(train.precision, train.lossScale);
    for (const char *flag : {"--growth-interval", "--init-loss-scale"})
      if (trainFlagsGiven.count(flag) && train.autodiff.lossScale != "dynamic")
        throw ToolError(std::string(flag) +
                        " needs dynamic loss scaling (--precision fp16 or "
                        "--loss-scale dynamic)");
    if (train.autodiff.loss == "auto" && trainFlagsGiven.count("--labels"))
      throw ToolError("--labels needs --loss cross-entropy|mse");
    if (train.autodiff.loss == "auto" && trainFlagsGiven.count("--logits"))
      throw ToolError("--logits needs --loss cross-entropy|mse");
    if (train.plan.budget.empty()) {
      if (trainFlagsGiven.count("--strategy") &&
          train.plan.strategy != "none")
        throw ToolError("--strategy " + train.plan.strategy + " needs --budget "
                        "(without one the step is not planned: --strategy "
                        "none)");
      for (const char *flag : {"--target", "--milp-seconds", "--workspace",
                               "--check-arena"})
        if (trainFlagsGiven.count(flag))
          throw ToolError(std::string(flag) + " needs --budget");
    }
    if (trainFlagsGiven.count("--zero-gradient") && train.checkGrads.empty())
      throw ToolError("--zero-gradient needs --check-grads");
    if (trainFlagsGiven.count("--skip-grad-below") &&
        (train.checkGrads.empty() || train.checkParams.empty()))
      throw ToolError("--skip-grad-below needs --check-grads (the reference "
                      "gradients) and --check-params");
    if (train.autodiff.optimizer == "sgd") {
      for (const char *flag : {"--beta1", "--beta2", "--eps"})
        if (trainFlagsGiven.count(flag))
          throw ToolError(std::string(flag) + " applies to adam and adamw, "
                          "not sgd");
    } else {
      for (const char *flag : {"--momentum", "--dampening", "--nesterov"})
        if (trainFlagsGiven.count(flag))
          throw ToolError(std::string(flag) + " applies to sgd, not " +
                          train.autodiff.optimizer);
    }
  }
  return options;
}

//===----------------------------------------------------------------------===//
// Forward
//===----------------------------------------------------------------------===//

std::string indexToString(const remat::rt::Shape &shape, int64_t flat) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  return remat::rt::shapeToString(index);
}

/// Compares one output; prints a line and returns true if it matches.
bool compareOutput(size_t index, const std::string &name,
                   const remat::rt::TensorView &got,
                   const remat::rt::TensorView &want, double rtol,
                   double atol) {
  std::string label = "output " + std::to_string(index) + " ('" + name + "')";
  if (got.dtype != want.dtype || got.shape != want.shape) {
    std::cout << label << ": got " << describe(got) << ", expected "
              << describe(want) << "\n";
    return false;
  }
  const int64_t n = got.numel();
  int64_t mismatches = 0, first = -1;
  double maxAbs = 0, maxRel = 0;
  if (remat::rt::isFloat(got.dtype)) {
    for (int64_t i = 0; i < n; ++i) {
      const double a = elementAsDouble(got, i), b = elementAsDouble(want, i);
      if ((std::isnan(a) && std::isnan(b)) || a == b)
        continue;
      const double diff = std::fabs(a - b);
      if (!(diff <= atol + rtol * std::fabs(b))) {
        ++mismatches;
        if (first < 0)
          first = i;
      }
      if (std::isnan(diff) || std::isinf(diff)) {
        maxAbs = maxRel = INFINITY;
        continue;
      }
      maxAbs = std::max(maxAbs, diff);
      if (b != 0)
        maxRel = std::max(maxRel, diff / std::fabs(b));
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      const int64_t a = elementAsInt(got, i), b = elementAsInt(want, i);
      if (a == b)
        continue;
      ++mismatches;
      if (first < 0)
        first = i;
      const double diff = std::fabs(double(a) - double(b));
      maxAbs = std::max(maxAbs, diff);
      if (b != 0)
        maxRel = std::max(maxRel, diff / std::fabs(double(b)));
    }
  }
  std::cout << label << ": " << describe(got) << ", max abs err "
            << formatNumber(maxAbs) << ", max rel err " << formatNumber(maxRel);
  if (mismatches) {
    std::cout << ", " << mismatches << " of " << n
              << " elements out of tolerance; first at "
              << indexToString(got.shape, first) << ": got "
              << formatNumber(elementAsDouble(got, first)) << ", expected "
              << formatNumber(elementAsDouble(want, first));
  }
  std::cout << "\n";
  return mismatches == 0;
}

int runForward(MLIRContext &context, const Options &options) {
  LoadedModel loaded;
  loadModel(context, options, /*extraInputFiles=*/0, loaded);
  func::FuncOp func = loaded.forward;

  // Weights without data are the most telling problem: report them first.
  checkWeightsHaveData(loaded, func);

  // Bind the arguments.
  std::vector<remat::rt::Tensor> weightTensors;
  weightTensors.reserve(func.getNumArguments());
  std::vector<const remat::rt::TensorView *> args;
  size_t nextInput = 0;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    const std::string name = argString(func, i, remat::RematDialect::kNameAttr);
    std::string role = argString(func, i, remat::RematDialect::kRoleAttr);
    if (role.empty())
      role = "input";
    const std::string label =
        name.empty() ? "argument " + std::to_string(i) : "'" + name + "'";

    if (!loaded.mlirInput) {
      // A graph input with a file wins whatever role the importer gave it.
      if (auto it = loaded.inputByName.find(name);
          it != loaded.inputByName.end()) {
        args.push_back(&loaded.inputTensors[it->second].view());
        continue;
      }
      if (role == "input")
        throw ToolError(
            "input " + label + " of '" + options.model + "' has no value: " +
            (options.inputsDir.empty()
                 ? std::string("no --inputs directory was given")
                 : "'" + options.inputsDir + "' holds only " +
                       std::to_string(loaded.inputFiles.size()) +
                       " input_<i>.pb file(s)"));
    } else if (role == "input") {
      if (nextInput >= loaded.inputTensors.size())
        throw ToolError("'" + options.model + "' takes more inputs than the " +
                        std::to_string(loaded.inputTensors.size()) +
                        " input_<i>.pb file(s)" +
                        (options.inputsDir.empty()
                             ? std::string(" (no --inputs given)")
                             : " in '" + options.inputsDir + "'"));
      args.push_back(&loaded.inputTensors[nextInput++].view());
      continue;
    }

    if (role != "parameter" && role != "buffer")
      throw ToolError(label + " has unknown role '" + role + "'");
    weightTensors.push_back(loadWeight(loaded, name, role));
    args.push_back(&weightTensors.back().view());
  }
  if (loaded.mlirInput && nextInput != loaded.inputTensors.size())
    throw ToolError("'" + options.inputsDir + "' holds " +
                    std::to_string(loaded.inputTensors.size()) +
                    " input_<i>.pb files but '" + options.model + "' takes " +
                    std::to_string(nextInput) + " inputs");

  // Run.
  const Clock::time_point runStart = Clock::now();
  remat::Interpreter interpreter(func);
  interpreter.setStep(options.step);
  std::vector<remat::rt::Tensor> outputs = interpreter.run(args);
  const double runMs = millisecondsSince(runStart);

  std::vector<std::string> outputNames;
  for (unsigned i = 0; i < outputs.size(); ++i) {
    std::string name = resultString(func, i, remat::RematDialect::kNameAttr);
    if (name.empty())
      name = i < loaded.onnxOutputNames.size() ? loaded.onnxOutputNames[i]
                                               : "output_" + std::to_string(i);
    outputNames.push_back(name);
  }

  if (!options.outputsDir.empty()) {
    std::error_code ec;
    fs::create_directories(options.outputsDir, ec);
    if (ec)
      throw ToolError("cannot create '" + options.outputsDir +
                      "': " + ec.message());
    for (size_t i = 0; i < outputs.size(); ++i) {
      std::string path = (fs::path(options.outputsDir) /
                          ("output_" + std::to_string(i) + ".pb"))
                             .string();
      try {
        remat::rt::writeTensorFile(path, outputs[i].view(), outputNames[i]);
      } catch (const std::exception &e) {
        throw ToolError("cannot write '" + path + "': " + e.what());
      }
    }
  }

  if (!options.quiet) {
    std::ostringstream summary;
    summary.precision(1);
    summary << std::fixed << "remat-run: " << outputs.size() << " output"
            << (outputs.size() == 1 ? "" : "s");
    if (!options.outputsDir.empty())
      summary << " written to " << options.outputsDir;
    summary << " (import " << loaded.importMs << " ms, run " << runMs
            << " ms, peak " << interpreter.peakLiveBytes() / 1024.0
            << " KiB of intermediates)";
    std::cerr << summary.str() << "\n";
  }

  bool pass = true;
  if (options.expectLoss) {
    // The loss: the first float scalar output.
    std::optional<size_t> lossIndex;
    for (size_t i = 0; i < outputs.size() && !lossIndex; ++i)
      if (outputs[i].numel() == 1 && outputs[i].shape().empty() &&
          remat::rt::isFloat(outputs[i].dtype()))
        lossIndex = i;
    if (!lossIndex)
      throw ToolError("--expect-loss: '" + options.model +
                      "' has no scalar float output");
    const double got = elementAsDouble(outputs[*lossIndex].view(), 0);
    const double want = *options.expectLoss;
    const bool ok =
        std::fabs(got - want) <= 1e-5 * std::max(1.0, std::fabs(want));
    char line[160];
    std::snprintf(line, sizeof line, "%sloss ('%s') %.6f, expected %.6f",
                  ok ? "" : "FAIL ", outputNames[*lossIndex].c_str(), got,
                  want);
    std::cout << line << " (|diff| " << formatNumber(std::fabs(got - want))
              << ")\n";
    pass &= ok;
  }

  if (options.expectDir.empty())
    return pass ? 0 : kExitFail;
  std::vector<std::string> expected = numberedFiles(options.expectDir, "output");
  if (expected.size() != outputs.size()) {
    std::cout << "the model produced " << outputs.size() << " output(s), '"
              << options.expectDir << "' holds " << expected.size() << "\n";
    pass = false;
  }
  for (size_t i = 0; i < std::min(expected.size(), outputs.size()); ++i) {
    remat::rt::Tensor want;
    try {
      want = remat::rt::readTensorFile(expected[i]);
    } catch (const std::exception &e) {
      throw ToolError("cannot read '" + expected[i] + "': " + e.what());
    }
    pass &= compareOutput(i, outputNames[i], outputs[i].view(), want.view(),
                          options.rtol, options.atol);
  }
  std::cout << (pass ? "PASS" : "FAIL") << std::endl;
  return pass ? 0 : kExitFail;
}

//===----------------------------------------------------------------------===//
// The tool
//===----------------------------------------------------------------------===//

int runTool(const Options &options) {
  DialectRegistry registry;
  registry.insert<remat::RematDialect, func::FuncDialect>();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // One line per diagnostic: no dump of the operation a pass failed on.
  context.printOpOnDiagnostic(false);

  // MLIR diagnostics (parser, verifier, passes) as one line each.
  ScopedDiagnosticHandler diagnostics(&context, [](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      ++diagnosticErrorCount();
    const char *kind = diag.getSeverity() == DiagnosticSeverity::Error
                           ? "error"
                       : diag.getSeverity() == DiagnosticSeverity::Warning
                           ? "warning"
                           : "note";
    llvm::errs() << "remat-run: " << kind << ": "
                 << remat::describeLocation(diag.getLocation()) << ": "
                 << diag.str() << "\n";
    for (Diagnostic &note : diag.getNotes())
      llvm::errs() << "remat-run: note: "
                   << remat::describeLocation(note.getLocation()) << ": "
                   << note.str() << "\n";
    return success();
  });

  if (options.train.enabled)
    return runTraining(context, options);
  return runForward(context, options);
}

} // namespace

int main(int argc, char **argv) {
  try {
    std::optional<Options> options = parseCommandLine(argc, argv);
    if (!options) {
      std::cout << kUsage;
      return 0;
    }
    return runTool(*options);
  } catch (const ReportedError &e) {
    // The diagnostic handler has printed the error (if there was one).
    if (diagnosticErrorCount() == 0)
      std::cerr << "remat-run: error: " << e.what() << std::endl;
  } catch (const ToolError &e) {
    std::cerr << "remat-run: error: " << e.what() << std::endl;
  } catch (const remat::rt::RuntimeError &e) {
    std::cerr << "remat-run: error: " << e.what() << std::endl;
  } catch (const std::bad_alloc &) {
    std::cerr << "remat-run: error: out of memory" << std::endl;
  } catch (const std::exception &e) {
    std::cerr << "remat-run: error: " << e.what() << std::endl;
  } catch (...) {
    std::cerr << "remat-run: error: unknown exception" << std::endl;
  }
  return kExitError;
}
