//===- ToolSupport.h - remat-run's errors, files and number formatting -*- C++ -*-===//
//
// Small pieces every part of remat-run uses: the error type the tool reports
// as `remat-run: error: <message>`, exit codes, the backend-test file layout,
// element access for comparisons and printing, and timing.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TOOLS_REMAT_RUN_TOOLSUPPORT_H
#define REMAT_TOOLS_REMAT_RUN_TOOLSUPPORT_H

#include "remat/runtime/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

namespace remat::run {

/// Any failure the tool reports as `remat-run: error: <message>`.
struct ToolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A failure already reported as an MLIR diagnostic (a pass's error line):
/// the tool exits with kExitError without another line.
struct ReportedError : ToolError {
  using ToolError::ToolError;
};

/// Error diagnostics printed so far (by remat-run's diagnostic handler).
int &diagnosticErrorCount();

constexpr int kExitFail = 1;
constexpr int kExitError = 2;

/// DIR/<stem>_<i>.pb for i = 0, 1, ... while they exist.
std::vector<std::string> numberedFiles(const std::string &dir,
                                       const std::string &stem);

/// "f32 [2, 3]"-style description.
std::string describe(const rt::TensorView &view);

double elementAsDouble(const rt::TensorView &view, int64_t i);
int64_t elementAsInt(const rt::TensorView &view, int64_t i);

/// "%.6g".
std::string formatNumber(double value);

/// A function argument's or result's string attribute, or "".
std::string argString(mlir::func::FuncOp func, unsigned index,
                      llvm::StringRef attr);
std::string resultString(mlir::func::FuncOp func, unsigned index,
                         llvm::StringRef attr);

using Clock = std::chrono::steady_clock;
double millisecondsSince(Clock::time_point start);

} // namespace remat::run

#endif // REMAT_TOOLS_REMAT_RUN_TOOLSUPPORT_H
