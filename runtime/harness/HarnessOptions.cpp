//===- HarnessOptions.cpp - The training executable's command line --------===//

#include "HarnessOptions.h"

#include <cerrno>
#include <cstdlib>
#include <optional>

namespace remat::rt::harness {
namespace {

const char *const kUsage =
    "usage: %s [--steps N] [--inputs DIR | --data FILE] [--weights MODEL.onnx]\n"
    "          [--random-weights] [--save-weights OUT.onnx] [--dump-params DIR]\n"
    "          [--dump-buffers DIR] [--json] [--quiet] [--help]\n"
    "\n"
    "Runs N steps of the planned training step compiled into this executable\n"
    "and prints `step <i>/<N> loss <value> (<ms> ms)` per step, then a summary\n"
    "(median step time, samples/s, measured and planned peak memory).\n"
    "\n"
    "  --steps N          training steps to run (default 10)\n"
    "  --inputs DIR       one batch in the ONNX backend-test layout:\n"
    "                     DIR/input_<k>.pb per graph input (then the labels of\n"
    "                     an appended loss), used for every step\n"
    "  --data FILE        a text file listing batch directories (one per line,\n"
    "                     relative to FILE's directory; blank lines and lines\n"
    "                     starting with '#' are skipped), each laid out like\n"
    "                     --inputs; step i uses batch i mod count\n"
    "                     (without --inputs or --data: one synthetic batch,\n"
    "                     floats N(0,1), integers uniform in their valid range,\n"
    "                     from a fixed seed)\n"
    "  --weights FILE     read parameters and buffers from this ONNX model's\n"
    "                     initializers (default: the model it was compiled from)\n"
    "  --random-weights   parameters without an initializer (all of them if the\n"
    "                     default model file is absent) start N(0, 0.02) from a\n"
    "                     fixed seed; buffers 1 if named like a running\n"
    "                     variance (running_var, moving_var), else 0\n"
    "  --save-weights OUT write the model with the trained parameters and\n"
    "                     updated buffers (checked with the ONNX checker)\n"
    "  --dump-params DIR  parameters after the last step as DIR/<name>.pb\n"
    "                     (remat-run --dump-params layout)\n"
    "  --dump-buffers DIR updated buffers (BatchNorm running statistics)\n"
    "                     after the last step, same layout\n"
    "  --json             print one JSON object with the results on stdout\n"
    "                     instead of the text lines (progress goes to stderr)\n"
    "  --quiet            no per-step progress lines\n"
    "  --help             this text\n"
    "\n"
    "exit status: 0 ok, 1 error (bad flag, unreadable or mismatched weights or\n"
    "inputs, a failing step)\n";

int64_t parseSteps(const std::string &text) {
  char *end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || value < 1)
    throw UsageError("--steps expects a positive integer, got '" + text + "'");
  return value;
}

} // namespace

std::string harnessUsage(const std::string &program) {
  std::string text(kUsage);
  const size_t at = text.find("%s");
  return text.replace(at, 2, program);
}

HarnessOptions parseHarnessOptions(int argc, char **argv) {
  HarnessOptions options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::optional<std::string> inlineValue;
    if (arg.rfind("--", 0) == 0)
      if (size_t eq = arg.find('='); eq != std::string::npos) {
        inlineValue = arg.substr(eq + 1);
        arg.resize(eq);
      }
    // The value of a flag that takes one: `--flag=V` or the next argument.
    auto value = [&]() -> std::string {
      if (!inlineValue && i + 1 >= argc)
        throw UsageError(arg + " expects a value");
      std::string v = inlineValue ? *inlineValue : argv[++i];
      if (v.empty())
        throw UsageError(arg + " expects a non-empty value");
      return v;
    };
    auto noValue = [&] {
      if (inlineValue)
        throw UsageError(arg + " takes no value");
    };
    if (arg == "--steps")
      options.steps = parseSteps(value());
    else if (arg == "--inputs")
      options.inputsDir = value();
    else if (arg == "--data")
      options.dataFile = value();
    else if (arg == "--weights")
      options.weightsPath = value();
    else if (arg == "--save-weights")
      options.saveWeights = value();
    else if (arg == "--dump-params")
      options.dumpParams = value();
    else if (arg == "--dump-buffers")
      options.dumpBuffers = value();
    else if (arg == "--random-weights")
      noValue(), options.randomWeights = true;
    else if (arg == "--json")
      noValue(), options.json = true;
    else if (arg == "--quiet")
      noValue(), options.quiet = true;
    else if (arg == "--help" || arg == "-h")
      noValue(), options.help = true;
    else if (arg.rfind("-", 0) == 0)
      throw UsageError("unknown option '" + arg + "'");
    else
      throw UsageError("unexpected argument '" + arg +
                       "' (the model is compiled in; --weights FILE reads "
                       "weights from another file)");
  }
  if (!options.inputsDir.empty() && !options.dataFile.empty())
    throw UsageError("--inputs and --data are exclusive: --inputs is one "
                     "batch, --data a list of batch directories");
  return options;
}

} // namespace remat::rt::harness
