//===- LinearModel.h - The hand-written program the harness tests run -*- C++ -*-===//
//
// A tiny linear regression, loss = mean((x . w - y)^2), trained with plain
// SGD, plus a buffer updated like BatchNorm's running statistics,
// running_var = kDecay * running_var + (1 - kDecay) * loss (so that loading,
// updating, dumping and saving buffers is tested too): what remat-opt
// --emit=cpp would produce for such a model, written by hand
// (LinearProgram.cpp) so that the harness is tested without the compiler.
// The test (HarnessTest.cpp) recomputes the same steps in float64.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TESTS_UNIT_HARNESS_LINEARMODEL_H
#define REMAT_TESTS_UNIT_HARNESS_LINEARMODEL_H

#include <cstdint>

namespace remat::test {

constexpr int64_t kBatch = 8;    // x [kBatch, kFeatures], y [kBatch, 1]
constexpr int64_t kFeatures = 4; // w [kFeatures, 1], the one parameter
constexpr double kLearningRate = 0.1;
constexpr double kDecay = 0.5; // of the running_var buffer ([1], f32)

/// The model file the program was "compiled from": relative, so that a test
/// that runs the executable in a directory holding it tests the default.
constexpr const char *kDefaultModelPath = "linear.onnx";

} // namespace remat::test

#endif // REMAT_TESTS_UNIT_HARNESS_LINEARMODEL_H
