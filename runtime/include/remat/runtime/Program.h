//===- Program.h - What generated code tells the harness --------*- C++ -*-===//
//
// The contract between code emitted by `remat-opt --emit=cpp|cuda` and the
// executable harness (runtime/harness). Generated code is a ProgramSpec (the
// memory layout, the train step's arguments and results, its constants) and
// one function, the train step: a straight-line sequence of kernel calls at
// constant offsets into two device buffers, the arena (activations,
// gradients, temporaries, input batches) and the persistent region
// (parameters, buffers, optimizer state, the step counter, constants).
// The harness allocates both once, loads weights, feeds batches, runs steps
// and reports.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_PROGRAM_H
#define REMAT_RUNTIME_PROGRAM_H

#include "remat/runtime/Tensor.h"

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace remat::rt {

enum class Backend : uint8_t { Cpu, Cuda };

/// Whether a train-step argument or result of this role (remat.role) is
/// state that persists from step to step: the compiler keeps it out of the
/// arena and the runtimes carry it over. The other roles are per-step
/// (input, loss, gradient, output).
inline bool isPersistentRole(std::string_view role) {
  return role == "parameter" || role == "buffer" ||
         role == "optimizer_state" || role == "step" || role == "loss_scale";
}

/// Which device buffer a tensor lives in.
enum class Region : uint8_t { Arena, Persistent };

/// One argument of @train_step, in argument order.
struct ArgumentSpec {
  const char *name; // remat.name (initializer or graph input name)
  const char *role; // input, parameter, buffer, optimizer_state, step or
                    // loss_scale
  DType dtype;
  Shape shape;
  Region region;  // inputs: Arena (copied in before each step); the rest
                  // Persistent
  int64_t offset; // byte offset into its region
  /// Inputs: which backend-test file feeds it (`input_<k>.pb`, graph input
  /// order; an appended loss's labels come after the graph inputs).
  int inputFile = -1;
  /// Integer inputs: synthetic batches draw values uniformly from
  /// [0, syntheticBound) (a vocabulary size, a class count); 0 otherwise.
  int64_t syntheticBound = 0;
  /// Persistent state the harness does not load (optimizer state, step,
  /// loss scale) starts at this value in every element (remat.initial_value).
  double initialValue = 0;
};

/// One result of @train_step, in result order.
struct ResultSpec {
  const char *name;
  const char *role; // loss, parameter, buffer, optimizer_state, step,
                    // loss_scale, gradient or output
  DType dtype;
  Shape shape;
  /// Where the step leaves the value. Persistent results are written in
  /// place into their argument's slot (`argument` is its index).
  Region region;
  int64_t offset;
  int argument = -1;
};

/// A constant of the step, copied into the persistent region at start-up.
struct ConstantSpec {
  DType dtype;
  Shape shape;
  int64_t offset;   // into the persistent region
  const void *data; // host bytes: numel elements, or one when `splat`
  bool splat;
};

/// What the train step function reads besides its two regions.
struct StepContext {
  char *arena = nullptr;      // device pointer
  char *persistent = nullptr; // device pointer
  /// Steps taken before this one: keys the dropout RNG (CPU kernels read it
  /// here; CUDA kernels read `deviceStep`, which the harness updates before
  /// each launch so that a captured CUDA Graph stays valid).
  uint64_t step = 0;
  const uint64_t *deviceStep = nullptr;
  /// Index into ProgramSpec::ops of the op being executed, for messages: the
  /// step sets it before each op; the harness resets it to -1 before each
  /// step and names ops[currentOp] when the step throws.
  int currentOp = -1;
};

using TrainStepFn = void (*)(StepContext &);

struct ProgramSpec {
  const char *modelPath;  // the ONNX file the weights come from (--weights
                          // overrides; relative paths are from the cwd)
  Backend backend;
  const char *optimizer;  // sgd, adam, adamw (for messages)
  const char *precision = "fp32"; // fp32, bf16 or fp16 (--precision)
  const char *strategy;   // the plan's strategy
  int64_t arenaBytes;     // the plan's arena
  int64_t persistentBytes; // parameters + state + constants, 256-aligned
  int64_t workspaceBytes;  // runtime workspace the plan reserved
  int64_t plannedPeakBytes; // the plan's peak (persistent + arena + workspace)
  int64_t budgetBytes;      // --budget (0 without one)
  int64_t samplesPerStep;   // the batch size (leading dim of the first input)
  std::vector<ArgumentSpec> arguments;
  std::vector<ResultSpec> results;
  std::vector<ConstantSpec> constants;
  /// "remat.matmul at 'node'" per emitted op, indexed by currentOp.
  std::vector<const char *> ops;
  TrainStepFn trainStep;
};

/// The executable's main: parses the command line and runs training (see
/// runtime/harness/Harness.cpp for what it does, HarnessOptions.cpp for the
/// flags). Returns the exit status (0, or 1 after printing
/// `<program>: error: <message>` on stderr); never calls exit().
int harnessMain(int argc, char **argv, const ProgramSpec &program);

} // namespace remat::rt

#endif // REMAT_RUNTIME_PROGRAM_H
