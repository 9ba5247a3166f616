//===- OnnxWire.cpp - ONNX tensors and initializers without protobuf ------===//
//
// Field numbers are onnx.proto's (ModelProto.graph = 7, GraphProto.initializer
// = 5, TensorProto fields below); they are part of ONNX's file format and do
// not change.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/OnnxWire.h"

#include "ProtoWire.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace fs = std::filesystem;

namespace remat::rt::wire {
namespace {

// onnx.TensorProto.
enum TensorField : uint32_t {
  kDims = 1,
  kDataType = 2,
  kFloatData = 4,
  kInt32Data = 5,
  kInt64Data = 7,
  kName = 8,
  kRawData = 9,
  kDoubleData = 10,
  kDocString = 12,
  kExternalData = 13,
  kDataLocation = 14,
};
constexpr uint64_t kLocationExternal = 1;
constexpr uint32_t kModelGraph = 7;
constexpr uint32_t kGraphInitializer = 5;

// onnx.TensorProto.DataType.
enum OnnxType : int {
  kFloat = 1, kUint8 = 2, kInt8 = 3, kInt32 = 6, kInt64 = 7, kBool = 9,
  kFloat16 = 10, kDouble = 11, kBfloat16 = 16,
};

const char *onnxTypeName(int type) {
  static const char *const names[] = {
      "UNDEFINED", "FLOAT",      "UINT8",     "INT8",     "UINT16",
      "INT16",     "INT32",      "INT64",     "STRING",   "BOOL",
      "FLOAT16",   "DOUBLE",     "UINT32",    "UINT64",   "COMPLEX64",
      "COMPLEX128", "BFLOAT16",  "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ",
      "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4", "INT4", "FLOAT4E2M1"};
  if (type >= 0 && type < static_cast<int>(std::size(names)))
    return names[type];
  return "";
}

/// Resolves an external-data location inside `modelDir`, refusing escapes.
fs::path resolveExternal(const std::string &location,
                         const std::string &modelDir, const std::string &name) {
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

void readExternal(const TensorRecord &record, const std::string &modelDir,
                  Tensor &tensor) {
  const std::string &name = record.name;
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto &[key, value] : record.externalData) {
    if (key == "location")
      location = value;
    else if (key == "offset")
      offset = std::stoll(value);
    else if (key == "length")
      length = std::stoll(value);
  }
  if (location.empty())
    throw RuntimeError("tensor '" + name +
                       "' has external data without a location");
  const size_t bytes = tensor.bytes();
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
}

/// Every value of one typed repeated field: varints (int32_data,
/// int64_data; packed or one per field) or fixed-width (float_data,
/// double_data), converted to Dst as ONNX specifies (int32_data also holds
/// int8/uint8/bool/float16/bfloat16 bits).
template <typename Dst, typename Wide>
std::vector<Dst> typedValues(const std::vector<std::string_view> &chunks,
                             bool varint, const std::string &name) {
  std::vector<Dst> values;
  Reader reader({}, "tensor '" + name + "'");
  for (std::string_view chunk : chunks) {
    size_t pos = 0;
    while (pos < chunk.size()) {
      Wide wide;
      if (varint) {
        wide = static_cast<Wide>(reader.varintAt(chunk, pos));
      } else {
        if (chunk.size() - pos < sizeof(Wide))
          throw RuntimeError("tensor '" + name + "': truncated typed data");
        std::memcpy(&wide, chunk.data() + pos, sizeof(Wide));
        pos += sizeof(Wide);
      }
      values.push_back(static_cast<Dst>(wide));
    }
  }
  return values;
}

template <typename Dst, typename Wide>
void copyTyped(const std::vector<std::string_view> &chunks, bool varint,
               Tensor &tensor, const std::string &name) {
  std::vector<Dst> values = typedValues<Dst, Wide>(chunks, varint, name);
  if (static_cast<int64_t>(values.size()) != tensor.numel())
    throw RuntimeError("tensor '" + name + "' has " +
                       std::to_string(values.size()) + " values for shape " +
                       shapeToString(tensor.shape()));
  // An empty vector's data() may be null, which memcpy must not be given.
  if (!values.empty())
    std::memcpy(tensor.data(), values.data(), values.size() * sizeof(Dst));
}

std::string readFile(const std::string &path, const std::string &missing) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw RuntimeError(missing);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return std::move(buffer).str();
}

void writeFile(const std::string &path, const std::string &bytes,
               const std::string &failure) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out)
    throw RuntimeError(failure);
}

} // namespace

