//===- OptimizerTest.cpp - CUDA SGD and Adam updates against the CPU ------===//
//
// F64 updates are the CPU's sequence of IEEE double operations (no FMA
// contraction): with the step number on the host, bitwise equal. F32
// updates compute in fp32, as torch's CUDA optimizers, where the CPU
// computes in double and rounds once: they are bitwise equal to the fp32
// evaluation of the same formulas on the host (sgdFp32, adamFp32: IEEE
// float operations, no contraction, see CMakeLists.txt) and within
// tolerance() of the CPU. With the step read on the device, Adam's bias
// corrections use the GPU's pow (F64) or expm1f/log1pf (F32), which may
// differ from the host's in the last bits: tolerance().
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

Tensor copyOf(const Tensor &t) {
  Tensor copy(t.dtype(), t.shape());
  std::memcpy(copy.data(), t.data(), t.bytes());
  return copy;
}

/// torch's SGD step in fp32, in the CUDA kernel's operation order, its
/// coefficients rounded once from double as the kernel's host code does.
void sgdFp32(const Tensor &p, const Tensor &g, const Tensor &b, Tensor &pOut,
             Tensor &bOut, int64_t step, const SgdOptions &o) {
  const float lr = static_cast<float>(o.lr);
  const float mu = static_cast<float>(o.momentum);
  const float wd = static_cast<float>(o.weightDecay);
  const float damp = static_cast<float>(1.0 - o.dampening);
  const bool useMomentum = o.momentum != 0.0, readBuf = useMomentum && step > 1;
  for (int64_t i = 0; i < p.numel(); ++i) {
    const float pi = p.as<float>()[i];
    float gi = g.as<float>()[i];
    if (wd != 0.0f)
      gi += wd * pi;
    if (useMomentum) {
      const float bi = readBuf ? mu * b.as<float>()[i] + damp * gi : gi;
      bOut.as<float>()[i] = bi;
      gi = o.nesterov ? gi + mu * bi : bi;
    }
    pOut.as<float>()[i] = pi - lr * gi;
  }
}

/// torch's Adam / AdamW step in fp32, likewise (bias corrections from the
/// host step in double).
void adamFp32(const Tensor &p, const Tensor &g, const Tensor &m,
              const Tensor &v, Tensor &pOut, Tensor &mOut, Tensor &vOut,
              int64_t step, const AdamOptions &o) {
  const double t = static_cast<double>(step);
  const float stepSize =
      static_cast<float>(o.lr / (1.0 - std::pow(o.beta1, t)));
  const float bc2 = static_cast<float>(std::sqrt(1.0 - std::pow(o.beta2, t)));
  const float b1 = static_cast<float>(o.beta1), b2 = static_cast<float>(o.beta2);
  const float omb1 = static_cast<float>(1.0 - o.beta1);
  const float omb2 = static_cast<float>(1.0 - o.beta2);
  const float eps = static_cast<float>(o.eps);
  const float wd = static_cast<float>(o.weightDecay);
  const float decay = static_cast<float>(1.0 - o.lr * o.weightDecay);
  for (int64_t i = 0; i < p.numel(); ++i) {
    float pi = p.as<float>()[i], gi = g.as<float>()[i];
    if (wd != 0.0f) {
      if (o.decoupledWeightDecay)
        pi *= decay;
      else
        gi += wd * pi;
    }
    const float mi = b1 * m.as<float>()[i] + omb1 * gi;
    const float vi = b2 * v.as<float>()[i] + omb2 * gi * gi;
    mOut.as<float>()[i] = mi;
    vOut.as<float>()[i] = vi;
    const float denom = std::sqrt(vi) / bc2 + eps;
    pOut.as<float>()[i] = pi - stepSize * mi / denom;
  }
}

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
        // The bits the CUDA kernel must give: the CPU's for F64, the fp32
        // evaluation for F32.
        Tensor pExact = copyOf(pOut), bExact = copyOf(bOut);
        if (dtype == DType::F32)
          sgdFp32(p, g, b, pExact, bExact, step, o);
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
          expectSame(dp.host(), pExact, what + " param");
          expectNear(dp.host(), pOut, tolerance(dtype), what + " param (CPU)");
          if (momentum) {
            expectSame(db.host(), bExact, what + " buffer");
            expectNear(db.host(), bOut, tolerance(dtype),
                       what + " buffer (CPU)");
          }
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
        Tensor pExact = copyOf(pOut), mExact = copyOf(mOut),
               vExact = copyOf(vOut);
        if (dtype == DType::F32)
          adamFp32(p, g, m, v, pExact, mExact, vExact, step, o);
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
          expectSame(dm.host(), mExact, what + " m");
          expectSame(dv.host(), vExact, what + " v");
          expectNear(dm.host(), mOut, tolerance(dtype), what + " m (CPU)");
          expectNear(dv.host(), vOut, tolerance(dtype), what + " v (CPU)");
          expectNear(dp.host(), pOut, tolerance(dtype), what + " param (CPU)");
          if (!onDevice)
            expectSame(dp.host(), pExact, what + " param");
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
