//===- BatchSource.h - The batch each training step reads --------*- C++ -*-===//
//
// The step overwrites the arena (inputs live there with everything else), so
// the harness keeps every batch on the host and copies it in before each
// step. Batches come from one --inputs directory (ONNX backend-test layout:
// DIR/input_<k>.pb), from a --data list of such directories (step i uses
// batch i mod count), or are synthetic (SyntheticData.h).
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_HARNESS_BATCHSOURCE_H
#define REMAT_RUNTIME_HARNESS_BATCHSOURCE_H

#include "remat/runtime/Program.h"

#include <map>
#include <string>
#include <vector>

namespace remat::rt::harness {

class BatchSource {
public:
  /// At most one of `inputsDir` and `dataFile` is non-empty; neither means
  /// synthetic data. Reads the data file and checks that every listed
  /// directory holds the files the program needs; throws RuntimeError naming
  /// the file otherwise. The --inputs batch is read (and checked) here.
  BatchSource(const ProgramSpec &program, const std::string &inputsDir,
              const std::string &dataFile);

  /// The `role == "input"` arguments, in argument order.
  const std::vector<const ArgumentSpec *> &inputs() const { return inputs_; }

  /// The host tensors of step `step`'s batch (0-based), parallel to
  /// inputs(). Reads the batch if it is not cached; throws RuntimeError
  /// naming the file on a dtype or shape mismatch.
  const std::vector<Tensor> &batch(int64_t step);

  int64_t batchCount() const {
    return directories_.empty() ? 1 : static_cast<int64_t>(directories_.size());
  }

  /// "synthetic", "DIR" or "FILE (N batches)", for the report.
  const std::string &description() const { return description_; }

private:
  std::vector<Tensor> readBatch(const std::string &dir) const;

  std::vector<const ArgumentSpec *> inputs_;
  std::vector<std::string> directories_; // empty: synthetic
  std::string description_;
  /// Batches read so far, by index, while they fit in kCacheBytes; beyond
  /// that only the latest is kept (re-read from disk each step, untimed).
  std::map<int64_t, std::vector<Tensor>> cache_;
  size_t cachedBytes_ = 0;
};

} // namespace remat::rt::harness

#endif // REMAT_RUNTIME_HARNESS_BATCHSOURCE_H
