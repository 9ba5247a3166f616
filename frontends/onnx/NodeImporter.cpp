//===- NodeImporter.cpp - Checked access to one ONNX node -----------------===//

#include "NodeImporter.h"

#include "remat/Dialect/ShapeInference.h"

#include <algorithm>
#include <limits>

using namespace mlir;

namespace remat::onnximport {

static std::string shapeStr(const rt::Shape &s) { return rt::shapeToString(s); }

NodeImporter::NodeImporter(ImportContext &ic, const onnx::NodeProto &node,
                           int index)
    : ic(ic), node(node),
      locName(node.name().empty() ? "#" + std::to_string(index) : node.name()),
      loc(ic.nodeLocation(locName)), b(ic.builder) {
  label = node.name().empty()
              ? "node #" + std::to_string(index) + " (" + node.op_type() + ")"
              : "node '" + node.name() + "' (" + node.op_type() + ")";
}

LogicalResult NodeImporter::fail(const llvm::Twine &message) {
  ic.error(label + ": " + message);
  return failure();
}

LogicalResult NodeImporter::failCreate(llvm::StringRef what) {
  return fail("cannot build " + what + ": " + ic.lastDiagnostic);
}

/// Whether input i is a sequence, which only the sequence ops take; reports
/// the error if so.
static bool refuseSequence(NodeImporter &n, int i, llvm::StringRef what) {
  const ValueEntry *entry = n.ic.lookup(n.inName(i));
  if (!entry || !entry->sequence)
    return false;
  (void)n.fail("input '" + what + "' ('" + n.inName(i) +
               "') is a sequence, but this op takes a tensor");
  return true;
}

Value NodeImporter::in(int i, llvm::StringRef what) {
  if (!has(i)) {
    (void)fail("missing input '" + what + "'");
    return {};
  }
  if (refuseSequence(*this, i, what))
    return {};
  Value v = ic.value(node.input(i), loc);
  if (!v)
    (void)fail("input '" + what + "' ('" + node.input(i) + "') is not defined");
  return v;
}

Value NodeImporter::optIn(int i) {
  if (!has(i))
    return {};
  return in(i, "#" + std::to_string(i));
}

const rt::Tensor *NodeImporter::known(int i, llvm::StringRef what) {
  if (!has(i)) {
    (void)fail("missing input '" + what + "'");
    return nullptr;
  }
  if (!ic.lookup(node.input(i))) {
    (void)fail("input '" + what + "' ('" + node.input(i) + "') is not defined");
    return nullptr;
  }
  if (refuseSequence(*this, i, what))
    return nullptr;
  const rt::Tensor *t = nullptr;
  try {
    t = ic.constant(node.input(i), /*required=*/true);
  } catch (const std::exception &e) {
    (void)fail("input '" + what + "': " + e.what());
    return nullptr;
  }
  if (!t)
    (void)fail("input '" + what + "' must be known at compile time");
  return t;
}

const rt::Tensor *NodeImporter::foldable(int i) {
  if (!has(i))
    return nullptr;
  return ic.constant(node.input(i), /*required=*/false);
}

std::optional<TypeInfo> NodeImporter::typeIn(int i) {
  if (!has(i))
    return std::nullopt;
  return ic.typeOf(node.input(i));
}

std::optional<rt::Shape> NodeImporter::shapeIn(int i, llvm::StringRef what) {
  if (!has(i)) {
    (void)fail("missing input '" + what + "'");
    return std::nullopt;
  }
  auto t = ic.typeOf(node.input(i));
  if (!t) {
    (void)fail("input '" + what + "' ('" + node.input(i) + "') is not defined");
    return std::nullopt;
  }
  return t->shape;
}

LogicalResult NodeImporter::requireInputs(int min) {
  if (node.input_size() < min)
    return fail("expects at least " + llvm::Twine(min) + " inputs, got " +
                llvm::Twine(node.input_size()));
  return success();
}

const onnx::AttributeProto *NodeImporter::attr(llvm::StringRef name) const {
  for (const auto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

std::optional<int64_t> NodeImporter::attrInt(llvm::StringRef name, int64_t def) {
  const auto *a = attr(name);
  if (!a)
    return def;
  if (a->type() != onnx::AttributeProto::INT) {
    (void)fail("attribute '" + name + "' must be an int");
    return std::nullopt;
  }
  return a->i();
}

std::optional<double> NodeImporter::attrFloat(llvm::StringRef name, double def) {
  const auto *a = attr(name);
  if (!a)
    return def;
  if (a->type() != onnx::AttributeProto::FLOAT) {
    (void)fail("attribute '" + name + "' must be a float");
    return std::nullopt;
  }
  return a->f();
}

std::optional<std::string> NodeImporter::attrString(llvm::StringRef name,
                                                    llvm::StringRef def) {
  const auto *a = attr(name);
  if (!a)
    return def.str();
  if (a->type() != onnx::AttributeProto::STRING) {
    (void)fail("attribute '" + name + "' must be a string");
    return std::nullopt;
  }
  return a->s();
}

std::optional<std::vector<int64_t>> NodeImporter::attrInts(llvm::StringRef name,
                                                           bool *present) {
  const auto *a = attr(name);
  if (present)
    *present = a != nullptr;
  if (!a)
    return std::vector<int64_t>{};
  if (a->type() != onnx::AttributeProto::INTS) {
    (void)fail("attribute '" + name + "' must be a list of ints");
    return std::nullopt;
  }
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

LogicalResult NodeImporter::out(int i, Value value) {
  if (!value)
    return failure();
  if (!hasOut(i))
    return success();
  const std::string &name = node.output(i);
  auto valueType = llvm::cast<RankedTensorType>(value.getType());
  auto dtype = dtypeFor(valueType.getElementType());
  if (!dtype || !shapeIsSane(valueType.getShape(), *dtype))
    return fail("result '" + name + "' is larger than 2^40 bytes");
  // Cross-check with ONNX shape inference.
  auto it = ic.inferredShapes.find(name);
  auto type = llvm::cast<RankedTensorType>(value.getType());
  if (it != ic.inferredShapes.end() &&
      llvm::ArrayRef<int64_t>(it->second) != type.getShape())
    return fail("inconsistent shapes for '" + name + "': ONNX infers " +
                shapeStr(it->second) + ", the importer " +
                shapeStr(rt::Shape(type.getShape().begin(), type.getShape().end())));
  ValueEntry &entry = ic.values[name];
  entry = ValueEntry();
  entry.value = value;
  return success();
}

void NodeImporter::outConst(int i, rt::Tensor tensor, bool isFoldable) {
  if (!hasOut(i))
    return;
  ValueEntry &entry = ic.values[node.output(i)];
  entry = ValueEntry();
  entry.constant = std::make_shared<rt::Tensor>(std::move(tensor));
  entry.foldable = isFoldable;
}

void NodeImporter::outAlias(int i, const std::string &inputName) {
  if (!hasOut(i))
    return;
  ValueEntry *src = ic.lookup(inputName);
  if (!src)
    return;
  // An alias of an argument keeps its SSA value and (lazily decoded) data; a
  // compile-time use through the alias counts as one of the argument.
  ValueEntry copy = *src;
  copy.argIndex = -1;
  ic.values[node.output(i)] = copy;
}

const SequenceValue *NodeImporter::sequenceIn(int i, llvm::StringRef what) {
  if (!has(i)) {
    (void)fail("missing input '" + what + "'");
    return nullptr;
  }
  const ValueEntry *entry = ic.lookup(node.input(i));
  if (!entry) {
    (void)fail("input '" + what + "' ('" + node.input(i) + "') is not defined");
    return nullptr;
  }
  if (!entry->sequence)
    (void)fail("input '" + what + "' ('" + node.input(i) +
               "') is a tensor, but this op takes a sequence");
  return entry->sequence.get();
}

void NodeImporter::outSequence(int i, SequenceValue sequence) {
  if (!hasOut(i))
    return;
  ValueEntry &entry = ic.values[node.output(i)];
  entry = ValueEntry();
  entry.sequence = std::make_shared<const SequenceValue>(std::move(sequence));
}

void NodeImporter::outElement(int i, const ValueEntry &element) {
  if (!hasOut(i))
    return;
  // As outAlias: an element that is an argument keeps its SSA value and
  // data, and a compile-time use of it counts as one of the argument.
  ValueEntry copy = element;
  copy.argIndex = -1;
  ic.values[node.output(i)] = copy;
}

std::optional<int64_t> NodeImporter::axis(int64_t a, int64_t rank,
                                          llvm::StringRef what) {
  int64_t r = rank == 0 ? 1 : rank;
  if (a < -r || a >= r) {
    (void)fail(what + " " + llvm::Twine(a) + " is out of range for rank " +
         llvm::Twine(rank));
    return std::nullopt;
  }
  return a < 0 ? a + rank : a;
}

std::optional<std::vector<int64_t>> NodeImporter::ints(const rt::Tensor &t,
                                                       llvm::StringRef what) {
  std::vector<int64_t> v;
  if (t.dtype() == rt::DType::I64) {
    v.assign(t.as<int64_t>(), t.as<int64_t>() + t.numel());
  } else if (t.dtype() == rt::DType::I32) {
    v.assign(t.as<int32_t>(), t.as<int32_t>() + t.numel());
  } else {
    (void)fail("input '" + what + "' must be an integer tensor, got " +
         rt::dtypeName(t.dtype()));
    return std::nullopt;
  }
  return v;
}

std::optional<rt::Shape>
NodeImporter::reshapeTarget(const rt::Shape &in,
                            const std::vector<int64_t> &shape, bool allowZero) {
  rt::Shape result;
  int64_t inferred = -1;
  int64_t known = 1;
  double knownApprox = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t s = shape[d];
    if (s == 0 && !allowZero) {
      if (d >= in.size()) {
        (void)fail("shape " + shapeStr(shape) + " copies dim " + llvm::Twine(d) +
             " of a rank-" + llvm::Twine(in.size()) + " input");
        return std::nullopt;
      }
      s = in[d];
    }
    if (s == -1) {
      if (inferred >= 0) {
        (void)fail("shape " + shapeStr(shape) + " has more than one -1");
        return std::nullopt;
      }
      inferred = d;
      result.push_back(1);
      continue;
    }
    if (s < 0) {
      (void)fail("shape " + shapeStr(shape) + " has a negative dim");
      return std::nullopt;
    }
    result.push_back(s);
    knownApprox *= static_cast<double>(s);
    if (knownApprox > 9.0e15) {
      (void)fail("shape " + shapeStr(shape) + " is too large");
      return std::nullopt;
    }
    known *= s;
  }
  int64_t total = rt::numElements(in);
  if (inferred >= 0) {
    if (known == 0 || total % known != 0) {
      (void)fail("cannot reshape " + shapeStr(in) + " to " + shapeStr(shape));
      return std::nullopt;
    }
    result[inferred] = total / known;
  } else if (known != total) {
    (void)fail("cannot reshape " + shapeStr(in) + " (" + llvm::Twine(total) +
         " elements) to " + shapeStr(result));
    return std::nullopt;
  }
  return result;
}

std::optional<std::vector<int64_t>>
NodeImporter::normAxes(std::vector<int64_t> axes, int64_t rank) {
  for (int64_t &a : axes) {
    auto n = axis(a, rank, "axis");
    if (!n)
      return std::nullopt;
    a = *n;
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) {
    (void)fail("axes contain duplicates");
    return std::nullopt;
  }
  return axes;
}

std::optional<rt::Shape> NodeImporter::unsqueezeShape(const rt::Shape &in,
                                                      std::vector<int64_t> axes) {
  int64_t rank = in.size() + axes.size();
  auto sorted = normAxes(axes, rank);
  if (!sorted)
    return std::nullopt;
  rt::Shape result;
  size_t next = 0, k = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (k < sorted->size() && (*sorted)[k] == d) {
      result.push_back(1);
      ++k;
    } else {
      result.push_back(in[next++]);
    }
  }
  return result;
}

std::optional<rt::Shape>
NodeImporter::squeezeShape(const rt::Shape &in,
                           std::optional<std::vector<int64_t>> axes) {
  rt::Shape result;
  if (!axes) {
    for (int64_t d : in)
      if (d != 1)
        result.push_back(d);
    return result;
  }
  auto sorted = normAxes(*axes, in.size());
  if (!sorted)
    return std::nullopt;
  for (int64_t d = 0; d < (int64_t)in.size(); ++d) {
    if (std::binary_search(sorted->begin(), sorted->end(), d)) {
      if (in[d] != 1) {
        (void)fail("cannot squeeze dim " + llvm::Twine(d) + " of size " +
             llvm::Twine(in[d]));
        return std::nullopt;
      }
      continue;
    }
    result.push_back(in[d]);
  }
  return result;
}

std::optional<rt::Shape> NodeImporter::flattenShape(const rt::Shape &in,
                                                    int64_t a) {
  int64_t rank = in.size();
  if (a < -rank || a > rank) {
    (void)fail("axis " + llvm::Twine(a) + " is out of range for rank " +
         llvm::Twine(rank));
    return std::nullopt;
  }
  if (a < 0)
    a += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d)
    (d < a ? outer : inner) *= in[d];
  return rt::Shape{outer, inner};
}

std::optional<NodeImporter::SliceParams>
NodeImporter::sliceParams(const rt::Shape &in) {
  int64_t rank = in.size();
  std::vector<int64_t> starts, ends, axes, steps;
  if (ic.opset < 10) {
    bool hasAxes = false;
    auto s = attrInts("starts"), e = attrInts("ends"), a = attrInts("axes", &hasAxes);
    if (!s || !e || !a)
      return std::nullopt;
    starts = *s;
    ends = *e;
    axes = *a;
    if (!hasAxes)
      for (size_t i = 0; i < starts.size(); ++i)
        axes.push_back(i);
  } else {
    const rt::Tensor *st = known(1, "starts");
    if (!st)
      return std::nullopt;
    const rt::Tensor *en = known(2, "ends");
    if (!en)
      return std::nullopt;
    auto s = ints(*st, "starts"), e = ints(*en, "ends");
    if (!s || !e)
      return std::nullopt;
    starts = *s;
    ends = *e;
    if (has(3)) {
      const rt::Tensor *ax = known(3, "axes");
      if (!ax)
        return std::nullopt;
      auto a = ints(*ax, "axes");
      if (!a)
        return std::nullopt;
      axes = *a;
    } else {
      for (size_t i = 0; i < starts.size(); ++i)
        axes.push_back(i);
    }
    if (has(4)) {
      const rt::Tensor *sp = known(4, "steps");
      if (!sp)
        return std::nullopt;
      auto p = ints(*sp, "steps");
      if (!p)
        return std::nullopt;
      steps = *p;
    }
  }
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    (void)fail("starts, ends, axes and steps differ in length");
    return std::nullopt;
  }
  SliceParams p;
  p.starts.assign(rank, 0);
  p.limits.assign(in.begin(), in.end());
  p.steps.assign(rank, 1);
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    auto a = axis(axes[i], rank, "axis");
    if (!a)
      return std::nullopt;
    if (seen[*a]) {
      (void)fail("axis " + llvm::Twine(*a) + " is sliced twice");
      return std::nullopt;
    }
    seen[*a] = true;
    int64_t dim = in[*a], step = steps[i];
    if (step == 0) {
      (void)fail("slice step must be non-zero");
      return std::nullopt;
    }
    int64_t s = starts[i], e = ends[i];
    if (s < 0)
      s += dim;
    if (e < 0)
      e += dim;
    if (dim == 0) {
      s = e = 0;
      step = 1;
    } else if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      if (e < s)
        e = s;
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      if (e > s)
        e = s;
    }
    p.starts[*a] = s;
    p.limits[*a] = e;
    p.steps[*a] = step;
  }
  for (int64_t d = 0; d < rank; ++d)
    p.shape.push_back(sliceCount(p.starts[d], p.limits[d], p.steps[d]));
  return p;
}

