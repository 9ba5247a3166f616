//===- SequenceOpImporters.cpp - ONNX sequence ops, resolved at import -----===//
//
// The dialect has no sequence type: an ONNX sequence is resolved while
// importing, as a list of the importer's tensor entries (SSA values or
// compile-time constants; SequenceValue in ImportContext.h). SplitToSequence
// becomes a split, SequenceAt picks an element, ConcatFromSequence a concat,
// and the list operations (SequenceConstruct, SequenceEmpty, SequenceInsert,
// SequenceErase, SequenceLength) only edit the list. So every position must
// be a compile-time value, and a sequence can be neither a graph input nor
// a graph output; either is a one-line error naming the node.
//
// Exporters write these for Python lists of tensors: the dynamo exporter's
// `torch.split` (gpt2's qkv split) is SplitToSequence + SequenceAt.
//
//===----------------------------------------------------------------------===//

#include "NodeImporter.h"

#include "remat/Dialect/RematOps.h"
#include "remat/runtime/Kernels.h"

using namespace mlir;

namespace remat::onnximport {
namespace {

RankedTensorType typeOf(Value v) { return llvm::cast<RankedTensorType>(v.getType()); }

/// A compile-time position into a sequence of `size` elements, normalised;
/// `end` allows `size` itself (an insertion point).
std::optional<int64_t> position(NodeImporter &n, int i, int64_t size,
                                bool end) {
  const ValueEntry *entry = n.ic.lookup(n.inName(i));
  const rt::Tensor *t = nullptr;
  if (entry && !entry->sequence)
    t = n.ic.constant(n.inName(i), /*required=*/true);
  if (!t) {
    (void)n.fail("input 'position' ('" + n.inName(i) +
                 "') must be known at compile time: sequences are resolved "
                 "at import, so their positions must be constants");
    return std::nullopt;
  }
  auto values = n.ints(*t, "position");
  if (!values)
    return std::nullopt;
  if (values->size() != 1) {
    (void)n.fail("input 'position' must hold one value, got " +
                 Twine(values->size()));
    return std::nullopt;
  }
  int64_t p = values->front();
  const int64_t limit = end ? size : size - 1;
  if (p < -size || p > limit) {
    (void)n.fail("position " + Twine(p) + " is out of range for a sequence "
                 "of " + Twine(size) + " elements");
    return std::nullopt;
  }
  return p < 0 ? p + size : p;
}

/// The entry of tensor input i, as a sequence element.
std::optional<ValueEntry> elementIn(NodeImporter &n, int i,
                                    StringRef what) {
  if (!n.has(i)) {
    (void)n.fail("missing input '" + what + "'");
    return std::nullopt;
  }
  const ValueEntry *entry = n.ic.lookup(n.inName(i));
  if (!entry) {
    (void)n.fail("input '" + what + "' ('" + n.inName(i) +
                 "') is not defined");
    return std::nullopt;
  }
  if (entry->sequence) {
    (void)n.fail("input '" + what + "' ('" + n.inName(i) +
                 "') is a sequence; sequences of sequences are not "
                 "supported");
    return std::nullopt;
  }
  ValueEntry element = *entry;
  element.argIndex = -1;
  return element;
}

/// The element type of a tensor entry.
std::optional<rt::DType> dtypeOf(NodeImporter &n, int i) {
  auto info = n.typeIn(i);
  if (!info)
    (void)n.fail("the type of input '" + n.inName(i) + "' is unknown");
  return info ? std::optional<rt::DType>(info->dtype) : std::nullopt;
}

LogicalResult checkElementType(NodeImporter &n, const SequenceValue &seq,
                               rt::DType dtype) {
  if (dtype != seq.dtype)
    return n.fail("a " + Twine(rt::dtypeName(dtype)) +
                  " tensor cannot join a sequence of " +
                  rt::dtypeName(seq.dtype));
  return success();
}

LogicalResult importSequenceEmpty(NodeImporter &n) {
  auto type = n.attrInt("dtype", onnx::TensorProto::FLOAT);
  if (!type)
    return failure();
  auto dtype = dtypeFromOnnxType(*type);
  if (!dtype)
    return n.fail("unsupported element type " + Twine(*type));
  SequenceValue seq;
  seq.dtype = *dtype;
  n.outSequence(0, std::move(seq));
  return success();
}

LogicalResult importSequenceConstruct(NodeImporter &n) {
  if (failed(n.requireInputs(1)))
    return failure();
  SequenceValue seq;
  for (int i = 0; i < n.numInputs(); ++i) {
    auto element = elementIn(n, i, "inputs");
    auto dtype = element ? dtypeOf(n, i) : std::nullopt;
    if (!dtype)
      return failure();
    if (i == 0)
      seq.dtype = *dtype;
    else if (failed(checkElementType(n, seq, *dtype)))
      return failure();
    seq.elements.push_back(std::move(*element));
  }
  n.outSequence(0, std::move(seq));
  return success();
}

LogicalResult importSequenceInsert(NodeImporter &n) {
  const SequenceValue *in = n.sequenceIn(0, "input_sequence");
  auto element = in ? elementIn(n, 1, "tensor") : std::nullopt;
  auto dtype = element ? dtypeOf(n, 1) : std::nullopt;
  if (!dtype || failed(checkElementType(n, *in, *dtype)))
    return failure();
  int64_t at = in->elements.size();
  if (n.has(2)) {
    auto p = position(n, 2, in->elements.size(), /*end=*/true);
    if (!p)
      return failure();
    at = *p;
  }
  SequenceValue seq = *in;
  seq.elements.insert(seq.elements.begin() + at, std::move(*element));
  n.outSequence(0, std::move(seq));
  return success();
}

LogicalResult importSequenceErase(NodeImporter &n) {
  const SequenceValue *in = n.sequenceIn(0, "input_sequence");
  if (!in)
    return failure();
  if (in->elements.empty())
    return n.fail("cannot erase from an empty sequence");
  int64_t at = in->elements.size() - 1;
  if (n.has(1)) {
    auto p = position(n, 1, in->elements.size(), /*end=*/false);
    if (!p)
      return failure();
    at = *p;
  }
  SequenceValue seq = *in;
  seq.elements.erase(seq.elements.begin() + at);
  n.outSequence(0, std::move(seq));
  return success();
}

LogicalResult importSequenceAt(NodeImporter &n) {
  const SequenceValue *in = n.sequenceIn(0, "input_sequence");
  if (!in)
    return failure();
  auto p = position(n, 1, in->elements.size(), /*end=*/false);
  if (!p)
    return failure();
  n.outElement(0, in->elements[*p]);
  return success();
}

LogicalResult importSequenceLength(NodeImporter &n) {
  const SequenceValue *in = n.sequenceIn(0, "input_sequence");
  if (!in)
    return failure();
  rt::Tensor length(rt::DType::I64, {});
  *length.as<int64_t>() = static_cast<int64_t>(in->elements.size());
  n.outConst(0, std::move(length));
  return success();
}

/// SplitToSequence: `split` absent (pieces of 1, the axis dropped unless
/// keepdims), a scalar (pieces of that size, the last one smaller), or a
/// 1-D list of sizes.
LogicalResult importSplitToSequence(NodeImporter &n) {
  Value x = n.in(0, "input");
  auto a = x ? n.attrInt("axis", 0) : std::nullopt;
  auto keepdims = a ? n.attrInt("keepdims", 1) : std::nullopt;
  if (!keepdims)
    return failure();
  auto type = typeOf(x);
  if (type.getRank() == 0)
    return n.fail("input 'input' is a scalar; SplitToSequence needs rank >= 1");
  auto axis = n.axis(*a, type.getRank());
  if (!axis)
    return failure();
  const int64_t dim = type.getDimSize(*axis);
  std::vector<int64_t> sizes;
  bool squeeze = false;
  if (!n.has(1)) {
    sizes.assign(dim, 1);
    squeeze = *keepdims == 0;
  } else {
    const rt::Tensor *t = n.known(1, "split");
    auto split = t ? n.ints(*t, "split") : std::nullopt;
    if (!split)
      return failure();
    if (t->shape().empty()) {
      const int64_t piece = split->front();
      if (piece <= 0)
        return n.fail("split size " + Twine(piece) + " must be positive");
      for (int64_t done = 0; done < dim; done += piece)
        sizes.push_back(std::min(piece, dim - done));
    } else {
      int64_t total = 0;
      for (int64_t s : *split) {
        if (s < 0)
          return n.fail("split size " + Twine(s) + " is negative");
        total += s;
      }
      if (total != dim)
        return n.fail("split sizes add up to " + Twine(total) + ", not the "
                      "axis size " + Twine(dim));
      sizes = *split;
    }
  }
  SequenceValue seq;
  seq.dtype = *dtypeFor(type.getElementType());
  if (sizes.empty()) {
    n.outSequence(0, std::move(seq));
    return success();
  }
  SmallVector<Type> types;
  for (int64_t s : sizes) {
    SmallVector<int64_t> shape(type.getShape());
    shape[*axis] = s;
    types.push_back(RankedTensorType::get(shape, type.getElementType()));
  }
  SmallVector<Value> parts;
  if (sizes.size() == 1) {
    parts.push_back(x);
  } else {
    Operation *op = n.ic.createTyped<SplitOp>(n.loc, TypeRange(types), x,
                                              n.b.getI64IntegerAttr(*axis));
    if (!op)
      return n.failCreate("remat.split");
    parts.append(op->getResults().begin(), op->getResults().end());
  }
  for (Value part : parts) {
    if (squeeze) {
      SmallVector<int64_t> shape(typeOf(part).getShape());
      shape.erase(shape.begin() + *axis);
      part = reshapeTo(n, part, shape);
      if (!part)
        return failure();
    }
    ValueEntry element;
    element.value = part;
    seq.elements.push_back(element);
  }
  n.outSequence(0, std::move(seq));
  return success();
}

/// ConcatFromSequence: the elements concatenated along `axis`, or stacked
/// along a new one (new_axis = 1).
LogicalResult importConcatFromSequence(NodeImporter &n) {
  const SequenceValue *in = n.sequenceIn(0, "input_sequence");
  auto a = in ? n.attrInt("axis", 0) : std::nullopt;
  if (!a)
    return failure();
  if (!n.hasAttr("axis"))
    return n.fail("missing attribute 'axis'");
  auto newAxis = n.attrInt("new_axis", 0);
  if (!newAxis)
    return failure();
  if (in->elements.empty())
    return n.fail("cannot concatenate an empty sequence");
  SmallVector<Value> parts;
  for (const ValueEntry &element : in->elements) {
    ValueEntry copy = element;
    if (!copy.value && copy.constant)
      copy.value = n.ic.materialize(*copy.constant, n.loc);
    if (!copy.value)
      return n.fail("a sequence element has no value");
    parts.push_back(copy.value);
  }
  const int64_t rank = typeOf(parts.front()).getRank();
  auto axis = n.axis(*a, *newAxis ? rank + 1 : rank);
  if (!axis)
    return failure();
  if (*newAxis) {
    for (Value &part : parts) {
      SmallVector<int64_t> shape(typeOf(part).getShape());
      shape.insert(shape.begin() + *axis, 1);
      part = reshapeTo(n, part, shape);
      if (!part)
        return failure();
    }
  }
  if (parts.size() == 1)
    return n.out(0, parts.front());
  Operation *op = n.ic.create<ConcatOp>(n.loc, ValueRange(parts),
                                        n.b.getI64IntegerAttr(*axis));
  return op ? n.out(0, op->getResult(0)) : n.failCreate("remat.concat");
}

} // namespace

const llvm::StringMap<OpHandler> &sequenceOpHandlers() {
  static const llvm::StringMap<OpHandler> table = {
      {"SequenceEmpty", importSequenceEmpty},
      {"SequenceConstruct", importSequenceConstruct},
      {"SequenceInsert", importSequenceInsert},
      {"SequenceErase", importSequenceErase},
      {"SequenceAt", importSequenceAt},
      {"SequenceLength", importSequenceLength},
      {"SplitToSequence", importSplitToSequence},
      {"ConcatFromSequence", importConcatFromSequence},
  };
  return table;
}

} // namespace remat::onnximport
