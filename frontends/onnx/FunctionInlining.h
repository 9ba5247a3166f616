//===- FunctionInlining.h - Inline model-local ONNX functions ---*- C++ -*-===//
//
// PyTorch's dynamo exporter (and onnxscript) write parts of a model as
// model-local functions (ModelProto.functions, IR version 8 and later). The
// importer works on one flat graph, so every call of such a function is
// replaced by the function's body, with the body's internal values renamed
// apart from every other name in the model and attribute references bound
// to the caller's attributes (or the function's defaults).
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_FRONTEND_ONNX_FUNCTIONINLINING_H
#define REMAT_FRONTEND_ONNX_FUNCTIONINLINING_H

#include "onnx/onnx_pb.h"

#include <string>

namespace remat::onnximport {

/// Inlines every call of a model-local function into the main graph and
/// drops the functions. False with a one-line error that names the function
/// (and the node) for a recursive function, a call that does not fit its
/// function's signature, an opset conflict or a model that would grow
/// beyond a sane size.
bool inlineLocalFunctions(onnx::ModelProto &model, std::string &error);

} // namespace remat::onnximport

#endif // REMAT_FRONTEND_ONNX_FUNCTIONINLINING_H
