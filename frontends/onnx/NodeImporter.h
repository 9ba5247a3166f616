//===- NodeImporter.h - Per-node access for op importers and folders -*- C++ -*-===//
//
// A NodeImporter wraps one ONNX node: checked access to its inputs (as SSA
// values or compile-time constants), attributes (with defaults and type
// checks), outputs, and errors that name the node. The shared parameter
// rules (Reshape's target shape, Slice normalisation, reduce axes, ...) live
// here so that the op importers and the constant folder agree.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_FRONTEND_ONNX_NODEIMPORTER_H
#define REMAT_FRONTEND_ONNX_NODEIMPORTER_H

#include "ImportContext.h"
#include "OnnxSchemas.h"

#include "llvm/ADT/StringMap.h"

namespace remat::onnximport {

class NodeImporter {
public:
  NodeImporter(ImportContext &ic, const onnx::NodeProto &node, int index);

  ImportContext &ic;
  const onnx::NodeProto &node;
  std::string label;      // "node 'name' (Op)" or "node #3 (Op)"
  std::string locName;    // name used in the location
  mlir::Location loc;
  mlir::OpBuilder &b;

  const std::string &opType() const { return node.op_type(); }

  /// Reports "error: FILE: node 'n' (Op): MSG"; returns failure.
  mlir::LogicalResult fail(const llvm::Twine &message);
  /// Reports an op-creation failure (type inference diagnostic).
  mlir::LogicalResult failCreate(llvm::StringRef what);

  // Inputs.
  int numInputs() const { return node.input_size(); }
  bool has(int i) const { return i < node.input_size() && !node.input(i).empty(); }
  const std::string &inName(int i) const { return node.input(i); }
  /// The SSA value of input i; reports an error (and returns null) if absent.
  mlir::Value in(int i, llvm::StringRef what);
  /// The value of input i if present, else null (no error).
  mlir::Value optIn(int i);
  /// Compile-time value of input i; error "input 'WHAT' must be known at
  /// compile time" if unknown. Null on error.
  const rt::Tensor *known(int i, llvm::StringRef what);
  /// Foldable constant of input i, or null.
  const rt::Tensor *foldable(int i);
  std::optional<TypeInfo> typeIn(int i);
  /// Shape of input i (error if absent).
  std::optional<rt::Shape> shapeIn(int i, llvm::StringRef what);
  /// Requires at least `min` inputs.
  mlir::LogicalResult requireInputs(int min);

  // Attributes.
  const onnx::AttributeProto *attr(llvm::StringRef name) const;
  bool hasAttr(llvm::StringRef name) const { return attr(name) != nullptr; }
  std::optional<int64_t> attrInt(llvm::StringRef name, int64_t def);
  std::optional<double> attrFloat(llvm::StringRef name, double def);
  std::optional<std::string> attrString(llvm::StringRef name,
                                        llvm::StringRef def);
  /// Ints attribute; `present` tells whether it was there.
  std::optional<std::vector<int64_t>> attrInts(llvm::StringRef name,
                                               bool *present = nullptr);

  // Outputs.
  int numOutputs() const { return node.output_size(); }
  bool hasOut(int i) const {
    return i < node.output_size() && !node.output(i).empty();
  }
  mlir::LogicalResult out(int i, mlir::Value value);
  void outConst(int i, rt::Tensor tensor, bool foldable = true);
  void outAlias(int i, const std::string &inputName);

  // Sequences (SequenceOpImporters.cpp), resolved at import.
  /// The sequence input i; reports an error (and returns null) if input i
  /// is absent or not a sequence.
  const SequenceValue *sequenceIn(int i, llvm::StringRef what);
  void outSequence(int i, SequenceValue sequence);
  /// Output i is `element`, an element of a sequence.
  void outElement(int i, const ValueEntry &element);

  /// Normalises an axis for `rank`; error if out of range.
  std::optional<int64_t> axis(int64_t axis, int64_t rank, llvm::StringRef what = "axis");
  /// Integer tensor values as int64 (I64/I32 only).
  std::optional<std::vector<int64_t>> ints(const rt::Tensor &t,
                                           llvm::StringRef what);

  // Shared parameter rules.
  std::optional<rt::Shape> reshapeTarget(const rt::Shape &in,
                                         const std::vector<int64_t> &shape,
                                         bool allowZero);
  std::optional<rt::Shape> unsqueezeShape(const rt::Shape &in,
                                          std::vector<int64_t> axes);
  std::optional<rt::Shape> squeezeShape(const rt::Shape &in,
                                        std::optional<std::vector<int64_t>> axes);
  std::optional<rt::Shape> flattenShape(const rt::Shape &in, int64_t axis);
  /// Sorted unique normalised axes.
  std::optional<std::vector<int64_t>> normAxes(std::vector<int64_t> axes,
                                               int64_t rank);
  struct SliceParams {
    std::vector<int64_t> starts, limits, steps;
    rt::Shape shape;
  };
  std::optional<SliceParams> sliceParams(const rt::Shape &in);
  /// Expand's result shape: broadcast(in, shape).
  std::optional<rt::Shape> expandShape(const rt::Shape &in, int shapeInput);
  /// Transpose permutation (default reverse).
  std::optional<std::vector<int64_t>> transposePerm(int64_t rank);
  /// Reduce axes (attribute or input by opset), sorted, unique; `noop` is set
  /// when the reduction is the identity (empty axes, noop_with_empty_axes).
  std::optional<std::vector<int64_t>> reduceAxes(int64_t rank, bool &noop);
  /// Split sizes along `axis` for `dim`.
  std::optional<std::vector<int64_t>> splitSizes(int64_t dim);
};

/// `v` reshaped to `shape` (itself when it has that shape already); null
/// after reporting the error.
mlir::Value reshapeTo(NodeImporter &n, mlir::Value v, llvm::ArrayRef<int64_t> shape);

/// An op importer: builds IR (or constants) for one node.
using OpHandler = mlir::LogicalResult (*)(NodeImporter &);

/// Op type -> importer, default ONNX domain (composedOpHandlers(),
/// indexingOpHandlers() and sequenceOpHandlers() included).
const llvm::StringMap<OpHandler> &opHandlers();

/// Op type -> importer for default-domain ops that import as a composition
/// of dialect ops (ComposedOpImporters.cpp).
const llvm::StringMap<OpHandler> &composedOpHandlers();

/// Op type -> importer for GatherND, ScatterND, Resize and Upsample
/// (IndexingOpImporters.cpp).
const llvm::StringMap<OpHandler> &indexingOpHandlers();

/// Op type -> importer for the sequence ops, which are resolved at import
/// (SequenceOpImporters.cpp).
const llvm::StringMap<OpHandler> &sequenceOpHandlers();

/// Op type -> importer, domain ai.onnx.preview.training
/// (TrainingOpImporters.cpp).
const llvm::StringMap<OpHandler> &trainingOpHandlers();

/// Tries to evaluate a node whose inputs are all known constants with the
/// runtime kernels. Returns nullopt if the op has no folder or the node
/// should not be folded (too large); throws rt::RuntimeError on kernel
/// errors; returns an empty optional after reporting an error via
/// `n.fail` (check ic.failed).
std::optional<std::vector<rt::Tensor>>
foldNode(NodeImporter &n, const std::vector<const rt::Tensor *> &inputs);

/// Ops whose results are always computed at import (no IR equivalent):
/// they fold regardless of size.
bool isImportTimeOnly(llvm::StringRef opType);

} // namespace remat::onnximport

#endif // REMAT_FRONTEND_ONNX_NODEIMPORTER_H
