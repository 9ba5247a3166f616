//===- ConstantFolding.cpp - Evaluate constant nodes at import -------------===//
//
// A node whose inputs are all known constants is evaluated with the runtime
// kernels, so that the shape arithmetic of exported models (Shape -> Gather
// -> Div -> Unsqueeze -> Concat -> Reshape) never reaches the IR and every
// Reshape, Expand, Slice, ... gets static parameters.
//
//===----------------------------------------------------------------------===//

#include "NodeImporter.h"

#include "remat/Dialect/ShapeInference.h"
#include "remat/runtime/Kernels.h"
#include "remat/runtime/TensorProtoIO.h"

#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <cstring>

namespace remat::onnximport {

using Folded = std::optional<std::vector<rt::Tensor>>;

bool isImportTimeOnly(llvm::StringRef opType) {
  return opType == "Range";
}

namespace {

bool fits(const rt::Shape &shape) {
  double n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return false;
    n *= static_cast<double>(d);
  }
  return n <= static_cast<double>(kMaxFoldElements);
}

Folded one(rt::Tensor t) {
  std::vector<rt::Tensor> v;
  v.push_back(std::move(t));
  return v;
}

/// A copy of `x` with a new shape (same element count).
Folded reshaped(const rt::Tensor &x, const rt::Shape &shape) {
  if (!fits(shape))
    return std::nullopt;
  rt::Tensor y(x.dtype(), shape);
  rt::copy(x.view(), y.view());
  return one(std::move(y));
}

std::optional<rt::Shape> broadcast(NodeImporter &n,
                                   const std::vector<const rt::Tensor *> &in) {
  llvm::SmallVector<int64_t> shape;
  for (const rt::Tensor *t : in) {
    auto r = broadcastShapes(shape, t->shape());
    if (!r) {
      (void)n.fail("operand shapes " + rt::shapeToString(in[0]->shape()) + " and " +
             rt::shapeToString(t->shape()) + " do not broadcast");
      return std::nullopt;
    }
    shape = *r;
  }
  return rt::Shape(shape.begin(), shape.end());
}

std::optional<rt::BinaryOp> binaryOpFor(llvm::StringRef op) {
  return llvm::StringSwitch<std::optional<rt::BinaryOp>>(op)
      .Case("Add", rt::BinaryOp::Add)
      .Case("Sub", rt::BinaryOp::Sub)
      .Case("Mul", rt::BinaryOp::Mul)
      .Case("Div", rt::BinaryOp::Div)
      .Case("Pow", rt::BinaryOp::Pow)
      .Case("Max", rt::BinaryOp::Max)
      .Case("Min", rt::BinaryOp::Min)
      .Case("Equal", rt::BinaryOp::Equal)
      .Case("Less", rt::BinaryOp::Less)
      .Case("Greater", rt::BinaryOp::Greater)
      .Case("And", rt::BinaryOp::And)
      .Case("Or", rt::BinaryOp::Or)
      .Default(std::nullopt);
}

std::optional<rt::UnaryOp> unaryOpFor(llvm::StringRef op) {
  return llvm::StringSwitch<std::optional<rt::UnaryOp>>(op)
      .Case("Neg", rt::UnaryOp::Neg)
      .Case("Sqrt", rt::UnaryOp::Sqrt)
      .Case("Exp", rt::UnaryOp::Exp)
      .Case("Log", rt::UnaryOp::Log)
      .Case("Reciprocal", rt::UnaryOp::Reciprocal)
      .Case("Erf", rt::UnaryOp::Erf)
      .Case("Tanh", rt::UnaryOp::Tanh)
      .Case("Sigmoid", rt::UnaryOp::Sigmoid)
      .Case("Relu", rt::UnaryOp::Relu)
      .Case("Not", rt::UnaryOp::Not)
      .Case("Abs", rt::UnaryOp::Abs)
      .Case("Softplus", rt::UnaryOp::Softplus)
      .Case("Softsign", rt::UnaryOp::Softsign)
      .Case("Sin", rt::UnaryOp::Sin)
      .Case("Cos", rt::UnaryOp::Cos)
      .Default(std::nullopt);
}

double scalarValue(const rt::Tensor &t) {
  rt::Tensor d(rt::DType::F64, {});
  rt::Tensor one(t.dtype(), {});
  std::memcpy(one.data(), t.data(), rt::dtypeSize(t.dtype()));
  rt::cast(one.view(), d.view());
  return *d.as<double>();
}

} // namespace

