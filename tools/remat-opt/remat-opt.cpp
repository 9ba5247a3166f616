//===- remat-opt.cpp - The remat compiler driver --------------------------===//
//
// An `mlir-opt`-style driver (MlirOptMain) that also accepts ONNX models:
// a `.onnx` input is imported into the remat dialect first, then handed to the
// standard driver, so every MLIR flag (--pass-pipeline,
// --mlir-print-ir-after-all, --split-input-file, ...) works on both.
//
//===----------------------------------------------------------------------===//

#include "EmitCommand.h"
#include "PlanCommand.h"

#include "remat/Dialect/RematDialect.h"
#include "remat/Frontend/OnnxImporter.h"
#include "remat/Frontend/ShapeFlags.h"
#include "remat/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/SourceMgr.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

// remat's options by theme. --help sorts categories by name, so the numbers
// put remat's own first, in this order, before MLIR's driver options.
static llvm::cl::OptionCategory planCategory("1. Planning under a memory budget");
static llvm::cl::OptionCategory stepCategory(
    "2. The training step (loss, optimizer and precision)");
static llvm::cl::OptionCategory outputCategory(
    "3. Output and code generation");
static llvm::cl::OptionCategory importCategory("4. ONNX import");

static llvm::cl::list<std::string>
    shapeFlags("shape", llvm::cl::desc("Bind an input's shape: NAME=2x64"),
               llvm::cl::value_desc("NAME=DIMS"), llvm::cl::cat(importCategory));
static llvm::cl::opt<int64_t>
    batchFlag("batch", llvm::cl::desc("Bind the symbolic batch dim of inputs"),
              llvm::cl::init(-1), llvm::cl::cat(importCategory));
static llvm::cl::list<std::string>
    frozenFlags("frozen",
                llvm::cl::desc("Treat this initializer as a constant buffer"),
                llvm::cl::value_desc("NAME"), llvm::cl::cat(importCategory));
static llvm::cl::list<std::string> paddingIdxFlags(
    "padding-idx",
    llvm::cl::desc("An embedding's padding row, which gets no gradient "
                   "(torch.nn.Embedding's padding_idx, which exporters drop)"),
    llvm::cl::value_desc("NAME=ROW"), llvm::cl::cat(importCategory));

static llvm::cl::opt<std::string> emitFlag(
    "emit",
    llvm::cl::desc("What to produce: mlir (the IR after the requested passes; "
                   "the default without --budget), report (the plan, the "
                   "default with --budget), json (the plan), plan (one "
                   "decision per line, for diffing), trace (Chrome trace-event "
                   "JSON for Perfetto), memory-snapshot (a PyTorch memory "
                   "snapshot pickle for pytorch.org/memory_viz), html (the plan "
                   "explorer page, -o FILE.html), cpp or cuda "
                   "(the training executable's source in directory -o) or "
                   "exe (the built executable at -o)"),
    llvm::cl::init(""), llvm::cl::cat(outputCategory));

static llvm::cl::opt<std::string> compareFlag(
    "compare",
    llvm::cl::desc("--emit=html: plans side by side: strategies and/or "
                   "budget=SIZE items, e.g. auto,sqrt or "
                   "budget=6GB,budget=8GB"),
    llvm::cl::value_desc("A,B[,C]"), llvm::cl::cat(outputCategory));
static llvm::cl::opt<int> sweepPointsFlag(
    "sweep-points",
    llvm::cl::desc("--emit=html --compare: budgets per strategy in the "
                   "step-time/budget sweep (0: none)"),
    llvm::cl::init(6), llvm::cl::cat(outputCategory));
static llvm::cl::opt<std::string> backendFlag(
    "backend",
    llvm::cl::desc("--emit=exe: cpu or cuda (default: cuda when nvcc exists)"),
    llvm::cl::cat(outputCategory));
static llvm::cl::opt<std::string> runtimeDirFlag(
    "runtime-dir",
    llvm::cl::desc("--emit=exe: the RematRuntime CMake package directory "
                   "(default: <remat-opt's dir>/../lib/cmake/RematRuntime)"),
    llvm::cl::cat(outputCategory));
static llvm::cl::opt<std::string> budgetFlag(
    "budget",
    llvm::cl::desc("Plan the training step to fit this much device memory "
                   "(40GB, 1.5GiB, 512MB or bytes)"),
    llvm::cl::cat(planCategory));
static llvm::cl::opt<std::string>
    strategyFlag("strategy", llvm::cl::desc("none, all, sqrt, milp or auto"),
                 llvm::cl::init("auto"), llvm::cl::cat(planCategory));
