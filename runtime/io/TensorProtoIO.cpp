//===- TensorProtoIO.cpp - ONNX TensorProto <-> runtime tensors -----------===//

#include "remat/runtime/TensorProtoIO.h"

#include "remat/runtime/OnnxWire.h"

#include "onnx/onnx_pb.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace remat::rt {

DType dtypeFromOnnx(int onnxDataType) {
  return wire::dtypeFromOnnx(onnxDataType);
}

int dtypeToOnnx(DType dtype) { return wire::dtypeToOnnx(dtype); }

// One decoder for both paths: the protobuf message is re-serialized and read
// by the wire decoder the training executable uses, so that remat-run and
// the executable cannot disagree on a tensor.
Tensor tensorFromProto(const onnx::TensorProto &proto,
                       const std::string &modelDir) {
  const std::string bytes = proto.SerializeAsString();
  return wire::decodeTensor(wire::parseTensor(bytes, proto.name()), modelDir);
}

void tensorToProto(const TensorView &tensor, const std::string &name,
                   onnx::TensorProto &proto) {
  proto.Clear();
  proto.set_name(name);
  proto.set_data_type(dtypeToOnnx(tensor.dtype));
  for (int64_t d : tensor.shape)
    proto.add_dims(d);
  proto.set_raw_data(std::string(static_cast<const char *>(tensor.data),
                                 tensor.bytes()));
}

void readTensorProtoFile(const std::string &path, onnx::TensorProto &proto) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw RuntimeError(path + ": cannot open file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (!proto.ParseFromString(buffer.str()))
    throw RuntimeError(path + ": not a serialized onnx.TensorProto");
}

Tensor readTensorFile(const std::string &path) {
  onnx::TensorProto proto;
  readTensorProtoFile(path, proto);
  try {
    return tensorFromProto(proto, fs::path(path).parent_path().string());
  } catch (const RuntimeError &e) {
    throw RuntimeError(path + ": " + e.what());
  }
}

void writeTensorFile(const std::string &path, const TensorView &tensor,
                     const std::string &name) {
  onnx::TensorProto proto;
  tensorToProto(tensor, name, proto);
  std::ofstream out(path, std::ios::binary);
  if (!out || !proto.SerializeToOstream(&out))
    throw RuntimeError(path + ": cannot write file");
}

} // namespace remat::rt