DType dtypeFromOnnx(int onnxDataType) {
  switch (onnxDataType) {
  case kFloat: return DType::F32;
  case kDouble: return DType::F64;
  case kFloat16: return DType::F16;
  case kBfloat16: return DType::BF16;
  case kInt64: return DType::I64;
  case kInt32: return DType::I32;
  case kInt8: return DType::I8;
  case kUint8: return DType::U8;
  case kBool: return DType::Bool;
  default: break;
  }
  throw RuntimeError("unsupported ONNX tensor data type " +
                     std::string(onnxTypeName(onnxDataType)) + " (" +
                     std::to_string(onnxDataType) + ")");
}

int dtypeToOnnx(DType dtype) {
  switch (dtype) {
  case DType::F32: return kFloat;
  case DType::F64: return kDouble;
  case DType::F16: return kFloat16;
  case DType::BF16: return kBfloat16;
  case DType::I64: return kInt64;
  case DType::I32: return kInt32;
  case DType::I8: return kInt8;
  case DType::U8: return kUint8;
  case DType::Bool: return kBool;
  }
  return 0;
}

TensorRecord parseTensor(std::string_view message, const std::string &what) {
  TensorRecord record;
  Reader reader(message, what);
  Field field;
  while (reader.next(field)) {
    switch (field.id) {
    case kDims:
      if (field.type == Bytes) { // packed
        for (size_t pos = 0; pos < field.bytes.size();)
          record.dims.push_back(
              static_cast<int64_t>(reader.varintAt(field.bytes, pos)));
      } else {
        record.dims.push_back(static_cast<int64_t>(field.number));
      }
      break;
    case kDataType: record.dataType = static_cast<int>(field.number); break;
    case kName: record.name = std::string(field.bytes); break;
    case kRawData:
      record.hasRawData = true;
      record.rawData = field.bytes;
      break;
    case kDocString: record.docString = field.bytes; break;
    case kDataLocation:
      record.external = field.number == kLocationExternal;
      break;
    case kExternalData: {
      std::pair<std::string, std::string> entry;
      Reader entryReader(field.bytes, what);
      Field kv;
      while (entryReader.next(kv)) {
        if (kv.id == 1)
          entry.first = std::string(kv.bytes);
        else if (kv.id == 2)
          entry.second = std::string(kv.bytes);
      }
      record.externalData.push_back(std::move(entry));
      break;
    }
    // Typed data: a packed run (Bytes) or one value per field (its encoding
    // after the key is the value itself).
    case kFloatData:
    case kDoubleData:
    case kInt32Data:
    case kInt64Data: {
      std::string_view value = field.bytes;
      if (field.type != Bytes) {
        const size_t keyBytes = field.id < 16 ? 1 : 2;
        value = field.encoded.substr(keyBytes);
      }
      auto &chunks = field.id == kFloatData    ? record.floatData
                     : field.id == kDoubleData ? record.doubleData
                     : field.id == kInt32Data  ? record.int32Data
                                               : record.int64Data;
      chunks.push_back(value);
      break;
    }
    default: break; // segment, string_data, uint64_data, metadata: unused
    }
  }
  return record;
}

Tensor decodeTensor(const TensorRecord &record, const std::string &modelDir) {
  const std::string &name = record.name;
  DType dtype = dtypeFromOnnx(record.dataType);
  for (int64_t d : record.dims)
    if (d < 0)
      throw RuntimeError("tensor '" + name + "' has a negative dim");
  Tensor tensor(dtype, record.dims);
  const size_t bytes = tensor.bytes();

  if (record.external) {
    readExternal(record, modelDir, tensor);
    return tensor;
  }
  if (record.hasRawData) {
    if (record.rawData.size() != bytes)
      throw RuntimeError("tensor '" + name + "' has " +
                         std::to_string(record.rawData.size()) +
                         " bytes of raw data, expected " +
                         std::to_string(bytes) + " for shape " +
                         shapeToString(record.dims));
    std::memcpy(tensor.data(), record.rawData.data(), bytes);
    return tensor;
  }
  switch (dtype) {
  case DType::F32:
    copyTyped<float, float>(record.floatData, false, tensor, name);
    break;
  case DType::F64:
    copyTyped<double, double>(record.doubleData, false, tensor, name);
    break;
  case DType::I64:
    copyTyped<int64_t, int64_t>(record.int64Data, true, tensor, name);
    break;
  case DType::I32:
    copyTyped<int32_t, int64_t>(record.int32Data, true, tensor, name);
    break;
  case DType::I8:
    copyTyped<int8_t, int64_t>(record.int32Data, true, tensor, name);
    break;
  case DType::U8:
  case DType::Bool:
    copyTyped<uint8_t, int64_t>(record.int32Data, true, tensor, name);
    break;
  case DType::F16:
  case DType::BF16:
    copyTyped<uint16_t, int64_t>(record.int32Data, true, tensor, name);
    break;
  }
  return tensor;
}

