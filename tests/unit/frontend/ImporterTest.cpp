//===- ImporterTest.cpp - The ONNX importer on in-memory models -----------===//
//
// remat-opt checks model files with the installed ONNX's checker, which
// (ONNX 1.12) rejects ops newer than opset 17, such as Pad-18 with its axes
// input. The importer follows the model's opset regardless; these tests
// build such models in memory and import them without the file checker.
//
//===----------------------------------------------------------------------===//

#include "remat/Frontend/OnnxImporter.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include "onnx/onnx_pb.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

/// A Constant node with an int64 tensor.
void addIntConstant(onnx::GraphProto &graph, const std::string &name,
                    const std::vector<int64_t> &values) {
  onnx::NodeProto *node = graph.add_node();
  node->set_op_type("Constant");
  node->set_name(name);
  node->add_output(name);
  onnx::AttributeProto *attr = node->add_attribute();
  attr->set_name("value");
  attr->set_type(onnx::AttributeProto::TENSOR);
  onnx::TensorProto *t = attr->mutable_t();
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values)
    t->add_int64_data(v);
}

/// x: float [2, 3, 4] -> Pad(x, pads, "", axes) at opset 18 -> y.
onnx::ModelProto padWithAxes(const std::vector<int64_t> &pads,
                             const std::vector<int64_t> &axes) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(18);
  onnx::GraphProto &graph = *model.mutable_graph();
  graph.set_name("pad_axes");
  onnx::ValueInfoProto *x = graph.add_input();
  x->set_name("x");
  auto *xt = x->mutable_type()->mutable_tensor_type();
  xt->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {2, 3, 4})
    xt->mutable_shape()->add_dim()->set_dim_value(d);
  addIntConstant(graph, "pads", pads);
  addIntConstant(graph, "axes", axes);
  onnx::NodeProto *pad = graph.add_node();
  pad->set_op_type("Pad");
  pad->set_name("pad");
  for (const char *in : {"x", "pads", "", "axes"})
    pad->add_input(in);
  pad->add_output("y");
  onnx::ValueInfoProto *y = graph.add_output();
  y->set_name("y");
  y->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::FLOAT);
  return model;
}

/// The imported module as text, or "" when the import failed.
std::string import(const onnx::ModelProto &model) {
  mlir::MLIRContext context;
  remat::OnnxImportOptions options;
  auto module = remat::importOnnxModel(context, model, "in-memory.onnx",
                                       options);
  if (!module)
    return "";
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  return text;
}

TEST(ImporterTest, PadAxesExpandToEveryDim) {
  // pads [begin(axis 2), begin(axis 0), end(axis 2), end(axis 0)].
  std::string text = import(padWithAxes({1, 0, 2, 3}, {-1, 0}));
  EXPECT_NE(text.find("remat.pad %arg0 {pads = array<i64: 0, 0, 1, 3, 0, 2>} "
                      ": (tensor<2x3x4xf32>) -> tensor<5x3x7xf32>"),
            std::string::npos)
      << text;
}

/// The import's error output (it must fail).
std::string importError(const onnx::ModelProto &model) {
  testing::internal::CaptureStderr();
  std::string text = import(model);
  llvm::errs().flush();
  std::string error = testing::internal::GetCapturedStderr();
  EXPECT_EQ(text, "");
  return error;
}

TEST(ImporterTest, PadAxesErrors) {
  EXPECT_NE(importError(padWithAxes({1, 1, 1, 1}, {1, -2}))
                .find("node 'pad' (Pad): axes names dim 1 twice"),
            std::string::npos);
  EXPECT_NE(importError(padWithAxes({1, 1, 1}, {1}))
                .find("pads has 3 entries, expected 2 (two per axis)"),
            std::string::npos);
  EXPECT_NE(importError(padWithAxes({1, 1}, {3}))
                .find("axes entry 3 is out of range for rank 3"),
            std::string::npos);
}

} // namespace
