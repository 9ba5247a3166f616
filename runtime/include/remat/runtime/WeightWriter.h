//===- WeightWriter.h - Write a model with trained initializers -*- C++ -*-===//
//
// `--save-weights OUT.onnx` of remat-run and of the training executable: the
// original model with its initializers replaced by the trained tensors, so
// that the result loads anywhere the original did (PyTorch, onnxruntime,
// remat itself).
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_WEIGHTWRITER_H
#define REMAT_RUNTIME_WEIGHTWRITER_H

#include "remat/runtime/TensorDump.h"

#include <string>

namespace onnx {
class ModelProto;
} // namespace onnx

namespace remat::rt {

/// Writes a copy of `model` to `outPath` in which every initializer named in
/// `trained` holds that tensor (raw_data; name and doc_string kept) and every
/// other initializer stored as external data is inlined (read relative to
/// `modelDir`), so the written file stands alone. The file is then checked
/// with onnx::checker. Throws RuntimeError (messages start with
/// "--save-weights: ") for a trained tensor without an initializer or with
/// another dtype, an I/O failure or a checker failure.
void saveWeights(const onnx::ModelProto &model, const std::string &modelDir,
                 const NamedTensors &trained, const std::string &outPath);

} // namespace remat::rt

#endif // REMAT_RUNTIME_WEIGHTWRITER_H
