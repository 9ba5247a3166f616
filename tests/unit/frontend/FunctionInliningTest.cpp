//===- FunctionInliningTest.cpp - Inline model-local ONNX functions -------===//

#include "FunctionInlining.h"

#include <gtest/gtest.h>

using namespace remat::onnximport;

namespace {

onnx::NodeProto makeNode(const std::string &op, std::vector<std::string> inputs,
                         std::vector<std::string> outputs,
                         const std::string &domain = "") {
  onnx::NodeProto n;
  n.set_op_type(op);
  n.set_domain(domain);
  for (auto &i : inputs)
    n.add_input(i);
  for (auto &o : outputs)
    n.add_output(o);
  return n;
}

/// A model `x -> F(x) -> y` with function pkg.F (x -> Relu -> t -> Neg -> y).
onnx::ModelProto modelWithFunction() {
  onnx::ModelProto m;
  m.set_ir_version(10);
  auto *opset = m.add_opset_import();
  opset->set_version(18);
  auto *g = m.mutable_graph();
  g->add_input()->set_name("x");
  g->add_output()->set_name("y");
  *g->add_node() = makeNode("F", {"x"}, {"t"}, "pkg");
  *g->add_node() = makeNode("F", {"t"}, {"y"}, "pkg");
  auto *f = m.add_functions();
  f->set_name("F");
  f->set_domain("pkg");
  f->add_input("a");
  f->add_output("b");
  auto *fo = f->add_opset_import();
  fo->set_version(18);
  *f->add_node() = makeNode("Relu", {"a"}, {"t"});
  *f->add_node() = makeNode("Neg", {"t"}, {"b"});
  return m;
}

} // namespace

// Each call gets its own internal names, apart from the graph's own 't'.
TEST(FunctionInlining, RenamesEachCallApart) {
  auto m = modelWithFunction();
  std::string error;
  ASSERT_TRUE(inlineLocalFunctions(m, error)) << error;
  EXPECT_EQ(m.functions_size(), 0);
  const auto &g = m.graph();
  ASSERT_EQ(g.node_size(), 4);
  EXPECT_EQ(g.node(0).op_type(), "Relu");
  EXPECT_EQ(g.node(0).input(0), "x");
  EXPECT_EQ(g.node(1).output(0), "t");
  EXPECT_EQ(g.node(2).input(0), "t");
  EXPECT_EQ(g.node(3).output(0), "y");
  std::set<std::string> internal = {g.node(0).output(0), g.node(2).output(0)};
  EXPECT_EQ(internal.size(), 2u);
  EXPECT_FALSE(internal.count("t"));
  EXPECT_EQ(g.node(0).output(0), g.node(1).input(0));
  EXPECT_EQ(g.node(2).output(0), g.node(3).input(0));
}

TEST(FunctionInlining, RefusesCallsThatDoNotFit) {
  auto m = modelWithFunction();
  m.mutable_graph()->mutable_node(0)->add_input("x");
  std::string error;
  EXPECT_FALSE(inlineLocalFunctions(m, error));
  EXPECT_NE(error.find("passes 2 inputs and 1 outputs to a function of 1 inputs"),
            std::string::npos)
      << error;

  m = modelWithFunction();
  auto *attr = m.mutable_graph()->mutable_node(0)->add_attribute();
  attr->set_name("alpha");
  attr->set_type(onnx::AttributeProto::FLOAT);
  EXPECT_FALSE(inlineLocalFunctions(m, error));
  EXPECT_NE(error.find("attribute 'alpha' is not a parameter of the function"),
            std::string::npos)
      << error;

  m = modelWithFunction();
  *m.add_functions() = m.functions(0);
  EXPECT_FALSE(inlineLocalFunctions(m, error));
  EXPECT_EQ(error, "model-local function pkg.F is defined twice");
}

// Mutual recursion through two functions is found, not followed forever.
TEST(FunctionInlining, RefusesMutualRecursion) {
  auto m = modelWithFunction();
  auto *f = m.mutable_functions(0);
  *f->mutable_node(1) = makeNode("G", {"t"}, {"b"}, "pkg");
  auto *g = m.add_functions();
  g->set_name("G");
  g->set_domain("pkg");
  g->add_input("a");
  g->add_output("b");
  *g->add_node() = makeNode("F", {"a"}, {"b"}, "pkg");
  std::string error;
  EXPECT_FALSE(inlineLocalFunctions(m, error));
  EXPECT_EQ(error, "model-local function pkg.F calls itself "
                   "(pkg.F -> pkg.G -> pkg.F)");
}

// A chain of functions each calling the next twice would grow to 2^40 nodes.
TEST(FunctionInlining, RefusesRunawayGrowth) {
  onnx::ModelProto m;
  m.add_opset_import()->set_version(18);
  *m.mutable_graph()->add_node() = makeNode("F0", {"x"}, {"y"}, "pkg");
  for (int i = 0; i < 40; ++i) {
    auto *f = m.add_functions();
    f->set_name("F" + std::to_string(i));
    f->set_domain("pkg");
    f->add_input("a");
    f->add_output("b");
    std::string callee = i < 39 ? "F" + std::to_string(i + 1) : "Relu";
    std::string domain = i < 39 ? "pkg" : "";
    *f->add_node() = makeNode(callee, {"a"}, {"m"}, domain);
    *f->add_node() = makeNode(callee, {"m"}, {"b"}, domain);
  }
  std::string error;
  EXPECT_FALSE(inlineLocalFunctions(m, error));
  EXPECT_NE(error.find("gives more than"), std::string::npos) << error;
}
