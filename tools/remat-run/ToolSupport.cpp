//===- ToolSupport.cpp - remat-run's errors, files and number formatting --===//

#include "ToolSupport.h"

#include <cstdio>
#include <filesystem>

namespace fs = std::filesystem;

namespace remat::run {

int &diagnosticErrorCount() {
  static int count = 0;
  return count;
}

std::vector<std::string> numberedFiles(const std::string &dir,
                                       const std::string &stem) {
  if (!fs::is_directory(dir))
    throw ToolError("'" + dir + "' is not a directory");
  std::vector<std::string> files;
  for (size_t i = 0;; ++i) {
    fs::path path = fs::path(dir) / (stem + "_" + std::to_string(i) + ".pb");
    if (!fs::exists(path))
      break;
    files.push_back(path.string());
  }
  return files;
}

std::string describe(const rt::TensorView &view) {
  return std::string(rt::dtypeName(view.dtype)) + " " +
         rt::shapeToString(view.shape);
}

double elementAsDouble(const rt::TensorView &view, int64_t i) {
  using rt::DType;
  switch (view.dtype) {
  case DType::F32: return view.as<float>()[i];
  case DType::F64: return view.as<double>()[i];
  case DType::F16: return rt::halfToFloat(view.as<uint16_t>()[i]);
  case DType::BF16: return rt::bfloat16ToFloat(view.as<uint16_t>()[i]);
  case DType::I64: return static_cast<double>(view.as<int64_t>()[i]);
  case DType::I32: return view.as<int32_t>()[i];
  case DType::I8: return view.as<int8_t>()[i];
  case DType::U8:
  case DType::Bool: return view.as<uint8_t>()[i];
  }
  return 0;
}

int64_t elementAsInt(const rt::TensorView &view, int64_t i) {
  using rt::DType;
  switch (view.dtype) {
  case DType::I64: return view.as<int64_t>()[i];
  case DType::I32: return view.as<int32_t>()[i];
  case DType::I8: return view.as<int8_t>()[i];
  case DType::U8: return view.as<uint8_t>()[i];
  case DType::Bool: return view.as<uint8_t>()[i] != 0;
  default: return static_cast<int64_t>(elementAsDouble(view, i));
  }
}

std::string formatNumber(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  return buffer;
}

std::string argString(mlir::func::FuncOp func, unsigned index,
                      llvm::StringRef attr) {
  if (auto value = func.getArgAttrOfType<mlir::StringAttr>(index, attr))
    return value.str();
  return "";
}

std::string resultString(mlir::func::FuncOp func, unsigned index,
                         llvm::StringRef attr) {
  if (auto value = func.getResultAttrOfType<mlir::StringAttr>(index, attr))
    return value.str();
  return "";
}

double millisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

} // namespace remat::run
