//===- Tensor.cpp - DType helpers, owned tensors, 16-bit floats -----------===//

#include "remat/runtime/Tensor.h"

#include "common/Float16.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace remat::rt {

size_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F64:
  case DType::I64: return 8;
  case DType::F32:
  case DType::I32: return 4;
  case DType::F16:
  case DType::BF16: return 2;
  case DType::I8:
  case DType::U8:
  case DType::Bool: return 1;
  }
  throw RuntimeError("dtypeSize: invalid dtype");
}

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32: return "f32";
  case DType::F64: return "f64";
  case DType::F16: return "f16";
  case DType::BF16: return "bf16";
  case DType::I64: return "i64";
  case DType::I32: return "i32";
  case DType::I8: return "i8";
  case DType::U8: return "u8";
  case DType::Bool: return "bool";
  }
  return "<invalid dtype>";
}

bool isFloat(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F64 || dtype == DType::F16 ||
         dtype == DType::BF16;
}

void throwInlineCapacityExceeded(size_t needed, size_t capacity) {
  throw RuntimeError("rank " + std::to_string(needed) +
                     " exceeds the runtime's maximum rank " +
                     std::to_string(capacity));
}

int64_t numElements(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string shapeToString(const Shape &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

void Tensor::FreeDeleter::operator()(void *p) const { std::free(p); }

Tensor::Tensor(DType dtype, Shape shape) {
  for (int64_t d : shape)
    if (d < 0)
      throw RuntimeError("Tensor: negative dimension in " +
                         shapeToString(shape));
  // aligned_alloc needs a size that is a multiple of the alignment; a
  // zero-element tensor still gets a buffer so its view is not "absent".
  constexpr size_t kAlign = 64;
  size_t bytes = static_cast<size_t>(numElements(shape)) * dtypeSize(dtype);
  size_t padded = (bytes + kAlign - 1) / kAlign * kAlign;
  if (padded == 0)
    padded = kAlign;
  void *p = std::aligned_alloc(kAlign, padded);
  if (!p)
    throw std::bad_alloc();
  std::memset(p, 0, padded);
  storage_.reset(p);
  view_ = TensorView(dtype, std::move(shape), p);
}

//===----------------------------------------------------------------------===//
// 16-bit floats. Narrowing rounds to nearest, ties to even; NaN stays NaN.
// The bit manipulation is common/Float16.h's, shared with the CUDA casts.
//===----------------------------------------------------------------------===//

float halfToFloat(uint16_t bits) { return common::halfBitsToFloat(bits); }

uint16_t floatToHalf(float value) { return common::floatToHalfBits(value); }

float bfloat16ToFloat(uint16_t bits) {
  return common::bfloat16BitsToFloat(bits);
}

uint16_t floatToBfloat16(float value) {
  return common::floatToBfloat16Bits(value);
}

} // namespace remat::rt
