//===- TensorChecks.cpp - Check named tensors against files --------------===//

#include "TensorChecks.h"

#include "ToolSupport.h"

#include "remat/runtime/TensorProtoIO.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <vector>

namespace fs = std::filesystem;

namespace remat::run {
namespace {

struct Comparison {
  bool shapeMismatch = false;
  int64_t skipped = 0;
  double maxDiff = 0, maxRef = 0;
  /// max|a-b| / max|ref|; 0 when both are 0, +inf for NaN or a zero ref.
  double relative() const {
    if (std::isnan(maxDiff) || std::isinf(maxDiff))
      return INFINITY;
    if (maxDiff == 0)
      return 0;
    return maxRef == 0 ? INFINITY : maxDiff / maxRef;
  }
};

Comparison compare(const rt::TensorView &got, const rt::TensorView &want,
                   const rt::TensorView *maskGradient, double below) {
  Comparison c;
  if (got.shape != want.shape || got.dtype != want.dtype) {
    c.shapeMismatch = true;
    return c;
  }
  const int64_t n = got.numel();
  for (int64_t i = 0; i < n; ++i) {
    const double a = elementAsDouble(got, i), b = elementAsDouble(want, i);
    c.maxRef = std::max(c.maxRef, std::fabs(b));
    if (maskGradient && std::fabs(elementAsDouble(*maskGradient, i)) < below) {
      ++c.skipped;
      continue;
    }
    const double diff = std::fabs(a - b);
    if (std::isnan(diff))
      c.maxDiff = NAN;
    else if (!std::isnan(c.maxDiff))
      c.maxDiff = std::max(c.maxDiff, diff);
  }
  return c;
}

/// Elements whose bytes differ (dtype and shape must match).
int64_t differingElements(const rt::TensorView &got, const rt::TensorView &want,
                          int64_t &first) {
  const size_t size = rt::dtypeSize(got.dtype);
  const auto *a = static_cast<const char *>(got.data);
  const auto *b = static_cast<const char *>(want.data);
  int64_t count = 0;
  first = -1;
  for (int64_t i = 0, n = got.numel(); i < n; ++i)
    if (std::memcmp(a + i * size, b + i * size, size) != 0) {
      if (first < 0)
        first = i;
      ++count;
    }
  return count;
}

/// The .pb files under `dir`, as names relative to it without ".pb".
std::vector<std::string> tensorNames(const std::string &dir) {
  std::vector<std::string> names;
  for (const fs::directory_entry &entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".pb")
      continue;
    fs::path relative = fs::relative(entry.path(), dir);
    names.push_back(relative.replace_extension().generic_string());
  }
  // Sorted, so that the output does not depend on the directory order.
  std::sort(names.begin(), names.end());
  return names;
}

rt::Tensor readNamed(const std::string &dir, const std::string &name) {
  fs::path path = fs::path(dir) / (name + ".pb");
  try {
    return rt::readTensorFile(path.string());
  } catch (const std::exception &e) {
    throw ToolError("cannot read '" + path.string() + "': " + e.what());
  }
}

} // namespace

std::map<std::string, rt::Tensor> readTensorDirectory(const std::string &dir) {
  if (!fs::is_directory(dir))
    throw ToolError("'" + dir + "' is not a directory");
  std::map<std::string, rt::Tensor> tensors;
  for (const std::string &name : tensorNames(dir))
    tensors[name] = readNamed(dir, name);
  return tensors;
}

