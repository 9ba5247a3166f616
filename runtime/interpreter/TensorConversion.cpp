//===- TensorConversion.cpp - MLIR types and attributes <-> runtime -------===//

#include "remat/Interpreter/TensorConversion.h"
#include "remat/Interpreter/Interpreter.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace mlir;

namespace remat {

std::optional<rt::DType> dtypeFromType(Type type) {
  if (type.isF32())
    return rt::DType::F32;
  if (type.isF64())
    return rt::DType::F64;
  if (type.isF16())
    return rt::DType::F16;
  if (type.isBF16())
    return rt::DType::BF16;
  if (auto intType = dyn_cast<IntegerType>(type)) {
    const unsigned width = intType.getWidth();
    if (width == 1 && !intType.isUnsigned())
      return rt::DType::Bool;
    if (intType.isUnsigned())
      return width == 8 ? std::optional(rt::DType::U8) : std::nullopt;
    switch (width) { // signless (or signed) integers
    case 8: return rt::DType::I8;
    case 32: return rt::DType::I32;
    case 64: return rt::DType::I64;
    default: break;
    }
  }
  return std::nullopt;
}

Type typeFromDType(rt::DType dtype, MLIRContext *context) {
  Builder b(context);
  switch (dtype) {
  case rt::DType::F32: return b.getF32Type();
  case rt::DType::F64: return b.getF64Type();
  case rt::DType::F16: return b.getF16Type();
  case rt::DType::BF16: return b.getBF16Type();
  case rt::DType::I64: return b.getI64Type();
  case rt::DType::I32: return b.getI32Type();
  case rt::DType::I8: return b.getIntegerType(8);
  case rt::DType::U8: return b.getIntegerType(8, /*isSigned=*/false);
  case rt::DType::Bool: return b.getI1Type();
  }
  return {};
}

std::string typeToString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

rt::DType dtypeOf(ShapedType type) {
  if (std::optional<rt::DType> dtype = dtypeFromType(type.getElementType()))
    return *dtype;
  throw InterpreterError("element type of " + typeToString(type) +
                         " has no runtime equivalent");
}

rt::Shape shapeOf(ShapedType type) {
  if (!type.hasStaticShape())
    throw InterpreterError("type " + typeToString(type) +
                           " does not have a static shape");
  return rt::Shape(type.getShape().begin(), type.getShape().end());
}

namespace {

/// Fills `tensor` from a dense attribute. i1 is bit-packed in MLIR's storage,
/// so booleans go through the value iterator; everything else is stored with
/// the runtime's element size and byte order, one element when splat.
void fillFromDense(DenseElementsAttr dense, rt::Tensor &tensor) {
  const size_t elementSize = rt::dtypeSize(tensor.dtype());
  const size_t numel = static_cast<size_t>(tensor.numel());
  if (tensor.dtype() == rt::DType::Bool) {
    auto *out = tensor.as<uint8_t>();
    if (dense.isSplat()) {
      std::memset(out, dense.getSplatValue<bool>() ? 1 : 0, numel);
      return;
    }
    size_t i = 0;
    for (bool value : dense.getValues<bool>())
      out[i++] = value ? 1 : 0;
    return;
  }
  ArrayRef<char> raw = dense.getRawData();
  auto *out = static_cast<char *>(tensor.data());
  if (dense.isSplat()) {
    if (raw.size() < elementSize)
      throw InterpreterError("constant splat holds " +
                             std::to_string(raw.size()) + " bytes, expected " +
                             std::to_string(elementSize));
    for (size_t i = 0; i < numel; ++i)
      std::memcpy(out + i * elementSize, raw.data(), elementSize);
    return;
  }
  if (raw.size() != numel * elementSize)
    throw InterpreterError("constant holds " + std::to_string(raw.size()) +
                           " bytes, expected " +
                           std::to_string(numel * elementSize));
  if (!raw.empty()) // a zero-sized constant may have no storage at all
    std::memcpy(out, raw.data(), raw.size());
}

void fillFromResource(DenseResourceElementsAttr resource, rt::Tensor &tensor) {
  DenseResourceElementsHandle handle = resource.getRawHandle();
  AsmResourceBlob *blob = handle.getBlob();
  if (!blob)
    throw InterpreterError("dense resource '" + handle.getKey().str() +
                           "' has no data (its blob was not loaded)");
  ArrayRef<char> data = blob->getData();
  if (data.size() != tensor.bytes())
    throw InterpreterError("dense resource '" + handle.getKey().str() +
                           "' holds " + std::to_string(data.size()) +
                           " bytes, expected " +
                           std::to_string(tensor.bytes()) + " for " +
                           typeToString(resource.getType()));
  std::memcpy(tensor.data(), data.data(), data.size());
}

} // namespace

rt::Tensor tensorFromElementsAttr(ElementsAttr attr) {
  auto type = cast<ShapedType>(attr.getType());
  rt::Tensor tensor(dtypeOf(type), shapeOf(type));
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    fillFromDense(dense, tensor);
    return tensor;
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    fillFromResource(resource, tensor);
    return tensor;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  attr.print(os);
  if (text.size() > 80)
    text = text.substr(0, 77) + "...";
  throw InterpreterError("unsupported constant attribute kind: " + text);
}

} // namespace remat
