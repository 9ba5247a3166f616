//===- TensorProtoIO.cpp - ONNX TensorProto <-> runtime tensors -----------===//

#include "remat/runtime/TensorProtoIO.h"

#include "onnx/onnx_pb.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace remat::rt {

DType dtypeFromOnnx(int onnxDataType) {
  using TP = onnx::TensorProto;
  switch (onnxDataType) {
  case TP::FLOAT: return DType::F32;
  case TP::DOUBLE: return DType::F64;
  case TP::FLOAT16: return DType::F16;
  case TP::BFLOAT16: return DType::BF16;
  case TP::INT64: return DType::I64;
  case TP::INT32: return DType::I32;
  case TP::INT8: return DType::I8;
  case TP::UINT8: return DType::U8;
  case TP::BOOL: return DType::Bool;
  default: break;
  }
  throw RuntimeError("unsupported ONNX tensor data type " +
                     std::string(TP::DataType_Name(
                         static_cast<TP::DataType>(onnxDataType))) +
                     " (" + std::to_string(onnxDataType) + ")");
}

int dtypeToOnnx(DType dtype) {
  using TP = onnx::TensorProto;
  switch (dtype) {
  case DType::F32: return TP::FLOAT;
  case DType::F64: return TP::DOUBLE;
  case DType::F16: return TP::FLOAT16;
  case DType::BF16: return TP::BFLOAT16;
  case DType::I64: return TP::INT64;
  case DType::I32: return TP::INT32;
  case DType::I8: return TP::INT8;
  case DType::U8: return TP::UINT8;
  case DType::Bool: return TP::BOOL;
  }
  return TP::UNDEFINED;
}

/// Copies a repeated typed field into the tensor, narrowing as ONNX
/// specifies (int32_data also holds int8/uint8/bool/float16/bfloat16 bits).
template <typename Dst, typename Field>
static void copyField(const Field &field, Tensor &tensor,
                      const std::string &name) {
  if (static_cast<int64_t>(field.size()) != tensor.numel())
    throw RuntimeError("tensor '" + name + "' has " +
                       std::to_string(field.size()) + " values for shape " +
                       shapeToString(tensor.shape()));
  Dst *out = tensor.as<Dst>();
  for (int i = 0; i < field.size(); ++i)
    out[i] = static_cast<Dst>(field.Get(i));
}

/// Resolves an external-data location inside `modelDir`, refusing escapes.
static fs::path resolveExternal(const std::string &location,
                                const std::string &modelDir,
                                const std::string &name) {
  if (modelDir.empty())
    throw RuntimeError("tensor '" + name +
                       "' refers to external data but has no model directory");
  fs::path rel(location);
  if (rel.is_absolute())
    throw RuntimeError("tensor '" + name + "': external data location '" +
                       location + "' is absolute; only paths inside the "
                       "model's directory are allowed");
  std::error_code ec;
  fs::path base = fs::weakly_canonical(fs::path(modelDir), ec);
  fs::path full = fs::weakly_canonical(base / rel, ec);
  auto [baseEnd, fullIt] =
      std::mismatch(base.begin(), base.end(), full.begin(), full.end());
  if (ec || baseEnd != base.end())
    throw RuntimeError("tensor '" + name + "': external data location '" +
                       location + "' escapes the model's directory");
  if (!fs::is_regular_file(full))
    throw RuntimeError("tensor '" + name + "': external data file '" +
                       location + "' not found next to the model");
  return full;
}

Tensor tensorFromProto(const onnx::TensorProto &proto,
                       const std::string &modelDir) {
  const std::string &name = proto.name();
  DType dtype = dtypeFromOnnx(proto.data_type());
  Shape shape(proto.dims().begin(), proto.dims().end());
  for (int64_t d : shape)
    if (d < 0)
      throw RuntimeError("tensor '" + name + "' has a negative dim");
  Tensor tensor(dtype, shape);
  size_t bytes = tensor.bytes();

  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    std::string location;
    int64_t offset = 0, length = -1;
    for (const auto &entry : proto.external_data()) {
      if (entry.key() == "location")
        location = entry.value();
      else if (entry.key() == "offset")
        offset = std::stoll(entry.value());
      else if (entry.key() == "length")
        length = std::stoll(entry.value());
    }
    if (location.empty())
      throw RuntimeError("tensor '" + name +
                         "' has external data without a location");
    fs::path file = resolveExternal(location, modelDir, name);
    if (length >= 0 && static_cast<size_t>(length) != bytes)
      throw RuntimeError("tensor '" + name + "': external data length " +
                         std::to_string(length) + " does not match " +
                         std::to_string(bytes) + " bytes of its shape");
    std::ifstream in(file, std::ios::binary);
    in.seekg(0, std::ios::end);
    int64_t fileSize = in.tellg();
    if (offset < 0 || offset + static_cast<int64_t>(bytes) > fileSize)
      throw RuntimeError("tensor '" + name + "': external data file '" +
                         location + "' is too short (" +
                         std::to_string(fileSize) + " bytes, need " +
                         std::to_string(offset + bytes) + ")");
    in.seekg(offset);
    in.read(static_cast<char *>(tensor.data()), bytes);
    return tensor;
  }

  if (proto.has_raw_data()) {
    if (proto.raw_data().size() != bytes)
      throw RuntimeError("tensor '" + name + "' has " +
                         std::to_string(proto.raw_data().size()) +
                         " bytes of raw data, expected " +
                         std::to_string(bytes) + " for shape " +
                         shapeToString(shape));
    std::memcpy(tensor.data(), proto.raw_data().data(), bytes);
    return tensor;
  }

  switch (dtype) {
  case DType::F32: copyField<float>(proto.float_data(), tensor, name); break;
  case DType::F64: copyField<double>(proto.double_data(), tensor, name); break;
  case DType::I64: copyField<int64_t>(proto.int64_data(), tensor, name); break;
  case DType::I32: copyField<int32_t>(proto.int32_data(), tensor, name); break;
  case DType::I8: copyField<int8_t>(proto.int32_data(), tensor, name); break;
  case DType::U8: copyField<uint8_t>(proto.int32_data(), tensor, name); break;
  case DType::Bool: copyField<uint8_t>(proto.int32_data(), tensor, name); break;
  case DType::F16:
  case DType::BF16: copyField<uint16_t>(proto.int32_data(), tensor, name); break;
  }
  return tensor;
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