bool checkTensors(const std::string &what, const std::string &dir,
                  const NamedTensors &tensors, double tolerance, bool verbose,
                  const GradientMask &mask, bool exact) {
  if (!fs::is_directory(dir))
    throw ToolError("--check-" + what + ": '" + dir + "' is not a directory");
  std::vector<std::string> names = tensorNames(dir);
  for (const std::string &name : names)
    if (!tensors.count(name))
      throw ToolError("--check-" + what + ": '" +
                      (fs::path(dir) / (name + ".pb")).string() + "' names '" +
                      name + "', which the model has no " + what + " of");

  // The scale of --zero-gradient tensors: the largest reference of all.
  // The references are then read once, up front.
  double largestRef = 0;
  std::map<std::string, rt::Tensor> references;
  if (!mask.exactZero.empty()) {
    references = readTensorDirectory(dir);
    for (const auto &[name, ref] : references)
      for (int64_t i = 0, n = ref.numel(); i < n; ++i)
        largestRef = std::max(largestRef,
                              std::fabs(elementAsDouble(ref.view(), i)));
  }
  for (const std::string &name : mask.exactZero)
    if (!tensors.count(name))
      throw ToolError("--zero-gradient: the model has no " + what + " '" +
                      name + "'");

  bool pass = true;
  int64_t totalSkipped = 0;
  double worst = -1;
  std::string worstName;
  for (const std::string &name : names) {
    auto preread = references.find(name);
    rt::Tensor ref = preread != references.end() ? std::move(preread->second)
                                                 : readNamed(dir, name);
    const rt::TensorView &got = *tensors.at(name);
    const rt::TensorView *maskGradient = nullptr;
    if (mask.referenceGradients) {
      auto it = mask.referenceGradients->find(name);
      if (it != mask.referenceGradients->end() &&
          it->second.shape() == got.shape)
        maskGradient = &it->second.view();
    }
    Comparison c = compare(got, ref.view(), maskGradient, mask.below);
    totalSkipped += c.skipped;
    if (c.shapeMismatch) {
      std::cout << "FAIL " << what << " '" << name << "': computed "
                << describe(got) << ", reference " << describe(ref.view())
                << "\n";
      pass = false;
      worst = INFINITY;
      worstName = name;
      continue;
    }
    const bool exactZero = mask.exactZero.count(name) > 0;
    const double rel = exactZero && largestRef > 0 ? c.maxDiff / largestRef
                                                   : c.relative();
    if (exact) {
      int64_t first = -1;
      const int64_t differing = differingElements(got, ref.view(), first);
      const bool ok = differing == 0;
      pass &= ok;
      if (verbose || !ok)
        std::cout << (ok ? "  " : "FAIL ") << what << " '" << name << "': "
                  << (ok ? std::string("bitwise identical")
                         : std::to_string(differing) + " of " +
                               std::to_string(got.numel()) +
                               " element(s) differ in their bytes; first at "
                               "flat index " +
                               std::to_string(first) + ": got " +
                               formatNumber(elementAsDouble(got, first)) +
                               ", expected " +
                               formatNumber(elementAsDouble(ref.view(), first)))
                  << ", max|a-b| = " << formatNumber(c.maxDiff) << "\n";
      if (!ok && rel > worst) {
        worst = rel;
        worstName = name;
      }
      continue;
    }
    const double scale = exactZero ? largestRef : c.maxRef;
    const bool ok = !std::isnan(c.maxDiff) && c.maxDiff <= tolerance * scale;
    if (!ok)
      pass = false;
    if (verbose || !ok)
      std::cout << (ok ? "  " : "FAIL ") << what << " '" << name
                << "': max|a-b| = " << formatNumber(c.maxDiff)
                << ", max|ref| = " << formatNumber(c.maxRef)
                << (exactZero ? " (zero in exact arithmetic: against the "
                                "largest reference, " +
                                    formatNumber(largestRef) + ")"
                              : std::string())
                << ", relative " << formatNumber(rel)
                << (ok ? "" : " > tolerance " + formatNumber(tolerance))
                << (c.skipped ? ", " + std::to_string(c.skipped) +
                                    " element(s) with |ref grad| < " +
                                    formatNumber(mask.below) + " skipped"
                              : std::string())
                << "\n";
    if (rel > worst) {
      worst = rel;
      worstName = name;
    }
  }
  if (exact) {
    std::cout << what << ": " << names.size() << " tensor"
              << (names.size() == 1 ? "" : "s")
              << (pass ? ", bitwise identical" : ", not bitwise identical");
    if (!pass && !worstName.empty())
      std::cout << " (worst " << worstName << ", max|a-b|/max|ref| = "
                << formatNumber(worst) << ")";
    std::cout << (pass ? "" : " FAIL") << "\n";
    if (names.empty()) {
      std::cout << "FAIL " << what << ": '" << dir << "' holds no .pb files\n";
      pass = false;
    }
    return pass;
  }
  std::cout << what << ": " << names.size() << " tensor"
            << (names.size() == 1 ? "" : "s")
            << ", worst max|a-b|/max|ref| = "
            << (names.empty() ? std::string("0") : formatNumber(worst));
  if (!worstName.empty())
    std::cout << " (" << worstName << ")";
  if (mask.referenceGradients)
    std::cout << ", " << totalSkipped << " element(s) with |ref grad| < "
              << formatNumber(mask.below) << " skipped";
  std::cout << (pass ? "" : " FAIL") << "\n";
  if (names.empty()) {
    std::cout << "FAIL " << what << ": '" << dir << "' holds no .pb files\n";
    pass = false;
  }
  return pass;
}

} // namespace remat::run