std::optional<rt::Shape> NodeImporter::expandShape(const rt::Shape &in,
                                                   int shapeInput) {
  const rt::Tensor *t = known(shapeInput, "shape");
  if (!t)
    return std::nullopt;
  auto shape = ints(*t, "shape");
  if (!shape)
    return std::nullopt;
  for (int64_t d : *shape)
    if (d < 0) {
      (void)fail("shape " + shapeStr(*shape) + " has a negative dim");
      return std::nullopt;
    }
  auto result = broadcastShapes(in, *shape);
  if (!result) {
    (void)fail("cannot expand " + shapeStr(in) + " to " + shapeStr(*shape));
    return std::nullopt;
  }
  return rt::Shape(result->begin(), result->end());
}

std::optional<std::vector<int64_t>> NodeImporter::transposePerm(int64_t rank) {
  bool present = false;
  auto perm = attrInts("perm", &present);
  if (!perm)
    return std::nullopt;
  if (!present)
    for (int64_t d = rank - 1; d >= 0; --d)
      perm->push_back(d);
  if ((int64_t)perm->size() != rank) {
    (void)fail("perm has " + llvm::Twine(perm->size()) + " entries for rank " +
         llvm::Twine(rank));
    return std::nullopt;
  }
  std::vector<bool> seen(rank, false);
  for (int64_t &p : *perm) {
    auto a = axis(p, rank, "perm entry");
    if (!a)
      return std::nullopt;
    if (seen[*a]) {
      (void)fail("perm is not a permutation");
      return std::nullopt;
    }
    seen[*a] = true;
    p = *a;
  }
  return perm;
}

