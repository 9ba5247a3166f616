//===- InlineVector.h - A vector with fixed inline capacity ------*- C++ -*-===//
//
// Shapes, strides and the small integer lists kernels take (axes, a
// permutation, window sizes) are built on every kernel call; as std::vector
// each one was a heap allocation inside the training step. InlineVector keeps
// up to N elements in place and otherwise reads like std::vector (the subset
// the runtime uses), so a step can run without touching the heap. Exceeding
// N is a RuntimeError, never an allocation; the compiler refuses tensors of
// rank above kMaxRank at import, so generated code never gets there.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_INLINEVECTOR_H
#define REMAT_RUNTIME_INLINEVECTOR_H

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace remat::rt {

/// The highest tensor rank the runtime supports (shapes and strides are
/// InlineVectors of this capacity).
constexpr size_t kMaxRank = 8;

/// Thrown when an InlineVector would grow past its capacity.
[[noreturn]] void throwInlineCapacityExceeded(size_t needed, size_t capacity);

template <typename T, size_t N> class InlineVector {
public:
  using value_type = T;
  using size_type = size_t;
  using difference_type = std::ptrdiff_t;
  using reference = T &;
  using const_reference = const T &;
  using pointer = T *;
  using const_pointer = const T *;
  using iterator = T *;
  using const_iterator = const T *;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  InlineVector() = default;
  explicit InlineVector(size_t count, const T &value = T()) {
    resize(count, value);
  }
  InlineVector(std::initializer_list<T> values)
      : InlineVector(values.begin(), values.end()) {}
  template <typename It,
            typename = typename std::iterator_traits<It>::iterator_category>
  InlineVector(It first, It last) {
    for (; first != last; ++first)
      push_back(static_cast<T>(*first));
  }
  /// From a std::vector (code outside the step: the interpreter, tests).
  InlineVector(const std::vector<T> &values)
      : InlineVector(values.begin(), values.end()) {}

  /// To a std::vector, for code that needs one (outside the step).
  operator std::vector<T>() const { return std::vector<T>(begin(), end()); }
  /// To a (pointer, length) view such as llvm::ArrayRef, for compiler code
  /// that hands shapes to MLIR.
  template <typename View,
            typename = std::enable_if_t<
                std::is_constructible_v<View, const T *, size_t> &&
                !std::is_same_v<View, std::vector<T>>>>
  operator View() const {
    return View(data(), size());
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  static constexpr size_t capacity() { return N; }

  T &operator[](size_t i) { return data_[i]; }
  const T &operator[](size_t i) const { return data_[i]; }
  T &at(size_t i) { return i < size_ ? data_[i] : outOfRange(); }
  const T &at(size_t i) const {
    return i < size_ ? data_[i] : const_cast<InlineVector *>(this)->outOfRange();
  }
  T &front() { return data_[0]; }
  const T &front() const { return data_[0]; }
  T &back() { return data_[size_ - 1]; }
  const T &back() const { return data_[size_ - 1]; }
  T *data() { return data_; }
  const T *data() const { return data_; }

  iterator begin() { return data_; }
  iterator end() { return data_ + size_; }
  const_iterator begin() const { return data_; }
  const_iterator end() const { return data_ + size_; }
  const_iterator cbegin() const { return data_; }
  const_iterator cend() const { return data_ + size_; }
  reverse_iterator rbegin() { return reverse_iterator(end()); }
  reverse_iterator rend() { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const { return const_reverse_iterator(begin()); }

  void clear() { size_ = 0; }
  void push_back(const T &value) {
    reserve(size_ + 1);
    data_[size_++] = value;
  }
  template <typename... Args> T &emplace_back(Args &&...args) {
    push_back(T(std::forward<Args>(args)...));
    return back();
  }
  void pop_back() { --size_; }
  void resize(size_t count, const T &value = T()) {
    reserve(count);
    for (size_t i = size_; i < count; ++i)
      data_[i] = value;
    size_ = count;
  }
  void assign(size_t count, const T &value) {
    clear();
    resize(count, value);
  }
  /// Checks capacity only: the storage is always N elements.
  void reserve(size_t count) const {
    if (count > N)
      throwInlineCapacityExceeded(count, N);
  }

  iterator insert(const_iterator pos, const T &value) {
    return insert(pos, &value, &value + 1);
  }
  iterator insert(const_iterator pos, size_t count, const T &value) {
    const size_t at = static_cast<size_t>(pos - begin());
    reserve(size_ + count);
    std::move_backward(data_ + at, data_ + size_, data_ + size_ + count);
    std::fill(data_ + at, data_ + at + count, value);
    size_ += count;
    return data_ + at;
  }
  template <typename It,
            typename = typename std::iterator_traits<It>::iterator_category>
  iterator insert(const_iterator pos, It first, It last) {
    const size_t at = static_cast<size_t>(pos - begin());
    // Through a copy: [first, last) may point into this vector.
    InlineVector inserted(first, last);
    const size_t count = inserted.size();
    reserve(size_ + count);
    std::move_backward(data_ + at, data_ + size_, data_ + size_ + count);
    std::copy(inserted.begin(), inserted.end(), data_ + at);
    size_ += count;
    return data_ + at;
  }
  iterator insert(const_iterator pos, std::initializer_list<T> values) {
    return insert(pos, values.begin(), values.end());
  }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    const size_t from = static_cast<size_t>(first - begin());
    const size_t to = static_cast<size_t>(last - begin());
    std::move(data_ + to, data_ + size_, data_ + from);
    size_ -= to - from;
    return data_ + from;
  }

  friend bool operator==(const InlineVector &a, const InlineVector &b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator!=(const InlineVector &a, const InlineVector &b) {
    return !(a == b);
  }
  friend bool operator<(const InlineVector &a, const InlineVector &b) {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(),
                                        b.end());
  }

private:
  [[noreturn]] T &outOfRange() {
    throw std::out_of_range("InlineVector index out of range");
  }

  T data_[N] = {};
  size_t size_ = 0;
};

} // namespace remat::rt

#endif // REMAT_RUNTIME_INLINEVECTOR_H
