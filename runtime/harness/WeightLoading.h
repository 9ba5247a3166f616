//===- WeightLoading.h - Parameters and buffers from the ONNX model -*- C++ -*-===//
//
// Generated code carries no weight data (nor does the IR): the executable
// reads the initializers of the ONNX model it was compiled from (or the one
// given with --weights) by name, checks each against the dtype and shape the
// plan assumed, and copies it into its persistent-region slot.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_HARNESS_WEIGHTLOADING_H
#define REMAT_RUNTIME_HARNESS_WEIGHTLOADING_H

#include "remat/runtime/Device.h"
#include "remat/runtime/Program.h"

#include "remat/runtime/OnnxWire.h"

#include <map>
#include <string>

namespace remat::rt::harness {

/// An ONNX model's initializers, by name.
struct WeightSource {
  std::string path; // for messages and --save-weights; empty if none
  std::string dir;  // external data is resolved relative to it
  bool loaded = false;
  wire::ModelFile model;
  std::map<std::string, const wire::TensorRecord *> initializers;
};

/// Reads and parses the model at `path`. Throws RuntimeError naming the file
/// when it cannot be read or is not an ONNX model.
void openWeightSource(const std::string &path, WeightSource &source);

struct WeightLoadCounts {
  int loaded = 0; // from initializers
  int random = 0; // --random-weights
};

/// Copies every `parameter` and `buffer` argument's initializer from
/// `source` (which may be unloaded) to `persistent + offset`. A missing
/// initializer is an error unless `randomWeights`: then a parameter is drawn
/// from N(0, 0.02) (a stream per name from the harness seed) and a buffer is
/// 1 if its name contains running_var or moving_var (a variance; 0 would be
/// degenerate) and 0 otherwise. Throws RuntimeError naming the tensor and
/// file on a dtype or shape mismatch or unreadable data.
WeightLoadCounts loadWeights(const ProgramSpec &program,
                             const WeightSource &source, bool randomWeights,
                             Device &device, char *persistent);

} // namespace remat::rt::harness

#endif // REMAT_RUNTIME_HARNESS_WEIGHTLOADING_H