static llvm::cl::opt<std::string>
    targetFlag("target", llvm::cl::desc("h100, h200, a100 or cpu"),
               llvm::cl::init("h100"), llvm::cl::cat(planCategory));
static llvm::cl::opt<double>
    milpSecondsFlag("milp-seconds", llvm::cl::desc("MILP time limit"),
                    llvm::cl::init(10.0), llvm::cl::cat(planCategory));
static llvm::cl::opt<bool> reportFloorFlag(
    "report-floor",
    llvm::cl::desc("Also find the smallest budget that works "
                   "(minimum_feasible_bytes) when the budget fits"),
    llvm::cl::cat(planCategory));
static llvm::cl::opt<std::string> costTableFlag(
    "cost-table", llvm::cl::desc("JSON file of measured per-op times"),
    llvm::cl::cat(planCategory));
static llvm::cl::opt<std::string> workspaceFlag(
    "workspace",
    llvm::cl::desc("Runtime workspace counted against the budget"),
    llvm::cl::cat(planCategory));
static llvm::cl::opt<std::string> lossFlag(
    "loss", llvm::cl::desc("auto (the scalar output), cross-entropy or mse"),
    llvm::cl::init("auto"), llvm::cl::cat(stepCategory));
static llvm::cl::opt<std::string>
    labelsFlag("labels", llvm::cl::desc("Name of the labels input of --loss"),
               llvm::cl::init("labels"), llvm::cl::cat(stepCategory));
static llvm::cl::opt<std::string>
    logitsFlag("logits", llvm::cl::desc("Output that --loss reads"),
               llvm::cl::cat(stepCategory));
static llvm::cl::opt<std::string>
    optimizerFlag("optimizer", llvm::cl::desc("sgd, adam or adamw"),
                  llvm::cl::init("adam"), llvm::cl::cat(stepCategory));
static llvm::cl::opt<double> lrFlag("lr", llvm::cl::desc("Learning rate"),
                                    llvm::cl::init(-1),
                                    llvm::cl::cat(stepCategory));
static llvm::cl::opt<double> momentumFlag("momentum",
                                          llvm::cl::desc("SGD momentum"),
                                          llvm::cl::init(0),
                                          llvm::cl::cat(stepCategory));
static llvm::cl::opt<double> dampeningFlag("dampening",
                                           llvm::cl::desc("SGD dampening"),
                                           llvm::cl::init(0),
                                           llvm::cl::cat(stepCategory));
static llvm::cl::opt<double> beta1Flag("beta1", llvm::cl::desc("Adam beta1"),
                                       llvm::cl::init(0.9),
                                       llvm::cl::cat(stepCategory));
static llvm::cl::opt<double> beta2Flag("beta2", llvm::cl::desc("Adam beta2"),
                                       llvm::cl::init(0.999),
                                       llvm::cl::cat(stepCategory));
static llvm::cl::opt<double> epsFlag("eps", llvm::cl::desc("Adam epsilon"),
                                     llvm::cl::init(1e-8),
                                     llvm::cl::cat(stepCategory));
static llvm::cl::opt<bool> nesterovFlag("nesterov",
                                        llvm::cl::desc("SGD Nesterov momentum"),
                                        llvm::cl::cat(stepCategory));
static llvm::cl::opt<double>
    weightDecayFlag("weight-decay", llvm::cl::desc("Weight decay"),
                    llvm::cl::init(-1), llvm::cl::cat(stepCategory));
static llvm::cl::opt<std::string> precisionFlag(
    "precision",
    llvm::cl::desc("Compute dtypes: fp32 (as exported), bf16 or fp16 "
                   "(mixed precision: matmul/conv/attention in 16 bits, fp32 "
                   "master weights and optimizer)"),
    llvm::cl::init("fp32"), llvm::cl::cat(stepCategory));
static llvm::cl::opt<std::string> lossScaleFlag(
    "loss-scale",
    llvm::cl::desc("Loss scaling: dynamic (GradScaler; the fp16 default), a "
                   "fixed scale, or none (the bf16/fp32 default)"),
    llvm::cl::cat(stepCategory));
static llvm::cl::opt<double> initLossScaleFlag(
    "init-loss-scale",
    llvm::cl::desc("Dynamic loss scaling: the first step's scale"),
    llvm::cl::init(65536.0), llvm::cl::cat(stepCategory));
static llvm::cl::opt<int64_t> growthIntervalFlag(
    "growth-interval",
    llvm::cl::desc("Dynamic loss scaling: finite steps before the scale "
                   "doubles"),
    llvm::cl::init(2000), llvm::cl::cat(stepCategory));

