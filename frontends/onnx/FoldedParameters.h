//===- FoldedParameters.h - Spot weights an exporter folded away -*- C++ -*-===//
//
// PyTorch's exporters fold parameters into constants by default (the dynamo
// exporter's optimize=True, the TorchScript exporter's
// do_constant_folding=True): a Linear's transposed weight becomes a new
// initializer, a BatchNormalization is fused into the convolution before
// it. Such a graph imports and runs, but training it cannot update the
// model's own parameters. The importer cannot tell such constants from real
// ones in general; this recognises the names and patterns the exporters
// leave, to warn the user.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_FRONTEND_ONNX_FOLDEDPARAMETERS_H
#define REMAT_FRONTEND_ONNX_FOLDEDPARAMETERS_H

#include "onnx/onnx_pb.h"

#include <optional>
#include <string>

namespace remat::onnximport {

/// One line saying which weights of `graph` look exporter-folded and how to
/// export without folding, or nullopt when none do.
std::optional<std::string> foldedParameterWarning(const onnx::GraphProto &graph);

} // namespace remat::onnximport

#endif // REMAT_FRONTEND_ONNX_FOLDEDPARAMETERS_H
