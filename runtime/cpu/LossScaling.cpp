//===- LossScaling.cpp - The overflow check and GradScaler.update ---------===//
//
// The two kernels of fp16 dynamic loss scaling besides the optimizers'
// unscale-and-skip (Optimizers.cpp): the found-inf check of one gradient,
// and the scale update, which follows torch._amp_update_scale_ operation
// for operation. torch multiplies the float scale by a double factor and
// rounds to float; for a factor that is itself a float (the verifier of
// remat.loss_scale_update requires it; GradScaler's are 2 and 0.5) that is
// the float product, which both backends compute (no fp64 on the GPU).
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/Kernels.h"

#include "DTypeDispatch.h"

#include "common/LossScaleUpdate.h"

#include <cmath>

namespace remat::rt {
using namespace cpu;

void anyNonFinite(const TensorView &x, const TensorView &foundIn,
                  const TensorView &foundOut) {
  const char *kernel = "anyNonFinite";
  requireScalar(foundIn, DType::Bool, kernel, "foundIn");
  requireScalar(foundOut, DType::Bool, kernel, "foundOut");
  bool found = foundIn.as<const uint8_t>()[0] != 0;
  if (!found)
    dispatchFloatStorage(x.dtype, kernel, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T *data = x.as<const T>();
      for (int64_t i = 0, n = x.numel(); i < n && !found; ++i)
        found = !std::isfinite(toCompute(data[i]));
    });
  foundOut.as<uint8_t>()[0] = found ? 1 : 0;
}

void lossScaleUpdate(const TensorView &scale, const TensorView &growthTracker,
                     const TensorView &foundInf, const TensorView &newScale,
                     const TensorView &newGrowthTracker, double growthFactor,
                     double backoffFactor, int64_t growthInterval) {
  const char *kernel = "lossScaleUpdate";
  common::checkLossScaleUpdate(kernel, scale, growthTracker, foundInf, newScale,
                               newGrowthTracker, growthInterval);
  float current = scale.as<const float>()[0];
  int32_t tracker = growthTracker.as<const int32_t>()[0];
  common::updateLossScale(current, tracker,
                          foundInf.as<const uint8_t>()[0] != 0, growthFactor,
                          backoffFactor, growthInterval);
  newScale.as<float>()[0] = current;
  newGrowthTracker.as<int32_t>()[0] = tracker;
}

} // namespace remat::rt
