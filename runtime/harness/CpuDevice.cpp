//===- CpuDevice.cpp - The harness's device for the CPU build -------------===//
//
// Device memory is host memory: 256-byte aligned (the plan's alignment, so
// that offsets that are aligned in the plan are aligned in memory), zeroed,
// freed with the device. Copies are memcpy; a step is a plain call.
//
// measuredPeakBytes() is the bytes requested through allocate() plus the
// workspace reserved: on the CPU the two regions are the only device memory
// the plan controls, and nothing frees them before the end, so their sum is
// the peak of what the plan accounts for (the padding to 256 bytes, under
// 256 bytes per region, is left out so that an exact plan compares equal).
// CPU kernels keep their own short-lived scratch (im2col buffers) on the
// heap, which this figure does not include; the harness reports the
// process's peak resident set separately (host_peak_rss_bytes).
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/Device.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace remat::rt {
namespace {

constexpr size_t kAlignment = 256;

class CpuDevice final : public Device {
public:
  ~CpuDevice() override {
    for (void *block : blocks_)
      std::free(block);
  }

  std::string name() const override { return "cpu"; }

  void *allocate(size_t bytes) override {
    // At least one aligned block, so that even an empty region has a
    // distinct, valid address.
    const size_t rounded =
        std::max<size_t>(1, (bytes + kAlignment - 1) / kAlignment) *
        kAlignment;
    void *block = std::aligned_alloc(kAlignment, rounded);
    if (!block)
      throw RuntimeError("cpu: cannot allocate " + std::to_string(bytes) +
                         " bytes of host memory");
    std::memset(block, 0, rounded);
    blocks_.push_back(block);
    allocatedBytes_ += static_cast<int64_t>(bytes);
    return block;
  }

  void reserveWorkspace(size_t bytes) override {
    // CPU kernels allocate their scratch themselves; the reservation is
    // only accounted, so that measured and planned peaks compare alike.
    workspaceBytes_ = static_cast<int64_t>(bytes);
  }

  void copyToDevice(void *device, const void *host, size_t bytes) override {
    if (bytes)
      std::memcpy(device, host, bytes);
  }

  void copyToHost(void *host, const void *device, size_t bytes) override {
    if (bytes)
      std::memcpy(host, device, bytes);
  }

  void runStep(TrainStepFn step, StepContext &context) override {
    // CPU kernels read context.step; pointing deviceStep at it lets code
    // written against the CUDA convention run here too.
    context.deviceStep = &context.step;
    step(context);
  }

  int64_t measuredPeakBytes() override {
    return allocatedBytes_ + workspaceBytes_;
  }

private:
  std::vector<void *> blocks_;
  int64_t allocatedBytes_ = 0;
  int64_t workspaceBytes_ = 0;
};

} // namespace

std::unique_ptr<Device> createDevice() {
  return std::make_unique<CpuDevice>();
}

} // namespace remat::rt
