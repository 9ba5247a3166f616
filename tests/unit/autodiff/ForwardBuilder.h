//===- ForwardBuilder.h - The text of a @forward for gradient checks -*- C++ -*-===//
//
// Builds the MLIR text of a small float64 `@forward` (arguments with names
// and roles, op lines, a scalar loss made of weighted sums of chosen values)
// for GradCheck. Shared by the finite-difference test files.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TESTS_AUTODIFF_FORWARDBUILDER_H
#define REMAT_TESTS_AUTODIFF_FORWARDBUILDER_H

#include "GradCheck.h"

#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace remat::gradcheck {

/// `tensor<2x3xf64>`-style type text (short for tensorType).
inline std::string T(const rt::Shape &shape, const std::string &element = "f64") {
  return tensorType(shape, element);
}

/// `array<i64: 1, 2>`: the text of a DenseI64ArrayAttr.
inline std::string i64Array(const std::vector<int64_t> &values) {
  std::string text = "array<i64";
  for (size_t i = 0; i < values.size(); ++i)
    text += (i ? ", " : ": ") + std::to_string(values[i]);
  return text + ">";
}

/// Builds the text of a `@forward`: arguments with names and roles, a body
/// of op lines, and a scalar loss made of weighted sums of chosen values.
class Forward {
public:
  explicit Forward(unsigned seed = 2024) : rng_(seed) {}

  Forward &param(const std::string &name, const rt::Shape &shape) {
    return arg(name, T(shape), "parameter");
  }
  Forward &input(const std::string &name, const std::string &type) {
    return arg(name, type, "input");
  }
  Forward &buffer(const std::string &name, const rt::Shape &shape) {
    return arg(name, T(shape), "buffer");
  }
  Forward &arg(const std::string &name, const std::string &type,
               const std::string &role) {
    args_.push_back("%" + name + ": " + type + " {remat.name = \"" + name +
                    "\", remat.role = \"" + role + "\"}");
    return *this;
  }
  Forward &op(const std::string &line) {
    body_ += "  " + line + "\n";
    return *this;
  }

  /// Appends reduce_sum(value * R) with a fresh random constant R of
  /// `shape` and returns the name of the 0-d result.
  std::string term(const std::string &value, const rt::Shape &shape) {
    std::string k = std::to_string(terms_++);
    std::string r = "%gc_r" + k, p = "%gc_p" + k, t = "%gc_t" + k;
    op(r + " = remat.constant " + randomDense(shape, rng_));
    op(p + " = remat.mul " + value + ", " + r + " : (" + T(shape) + ", " +
       T(shape) + ") -> " + T(shape));
    if (shape.empty())
      return p;
    std::vector<int64_t> axes(shape.size());
    std::iota(axes.begin(), axes.end(), 0);
    op(t + " = remat.reduce_sum " + p + " {axes = " + i64Array(axes) +
       ", keepdims = false} : (" + T(shape) + ") -> tensor<f64>");
    return t;
  }

  /// The module returning the sum of the given 0-d values as the loss.
  std::string loss(const std::vector<std::string> &terms) {
    std::string total = terms.front();
    for (size_t i = 1; i < terms.size(); ++i) {
      std::string sum = "%gc_s" + std::to_string(i);
      op(sum + " = remat.add " + total + ", " + terms[i] +
         " : (tensor<f64>, tensor<f64>) -> tensor<f64>");
      total = sum;
    }
    return returning(total, "tensor<f64>");
  }

  /// loss = reduce_sum(value * R).
  std::string weighted(const std::string &value, const rt::Shape &shape) {
    return loss({term(value, shape)});
  }

  /// The module returning `value` (a loss, or logits for an appended loss).
  std::string returning(const std::string &value, const std::string &type) {
    std::string text = "func.func @forward(";
    for (size_t i = 0; i < args_.size(); ++i)
      text += (i ? ",\n    " : "") + args_[i];
    text += ") -> " + type + " {\n" + body_ + "  return " + value + " : " +
            type + "\n}\n";
    return text;
  }

private:
  std::mt19937 rng_;
  std::vector<std::string> args_;
  std::string body_;
  int terms_ = 0;
};

} // namespace remat::gradcheck

#endif // REMAT_TESTS_AUTODIFF_FORWARDBUILDER_H
