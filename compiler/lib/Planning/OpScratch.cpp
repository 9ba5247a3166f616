//===- OpScratch.cpp - Workspace scratch of a step's ops ------------------===//
//
// The Call of KernelBindings.h that sizes an op's scratch: it builds the
// kernel's arguments as the interpreter would, with views that carry the
// values' dtypes and shapes but no data, and asks the kernel's
// *ScratchBytes function instead of running it.
//
//===----------------------------------------------------------------------===//

#include "OpScratch.h"

#include "remat/Interpreter/TensorConversion.h"
#include "remat/Target/KernelBindings.h"

#include <algorithm>

using namespace mlir;

namespace remat {
namespace {

/// A view with the value's dtype and shape and no data: what the scratch
/// functions read. An absent optional value is an empty view.
rt::TensorView view(Value value) {
  if (!value)
    return rt::TensorView();
  auto type = cast<ShapedType>(value.getType());
  // Not dtypeOf()/shapeOf(): they throw, and a pass must not. The dialect's
  // types all have a runtime dtype.
  const rt::DType dtype =
      dtypeFromType(type.getElementType()).value_or(rt::DType::F32);
  rt::Shape shape(type.getShape().begin(), type.getShape().end());
  // Non-null so that the view does not read as absent; never dereferenced.
  static char marker;
  return rt::TensorView(dtype, shape, &marker);
}

/// Evaluates a kernel binding to the bytes of scratch its call takes.
class ScratchSizer {
public:
  rt::TensorView operand(Value value) { return view(value); }
  rt::TensorView result(Value value) { return view(value); }
  rt::TensorView optionalResult(Value value) {
    return value.use_empty() ? rt::TensorView() : view(value);
  }
  rt::TensorView resultWithShape(Value value,
                                 const std::vector<int64_t> &shape) {
    rt::TensorView v = view(value);
    return rt::TensorView(v.dtype, rt::Shape(shape.begin(), shape.end()),
                          v.data);
  }
  std::vector<rt::TensorView> operands(ValueRange values) {
    std::vector<rt::TensorView> views;
    for (Value value : values)
      views.push_back(view(value));
    return views;
  }
  std::vector<rt::TensorView> results(ValueRange values) {
    return operands(values);
  }
  rt::TensorView none() { return rt::TensorView(); }
  int64_t stepNumber(Value) { return 1; }
  uint64_t dropoutStep() { return 0; }

  template <typename Run, typename Scratch, typename... Args>
  LogicalResult call(const KernelRef<Run, Scratch> &kernel,
                     const Args &...args) {
    bytes = kernel.scratch(args...);
    return success();
  }
  LogicalResult alias(Value, Value) { return success(); }
  LogicalResult constant(Value, ElementsAttr) { return success(); }
  /// A malformed op is the verifiers' and the emitter's to report.
  LogicalResult fail(Operation *, const std::string &) { return failure(); }

  size_t bytes = 0;
};

} // namespace

int64_t opScratchBytes(Operation *op) {
  const KernelBinding<ScratchSizer> *binding =
      KernelBindings<ScratchSizer>::get().lookup(op);
  if (!binding)
    return 0;
  ScratchSizer sizer;
  if (failed((*binding)(op, sizer)))
    return 0;
  return static_cast<int64_t>(sizer.bytes);
}

int64_t maxOpScratchBytes(func::FuncOp func) {
  int64_t most = 0;
  func.walk([&](Operation *op) { most = std::max(most, opScratchBytes(op)); });
  return most;
}

} // namespace remat
