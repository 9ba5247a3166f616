//===- ImportContext.cpp - Value map, constants, errors -------------------===//

#include "ImportContext.h"
#include "ModelLoading.h"

#include "remat/Dialect/RematOps.h"
#include "remat/runtime/TensorProtoIO.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>

using namespace mlir;

namespace remat::onnximport {

Type elementTypeFor(MLIRContext *ctx, rt::DType dtype) {
  Builder b(ctx);
  switch (dtype) {
  case rt::DType::F32: return b.getF32Type();
  case rt::DType::F64: return b.getF64Type();
  case rt::DType::F16: return b.getF16Type();
  case rt::DType::BF16: return b.getBF16Type();
  case rt::DType::I64: return b.getI64Type();
  case rt::DType::I32: return b.getI32Type();
  case rt::DType::I8: return b.getI8Type();
  case rt::DType::U8: return IntegerType::get(ctx, 8, IntegerType::Unsigned);
  case rt::DType::Bool: return b.getI1Type();
  }
  return b.getF32Type();
}

std::optional<rt::DType> dtypeFor(Type type) {
  if (type.isF32()) return rt::DType::F32;
  if (type.isF64()) return rt::DType::F64;
  if (type.isF16()) return rt::DType::F16;
  if (type.isBF16()) return rt::DType::BF16;
  if (type.isInteger(1)) return rt::DType::Bool;
  if (type.isUnsignedInteger(8)) return rt::DType::U8;
  if (type.isSignlessInteger(8)) return rt::DType::I8;
  if (type.isSignlessInteger(32)) return rt::DType::I32;
  if (type.isSignlessInteger(64)) return rt::DType::I64;
  return std::nullopt;
}

std::optional<rt::DType> dtypeFromOnnxType(int onnxType) {
  using TP = onnx::TensorProto;
  switch (onnxType) {
  case TP::FLOAT: return rt::DType::F32;
  case TP::DOUBLE: return rt::DType::F64;
  case TP::FLOAT16: return rt::DType::F16;
  case TP::BFLOAT16: return rt::DType::BF16;
  case TP::INT64: return rt::DType::I64;
  case TP::INT32: return rt::DType::I32;
  case TP::INT8: return rt::DType::I8;
  case TP::UINT8: return rt::DType::U8;
  case TP::BOOL: return rt::DType::Bool;
  default: return std::nullopt;
  }
}

bool shapeIsSane(llvm::ArrayRef<int64_t> shape, rt::DType dtype) {
  double bytes = static_cast<double>(rt::dtypeSize(dtype));
  for (int64_t d : shape) {
    if (d < 0)
      return false;
    bytes *= static_cast<double>(d);
  }
  return bytes <= kMaxTensorBytes;
}

ImportContext::ImportContext(MLIRContext &ctx, const onnx::ModelProto &model,
                             std::string file, std::string modelDir,
                             const OnnxImportOptions &options)
    : ctx(ctx), builder(&ctx), model(model), file(std::move(file)),
      modelDir(std::move(modelDir)), options(options) {}

void ImportContext::error(const llvm::Twine &message) {
  hadError = true;
  // One line per error, whatever the message (ONNX's own can span lines).
  llvm::errs() << "error: " << file << ": " << oneLine(message.str()) << "\n";
}

ValueEntry *ImportContext::lookup(const std::string &name) {
  auto it = values.find(name);
  return it == values.end() ? nullptr : &it->second;
}

const rt::Tensor *ImportContext::constant(const std::string &name,
                                          bool required) {
  ValueEntry *entry = lookup(name);
  if (!entry)
    return nullptr;
  // Integer initializers up to this many elements fold (shape arithmetic).
  constexpr int64_t kFoldableInitializerElements = 4096;
  if (!entry->constant && entry->proto && !required &&
      entry->integerInitializer) {
    int64_t numel = 1;
    for (int64_t d : entry->proto->dims())
      numel *= d;
    if (numel <= kFoldableInitializerElements) {
      entry->constant =
          std::make_shared<rt::Tensor>(rt::tensorFromProto(*entry->proto, modelDir));
      entry->foldable = true;
      if (!entry->argName.empty())
        usedAsConstant.insert(entry->argName);
    }
  }
  if (!entry->constant && entry->proto && required)
    entry->constant =
        std::make_shared<rt::Tensor>(rt::tensorFromProto(*entry->proto, modelDir));
  if (!entry->constant)
    return nullptr;
  if (!entry->foldable && !required)
    return nullptr;
  if (!entry->argName.empty() && required)
    usedAsConstant.insert(entry->argName);
  return entry->constant.get();
}

std::optional<TypeInfo> ImportContext::typeOf(const std::string &name) {
  ValueEntry *entry = lookup(name);
  if (!entry)
    return std::nullopt;
  if (entry->value) {
    auto type = llvm::cast<RankedTensorType>(entry->value.getType());
    auto dtype = dtypeFor(type.getElementType());
    if (!dtype)
      return std::nullopt;
    return TypeInfo{*dtype, rt::Shape(type.getShape().begin(), type.getShape().end())};
  }
  if (entry->constant)
    return TypeInfo{entry->constant->dtype(), entry->constant->shape()};
  return std::nullopt;
}

Value ImportContext::value(const std::string &name, Location loc) {
  ValueEntry *entry = lookup(name);
  if (!entry)
    return {};
  if (!entry->value && entry->constant)
    entry->value = materialize(*entry->constant, loc);
  return entry->value;
}

Value ImportContext::materialize(const rt::Tensor &tensor, Location loc) {
  auto type = RankedTensorType::get(tensor.shape(),
                                    elementTypeFor(&ctx, tensor.dtype()));
  size_t elemSize = rt::dtypeSize(tensor.dtype());
  int64_t n = tensor.numel();
  const char *data = static_cast<const char *>(tensor.data());
  bool isSplat = n > 0;
  for (int64_t i = 1; i < n && isSplat; ++i)
    isSplat = std::memcmp(data, data + i * elemSize, elemSize) == 0;
  DenseElementsAttr attr;
  if (tensor.dtype() == rt::DType::Bool) {
    const uint8_t *bytes = tensor.as<uint8_t>();
    if (isSplat) {
      attr = DenseElementsAttr::get(type, bytes[0] != 0);
    } else {
      llvm::SmallVector<bool> bits(n);
      for (int64_t i = 0; i < n; ++i)
        bits[i] = bytes[i] != 0;
      attr = DenseElementsAttr::get(type, llvm::ArrayRef<bool>(bits));
    }
  } else {
    size_t bytes = isSplat ? elemSize : static_cast<size_t>(n) * elemSize;
    attr = DenseElementsAttr::getFromRawBuffer(
        type, llvm::ArrayRef<char>(n == 0 ? nullptr : data, bytes));
  }
  return builder.create<ConstantOp>(loc, attr).getResult();
}

Value ImportContext::splat(Type elementType, llvm::ArrayRef<int64_t> shape,
                           double value, Location loc) {
  auto type = RankedTensorType::get(shape, elementType);
  Attribute scalar;
  if (auto f = llvm::dyn_cast<FloatType>(elementType))
    scalar = FloatAttr::get(f, value);
  else if (elementType.isInteger(1))
    scalar = BoolAttr::get(&ctx, value != 0);
  else
    scalar = IntegerAttr::get(elementType, static_cast<int64_t>(value));
  DenseElementsAttr attr;
  if (elementType.isInteger(1))
    attr = DenseElementsAttr::get(type, value != 0);
  else
    attr = DenseElementsAttr::get(type, scalar);
  return builder.create<ConstantOp>(loc, attr).getResult();
}

Location ImportContext::nodeLocation(const std::string &nodeLabel) {
  return NameLoc::get(StringAttr::get(&ctx, nodeLabel),
                      FileLineColLoc::get(&ctx, file, 0, 0));
}

Operation *ImportContext::finishInferred(
    OperationState &state,
    llvm::function_ref<LogicalResult(llvm::SmallVectorImpl<Type> &)> infer) {
  state.types.clear();
  llvm::SmallVector<Type, 4> types;
  lastDiagnostic.clear();
  LogicalResult result = failure();
  {
    ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
      if (!lastDiagnostic.empty())
        lastDiagnostic += "; ";
      lastDiagnostic += diag.str();
      return success();
    });
    result = infer(types);
  }
  if (failed(result)) {
    if (lastDiagnostic.empty())
      lastDiagnostic = "result type inference failed";
    return nullptr;
  }
  state.addTypes(types);
  Operation *op = builder.create(state);
  return verifyNew(op) ? op : nullptr;
}

bool ImportContext::verifyNew(Operation *op) {
  lastDiagnostic.clear();
  LogicalResult result = failure();
  {
    ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
      if (!lastDiagnostic.empty())
        lastDiagnostic += "; ";
      lastDiagnostic += diag.str();
      return success();
    });
    result = mlir::verify(op, /*verifyRecursively=*/false);
  }
  if (succeeded(result))
    return true;
  if (lastDiagnostic.empty())
    lastDiagnostic = "the op does not verify";
  op->erase();
  return false;
}

} // namespace remat::onnximport
