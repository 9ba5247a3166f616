//===- WeightWriter.h - Write a model with trained initializers -*- C++ -*-===//

#ifndef REMAT_TOOLS_REMAT_RUN_WEIGHTWRITER_H
#define REMAT_TOOLS_REMAT_RUN_WEIGHTWRITER_H

#include "TensorChecks.h"

#include "onnx/onnx_pb.h"

#include <string>

namespace remat::run {

/// Writes a copy of `model` to `outPath` in which every initializer named in
/// `trained` holds that tensor (raw_data; name and doc_string kept) and every
/// other initializer stored as external data is inlined (read relative to
/// `modelDir`). The written file is then checked with onnx::checker. Throws
/// ToolError for a trained tensor without an initializer, an I/O failure or a
/// checker failure.
void saveWeights(const onnx::ModelProto &model, const std::string &modelDir,
                 const NamedTensors &trained, const std::string &outPath);

} // namespace remat::run

#endif // REMAT_TOOLS_REMAT_RUN_WEIGHTWRITER_H
