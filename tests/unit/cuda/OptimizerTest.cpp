//===- OptimizerTest.cpp - CUDA SGD and Adam updates against the CPU ------===//
//
// With the step number on the host, the CUDA update is the CPU's sequence
// of IEEE double operations (no FMA contraction): bitwise equal. With the
// step read on the device, Adam's bias corrections use the GPU's pow, which
// may differ from glibc's in the last bit: tolerance().
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtil.h"

using namespace remat::rt;
using namespace remat::rt::cudatest;
namespace rt = remat::rt;

namespace {

class CudaOptimizer : public CudaTest {
protected:
  void SetUp() override {
    CudaTest::SetUp();
    if (IsSkipped())
      return;
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void **>(&step_), sizeof(int64_t)),
              cudaSuccess);
  }
  void TearDown() override {
    if (step_)
      cudaFree(step_);
  }
  const int64_t *deviceStep(int64_t step) {
    // On the kernels' (non-blocking) stream: a pageable cudaMemcpy may
    // return before its DMA lands and is not ordered with it.
    EXPECT_EQ(cudaMemcpyAsync(step_, &step, sizeof step,
                              cudaMemcpyHostToDevice, cuda::stream()),
              cudaSuccess);
    return step_;
  }

private:
  int64_t *step_ = nullptr;
};

const Shape kShape = {37, 29};

TEST_F(CudaOptimizer, SgdIsBitwiseTheCpus) {
  const SgdOptions options[] = {
      {0.1, 0.0, 0.0, 0.0, false},  {0.1, 0.0, 0.0, 0.01, false},
      {0.05, 0.9, 0.0, 0.0, false}, {0.05, 0.9, 0.1, 1e-4, false},
      {0.05, 0.9, 0.0, 1e-4, true},
  };
  unsigned seed = 1;
  for (DType dtype : {DType::F32, DType::F64})
    for (const SgdOptions &o : options)
      for (int64_t step : {int64_t(1), int64_t(2), int64_t(7)}) {
        const bool momentum = o.momentum != 0.0;
        Tensor p = randomTensor(dtype, kShape, ++seed);
        Tensor g = randomTensor(dtype, kShape, ++seed);
        Tensor b = randomTensor(dtype, kShape, ++seed);
        Tensor pOut(dtype, kShape), bOut(dtype, kShape);
        rt::sgdUpdate(p.view(), g.view(), momentum ? b.view() : TensorView(),
                      pOut.view(), momentum ? bOut.view() : TensorView(), step,
                      o);
        const std::string what = std::string(dtypeName(dtype)) + " momentum " +
                                 std::to_string(o.momentum) + " step " +
                                 std::to_string(step);
        for (bool onDevice : {false, true}) {
          // In place, as generated code updates persistent state.
          DeviceTensor dp(p), dg(g), db(b);
          const TensorView bv = momentum ? db.view() : TensorView();
          if (onDevice)
            cuda::sgdUpdate(dp.view(), dg.view(), bv, dp.view(), bv,
                            deviceStep(step), o);
          else
            cuda::sgdUpdate(dp.view(), dg.view(), bv, dp.view(), bv, step, o);
          expectSame(dp.host(), pOut, what + " param");
          if (momentum)
            expectSame(db.host(), bOut, what + " buffer");
        }
      }
}

TEST_F(CudaOptimizer, AdamAndAdamW) {
  const AdamOptions options[] = {
      {1e-3, 0.9, 0.999, 1e-8, 0.0, false},
      {1e-3, 0.9, 0.999, 1e-8, 0.01, false},
      {2e-3, 0.8, 0.99, 1e-6, 0.1, true},
  };
  unsigned seed = 100;
  for (DType dtype : {DType::F32, DType::F64})
    for (const AdamOptions &o : options)
      for (int64_t step : {int64_t(1), int64_t(10), int64_t(1000)}) {
        Tensor p = randomTensor(dtype, kShape, ++seed);
        Tensor g = randomTensor(dtype, kShape, ++seed);
        Tensor m = randomTensor(dtype, kShape, ++seed, -0.1, 0.1);
        Tensor v = randomTensor(dtype, kShape, ++seed, 0, 0.01);
        Tensor pOut(dtype, kShape), mOut(dtype, kShape), vOut(dtype, kShape);
        rt::adamUpdate(p.view(), g.view(), m.view(), v.view(), pOut.view(),
                       mOut.view(), vOut.view(), step, o);
        const std::string what = std::string(dtypeName(dtype)) + " wd " +
                                 std::to_string(o.weightDecay) + " step " +
                                 std::to_string(step);
        for (bool onDevice : {false, true}) {
          DeviceTensor dp(p), dg(g), dm(m), dv(v);
          if (onDevice)
            cuda::adamUpdate(dp.view(), dg.view(), dm.view(), dv.view(),
                             dp.view(), dm.view(), dv.view(), deviceStep(step),
                             o);
          else
            cuda::adamUpdate(dp.view(), dg.view(), dm.view(), dv.view(),
                             dp.view(), dm.view(), dv.view(), step, o);
          // The moments do not depend on the step.
          expectSame(dm.host(), mOut, what + " m");
          expectSame(dv.host(), vOut, what + " v");
          if (onDevice)
            expectNear(dp.host(), pOut, tolerance(dtype),
                       what + " param (device step)");
          else
            expectSame(dp.host(), pOut, what + " param");
        }
      }
}

TEST_F(CudaOptimizer, DeviceStepBelowOneIsReported) {
  Tensor p = randomTensor(DType::F32, kShape, 1);
  DeviceTensor dp(p), dg(p), dm(p), dv(p);
  cuda::adamUpdate(dp.view(), dg.view(), dm.view(), dv.view(), dp.view(),
                   dm.view(), dv.view(), deviceStep(0), AdamOptions{});
  EXPECT_THROW(syncDevice(), RuntimeError);
  EXPECT_THROW(cuda::sgdUpdate(dp.view(), dg.view(), TensorView(), dp.view(),
                               TensorView(), int64_t(0), SgdOptions{}),
               RuntimeError);
}

} // namespace
