//===- DeviceTest.cpp - The CUDA Device: warm-up, capture, replay ---------===//
//
// A small train step (dropout keyed by the device step, then an optimizer
// update reading a persistent step counter) run through the Device: the
// first step eagerly, the second captured as a CUDA Graph, the rest
// replayed. Each step's results must match the CPU kernels for that step,
// which fails if a replay kept the captured step number.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtil.h"

#include "remat/runtime/Device.h"

using namespace remat::rt;
using namespace remat::rt::cudatest;
namespace rt = remat::rt;

namespace {

class CudaDeviceTest : public CudaTest {
protected:
  void TearDown() override {
    // The Device bound (and shut down) the kernels' context.
    forgetContext();
  }
};

constexpr int64_t kN = 1031;
// Layout: arena [x: kN f32][mask: kN bool]; persistent [param: kN f32]
// [step: i64 at 8192].
constexpr int64_t kMaskOffset = 4 * kN;
constexpr int64_t kStepOffset = 8192;

void trainStep(StepContext &ctx) {
  const TensorView x(DType::F32, {kN}, ctx.arena);
  const TensorView mask(DType::Bool, {kN}, ctx.arena + kMaskOffset);
  const TensorView param(DType::F32, {kN}, ctx.persistent);
  cuda::dropout(x, x, mask, 0.25, 1234, 5, ctx.deviceStep);
  const SgdOptions sgd{0.5, 0.0, 0.0, 0.0, false};
  cuda::sgdUpdate(
      param, x, TensorView(), param, TensorView(),
      reinterpret_cast<const int64_t *>(ctx.persistent + kStepOffset), sgd);
}

TEST_F(CudaDeviceTest, RunsEagerlyThenCapturesThenReplays) {
  std::unique_ptr<Device> device = createDevice();
  EXPECT_FALSE(device->name().empty());
  char *arena = static_cast<char *>(device->allocate(2 * 4 * kN));
  char *persistent = static_cast<char *>(device->allocate(kStepOffset + 8));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(arena) % 256, 0u);
  device->reserveWorkspace(size_t(8) << 20);

  Tensor param(DType::F32, {kN});
  const int64_t one = 1;
  device->copyToDevice(persistent + kStepOffset, &one, sizeof one);
  Tensor x = randomTensor(DType::F32, {kN}, 7, 0.5, 1.5);
  StepContext ctx;
  ctx.arena = arena;
  ctx.persistent = persistent;
  for (uint64_t step = 0; step < 5; ++step) {
    // The batch changes every step, through the same arena slot.
    x = randomTensor(DType::F32, {kN}, 7 + static_cast<unsigned>(step), 0.5,
                     1.5);
    device->copyToDevice(arena, x.data(), x.bytes());
    ctx.step = step;
    device->runStep(trainStep, ctx);
    ASSERT_NE(ctx.deviceStep, nullptr);

    Tensor y(DType::F32, {kN}), mask(DType::Bool, {kN});
    rt::dropout(x.view(), y.view(), mask.view(), 0.25, 1234, 5, step);
    rt::sgdUpdate(param.view(), y.view(), TensorView(), param.view(),
                  TensorView(), 1, SgdOptions{0.5, 0.0, 0.0, 0.0, false});
    Tensor gotMask(DType::Bool, {kN}), gotParam(DType::F32, {kN});
    device->copyToHost(gotMask.data(), arena + kMaskOffset, gotMask.bytes());
    device->copyToHost(gotParam.data(), persistent, gotParam.bytes());
    expectSame(gotMask, mask, "mask at step " + std::to_string(step));
    expectSame(gotParam, param, "param at step " + std::to_string(step));
  }
  EXPECT_GT(device->measuredPeakBytes(), 2 * 4 * kN);
}

} // namespace
