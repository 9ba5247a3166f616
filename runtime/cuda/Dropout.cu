//===- Dropout.cu - Dropout with the counter-based RNG --------------------===//
//
// The CUDA version of runtime/cpu/Dropout.cpp: each thread draws one Philox
// block (four elements) with the shared generator and keep test of
// remat/runtime/Philox.h, so the mask is bitwise the CPU's for the same
// (seed, stream, step, index). The step is read from device memory when the
// kernel runs, which lets a captured CUDA Graph replay with new steps.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/Philox.h"
#include "remat/runtime/cuda/CudaKernels.h"

#include "Common.cuh"

#include "common/DropoutChecks.h"

namespace remat::rt::cuda {
using namespace detail;

namespace {

/// The kept elements are scaled in the compute type of T.
template <typename T>
__global__ void dropoutKernel(const T *x, T *y, uint8_t *mask, int64_t n,
                              PhiloxKey key, uint64_t threshold,
                              ComputeType<T> scale,
                              const uint64_t *stepPointer) {
  const uint64_t step = *stepPointer;
  const int64_t blocks = (n + 3) / 4;
  REMAT_GRID_STRIDE_LOOP(block, blocks) {
    const PhiloxCounter bits =
        dropoutBits(key, static_cast<uint64_t>(block), step);
    for (int j = 0; j < 4; ++j) {
      const int64_t i = block * 4 + j;
      if (i >= n)
        break;
      const bool keep = dropoutKeeps(bits[j], threshold);
      y[i] = fromCompute<T>(keep ? toCompute(x[i]) * scale
                                 : ComputeType<T>(0));
      if (mask)
        mask[i] = keep;
    }
  }
}

} // namespace

void dropout(const TensorView &x, const TensorView &y, const TensorView &mask,
             double ratio, uint64_t seed, uint64_t streamId,
             const uint64_t *step) {
  const char *kernel = "dropout";
  checkDropout(kernel, x, y, mask, ratio);
  require(step != nullptr, kernel, "the step pointer is null");
  cudaStream_t stream = context(kernel).stream;
  const int64_t n = x.numel();
  uint8_t *pm = mask.empty() ? nullptr : mask.as<uint8_t>();

  if (ratio == 0) {
    cuda::copy(x, y);
    if (pm && n > 0)
      checkCuda(cudaMemsetAsync(pm, 1, static_cast<size_t>(n), stream), kernel,
                "cudaMemsetAsync");
    return;
  }

  const PhiloxKey key = dropoutKey(seed, streamId);
  const double keepProb = 1.0 - ratio;
  const uint64_t threshold = dropoutThreshold(keepProb);
  dispatchFloatStorage(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    if (n == 0)
      return;
    const C scale = ratio < 1 ? static_cast<C>(1.0 / keepProb) : C(0);
    dropoutKernel<T><<<gridFor((n + 3) / 4), kThreads, 0, stream>>>(
        x.as<const T>(), y.as<T>(), pm, n, key, threshold, scale, step);
    checkLaunch(kernel);
  });
}

} // namespace remat::rt::cuda
