//===- SyntheticData.cpp - A made-up batch for runs without data ----------===//

#include "SyntheticData.h"

#include "HarnessRandom.h"

#include "remat/runtime/Kernels.h"

namespace remat::rt::harness {

Tensor syntheticInput(const ArgumentSpec &arg) {
  Tensor tensor(arg.dtype, arg.shape);
  Random random = Random::forName(std::string("input:") + arg.name);
  const int64_t n = tensor.numel();
  // Values are drawn wide (f64 / i64) and cast, so that every dtype of an
  // input sees the same numbers.
  if (isFloat(arg.dtype)) {
    Tensor wide(DType::F64, arg.shape);
    for (int64_t i = 0; i < n; ++i)
      wide.as<double>()[i] = random.normal();
    cast(wide.view(), tensor.view());
    return tensor;
  }
  const uint64_t bound =
      arg.dtype == DType::Bool || arg.syntheticBound <= 0
          ? 2
          : static_cast<uint64_t>(arg.syntheticBound);
  Tensor wide(DType::I64, arg.shape);
  for (int64_t i = 0; i < n; ++i)
    wide.as<int64_t>()[i] = static_cast<int64_t>(random.below(bound));
  cast(wide.view(), tensor.view());
  return tensor;
}

} // namespace remat::rt::harness
