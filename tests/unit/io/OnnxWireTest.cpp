//===- OnnxWireTest.cpp - Wire-format ONNX I/O against protobuf ----------===//
//
// The training executable reads weights and batches with runtime/io's own
// wire-format decoder (OnnxWire.h). Here protobuf parses the same files and
// both must agree on every initializer and every TensorProto file in tests/,
// and what the wire encoder writes must be byte-identical to protobuf's
// serialization of the same message.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/OnnxWire.h"
#include "remat/runtime/TensorProtoIO.h"

#include "onnx/onnx_pb.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using namespace remat;

namespace {

std::vector<fs::path> filesUnderTests(const std::string &extension) {
  std::vector<fs::path> files;
  for (const auto &entry :
       fs::recursive_directory_iterator(REMAT_TESTS_DIR))
    if (entry.is_regular_file() && entry.path().extension() == extension)
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

/// The tensor's values as protobuf sees them: raw_data, or the typed field
/// narrowed to the dtype (independently of the wire decoder).
std::string protobufBytes(const onnx::TensorProto &proto, rt::DType dtype) {
  if (proto.has_raw_data())
    return proto.raw_data();
  std::string out;
  auto append = [&out](const void *p, size_t n) {
    out.append(static_cast<const char *>(p), n);
  };
  for (float v : proto.float_data())
    append(&v, sizeof v);
  for (double v : proto.double_data())
    append(&v, sizeof v);
  for (int64_t v : proto.int64_data())
    append(&v, sizeof v);
  for (int32_t v : proto.int32_data()) {
    const size_t width = rt::dtypeSize(dtype);
    append(&v, width); // little-endian: the low bytes narrow
  }
  return out;
}

void expectSameTensor(const onnx::TensorProto &proto,
                      const rt::wire::TensorRecord &record,
                      const rt::Tensor &decoded, const std::string &where) {
  EXPECT_EQ(record.name, proto.name()) << where;
  EXPECT_EQ(record.dataType, proto.data_type()) << where;
  EXPECT_EQ(record.dims, rt::Shape(proto.dims().begin(), proto.dims().end()))
      << where;
  EXPECT_EQ(record.external,
            proto.data_location() == onnx::TensorProto::EXTERNAL)
      << where;
  if (record.external)
    return; // external data: compared through the harness tests
  const std::string want = protobufBytes(proto, decoded.dtype());
  ASSERT_EQ(decoded.bytes(), want.size()) << where;
  EXPECT_EQ(std::memcmp(decoded.data(), want.data(), want.size()), 0) << where;
}

} // namespace

TEST(OnnxWire, EveryModelsInitializersMatchProtobuf) {
  int models = 0, tensors = 0;
  for (const fs::path &path : filesUnderTests(".onnx")) {
    onnx::ModelProto proto;
    std::ifstream in(path, std::ios::binary);
    if (!proto.ParseFromIstream(&in) || !proto.has_graph()) {
      // Deliberately broken fixtures: the wire reader must refuse them too.
      rt::wire::ModelFile model;
      EXPECT_THROW(rt::wire::readModel(path.string(), model), rt::RuntimeError)
          << path;
      continue;
    }
    rt::wire::ModelFile model;
    ASSERT_NO_THROW(rt::wire::readModel(path.string(), model)) << path;
    const auto &inits = proto.graph().initializer();
    ASSERT_EQ(static_cast<int>(model.initializers.size()), inits.size())
        << path;
    for (int i = 0; i < inits.size(); ++i) {
      const std::string where = path.string() + ": " + inits[i].name();
      rt::Tensor decoded;
      try {
        decoded = rt::wire::decodeTensor(model.initializers[i],
                                         path.parent_path().string());
      } catch (const rt::RuntimeError &e) {
        // A fixture of an unsupported type or an escaping location: refused
        // by protobuf-based decoding as well.
        EXPECT_THROW(rt::tensorFromProto(inits[i], path.parent_path().string()),
                     rt::RuntimeError)
            << where << ": " << e.what();
        continue;
      }
      expectSameTensor(inits[i], model.initializers[i], decoded, where);
      ++tensors;
    }
    ++models;
  }
  EXPECT_GT(models, 10);
  EXPECT_GT(tensors, 100);
}

TEST(OnnxWire, EveryTensorFileMatchesProtobuf) {
  int files = 0;
  for (const fs::path &path : filesUnderTests(".pb")) {
    onnx::TensorProto proto;
    {
      std::ifstream in(path, std::ios::binary);
      if (!proto.ParseFromIstream(&in))
        continue; // not a TensorProto (none today)
    }
    if (proto.data_type() == onnx::TensorProto::UNDEFINED)
      continue; // another message (e.g. a SequenceProto) that parses
    rt::Tensor decoded;
    try {
      decoded = rt::wire::readTensorFile(path.string());
    } catch (const rt::RuntimeError &e) {
      EXPECT_THROW(rt::readTensorFile(path.string()), rt::RuntimeError)
          << path << ": " << e.what();
      continue;
    }
    const std::string bytes = proto.SerializeAsString();
    expectSameTensor(proto, rt::wire::parseTensor(bytes, path.string()),
                     decoded, path.string());
    ++files;
  }
  EXPECT_GT(files, 100);
}

TEST(OnnxWire, EncodingIsProtobufsByteForByte) {
  float values[6] = {1, -2, 3.5f, 0, 1e-30f, -7};
  rt::TensorView view(rt::DType::F32, {2, 3}, values);
  onnx::TensorProto proto;
  rt::tensorToProto(view, "layer/0.weight", proto);
  EXPECT_EQ(rt::wire::encodeTensor(view, "layer/0.weight"),
            proto.SerializeAsString());
  proto.set_doc_string("kept");
  EXPECT_EQ(rt::wire::encodeTensor(view, "layer/0.weight", "kept"),
            proto.SerializeAsString());
  int64_t scalar = -5;
  rt::TensorView i64(rt::DType::I64, {}, &scalar);
  rt::tensorToProto(i64, "step", proto);
  EXPECT_EQ(rt::wire::encodeTensor(i64, "step"), proto.SerializeAsString());
}

TEST(OnnxWire, TypedFieldsPackedOrNotAndNegativeInts) {
  onnx::TensorProto proto;
  proto.set_name("t");
  proto.set_data_type(onnx::TensorProto::INT32);
  proto.add_dims(3);
  for (int v : {-1, 0, 2147483647})
    proto.add_int32_data(v);
  const std::string bytes = proto.SerializeAsString();
  rt::Tensor t = rt::wire::decodeTensor(rt::wire::parseTensor(bytes, "t"), "");
  EXPECT_EQ(t.as<int32_t>()[0], -1);
  EXPECT_EQ(t.as<int32_t>()[2], 2147483647);

  // Unpacked float_data (field 4, wire type 5), written by hand.
  std::string unpacked = "\x08\x02\x10\x01"; // dims 2, FLOAT
  for (float v : {0.5f, -3.0f}) {
    unpacked += '\x25';
    unpacked.append(reinterpret_cast<const char *>(&v), 4);
  }
  rt::Tensor f =
      rt::wire::decodeTensor(rt::wire::parseTensor(unpacked, "u"), "");
  EXPECT_EQ(f.as<float>()[0], 0.5f);
  EXPECT_EQ(f.as<float>()[1], -3.0f);
}

TEST(OnnxWire, MalformedInputIsOneErrorNamingTheFile) {
  const fs::path dir = fs::temp_directory_path() / "onnx-wire-test";
  fs::create_directories(dir);
  const std::string path = (dir / "truncated.pb").string();
  float v = 1;
  std::string bytes =
      rt::wire::encodeTensor(rt::TensorView(rt::DType::F32, {1}, &v), "x");
  std::ofstream(path, std::ios::binary).write(bytes.data(), bytes.size() - 2);
  try {
    rt::wire::readTensorFile(path);
    FAIL() << "a truncated file was read";
  } catch (const rt::RuntimeError &e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("malformed protobuf"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(rt::wire::readTensorFile((dir / "absent.pb").string()),
               rt::RuntimeError);
}

TEST(OnnxWire, SavedModelKeepsEverythingButTheTrainedInitializers) {
  for (const fs::path &path : filesUnderTests(".onnx")) {
    if (path.filename() != "model.onnx" ||
        path.string().find("mlp/loss") == std::string::npos)
      continue;
    rt::wire::ModelFile model;
    rt::wire::readModel(path.string(), model);
    ASSERT_FALSE(model.initializers.empty());
    const rt::wire::TensorRecord &first = model.initializers.front();
    rt::Tensor trained =
        rt::wire::decodeTensor(first, path.parent_path().string());
    std::memset(trained.data(), 0, trained.bytes());
    rt::TensorView view = trained.view();
    rt::NamedTensors named{{first.name, &view}};
    const fs::path out = fs::temp_directory_path() / "onnx-wire-test" / "s.onnx";
    rt::wire::saveWeights(model, path.parent_path().string(), named,
                          out.string());

    onnx::ModelProto original, saved;
    std::ifstream a(path, std::ios::binary), b(out, std::ios::binary);
    ASSERT_TRUE(original.ParseFromIstream(&a));
    ASSERT_TRUE(saved.ParseFromIstream(&b));
    EXPECT_EQ(saved.graph().node_size(), original.graph().node_size());
    EXPECT_EQ(saved.opset_import_size(), original.opset_import_size());
    ASSERT_EQ(saved.graph().initializer_size(),
              original.graph().initializer_size());
    for (int i = 0; i < saved.graph().initializer_size(); ++i) {
      const auto &s = saved.graph().initializer(i);
      const auto &o = original.graph().initializer(i);
      EXPECT_EQ(s.name(), o.name());
      if (i == 0)
        EXPECT_EQ(s.raw_data(), std::string(trained.bytes(), '\0'));
      else
        EXPECT_EQ(s.SerializeAsString(), o.SerializeAsString()) << s.name();
    }
    rt::NamedTensors unknown{{"not-an-initializer", &view}};
    EXPECT_THROW(rt::wire::saveWeights(model, path.parent_path().string(),
                                       unknown, out.string()),
                 rt::RuntimeError);
    return;
  }
  FAIL() << "no mlp/loss/model.onnx under tests/";
}