/// "file:line:col" of the first file location inside `loc` (through node
/// names, fused and call-site locations), or MLIR's own form.
static std::string locationText(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return (file.getFilename().getValue() + ":" + llvm::Twine(file.getLine()) +
            ":" + llvm::Twine(file.getColumn()))
        .str();
  if (auto name = dyn_cast<NameLoc>(loc))
    return locationText(name.getChildLoc());
  if (auto fused = dyn_cast<FusedLoc>(loc))
    if (!fused.getLocations().empty())
      return locationText(fused.getLocations().front());
  if (auto call = dyn_cast<CallSiteLoc>(loc))
    return locationText(call.getCallee());
  std::string text;
  llvm::raw_string_ostream os(text);
  os << loc;
  return text;
}

static LogicalResult printOneLineDiagnostic(Diagnostic &diagnostic) {
  const char *severity = "error";
  if (diagnostic.getSeverity() == DiagnosticSeverity::Warning)
    severity = "warning";
  else if (diagnostic.getSeverity() == DiagnosticSeverity::Note)
    severity = "note";
  else if (diagnostic.getSeverity() == DiagnosticSeverity::Remark)
    severity = "remark";
  llvm::errs() << locationText(diagnostic.getLocation()) << ": " << severity
               << ": " << diagnostic << "\n";
  for (Diagnostic &note : diagnostic.getNotes())
    llvm::errs() << locationText(note.getLocation()) << ": note: " << note
                 << "\n";
  return success();
}

/// The LLVM libraries remat links register hundreds of options at static
/// initialisation (AArch64 NEON syntax, AMDGPU tuning, Polly, ...) that mean
/// nothing to a remat user. Hide every option registered so far that is not
/// remat's own or one of --help/--version's; --help-hidden still lists them.
/// MLIR's driver options are registered later (registerAndParseCLIOptions)
/// and stay visible.
static void hideLibraryOptions() {
  llvm::SmallPtrSet<llvm::cl::OptionCategory *, 4> ours = {
      &planCategory, &stepCategory, &outputCategory, &importCategory};
  for (auto &entry : llvm::cl::getRegisteredOptions()) {
    llvm::cl::Option *option = entry.second;
    bool generic = entry.first() == "help" || entry.first() == "version";
    if (!generic &&
        llvm::none_of(option->Categories, [&](llvm::cl::OptionCategory *c) {
          return ours.contains(c);
        }))
      option->setHiddenFlag(llvm::cl::Hidden);
  }
}

static llvm::cl::opt<bool> noFuseAttentionFlag(
    "no-fuse-attention",
    llvm::cl::desc("Keep exported attention as written (no "
                   "remat-fuse-attention before autodiff)"),
    llvm::cl::cat(stepCategory));
