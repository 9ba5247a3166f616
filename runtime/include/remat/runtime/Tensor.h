//===- Tensor.h - Runtime tensor views and owned buffers ---------*- C++ -*-===//
//
// The runtime's data model. Kernels never allocate: they read and write
// `TensorView`s, plain (dtype, shape, pointer) triples over contiguous
// row-major memory that the caller owns (an arena slot, a weight buffer, a
// test's `Tensor`). This is what lets the same kernels serve the interpreter,
// the memory-planned executor and generated code.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_TENSOR_H
#define REMAT_RUNTIME_TENSOR_H

#include "remat/runtime/InlineVector.h"

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace remat::rt {

/// Element types the runtime understands. Floating-point math takes F32,
/// F64, F16 and BF16; F16 and BF16 are storage types, computed in fp32 and
/// rounded on store (KernelApi.inc).
enum class DType : uint8_t { F32, F64, F16, BF16, I64, I32, I8, U8, Bool };

size_t dtypeSize(DType dtype);
const char *dtypeName(DType dtype);
bool isFloat(DType dtype);

/// Dimensions, inline (no heap allocation) up to kMaxRank.
using Shape = InlineVector<int64_t, kMaxRank>;
/// A small list of axes, a permutation, slice starts: at most one per dim.
using Dims = InlineVector<int64_t, kMaxRank>;

int64_t numElements(const Shape &shape);
std::string shapeToString(const Shape &shape);

/// Thrown by kernels for conditions the compiler's verifiers should have
/// excluded (unsupported dtype, mismatched shapes). Messages name the kernel.
struct RuntimeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A non-owning view of a contiguous row-major tensor.
struct TensorView {
  DType dtype = DType::F32;
  Shape shape;
  void *data = nullptr;

  TensorView() = default;
  TensorView(DType dtype, Shape shape, void *data)
      : dtype(dtype), shape(std::move(shape)), data(data) {}

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t numel() const { return numElements(shape); }
  size_t bytes() const { return static_cast<size_t>(numel()) * dtypeSize(dtype); }
  /// True for an absent optional operand or result.
  bool empty() const { return data == nullptr; }

  template <typename T> T *as() const { return static_cast<T *>(data); }
};

/// A read-only list of views (concat's inputs, split's outputs), built
/// from a std::vector or a braced list without copying them, so that a
/// generated call `concat({a, b}, y, 1)` allocates nothing. It does not own
/// the views: use it as a parameter only.
class TensorViewList {
public:
  TensorViewList(const std::vector<TensorView> &views)
      : data_(views.data()), size_(views.size()) {}
  // The array behind a braced argument lives to the end of the
  // full-expression holding the call, i.e. as long as the kernel uses the
  // list; GCC warns about keeping the pointer regardless.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  TensorViewList(std::initializer_list<TensorView> views)
      : data_(views.begin()), size_(views.size()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const TensorView &operator[](size_t i) const { return data_[i]; }
  const TensorView *begin() const { return data_; }
  const TensorView *end() const { return data_ + size_; }

private:
  const TensorView *data_;
  size_t size_;
};

/// An owned, 64-byte aligned, zero-initialised buffer with a view on it.
class Tensor {
public:
  Tensor() = default;
  Tensor(DType dtype, Shape shape);

  const TensorView &view() const { return view_; }
  DType dtype() const { return view_.dtype; }
  const Shape &shape() const { return view_.shape; }
  int64_t numel() const { return view_.numel(); }
  size_t bytes() const { return view_.bytes(); }
  void *data() const { return view_.data; }
  template <typename T> T *as() const { return view_.as<T>(); }

private:
  struct FreeDeleter {
    void operator()(void *p) const;
  };
  std::unique_ptr<void, FreeDeleter> storage_;
  TensorView view_;
};

/// Conversions between storage types and float, used by kernels and tests.
float halfToFloat(uint16_t bits);
uint16_t floatToHalf(float value);
float bfloat16ToFloat(uint16_t bits);
uint16_t floatToBfloat16(float value);

} // namespace remat::rt

#endif // REMAT_RUNTIME_TENSOR_H
