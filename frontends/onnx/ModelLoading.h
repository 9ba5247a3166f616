//===- ModelLoading.h - Read, check and shape-infer ONNX models -*- C++ -*-===//

#ifndef REMAT_FRONTEND_ONNX_MODELLOADING_H
#define REMAT_FRONTEND_ONNX_MODELLOADING_H

#include "remat/Frontend/OnnxImporter.h"

#include "onnx/onnx_pb.h"

#include <optional>
#include <string>
#include <vector>

namespace remat::onnximport {

/// True when the linked ONNX library knows every operator version the model
/// uses (so its checker and shape inference judge the model correctly).
bool libraryKnowsModel(const onnx::ModelProto &model);

/// `text` with control characters (ONNX's messages span lines) as spaces,
/// so that every error stays one line.
std::string oneLine(std::string text);

/// Runs ONNX shape inference in place; false with a one-line error.
bool inferShapes(onnx::ModelProto &model, std::string &error);

/// Checks an initializer's external data reference without reading it: the
/// location must stay inside `modelDir` and the file must hold the range.
bool checkExternalData(const onnx::TensorProto &tensor,
                       const std::string &modelDir, std::string &error);

/// The static shape of a tensor type, or nullopt if any dim is unknown.
std::optional<std::vector<int64_t>> staticShape(const onnx::TypeProto &type);

} // namespace remat::onnximport

#endif // REMAT_FRONTEND_ONNX_MODELLOADING_H
