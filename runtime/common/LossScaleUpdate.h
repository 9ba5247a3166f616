//===- LossScaleUpdate.h - GradScaler.update, shared -------------*- C++ -*-===//
//
// The scale update of fp16 dynamic loss scaling (torch._amp_update_scale_)
// and its operand checks, shared by the CPU kernel and the CUDA kernel so
// that both compute the same bits and accept the same arguments with the
// same messages. The factors are rounded to fp32 (the verifier of
// remat.loss_scale_update requires factors fp32 holds exactly, so this is
// torch's float-times-double product), which keeps f64 off the GPU.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_COMMON_LOSSSCALEUPDATE_H
#define REMAT_RUNTIME_COMMON_LOSSSCALEUPDATE_H

#include "remat/runtime/HostDevice.h"
#include "remat/runtime/Tensor.h"

#include "Check.h"

#include <cmath>
#include <cstdint>

namespace remat::rt::common {

/// scale, newScale: 0-d F32; the trackers: 0-d I32; foundInf: 0-d Bool.
inline void checkLossScaleUpdate(const char *kernel, const TensorView &scale,
                                 const TensorView &growthTracker,
                                 const TensorView &foundInf,
                                 const TensorView &newScale,
                                 const TensorView &newGrowthTracker,
                                 int64_t growthInterval) {
  requireScalar(scale, DType::F32, kernel, "scale");
  requireScalar(newScale, DType::F32, kernel, "newScale");
  requireScalar(growthTracker, DType::I32, kernel, "growthTracker");
  requireScalar(newGrowthTracker, DType::I32, kernel, "newGrowthTracker");
  requireScalar(foundInf, DType::Bool, kernel, "foundInf");
  require(growthInterval >= 1, kernel, "growthInterval must be >= 1");
}

/// One update of (scale, tracker): with foundInf, scale *= backoff and the
/// tracker restarts; otherwise the tracker counts the finite step, and at
/// growthInterval the scale grows (kept when the product is not finite in
/// fp32) and the tracker restarts.
REMAT_HOST_DEVICE inline void updateLossScale(float &scale, int32_t &tracker,
                                              bool foundInf,
                                              double growthFactor,
                                              double backoffFactor,
                                              int64_t growthInterval) {
  if (foundInf) {
    scale = scale * static_cast<float>(backoffFactor);
    tracker = 0;
    return;
  }
  const int64_t successful = static_cast<int64_t>(tracker) + 1;
  if (successful == growthInterval) {
    const float grown = scale * static_cast<float>(growthFactor);
    using std::isfinite;
    if (isfinite(grown)) // never grow past fp32's range to inf
      scale = grown;
    tracker = 0;
  } else {
    tracker = static_cast<int32_t>(successful);
  }
}

} // namespace remat::rt::common

#endif // REMAT_RUNTIME_COMMON_LOSSSCALEUPDATE_H
