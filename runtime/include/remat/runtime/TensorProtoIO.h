//===- TensorProtoIO.h - ONNX TensorProto <-> runtime tensors ---*- C++ -*-===//
//
// Reads and writes tensors in the ONNX protobuf format: initializers
// (including external data), the backend-test `input_<i>.pb` files, and the
// trained weights written back into a model.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_TENSORPROTOIO_H
#define REMAT_RUNTIME_TENSORPROTOIO_H

#include "remat/runtime/Tensor.h"

#include <string>

namespace onnx {
class TensorProto;
} // namespace onnx

namespace remat::rt {

/// Maps an ONNX TensorProto data_type to a runtime dtype; throws
/// RuntimeError naming the type if the runtime has no equivalent.
DType dtypeFromOnnx(int onnxDataType);
int dtypeToOnnx(DType dtype);

/// Decodes a TensorProto (raw_data, the typed repeated fields, or external
/// data). External data locations are resolved relative to `modelDir`; a
/// location that is absolute or escapes `modelDir` (after resolving `..` and
/// symlinks) is refused with RuntimeError, as is a file too short for the
/// stated offset and length. `modelDir` may be empty when the tensor cannot
/// have external data (a standalone .pb file).
Tensor tensorFromProto(const onnx::TensorProto &proto,
                       const std::string &modelDir);

/// Encodes a tensor as raw little-endian data with dims and data_type.
void tensorToProto(const TensorView &tensor, const std::string &name,
                   onnx::TensorProto &proto);

/// Reads a file holding one serialized TensorProto.
void readTensorProtoFile(const std::string &path, onnx::TensorProto &proto);
Tensor readTensorFile(const std::string &path);
void writeTensorFile(const std::string &path, const TensorView &tensor,
                     const std::string &name);

} // namespace remat::rt

#endif // REMAT_RUNTIME_TENSORPROTOIO_H
