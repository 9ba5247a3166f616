//===- DropoutTest.cpp - CUDA dropout reproduces the CPU's masks ----------===//
//
// Both backends share the Philox generator and the integer keep test, so
// masks and outputs must be bitwise equal for the same (seed, stream, step,
// index), the step being read from device memory on the GPU.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtil.h"

#include "remat/runtime/Philox.h"

using namespace remat::rt;
using namespace remat::rt::cudatest;
namespace rt = remat::rt;

namespace {

using CudaDropout = CudaTest;

// A host-only check, in this binary (which skips without a GPU) because the
// CPU tests predate the shared header.
TEST_F(CudaDropout, ThresholdMatchesTheFloatingPointKeepTest) {
  // dropoutKeeps(bits, dropoutThreshold(p)) == (bits * 2^-32 < p).
  for (double keep : {0.0, 1e-12, 0.1, 0.3, 0.5, 0.7, 0.9, 1 - 1e-12, 1.0}) {
    const uint64_t threshold = dropoutThreshold(keep);
    for (uint64_t b : {uint64_t(0), uint64_t(1), threshold - 1, threshold,
                       threshold + 1, uint64_t(0xffffffffu)}) {
      if (b > 0xffffffffu)
        continue;
      const uint32_t bits = static_cast<uint32_t>(b);
      EXPECT_EQ(dropoutKeeps(bits, threshold),
                static_cast<double>(bits) * 0x1p-32 < keep)
          << "keep " << keep << " bits " << bits;
    }
  }
}

TEST_F(CudaDropout, MasksAndOutputsAreTheCpus) {
  uint64_t *stepOnDevice = nullptr;
  ASSERT_EQ(
      cudaMalloc(reinterpret_cast<void **>(&stepOnDevice), sizeof(uint64_t)),
      cudaSuccess);
  for (DType dtype : {DType::F32, DType::F64})
    for (int64_t n : {int64_t(1), int64_t(7), int64_t(4099)})
      for (double ratio : {0.0, 0.1, 0.5, 0.9, 1.0})
        for (uint64_t step : {uint64_t(0), uint64_t(3), uint64_t(1) << 33}) {
          Tensor x = randomTensor(dtype, {n}, 1, 0.5, 1.5);
          Tensor y(dtype, {n}), mask(DType::Bool, {n});
          rt::dropout(x.view(), y.view(), mask.view(), ratio, 42, 7, step);
          // On the kernels' (non-blocking) stream: a pageable cudaMemcpy
          // may return before its DMA lands and is not ordered with it.
          ASSERT_EQ(cudaMemcpyAsync(stepOnDevice, &step, sizeof step,
                                    cudaMemcpyHostToDevice, cuda::stream()),
                    cudaSuccess);
          DeviceTensor dx(x), dy(dtype, {n}), dmask(DType::Bool, {n});
          cuda::dropout(dx.view(), dy.view(), dmask.view(), ratio, 42, 7,
                        stepOnDevice);
          const std::string what = std::string(dtypeName(dtype)) + " n " +
                                   std::to_string(n) + " ratio " +
                                   std::to_string(ratio) + " step " +
                                   std::to_string(step);
          expectSame(dmask.host(), mask, what + " mask");
          expectSame(dy.host(), y, what + " output");
          // Without a mask output.
          DeviceTensor dy2(dtype, {n});
          cuda::dropout(dx.view(), dy2.view(), TensorView(), ratio, 42, 7,
                        stepOnDevice);
          expectSame(dy2.host(), y, what + " output without mask");
        }
  cudaFree(stepOnDevice);
}

} // namespace
