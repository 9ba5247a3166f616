//===- HarnessOptions.h - The training executable's command line -*- C++ -*-===//
//
// The flags every generated training executable accepts (see kUsage in
// HarnessOptions.cpp). Parsing is separate from running so that it can be
// tested alone and so that a bad flag is reported before any device work.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_HARNESS_HARNESSOPTIONS_H
#define REMAT_RUNTIME_HARNESS_HARNESSOPTIONS_H

#include "remat/runtime/Tensor.h"

#include <cstdint>
#include <string>

namespace remat::rt::harness {

struct HarnessOptions {
  int64_t steps = 10;
  std::string inputsDir;   // --inputs: one batch, backend-test layout
  std::string dataFile;    // --data: a list of batch directories
  std::string weightsPath; // --weights: overrides ProgramSpec::modelPath
  bool randomWeights = false;
  std::string saveWeights; // --save-weights OUT.onnx
  std::string dumpParams;  // --dump-params DIR
  std::string dumpBuffers; // --dump-buffers DIR
  bool json = false;
  bool quiet = false;
  bool help = false;
};

/// A bad command line: reported with the usage text, exit status 1.
struct UsageError : RuntimeError {
  using RuntimeError::RuntimeError;
};

/// Parses argv[1..]; accepts `--flag VALUE` and `--flag=VALUE`. Throws
/// UsageError naming the offending flag.
HarnessOptions parseHarnessOptions(int argc, char **argv);

/// The usage text, with `program` as the executable's name.
std::string harnessUsage(const std::string &program);

} // namespace remat::rt::harness

#endif // REMAT_RUNTIME_HARNESS_HARNESSOPTIONS_H