std::optional<std::vector<int64_t>> NodeImporter::reduceAxes(int64_t rank,
                                                             bool &noop) {
  noop = false;
  std::vector<int64_t> axes;
  bool axesFromInput = (opType() == "ReduceSum" && ic.opset >= 13) ||
                       ic.opset >= 18;
  if (axesFromInput) {
    if (has(1)) {
      const rt::Tensor *t = known(1, "axes");
      if (!t)
        return std::nullopt;
      auto v = ints(*t, "axes");
      if (!v)
        return std::nullopt;
      axes = *v;
    }
  } else {
    auto v = attrInts("axes");
    if (!v)
      return std::nullopt;
    axes = *v;
  }
  if (axes.empty()) {
    auto noopAttr = attrInt("noop_with_empty_axes", 0);
    if (!noopAttr)
      return std::nullopt;
    if (*noopAttr) {
      noop = true;
      return axes;
    }
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
    return axes;
  }
  std::vector<int64_t> sorted;
  for (int64_t a : axes) {
    auto n = axis(a, rank, "axis");
    if (!n)
      return std::nullopt;
    sorted.push_back(*n);
  }
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  return sorted;
}

std::optional<std::vector<int64_t>> NodeImporter::splitSizes(int64_t dim) {
  std::vector<int64_t> sizes;
  if (ic.opset >= 13) {
    if (has(1)) {
      const rt::Tensor *t = known(1, "split");
      if (!t)
        return std::nullopt;
      auto v = ints(*t, "split");
      if (!v)
        return std::nullopt;
      sizes = *v;
    }
  } else {
    auto v = attrInts("split");
    if (!v)
      return std::nullopt;
    sizes = *v;
  }
  int64_t parts = numOutputs();
  if (ic.opset >= 18 && has(1) == hasAttr("num_outputs")) {
    // Split-18: the sizes come from exactly one of the two.
    (void)fail(has(1) ? "takes the 'split' input or the 'num_outputs' "
                        "attribute, not both"
                      : "needs the 'split' input or the 'num_outputs' "
                        "attribute (opset 18)");
    return std::nullopt;
  }
  if (sizes.empty()) {
    auto numOut = attrInt("num_outputs", parts);
    if (!numOut)
      return std::nullopt;
    if (*numOut != parts) {
      (void)fail("num_outputs is " + llvm::Twine(*numOut) + " but the node has " +
                 llvm::Twine(parts) + " outputs");
      return std::nullopt;
    }
    parts = *numOut;
    if (parts <= 0) {
      (void)fail("split needs at least one output");
      return std::nullopt;
    }
    if (ic.opset < 18 && dim % parts != 0) {
      (void)fail("dim of size " + llvm::Twine(dim) + " does not split into " +
           llvm::Twine(parts) + " equal parts");
      return std::nullopt;
    }
    int64_t chunk = (dim + parts - 1) / parts;
    for (int64_t i = 0; i < parts; ++i)
      sizes.push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
    return sizes;
  }
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) {
      (void)fail("split sizes must be non-negative");
      return std::nullopt;
    }
    total += s;
  }
  if (total != dim || (int64_t)sizes.size() != parts) {
    (void)fail("split sizes " + shapeStr(sizes) + " do not match dim " +
         llvm::Twine(dim) + " and " + llvm::Twine(parts) + " outputs");
    return std::nullopt;
  }
  return sizes;
}

} // namespace remat::onnximport