Folded foldNode(NodeImporter &n, const std::vector<const rt::Tensor *> &in) {
  llvm::StringRef op = n.opType();
  auto need = [&](size_t count) {
    if (in.size() < count || !in[0]) {
      (void)n.fail("expects at least " + llvm::Twine(count) + " inputs");
      return false;
    }
    for (size_t i = 0; i < count; ++i)
      if (!in[i]) {
        (void)n.fail("missing input #" + llvm::Twine(i));
        return false;
      }
    return true;
  };

  if (op == "Identity") {
    if (!need(1))
      return std::nullopt;
    return reshaped(*in[0], in[0]->shape());
  }

  if (auto bop = binaryOpFor(op)) {
    if (!need(op == "Max" || op == "Min" ? 1 : 2))
      return std::nullopt;
    for (const rt::Tensor *t : in)
      if (!t)
        return std::nullopt;
    auto shape = broadcast(n, in);
    if (!shape || !fits(*shape))
      return std::nullopt;
    bool compare = op == "Equal" || op == "Less" || op == "Greater";
    if (in.size() == 1)
      return reshaped(*in[0], in[0]->shape());
    rt::Tensor acc(compare ? rt::DType::Bool : in[0]->dtype(), *shape);
    rt::binary(*bop, in[0]->view(), in[1]->view(), acc.view());
    for (size_t i = 2; i < in.size(); ++i) {
      rt::Tensor next(acc.dtype(), *shape);
      rt::binary(*bop, acc.view(), in[i]->view(), next.view());
      acc = std::move(next);
    }
    return one(std::move(acc));
  }

  if (auto uop = unaryOpFor(op)) {
    if (!need(1) || !fits(in[0]->shape()))
      return std::nullopt;
    rt::Tensor y(in[0]->dtype(), in[0]->shape());
    rt::unary(*uop, in[0]->view(), y.view());
    return one(std::move(y));
  }

  if (op == "CastLike") {
    // The dynamo exporter casts Range's bounds this way.
    if (!need(2) || !fits(in[0]->shape()))
      return std::nullopt;
    rt::Tensor y(in[1]->dtype(), in[0]->shape());
    rt::cast(in[0]->view(), y.view());
    return one(std::move(y));
  }

  if (op == "Cast") {
    if (!need(1))
      return std::nullopt;
    auto to = n.attrInt("to", -1);
    if (!to)
      return std::nullopt;
    auto dtype = dtypeFromOnnxType(*to);
    if (!dtype) {
      (void)n.fail("unsupported target type " + llvm::Twine(*to));
      return std::nullopt;
    }
    if (!fits(in[0]->shape()))
      return std::nullopt;
    rt::Tensor y(*dtype, in[0]->shape());
    rt::cast(in[0]->view(), y.view());
    return one(std::move(y));
  }

  if (op == "Where") {
    if (!need(3))
      return std::nullopt;
    auto shape = broadcast(n, in);
    if (!shape || !fits(*shape))
      return std::nullopt;
    rt::Tensor y(in[1]->dtype(), *shape);
    rt::where(in[0]->view(), in[1]->view(), in[2]->view(), y.view());
    return one(std::move(y));
  }

  if (op == "Gather") {
    if (!need(2))
      return std::nullopt;
    auto a = n.attrInt("axis", 0);
    if (!a)
      return std::nullopt;
    auto ax = n.axis(*a, in[0]->shape().size());
    if (!ax)
      return std::nullopt;
    rt::Shape shape(in[0]->shape().begin(), in[0]->shape().begin() + *ax);
    shape.insert(shape.end(), in[1]->shape().begin(), in[1]->shape().end());
    shape.insert(shape.end(), in[0]->shape().begin() + *ax + 1,
                 in[0]->shape().end());
    if (!fits(shape))
      return std::nullopt;
    rt::Tensor y(in[0]->dtype(), shape);
    rt::gather(in[0]->view(), in[1]->view(), y.view(), *ax);
    return one(std::move(y));
  }

  if (op == "Concat") {
    if (!need(1))
      return std::nullopt;
    auto a = n.attrInt("axis", 0);
    if (!a)
      return std::nullopt;
    auto ax = n.axis(*a, in[0]->shape().size());
    if (!ax)
      return std::nullopt;
    rt::Shape shape = in[0]->shape();
    shape[*ax] = 0;
    std::vector<rt::TensorView> views;
    for (const rt::Tensor *t : in) {
      if (!t)
        return std::nullopt;
      if (t->shape().size() != shape.size()) {
        (void)n.fail("inputs differ in rank");
        return std::nullopt;
      }
      for (size_t d = 0; d < shape.size(); ++d)
        if ((int64_t)d != *ax && t->shape()[d] != in[0]->shape()[d]) {
          (void)n.fail("inputs differ in dim " + llvm::Twine(d));
          return std::nullopt;
        }
      if (t->dtype() != in[0]->dtype()) {
        (void)n.fail("inputs differ in element type");
        return std::nullopt;
      }
      shape[*ax] += t->shape()[*ax];
      views.push_back(t->view());
    }
    if (!fits(shape))
      return std::nullopt;
    rt::Tensor y(in[0]->dtype(), shape);
    rt::concat(views, y.view(), *ax);
    return one(std::move(y));
  }

  if (op == "Unsqueeze" || op == "Squeeze") {
    if (!need(1))
      return std::nullopt;
    std::optional<std::vector<int64_t>> axes;
    bool present = false;
    if (n.ic.opset >= 13) {
      if (in.size() > 1 && in[1]) {
        axes = n.ints(*in[1], "axes");
        if (!axes)
          return std::nullopt;
      }
    } else {
      auto v = n.attrInts("axes", &present);
      if (!v)
        return std::nullopt;
      if (present)
        axes = *v;
    }
    std::optional<rt::Shape> shape;
    if (op == "Unsqueeze") {
      if (!axes) {
        (void)n.fail("missing axes");
        return std::nullopt;
      }
      shape = n.unsqueezeShape(in[0]->shape(), *axes);
    } else {
      shape = n.squeezeShape(in[0]->shape(), axes);
    }
    if (!shape)
      return std::nullopt;
    return reshaped(*in[0], *shape);
  }

  if (op == "Reshape") {
    if (!need(2))
      return std::nullopt;
    auto shapeVals = n.ints(*in[1], "shape");
    auto allowZero = n.attrInt("allowzero", 0);
    if (!shapeVals || !allowZero)
      return std::nullopt;
    auto shape = n.reshapeTarget(in[0]->shape(), *shapeVals, *allowZero != 0);
    if (!shape)
      return std::nullopt;
    return reshaped(*in[0], *shape);
  }

  if (op == "Flatten") {
    if (!need(1))
      return std::nullopt;
    auto a = n.attrInt("axis", 1);
    if (!a)
      return std::nullopt;
    auto shape = n.flattenShape(in[0]->shape(), *a);
    if (!shape)
      return std::nullopt;
    return reshaped(*in[0], *shape);
  }

  if (op == "Slice") {
    if (!need(n.ic.opset < 10 ? 1 : 3))
      return std::nullopt;
    auto p = n.sliceParams(in[0]->shape());
    if (!p || !fits(p->shape))
      return std::nullopt;
    rt::Tensor y(in[0]->dtype(), p->shape);
    rt::slice(in[0]->view(), y.view(), p->starts, p->steps);
    return one(std::move(y));
  }

  if (op == "Transpose") {
    if (!need(1))
      return std::nullopt;
    auto perm = n.transposePerm(in[0]->shape().size());
    if (!perm)
      return std::nullopt;
    rt::Shape shape;
    for (int64_t p : *perm)
      shape.push_back(in[0]->shape()[p]);
    if (!fits(shape))
      return std::nullopt;
    rt::Tensor y(in[0]->dtype(), shape);
    rt::transpose(in[0]->view(), y.view(), *perm);
    return one(std::move(y));
  }

  if (op == "Expand") {
    if (!need(2))
      return std::nullopt;
    auto shape = n.expandShape(in[0]->shape(), 1);
    if (!shape || !fits(*shape))
      return std::nullopt;
    rt::Tensor y(in[0]->dtype(), *shape);
    rt::expand(in[0]->view(), y.view());
    return one(std::move(y));
  }

  if (op == "Range") {
    if (!need(3))
      return std::nullopt;
    for (int i = 0; i < 3; ++i)
      if (in[i]->numel() != 1 || in[i]->dtype() != in[0]->dtype()) {
        (void)n.fail("start, limit and delta must be scalars of one type");
        return std::nullopt;
      }
    double start = scalarValue(*in[0]), limit = scalarValue(*in[1]),
           delta = scalarValue(*in[2]);
    if (delta == 0) {
      (void)n.fail("delta must be non-zero");
      return std::nullopt;
    }
    double count = std::max(std::ceil((limit - start) / delta), 0.0);
    if (!(count <= (double)(1 << 24))) {
      (void)n.fail("range of " + llvm::Twine((int64_t)count) +
             " elements is too large");
      return std::nullopt;
    }
    int64_t cnt = (int64_t)count;
    rt::Tensor d(rt::DType::F64, {cnt});
    for (int64_t i = 0; i < cnt; ++i)
      d.as<double>()[i] = start + (double)i * delta;
    if (in[0]->dtype() == rt::DType::F32) {
      // Accumulate in the input precision, as ONNX's reference does.
      float s = (float)start, dl = (float)delta;
      rt::Tensor y(rt::DType::F32, {cnt});
      for (int64_t i = 0; i < cnt; ++i)
        y.as<float>()[i] = s + (float)i * dl;
      return one(std::move(y));
    }
    rt::Tensor y(in[0]->dtype(), {cnt});
    rt::cast(d.view(), y.view());
    return one(std::move(y));
  }

  if (op == "ConstantOfShape") {
    if (!need(1))
      return std::nullopt;
    auto shape = n.ints(*in[0], "input");
    if (!shape)
      return std::nullopt;
    for (int64_t d : *shape)
      if (d < 0) {
        (void)n.fail("shape has a negative dim");
        return std::nullopt;
      }
    if (!fits(*shape))
      return std::nullopt;
    rt::DType dtype = rt::DType::F32;
    double value = 0;
    if (const auto *a = n.attr("value")) {
      if (a->type() != onnx::AttributeProto::TENSOR) {
        (void)n.fail("attribute 'value' must be a tensor");
        return std::nullopt;
      }
      rt::Tensor v = rt::tensorFromProto(a->t(), "");
      if (v.numel() != 1) {
        (void)n.fail("attribute 'value' must hold one element");
        return std::nullopt;
      }
      dtype = v.dtype();
      rt::Tensor y(dtype, *shape);
      for (int64_t i = 0; i < y.numel(); ++i)
        std::memcpy(static_cast<char *>(y.data()) + i * rt::dtypeSize(dtype),
                    v.data(), rt::dtypeSize(dtype));
      return one(std::move(y));
    }
    rt::Tensor y(dtype, *shape);
    rt::fill(y.view(), value);
    return one(std::move(y));
  }

  if (op == "ReduceSum" || op == "ReduceMean" || op == "ReduceMax" ||
      op == "ReduceProd") {
    if (!need(1))
      return std::nullopt;
    int64_t rank = in[0]->shape().size();
    bool noop = false;
    auto axes = n.reduceAxes(rank, noop);
    auto keep = n.attrInt("keepdims", 1);
    if (!axes || !keep)
      return std::nullopt;
    if (noop)
      return reshaped(*in[0], in[0]->shape());
    rt::Shape kept = in[0]->shape(), dropped;
    for (int64_t d = 0; d < rank; ++d) {
      bool reduced = std::binary_search(axes->begin(), axes->end(), d);
      if (reduced)
        kept[d] = 1;
      else
        dropped.push_back(kept[d]);
    }
    rt::Tensor y(in[0]->dtype(), kept);
    if (op == "ReduceProd") {
      if (in[0]->dtype() != rt::DType::I64)
        return std::nullopt;
      // Small integer products (shape arithmetic): a direct loop.
      const int64_t *x = in[0]->as<int64_t>();
      int64_t *out = y.as<int64_t>();
      for (int64_t i = 0; i < y.numel(); ++i)
        out[i] = 1;
      const rt::Shape &xs = in[0]->shape();
      std::vector<int64_t> idx(rank, 0);
      for (int64_t i = 0; i < in[0]->numel(); ++i) {
        int64_t o = 0;
        for (int64_t d = 0; d < rank; ++d)
          o = o * kept[d] + (kept[d] == 1 ? 0 : idx[d]);
        out[o] *= x[i];
        for (int64_t d = rank - 1; d >= 0; --d) {
          if (++idx[d] < xs[d])
            break;
          idx[d] = 0;
        }
      }
    } else {
      rt::ReduceOp r = op == "ReduceSum"    ? rt::ReduceOp::Sum
                       : op == "ReduceMean" ? rt::ReduceOp::Mean
                                            : rt::ReduceOp::Max;
      rt::reduce(r, in[0]->view(), y.view(), *axes);
    }
    if (!*keep)
      return reshaped(y, dropped);
    return one(std::move(y));
  }

  if (op == "Split") {
    if (!need(1))
      return std::nullopt;
    auto a = n.attrInt("axis", 0);
    if (!a)
      return std::nullopt;
    auto ax = n.axis(*a, in[0]->shape().size());
    if (!ax)
      return std::nullopt;
    if (!fits(in[0]->shape()))
      return std::nullopt;
    auto sizes = n.splitSizes(in[0]->shape()[*ax]);
    if (!sizes)
      return std::nullopt;
    std::vector<rt::Tensor> outs;
    std::vector<rt::TensorView> views;
    for (int64_t s : *sizes) {
      rt::Shape shape = in[0]->shape();
      shape[*ax] = s;
      outs.emplace_back(in[0]->dtype(), shape);
    }
    for (auto &t : outs)
      views.push_back(t.view());
    rt::split(in[0]->view(), views, *ax);
    return outs;
  }

  // The mask machinery of transformers' exports (dynamo, optimize=False):
  // positions from CumSum, compared with LessOrEqual/GreaterOrEqual and
  // picked with GatherND, all on constants; folding it gives the attention
  // fusion a constant mask to recognise as causal.
  if (op == "GreaterOrEqual" || op == "LessOrEqual") {
    if (!need(2))
      return std::nullopt;
    auto shape = broadcast(n, in);
    if (!shape || !fits(*shape))
      return std::nullopt;
    rt::Tensor strict(rt::DType::Bool, *shape), equal(rt::DType::Bool, *shape),
        y(rt::DType::Bool, *shape);
    rt::binary(op == "GreaterOrEqual" ? rt::BinaryOp::Greater
                                      : rt::BinaryOp::Less,
               in[0]->view(), in[1]->view(), strict.view());
    rt::binary(rt::BinaryOp::Equal, in[0]->view(), in[1]->view(),
               equal.view());
    rt::binary(rt::BinaryOp::Or, strict.view(), equal.view(), y.view());
    return one(std::move(y));
  }

  if (op == "CumSum") {
    if (!need(2) || !fits(in[0]->shape()))
      return std::nullopt;
    auto axisValues = n.ints(*in[1], "axis");
    auto exclusive = n.attrInt("exclusive", 0);
    auto reverse = n.attrInt("reverse", 0);
    if (!axisValues || !exclusive || !reverse)
      return std::nullopt;
    if (axisValues->size() != 1) {
      (void)n.fail("input 'axis' must hold one element");
      return std::nullopt;
    }
    auto ax = n.axis(axisValues->front(), in[0]->shape().size());
    if (!ax)
      return std::nullopt;
    rt::Tensor y(in[0]->dtype(), in[0]->shape());
    rt::cumSum(in[0]->view(), y.view(), *ax, *exclusive != 0, *reverse != 0);
    return one(std::move(y));
  }

  if (op == "GatherND") {
    if (!need(2))
      return std::nullopt;
    auto batchDims = n.attrInt("batch_dims", 0);
    if (!batchDims)
      return std::nullopt;
    std::string error;
    auto shape = gatherNDShape(llvm::ArrayRef<int64_t>(in[0]->shape()),
                               llvm::ArrayRef<int64_t>(in[1]->shape()),
                               *batchDims, error);
    if (!shape) {
      (void)n.fail(error);
      return std::nullopt;
    }
    rt::Shape out(shape->begin(), shape->end());
    if (!fits(out))
      return std::nullopt;
    rt::Tensor y(in[0]->dtype(), out);
    rt::gatherND(in[0]->view(), in[1]->view(), y.view(), *batchDims);
    return one(std::move(y));
  }

  return std::nullopt;
}

} // namespace remat::onnximport
