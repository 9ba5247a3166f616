//===- CppLiterals.cpp - Values written as C++ source ---------------------===//

#include "CppLiterals.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <cstdio>

using llvm::ArrayRef;
using llvm::StringRef;

namespace remat {

std::string cppBool(bool value) { return value ? "true" : "false"; }

std::string cppInt(int64_t value) {
  // INT64_MIN has no literal form; spell it as an expression.
  if (value == INT64_MIN)
    return "(-9223372036854775807LL - 1)";
  return std::to_string(value) + (value > INT32_MAX || value < INT32_MIN
                                       ? "LL"
                                       : "");
}

std::string cppDouble(double value) {
  if (std::isnan(value))
    return "std::numeric_limits<double>::quiet_NaN()";
  if (std::isinf(value))
    return value > 0 ? "std::numeric_limits<double>::infinity()"
                     : "-std::numeric_limits<double>::infinity()";
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.17g", value);
  std::string text = buffer;
  // Keep it a double literal.
  if (text.find_first_of(".en") == std::string::npos)
    text += ".0";
  return text;
}

std::string cppIntList(ArrayRef<int64_t> values) {
  std::string text = "{";
  for (auto [i, v] : llvm::enumerate(values))
    text += (i ? ", " : "") + cppInt(v);
  return text + "}";
}



std::string cppString(StringRef text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\%03o", c);
      out += buffer;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string cppUnsigned(uint64_t value) {
  return std::to_string(value) + "ULL";
}

// The switches have no default, so a new enumerator is a compiler warning
// here until it has its name.

std::string cppLiteral(rt::UnaryOp op) {
  const char *name = "";
  switch (op) {
  case rt::UnaryOp::Neg: name = "Neg"; break;
  case rt::UnaryOp::Sqrt: name = "Sqrt"; break;
  case rt::UnaryOp::Exp: name = "Exp"; break;
  case rt::UnaryOp::Log: name = "Log"; break;
  case rt::UnaryOp::Reciprocal: name = "Reciprocal"; break;
  case rt::UnaryOp::Erf: name = "Erf"; break;
  case rt::UnaryOp::Tanh: name = "Tanh"; break;
  case rt::UnaryOp::Sigmoid: name = "Sigmoid"; break;
  case rt::UnaryOp::Relu: name = "Relu"; break;
  case rt::UnaryOp::GeluErf: name = "GeluErf"; break;
  case rt::UnaryOp::GeluTanh: name = "GeluTanh"; break;
  case rt::UnaryOp::Not: name = "Not"; break;
  case rt::UnaryOp::Abs: name = "Abs"; break;
  case rt::UnaryOp::LeakyRelu: name = "LeakyRelu"; break;
  case rt::UnaryOp::Elu: name = "Elu"; break;
  case rt::UnaryOp::Selu: name = "Selu"; break;
  case rt::UnaryOp::Softplus: name = "Softplus"; break;
  case rt::UnaryOp::Softsign: name = "Softsign"; break;
  case rt::UnaryOp::HardSigmoid: name = "HardSigmoid"; break;
  case rt::UnaryOp::Clip: name = "Clip"; break;
  case rt::UnaryOp::Sin: name = "Sin"; break;
  case rt::UnaryOp::Cos: name = "Cos"; break;
  }
  return std::string("remat::rt::UnaryOp::") + name;
}

std::string cppLiteral(rt::BinaryOp op) {
  const char *name = "";
  switch (op) {
  case rt::BinaryOp::Add: name = "Add"; break;
  case rt::BinaryOp::Sub: name = "Sub"; break;
  case rt::BinaryOp::Mul: name = "Mul"; break;
  case rt::BinaryOp::Div: name = "Div"; break;
  case rt::BinaryOp::Pow: name = "Pow"; break;
  case rt::BinaryOp::Max: name = "Max"; break;
  case rt::BinaryOp::Min: name = "Min"; break;
  case rt::BinaryOp::Equal: name = "Equal"; break;
  case rt::BinaryOp::Less: name = "Less"; break;
  case rt::BinaryOp::Greater: name = "Greater"; break;
  case rt::BinaryOp::And: name = "And"; break;
  case rt::BinaryOp::Or: name = "Or"; break;
  case rt::BinaryOp::PRelu: name = "PRelu"; break;
  }
  return std::string("remat::rt::BinaryOp::") + name;
}

std::string cppLiteral(rt::ReduceOp op) {
  const char *name = "";
  switch (op) {
  case rt::ReduceOp::Sum: name = "Sum"; break;
  case rt::ReduceOp::Mean: name = "Mean"; break;
  case rt::ReduceOp::Max: name = "Max"; break;
  }
  return std::string("remat::rt::ReduceOp::") + name;
}

std::string cppLiteral(rt::LossReduction reduction) {
  const char *name = "";
  switch (reduction) {
  case rt::LossReduction::None: name = "None"; break;
  case rt::LossReduction::Sum: name = "Sum"; break;
  case rt::LossReduction::Mean: name = "Mean"; break;
  }
  return std::string("remat::rt::LossReduction::") + name;
}

std::string cppLiteral(rt::PadMode mode) {
  const char *name = "";
  switch (mode) {
  case rt::PadMode::Constant: name = "Constant"; break;
  case rt::PadMode::Reflect: name = "Reflect"; break;
  case rt::PadMode::Edge: name = "Edge"; break;
  case rt::PadMode::Wrap: name = "Wrap"; break;
  }
  return std::string("remat::rt::PadMode::") + name;
}

std::string cppLiteral(const rt::Dims &dims) {
  return cppIntList(ArrayRef<int64_t>(dims.data(), dims.size()));
}

std::string cppLiteral(const rt::UnaryParams &params) {
  return "remat::rt::UnaryParams{/*alpha=*/" + cppDouble(params.alpha) +
         ", /*beta=*/" + cppDouble(params.beta) + ", /*gamma=*/" +
         cppDouble(params.gamma) + ", /*lower=*/" + cppDouble(params.lower) +
         ", /*upper=*/" + cppDouble(params.upper) + "}";
}

std::string cppLiteral(const rt::WindowParams &params) {
  return "remat::rt::WindowParams{" + cppLiteral(params.kernel) + ", " +
         cppLiteral(params.strides) + ", " + cppLiteral(params.pads) + ", " +
         cppLiteral(params.dilations) + "}";
}

std::string cppLiteral(const rt::SgdOptions &options) {
  return "remat::rt::SgdOptions{/*lr=*/" + cppDouble(options.lr) +
         ", /*momentum=*/" + cppDouble(options.momentum) +
         ", /*dampening=*/" + cppDouble(options.dampening) +
         ", /*weightDecay=*/" + cppDouble(options.weightDecay) +
         ", /*nesterov=*/" + cppBool(options.nesterov) + "}";
}

std::string cppLiteral(const rt::AdamOptions &options) {
  return "remat::rt::AdamOptions{/*lr=*/" + cppDouble(options.lr) +
         ", /*beta1=*/" + cppDouble(options.beta1) + ", /*beta2=*/" +
         cppDouble(options.beta2) + ", /*eps=*/" + cppDouble(options.eps) +
         ", /*weightDecay=*/" + cppDouble(options.weightDecay) +
         ", /*decoupledWeightDecay=*/" + cppBool(options.decoupledWeightDecay) +
         "}";
}

std::string cppLiteral(rt::ScatterReduction reduction) {
  const char *name = "";
  switch (reduction) {
  case rt::ScatterReduction::None: name = "None"; break;
  case rt::ScatterReduction::Add: name = "Add"; break;
  case rt::ScatterReduction::Mul: name = "Mul"; break;
  case rt::ScatterReduction::Max: name = "Max"; break;
  case rt::ScatterReduction::Min: name = "Min"; break;
  }
  return std::string("remat::rt::ScatterReduction::") + name;
}

std::string cppLiteral(const rt::ResizeParams &params) {
  const char *mode = "";
  switch (params.mode) {
  case rt::ResizeMode::Nearest: mode = "Nearest"; break;
  case rt::ResizeMode::Linear: mode = "Linear"; break;
  case rt::ResizeMode::Cubic: mode = "Cubic"; break;
  }
  const char *coordinates = "";
  switch (params.coordinates) {
  case rt::ResizeCoordinates::HalfPixel: coordinates = "HalfPixel"; break;
  case rt::ResizeCoordinates::HalfPixelSymmetric:
    coordinates = "HalfPixelSymmetric";
    break;
  case rt::ResizeCoordinates::PytorchHalfPixel:
    coordinates = "PytorchHalfPixel";
    break;
  case rt::ResizeCoordinates::AlignCorners: coordinates = "AlignCorners"; break;
  case rt::ResizeCoordinates::Asymmetric: coordinates = "Asymmetric"; break;
  }
  const char *nearest = "";
  switch (params.nearest) {
  case rt::ResizeNearest::RoundPreferFloor: nearest = "RoundPreferFloor"; break;
  case rt::ResizeNearest::RoundPreferCeil: nearest = "RoundPreferCeil"; break;
  case rt::ResizeNearest::Floor: nearest = "Floor"; break;
  case rt::ResizeNearest::Ceil: nearest = "Ceil"; break;
  }
  std::string scales = "{";
  for (size_t i = 0; i < params.scales.size(); ++i)
    scales += (i ? ", " : "") + cppDouble(params.scales[i]);
  return std::string("remat::rt::ResizeParams{remat::rt::ResizeMode::") +
         mode + ", remat::rt::ResizeCoordinates::" + coordinates +
         ", remat::rt::ResizeNearest::" + nearest + ", " + scales + "}, " +
         cppDouble(params.cubicCoeffA) + ", " +
         (params.excludeOutside ? "true" : "false") + "}";
}

} // namespace remat
