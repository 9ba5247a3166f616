//===- FloatAccumulation.cuh - fp32 accumulators for 16-bit results -*- CUDA
//-*-===//
//
// Gradients that add several contributions into one element (gather and
// max-pool backward's scatter-adds, GatherElements backward, the
// convolution filter gradient over a batch) must not round every partial
// sum to 16 bits. For F16/BF16 results they accumulate into an fp32 buffer
// in the workspace scratch and are rounded once at the end. A result larger
// than the scratch is done in windows of consecutive elements: each window
// gets a pass over all contributions, which keeps only those that land in
// it. F32 and F64 results accumulate in place as before.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_CUDA_FLOATACCUMULATION_CUH
#define REMAT_RUNTIME_CUDA_FLOATACCUMULATION_CUH

#include "Common.cuh"

#include <string>

namespace remat::rt::cuda::detail {

/// out[i] = acc[i] rounded to T.
template <typename T>
__global__ void roundAccumulatorKernel(const float *acc, T *out, int64_t n) {
  REMAT_GRID_STRIDE_LOOP(i, n) { out[i] = fromCompute<T>(acc[i]); }
}

/// Accumulates the n elements of a 16-bit `out` in fp32: for each window
/// [lo, hi) of out's elements, zeroes an fp32 buffer `acc` of hi - lo
/// elements and calls add(acc, lo, hi), which must enqueue the addition of
/// every contribution to an element t in [lo, hi) at acc[t - lo]; then
/// rounds the window into out. `minWindow` elements (one row of a gather,
/// say) must fit in the scratch at once.
template <typename T, typename Add>
void accumulateInFloat(const char *kernel, T *out, int64_t n,
                       int64_t minWindow, Add &&add) {
  static_assert(kIsHalfStorage<T>, "F32/F64 results accumulate in place");
  if (n == 0)
    return;
  Scratch scratch(kernel);
  const int64_t fit =
      static_cast<int64_t>(scratch.available() / sizeof(float)) / 256 * 256;
  if (fit < std::min(n, std::max<int64_t>(minWindow, 1)))
    fail(kernel, "needs " + std::to_string(std::min(n, minWindow) * 4) +
                     " bytes of workspace scratch for its fp32 accumulator, "
                     "but only " +
                     std::to_string(scratch.available()) +
                     " are available (reserve a larger workspace)");
  const int64_t window = std::min(n, fit);
  float *acc = scratch.take<float>(static_cast<size_t>(window));
  cudaStream_t stream = context(kernel).stream;
  for (int64_t lo = 0; lo < n; lo += window) {
    const int64_t hi = std::min(n, lo + window);
    zeroAsync(acc, static_cast<size_t>(hi - lo) * sizeof(float), kernel);
    add(acc, lo, hi);
    roundAccumulatorKernel<T><<<gridFor(hi - lo), kThreads, 0, stream>>>(
        acc, out + lo, hi - lo);
    checkLaunch(kernel);
  }
}

} // namespace remat::rt::cuda::detail

#endif // REMAT_RUNTIME_CUDA_FLOATACCUMULATION_CUH
