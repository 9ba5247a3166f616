//===- TrainStepEmitter.h - A planned @train_step as C++ or CUDA -*- C++ -*-===//
//
// Translates a memory-planned @train_step (remat-plan has run: ops carry
// remat.arena_offsets, the function remat.arena_bytes) into the source of a
// training executable: a ProgramSpec (runtime/include/remat/runtime/
// Program.h) describing the layout, and one function that is a straight-line
// sequence of runtime kernel calls at constant offsets into the arena and
// the persistent region. The CPU and CUDA sources differ only in the kernel
// namespace and in how the step counter reaches kernels that need it.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TARGET_CPP_TRAINSTEPEMITTER_H
#define REMAT_TARGET_CPP_TRAINSTEPEMITTER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

namespace remat {

enum class CodegenBackend { Cpu, Cuda };

struct TrainStepEmitOptions {
  CodegenBackend backend = CodegenBackend::Cpu;
  /// The ONNX file the executable loads weights from (absolute).
  std::string modelPath;
  std::string optimizer;
  std::string strategy;
  int64_t budgetBytes = 0;
  int64_t workspaceBytes = 0;
  /// The plan's peak (persistent + arena + workspace), for the executable's
  /// measured-vs-planned report.
  int64_t plannedPeakBytes = 0;
};

/// Writes the source of the training executable for `trainStep` (planned)
/// to `os`. `forward` (may be null) gives the graph-input order that maps
/// inputs to `input_<k>.pb` files. Fails with a diagnostic on the op that
/// cannot be translated (an op without a kernel, mixed-precision compute,
/// an unplanned function, an in-place update that would clobber a value
/// still needed).
mlir::LogicalResult emitTrainStepSource(mlir::func::FuncOp trainStep,
                                        mlir::func::FuncOp forward,
                                        const TrainStepEmitOptions &options,
                                        llvm::raw_ostream &os);

/// The CMakeLists.txt that builds `sourceFile` into executable `target`
/// against the installed runtime (`find_package(RematRuntime)`).
std::string emitCMakeProject(CodegenBackend backend,
                             const std::string &sourceFile,
                             const std::string &target);

/// The generated source's file name for a backend: train_step.cpp or .cu.
std::string sourceFileName(CodegenBackend backend);

} // namespace remat

#endif // REMAT_TARGET_CPP_TRAINSTEPEMITTER_H