static llvm::cl::opt<bool> explainAttentionFlag(
    "explain-attention-fusion",
    llvm::cl::desc("Print, per softmax, whether its attention was fused and "
                   "why not"),
    llvm::cl::cat(stepCategory));

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  hideLibraryOptions();
  DialectRegistry registry;
  registry.insert<remat::RematDialect, func::FuncDialect>();
  registerTransformsPasses();
  remat::registerRematPasses();

  auto [inputFilename, outputFilename] = registerAndParseCLIOptions(
      argc, argv,
      "remat: training-graph compiler driver\n\nGroups 1-4 are remat's own "
      "options; \"General options\" are MLIR's driver options, as in mlir-opt.\n",
      registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  bool planning = !budgetFlag.empty();
  if (planning && emitFlag == "html" && outputFilename == "-") {
    llvm::errs() << "remat-opt: error: --emit=html writes a page: name it "
                    "with -o FILE.html\n";
    return 1;
  }
  // `-o FILE.mlir` asks for IR: the planned step rather than the report
  // (Compiler Explorer runs `remat-opt -o example.out.mlir ...`).
  if (planning && emitFlag.empty() &&
      llvm::StringRef(outputFilename).ends_with(".mlir"))
    emitFlag = "mlir";
  if (!planning && !emitFlag.empty() && emitFlag != "mlir") {
    llvm::errs() << "remat-opt: error: --emit=" << emitFlag
                 << " needs --budget; without it the only output is mlir\n";
    return 1;
  }

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input;
  if (llvm::StringRef(inputFilename).ends_with(".onnx")) {
    remat::OnnxImportOptions options;
    if (!remat::parseShapeFlags(shapeFlags, options.inputShapes, errorMessage)) {
      llvm::errs() << "remat-opt: error: " << errorMessage << "\n";
      return 1;
    }
    if (!remat::parsePaddingIdxFlags(paddingIdxFlags, options.paddingIdx,
                                     errorMessage)) {
      llvm::errs() << "remat-opt: error: " << errorMessage << "\n";
      return 1;
    }
    options.batchSize = batchFlag;
    options.frozen.insert(frozenFlags.begin(), frozenFlags.end());
    MLIRContext context(registry);
    context.loadAllAvailableDialects();
    OwningOpRef<ModuleOp> module =
        remat::importOnnxFile(context, inputFilename, options);
    if (!module)
      return 1;
    // Hand the imported module to the standard driver as text, keeping the
    // locations (ONNX node names) so diagnostics still point at nodes.
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os, OpPrintingFlags().enableDebugInfo());
    input = llvm::MemoryBuffer::getMemBufferCopy(text, inputFilename);
  } else {
    input = openInputFile(inputFilename, &errorMessage);
    if (!input) {
      llvm::errs() << "remat-opt: error: " << errorMessage << "\n";
      return 1;
    }
  }

  const bool codegen = planning && (emitFlag == "cpp" || emitFlag == "cuda" ||
                                    emitFlag == "exe");
  // Code generation writes a directory or an executable at -o itself.
  auto output = openOutputFile(codegen ? std::string("-") : outputFilename,
                               &errorMessage);
  if (!output) {
    llvm::errs() << "remat-opt: error: " << errorMessage << "\n";
    return 1;
  }
  if (planning) {
    MLIRContext context(registry);
    context.loadAllAvailableDialects();
    // One line per problem: the failing op's location says where it is.
    context.printOpOnDiagnostic(false);
    llvm::SourceMgr sourceMgr;
    sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
    SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
    OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
    if (!module)
      return 1;
    // Parse errors above show the source line; planning diagnostics are one
    // line each, because echoing the source line would print a whole function
    // signature (thousands of characters) as context.
    ScopedDiagnosticHandler oneLine(&context, printOneLineDiagnostic);
    // The command line fills the passes' own option structs (Passes.td).
    remat::PlanCommandOptions command;
    remat::PlanTrainStepOptions &plan = command.plan;
    plan.budget = budgetFlag;
    plan.strategy = strategyFlag;
    plan.target = targetFlag;
    plan.milpSeconds = milpSecondsFlag;
    plan.reportFloor = reportFloorFlag;
    plan.costTable = costTableFlag;
    plan.workspace = workspaceFlag;
    remat::AutodiffOptions &autodiff = command.autodiff;
    autodiff.loss = lossFlag;
    autodiff.labels = labelsFlag;
    autodiff.logits = logitsFlag;
    autodiff.optimizer = optimizerFlag;
    autodiff.lr = lrFlag;
    autodiff.momentum = momentumFlag;
    autodiff.dampening = dampeningFlag;
    autodiff.nesterov = nesterovFlag;
    autodiff.beta1 = beta1Flag;
    autodiff.beta2 = beta2Flag;
    autodiff.eps = epsFlag;
    autodiff.weightDecay = weightDecayFlag;
    if (precisionFlag != "fp32" && precisionFlag != "bf16" &&
        precisionFlag != "fp16") {
      llvm::errs() << "remat-opt: error: unknown --precision '"
                   << precisionFlag << "' (valid: fp32, bf16, fp16)\n";
      return 1;
    }
    command.precision = precisionFlag;
    autodiff.lossScale = remat::defaultLossScale(precisionFlag, lossScaleFlag);
    autodiff.initLossScale = initLossScaleFlag;
    autodiff.growthInterval = growthIntervalFlag;
    command.fusion.attention = !noFuseAttentionFlag;
    command.fusion.explainAttention = explainAttentionFlag;
    command.emit =
        emitFlag.empty() ? std::string("report") : emitFlag.getValue();
    command.compare = compareFlag;
    command.sweepPoints = sweepPointsFlag;
    command.model = llvm::sys::path::filename(inputFilename).str();
    if (codegen) {
      command.codegen.emit = emitFlag;
      command.codegen.output = outputFilename;
      command.codegen.backend = backendFlag;
      command.codegen.runtimeDir = runtimeDirFlag;
      command.codegen.argv0 = argv[0];
    }
    int status = remat::runPlanCommand(*module, command, output->os());
    if (status != 1)
      output->keep();
    return status;
  }
  if (failed(MlirOptMain(output->os(), std::move(input), registry, config)))
    return 1;
  output->keep();
  return 0;
}
