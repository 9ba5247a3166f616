//===- OnnxWire.h - ONNX tensors and initializers without protobuf -*- C++ -*-===//
//
// The training executable reads its weights from an ONNX model, its batches
// from TensorProto files, and writes TensorProto dumps and trained models.
// This is that I/O decoded and encoded on protobuf's wire format directly
// (runtime/io/ProtoWire.h), so that the executable and the runtime need
// nothing beyond the C++ standard library (and the CUDA toolkit): a machine
// with a GPU but without protobuf or ONNX can build them. remat-run and the
// importer keep using protobuf (TensorProtoIO.h); the unit tests check that
// both read every fixture alike.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_ONNXWIRE_H
#define REMAT_RUNTIME_ONNXWIRE_H

#include "remat/runtime/TensorDump.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace remat::rt::wire {

/// Maps an ONNX TensorProto data_type to a runtime dtype; throws
/// RuntimeError naming the type if the runtime has no equivalent.
DType dtypeFromOnnx(int onnxDataType);
int dtypeToOnnx(DType dtype);

/// One serialized onnx.TensorProto: its header, and views of its data into
/// the buffer it was parsed from (which must outlive it).
struct TensorRecord {
  std::string name;
  int dataType = 0;
  Shape dims;
  bool external = false; // data_location == EXTERNAL
  std::vector<std::pair<std::string, std::string>> externalData;
  bool hasRawData = false;
  std::string_view rawData;
  std::string_view docString;
  // The typed repeated fields (packed or not), as encoded.
  std::vector<std::string_view> floatData, doubleData, int32Data, int64Data;
};

/// Parses one TensorProto message; `what` starts error messages.
TensorRecord parseTensor(std::string_view message, const std::string &what);

/// Decodes the tensor's values (raw_data, the typed fields, or external data
/// resolved inside `modelDir`: absolute locations and escapes are refused,
/// as is a file too short for the stated offset and length). Messages name
/// the tensor.
Tensor decodeTensor(const TensorRecord &record, const std::string &modelDir);

/// Encodes a tensor as TensorProto dims, data_type, name, raw_data (and
/// doc_string when not empty), byte-identical to protobuf's serialization of
/// the same message.
std::string encodeTensor(const TensorView &tensor, const std::string &name,
                         std::string_view docString = {});

/// Files holding one serialized TensorProto (`input_<i>.pb`, dumps).
Tensor readTensorFile(const std::string &path);
void writeTensorFile(const std::string &path, const TensorView &tensor,
                     const std::string &name);

/// An ONNX model file's bytes and its graph's initializers (views into
/// them). Not copyable: the records point into `bytes`.
struct ModelFile {
  ModelFile() = default;
  ModelFile(const ModelFile &) = delete;
  ModelFile &operator=(const ModelFile &) = delete;

  std::string path;
  std::string bytes;
  std::vector<TensorRecord> initializers;
};

/// Reads the model at `path` into `model`. Throws RuntimeError naming the
/// file when it cannot be read or is not an ONNX model with a graph.
void readModel(const std::string &path, ModelFile &model);

/// `--save-weights OUT.onnx`: writes a copy of `model` in which every
/// initializer named in `trained` holds that tensor (raw_data; name and
/// doc_string kept) and every other initializer stored as external data is
/// inlined (read relative to `modelDir`), so that the file stands alone;
/// every other byte of the model is copied as it was. Throws RuntimeError
/// (messages start with "--save-weights: ") for a trained tensor without an
/// initializer or with another dtype, or an I/O failure.
void saveWeights(const ModelFile &model, const std::string &modelDir,
                 const NamedTensors &trained, const std::string &outPath);

} // namespace remat::rt::wire

#endif // REMAT_RUNTIME_ONNXWIRE_H