std::string encodeTensor(const TensorView &tensor, const std::string &name,
                         std::string_view docString) {
  std::string out;
  // Ascending field numbers, dims unpacked (onnx.proto is proto2), as
  // protobuf's serializer writes them.
  for (int64_t d : tensor.shape)
    putVarintField(out, kDims, static_cast<uint64_t>(d));
  putVarintField(out, kDataType, static_cast<uint64_t>(dtypeToOnnx(tensor.dtype)));
  putBytesField(out, kName, name);
  putBytesField(out, kRawData,
                std::string_view(static_cast<const char *>(tensor.data),
                                 tensor.bytes()));
  if (!docString.empty())
    putBytesField(out, kDocString, docString);
  return out;
}

Tensor readTensorFile(const std::string &path) {
  const std::string bytes = readFile(path, path + ": cannot open file");
  try {
    TensorRecord record = parseTensor(bytes, path);
    return decodeTensor(record, fs::path(path).parent_path().string());
  } catch (const RuntimeError &e) {
    const std::string what = e.what();
    if (what.rfind(path, 0) == 0)
      throw; // already names the file
    throw RuntimeError(path + ": " + what);
  }
}

void writeTensorFile(const std::string &path, const TensorView &tensor,
                     const std::string &name) {
  writeFile(path, encodeTensor(tensor, name), path + ": cannot write file");
}

void readModel(const std::string &path, ModelFile &model) {
  model.path = path;
  model.initializers.clear();
  model.bytes = readFile(path, "cannot open weights file '" + path + "'" +
                                   (fs::exists(path) ? "" : ": no such file"));
  const std::string notModel =
      "'" + path + "' is not an ONNX model (protobuf parse failed or no graph)";
  bool hasGraph = false;
  try {
    Reader reader(model.bytes, path);
    Field field;
    while (reader.next(field)) {
      if (field.id != kModelGraph || field.type != Bytes)
        continue;
      hasGraph = true;
      Reader graph(field.bytes, path);
      Field item;
      while (graph.next(item))
        if (item.id == kGraphInitializer && item.type == Bytes)
          model.initializers.push_back(parseTensor(item.bytes, path));
    }
  } catch (const RuntimeError &e) {
    throw RuntimeError(notModel + ": " + e.what());
  }
  if (!hasGraph)
    throw RuntimeError(notModel);
}

void saveWeights(const ModelFile &model, const std::string &modelDir,
                 const NamedTensors &trained, const std::string &outPath) {
  std::set<std::string> replaced;
  // One initializer as written: the trained tensor, the external data
  // inlined, or the original bytes.
  auto initializer = [&](const Field &item) -> std::string {
    TensorRecord record = parseTensor(item.bytes, model.path);
    if (auto it = trained.find(record.name); it != trained.end()) {
      if (dtypeToOnnx(it->second->dtype) != record.dataType)
        throw RuntimeError(
            "--save-weights: '" + record.name + "' is " +
            dtypeName(it->second->dtype) + " " +
            shapeToString(it->second->shape) +
            " after training but its initializer has ONNX type " +
            std::to_string(record.dataType));
      replaced.insert(record.name);
      return encodeTensor(*it->second, record.name, record.docString);
    }
    if (!record.external)
      return std::string(item.bytes);
    try {
      Tensor tensor = decodeTensor(record, modelDir);
      return encodeTensor(tensor.view(), record.name, record.docString);
    } catch (const std::exception &e) {
      throw RuntimeError("--save-weights: cannot inline external data of '" +
                         record.name + "': " + e.what());
    }
  };

  std::string out;
  Reader reader(model.bytes, model.path);
  Field field;
  while (reader.next(field)) {
    if (field.id != kModelGraph || field.type != Bytes) {
      out.append(field.encoded);
      continue;
    }
    std::string graph;
    Reader graphReader(field.bytes, model.path);
    Field item;
    while (graphReader.next(item)) {
      if (item.id == kGraphInitializer && item.type == Bytes)
        putBytesField(graph, kGraphInitializer, initializer(item));
      else
        graph.append(item.encoded);
    }
    putBytesField(out, kModelGraph, graph);
  }
  for (const auto &[name, view] : trained)
    if (!replaced.count(name))
      throw RuntimeError("--save-weights: '" + name +
                         "' was trained but is not an initializer of the "
                         "model (a graph input?); it cannot be written back");

  std::error_code ec;
  fs::path parent = fs::path(outPath).parent_path();
  if (!parent.empty())
    fs::create_directories(parent, ec);
  writeFile(outPath, out, "--save-weights: cannot write '" + outPath + "'");
}

} // namespace remat::rt::wire
