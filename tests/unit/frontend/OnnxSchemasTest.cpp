//===- OnnxSchemasTest.cpp - Operator versions of current ONNX ------------===//

#include "OnnxSchemas.h"

#include <gtest/gtest.h>

using namespace remat::onnximport;

namespace {

onnx::NodeProto node(const std::string &op, int inputs, int outputs) {
  onnx::NodeProto n;
  n.set_op_type(op);
  for (int i = 0; i < inputs; ++i)
    n.add_input("in" + std::to_string(i));
  for (int i = 0; i < outputs; ++i)
    n.add_output("out" + std::to_string(i));
  return n;
}

void addInt(onnx::NodeProto &n, const std::string &name, int64_t value) {
  auto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

} // namespace

// Versions resolve by each operator's own history (ONNX's Changelog.md):
// ReduceMean changed at 1, 11, 13, 18; MatMul last at 13; Softmax at 13.
TEST(OnnxSchemas, ResolvesTheVersionInEffectAtAnOpset) {
  EXPECT_EQ(resolveOpVersion("", "ReduceMean", 17)->sinceVersion, 13);
  EXPECT_EQ(resolveOpVersion("", "ReduceMean", 18)->sinceVersion, 18);
  EXPECT_EQ(resolveOpVersion("ai.onnx", "ReduceMean", 23)->sinceVersion, 18);
  EXPECT_EQ(resolveOpVersion("", "MatMul", 23)->sinceVersion, 13);
  EXPECT_EQ(resolveOpVersion("", "Softmax", 12)->sinceVersion, 11);
  EXPECT_EQ(resolveOpVersion("", "RMSNormalization", 23)->sinceVersion, 23);
  EXPECT_EQ(resolveOpVersion("", "RMSNormalization", 22), nullptr);
  EXPECT_EQ(resolveOpVersion("", "NoSuchOp", 23), nullptr);
  EXPECT_EQ(resolveOpVersion("com.microsoft", "FusedMatMul", 1), nullptr);
  EXPECT_EQ(resolveOpVersion(kTrainingDomain, "Adam", 1)->sinceVersion, 1);
  EXPECT_GE(newestKnownOpset(), 23);
  EXPECT_GE(newestKnownIrVersion(), 10);
}

// The linked library (ONNX 1.12) has MatMul-13 and ReduceMean-13, not
// ReduceMean-18 or anything introduced after opset 17.
TEST(OnnxSchemas, KnowsWhichVersionsTheLinkedLibraryJudges) {
  EXPECT_TRUE(libraryHasVersion(*resolveOpVersion("", "MatMul", 23), 23));
  EXPECT_TRUE(libraryHasVersion(*resolveOpVersion("", "ReduceMean", 17), 17));
  EXPECT_FALSE(libraryHasVersion(*resolveOpVersion("", "ReduceMean", 18), 18));
  EXPECT_FALSE(libraryHasVersion(*resolveOpVersion("", "Gelu", 20), 20));
}

TEST(OnnxSchemas, ChecksCountsAndAttributes) {
  const OpSignature &mean18 = *resolveOpVersion("", "ReduceMean", 18);
  auto ok = node("ReduceMean", 2, 1);
  addInt(ok, "keepdims", 0);
  EXPECT_EQ(checkNodeSignature(ok, mean18), std::nullopt);

  auto tooMany = node("ReduceMean", 3, 1);
  EXPECT_EQ(checkNodeSignature(tooMany, mean18).value_or(""),
            "ReduceMean-18 takes 1 to 2 inputs, the node has 3");

  auto oldAxes = node("ReduceMean", 1, 1);
  auto *axes = oldAxes.add_attribute();
  axes->set_name("axes");
  axes->set_type(onnx::AttributeProto::INTS);
  axes->add_ints(0);
  EXPECT_EQ(checkNodeSignature(oldAxes, mean18).value_or(""),
            "ReduceMean-18 has no attribute 'axes'");

  auto wrongType = node("ReduceMean", 1, 1);
  auto *keep = wrongType.add_attribute();
  keep->set_name("keepdims");
  keep->set_type(onnx::AttributeProto::FLOAT);
  keep->set_f(1);
  EXPECT_EQ(checkNodeSignature(wrongType, mean18).value_or(""),
            "attribute 'keepdims' of ReduceMean-18 must be int, not float");

  // Trailing empty names are absent optional inputs.
  auto trailing = node("ReduceMean", 1, 1);
  trailing.add_input("");
  EXPECT_EQ(checkNodeSignature(trailing, mean18), std::nullopt);

  const OpSignature &cast = *resolveOpVersion("", "Cast", 23);
  EXPECT_EQ(checkNodeSignature(node("Cast", 1, 1), cast).value_or(""),
            "Cast-23 requires attribute 'to'");
}
