//===- WeightWriter.h - Write a model with trained initializers -*- C++ -*-===//
//
// `--save-weights OUT.onnx` of remat-run (the training executable calls
// wire::saveWeights directly, without the checker): the original model with its initializers replaced by the trained tensors, so
// that the result loads anywhere the original did (PyTorch, onnxruntime,
// remat itself).
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_WEIGHTWRITER_H
#define REMAT_RUNTIME_WEIGHTWRITER_H

#include "remat/runtime/TensorDump.h"

#include <string>

namespace remat::rt {

/// Writes a copy of the ONNX model at `modelPath` to `outPath` in which every
/// initializer named in `trained` holds that tensor, exactly as the training
/// executable's --save-weights does (wire::saveWeights: raw_data, name and
/// doc_string kept, other external data inlined from `modelDir`, every
/// other byte copied), then checks the file with onnx::checker. Throws
/// RuntimeError (messages start with "--save-weights: ") for a trained
/// tensor without an initializer or with another dtype, an I/O failure or a
/// checker failure.
void saveWeights(const std::string &modelPath, const std::string &modelDir,
                 const NamedTensors &trained, const std::string &outPath);

} // namespace remat::rt

#endif // REMAT_RUNTIME_WEIGHTWRITER_H
