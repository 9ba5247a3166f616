//===- LossScaling.cu - The overflow check and GradScaler.update ----------===//
//
// The CUDA versions of runtime/cpu/LossScaling.cpp. Both read and write
// their 0-d state on the device, so a captured CUDA Graph follows the loss
// scale from step to step. The overflow check writes only the value 1, from
// any number of threads, so its result does not depend on their order.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/cuda/CudaKernels.h"

#include "Common.cuh"

#include "common/FloatStorage.h"
#include "common/LossScaleUpdate.h"

namespace remat::rt::cuda {
using namespace detail;

namespace {

template <typename T>
__global__ void anyNonFiniteKernel(const T *x, int64_t n, uint8_t *found) {
  // Once an earlier check (or another block) found one, stop reading.
  if (*found)
    return;
  REMAT_GRID_STRIDE_LOOP(i, n) {
    const float v = toCompute(x[i]);
    if (!isfinite(v)) {
      *found = 1;
      return;
    }
  }
}

template <>
__global__ void anyNonFiniteKernel<double>(const double *x, int64_t n,
                                           uint8_t *found) {
  if (*found)
    return;
  REMAT_GRID_STRIDE_LOOP(i, n) {
    if (!isfinite(x[i])) {
      *found = 1;
      return;
    }
  }
}

__global__ void lossScaleUpdateKernel(const float *scale,
                                      const int32_t *tracker,
                                      const uint8_t *foundInf, float *newScale,
                                      int32_t *newTracker, double growthFactor,
                                      double backoffFactor,
                                      int64_t growthInterval) {
  float current = *scale;
  int32_t count = *tracker;
  updateLossScale(current, count, *foundInf != 0, growthFactor, backoffFactor,
                  growthInterval);
  *newScale = current;
  *newTracker = count;
}

} // namespace

void anyNonFinite(const TensorView &x, const TensorView &foundIn,
                  const TensorView &foundOut) {
  const char *kernel = "anyNonFinite";
  requireScalar(foundIn, DType::Bool, kernel, "foundIn");
  requireScalar(foundOut, DType::Bool, kernel, "foundOut");
  Context &ctx = context(kernel);
  if (foundIn.data != foundOut.data)
    checkCuda(cudaMemcpyAsync(foundOut.data, foundIn.data, 1,
                              cudaMemcpyDeviceToDevice, ctx.stream),
              kernel, "copying the flag");
  const int64_t n = x.numel();
  if (n == 0)
    return;
  dispatchFloatStorage(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    anyNonFiniteKernel<T><<<gridFor(n), kThreads, 0, ctx.stream>>>(
        x.as<const T>(), n, foundOut.as<uint8_t>());
    checkLaunch(kernel);
  });
}

void lossScaleUpdate(const TensorView &scale, const TensorView &growthTracker,
                     const TensorView &foundInf, const TensorView &newScale,
                     const TensorView &newGrowthTracker, double growthFactor,
                     double backoffFactor, int64_t growthInterval) {
  const char *kernel = "lossScaleUpdate";
  checkLossScaleUpdate(kernel, scale, growthTracker, foundInf, newScale,
                       newGrowthTracker, growthInterval);
  Context &ctx = context(kernel);
  lossScaleUpdateKernel<<<1, 1, 0, ctx.stream>>>(
      scale.as<const float>(), growthTracker.as<const int32_t>(),
      foundInf.as<const uint8_t>(), newScale.as<float>(),
      newGrowthTracker.as<int32_t>(), growthFactor, backoffFactor,
      growthInterval);
  checkLaunch(kernel);
}

} // namespace remat::rt::cuda
