//===- TensorChecks.h - Dump named tensors and check them against files -*- C++ -*-===//
//
// The training mode's `--dump-*` and `--check-*`: a set of named tensors
// (gradients, parameters, buffers) written as DIR/<name>.pb (rt::dumpTensors,
// shared with the training executable's harness), or compared with the
// reference files in a directory (the fixtures' reference/grad,
// reference/sgd, ... layout).
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TOOLS_REMAT_RUN_TENSORCHECKS_H
#define REMAT_TOOLS_REMAT_RUN_TENSORCHECKS_H

#include "remat/runtime/Tensor.h"
#include "remat/runtime/TensorDump.h"

#include <map>
#include <set>
#include <string>

namespace remat::run {

/// Named tensors to dump or check; views into tensors the caller owns.
using NamedTensors = rt::NamedTensors;

/// Elements to leave out of a comparison: those whose reference gradient is
/// smaller than `below` in magnitude. Adam's first step moves an element by
/// lr * g / (|g| + eps), so where |g| is near eps (a gradient that is zero
/// up to rounding, e.g. of an attention key bias) the rounding of g decides
/// the update and no two float32 implementations agree.
struct GradientMask {
  const std::map<std::string, rt::Tensor> *referenceGradients = nullptr;
  double below = 0;
  /// Tensors whose reference is zero in exact arithmetic (rounding noise):
  /// they pass iff max|a-b| <= tolerance * the largest max|ref| among all
  /// the directory's tensors.
  std::set<std::string> exactZero;
};

/// Writing DIR/<name>.pb is rt::dumpTensors (runtime/io), shared with the
/// training executable's harness.
using rt::dumpTensors;

/// Compares every DIR/<name>.pb with the tensor of that name: a tensor
/// passes iff dtype and shape match and max|a-b| <= tolerance * max|ref|.
/// Prints one line per failing tensor, one per tensor when `verbose`, and
/// always the summary `<what>: N tensors, worst max|a-b|/max|ref| = X
/// (name)`. A file whose name is not in `tensors` is a ToolError. Returns
/// true when every tensor passes. With `mask`, max|a-b| is taken over the
/// elements the mask keeps (max|ref| over all).
///
/// With `exact` (--check-exact), a tensor passes iff dtype, shape and every
/// byte match (tolerance and mask are ignored): the check that a planned,
/// recomputing step computes bit for bit what the plain step computes.
bool checkTensors(const std::string &what, const std::string &dir,
                  const NamedTensors &tensors, double tolerance, bool verbose,
                  const GradientMask &mask = {}, bool exact = false);

/// Reads every DIR/<name>.pb (for GradientMask).
std::map<std::string, rt::Tensor> readTensorDirectory(const std::string &dir);

} // namespace remat::run

#endif // REMAT_TOOLS_REMAT_RUN_TENSORCHECKS_H
