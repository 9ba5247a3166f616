//===- GradCheck.h - Finite-difference checks of remat-autodiff -*- C++ -*-===//
//
// Checks the gradients that remat-autodiff builds against central finite
// differences. Given the text of a `@forward` whose scalar result is the loss
// (or whose logits get a loss appended by the pass), GradCheck
//  1. parses it, clones the module and runs remat-autodiff on the clone with
//     return-gradients=true (sgd, lr = 0, so nothing else changes),
//  2. fills every float argument with seeded random values (per-argument
//     generators for positive values, distinct values, ...; integer
//     arguments such as labels and indices are given explicitly),
//  3. runs @train_step in the interpreter and collects each parameter's
//     gradient,
//  4. evaluates the loss at x +- h e_i for every element of every parameter,
//  5. expects max|g - g_fd| <= tol * max(1, max|g_fd|) per parameter, and on
//     failure names the worst element (index, analytic, numeric).
// Failures are reported through GoogleTest (ADD_FAILURE); nothing is printed
// on success.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TESTS_AUTODIFF_GRADCHECK_H
#define REMAT_TESTS_AUTODIFF_GRADCHECK_H

#include "remat/runtime/Tensor.h"

#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace remat::gradcheck {

/// Fills `n` values of an argument.
using Fill = std::function<void(double *values, int64_t n, std::mt19937 &rng)>;

/// Uniform in [lo, hi).
Fill uniform(double lo, double hi);
/// Uniform in [lo, hi) with a random sign: |x| >= lo keeps values away from
/// kinks at 0 (abs, relu) and poles (reciprocal, div).
Fill awayFromZero(double lo = 0.2, double hi = 2.0);
/// Uniform in [lo, hi), but at least `margin` from each of `kinks` (clip's
/// bounds, hard_sigmoid's saturation points).
Fill awayFrom(double lo, double hi, std::vector<double> kinks,
              double margin = 0.05);
/// A random permutation of n evenly spaced values in [lo, hi], jittered by at
/// most a quarter of the spacing: no two values are closer than half the
/// spacing, so max-like ops have no ties (and no tie can appear under a
/// perturbation of h).
Fill distinct(double lo = -2.0, double hi = 2.0);

/// `tensor<2x3xf64>`-style type text; a 0-d shape gives `tensor<f64>`.
std::string tensorType(const rt::Shape &shape, const std::string &element = "f64");

/// `dense<[[...], ...]> : tensor<...xf64>`: MLIR text of a constant with
/// values uniform in +-[0.25, 1.5] (random signs), so that every element of
/// the tensor it weights matters, each with a different weight.
std::string randomDense(const rt::Shape &shape, std::mt19937 &rng);

/// An i64 (or other integer) tensor with the given values.
rt::Tensor i64Tensor(const rt::Shape &shape, const std::vector<int64_t> &values);
rt::Tensor boolTensor(const rt::Shape &shape, const std::vector<bool> &values);

class GradCheck {
public:
  explicit GradCheck(std::string source);

  /// Relative tolerance (default 1e-6) and difference step (default 1e-6).
  GradCheck &tolerance(double tol) { tol_ = tol; return *this; }
  GradCheck &step(double h) { h_ = h; return *this; }
  /// Seed of the argument values (default 1).
  GradCheck &seed(unsigned seed) { seed_ = seed; return *this; }
  /// The generator of one float argument (by remat.name), or of every float
  /// argument without its own (default: uniform(-2, 2)).
  GradCheck &fill(const std::string &name, Fill fill);
  GradCheck &fillAll(Fill fill) { defaultFill_ = std::move(fill); return *this; }
  /// A fixed value for an argument (integer labels, indices, masks, or an
  /// argument the pass appends, such as `labels`).
  GradCheck &value(const std::string &name, rt::Tensor tensor);
  /// remat-autodiff's `loss` option (default "auto": @forward's scalar).
  GradCheck &loss(const std::string &loss) { loss_ = loss; return *this; }

  /// Runs the check; failures are added to the current test.
  void run();

private:
  std::string source_;
  double tol_ = 1e-6;
  double h_ = 1e-6;
  unsigned seed_ = 1;
  std::string loss_ = "auto";
  Fill defaultFill_;
  std::map<std::string, Fill> fills_;
  std::map<std::string, rt::Tensor> values_;
};

} // namespace remat::gradcheck

#endif // REMAT_TESTS_AUTODIFF_GRADCHECK_H
