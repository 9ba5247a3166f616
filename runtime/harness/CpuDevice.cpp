//===- CpuDevice.cpp - The harness's device for the CPU build -------------===//
//
// Device memory is host memory: 256-byte aligned (the plan's alignment, so
// that offsets that are aligned in the plan are aligned in memory), zeroed,
// freed with the device. Copies are memcpy; a step is a plain call.
//
// The workspace is allocated like the regions and handed to the kernels
// (setWorkspace), which take all their scratch from it: a step allocates
// nothing (the harness counts, step_allocations), so the bytes allocated
// here are all the memory the plan accounts for. measuredPeakBytes() is
// that sum (the padding to 256 bytes, under 256 bytes per region, is left
// out so that an exact plan compares equal). It is what was allocated, not
// a reading of the process: the harness reports the process's resident
// high-water mark beside it (host_peak_rss_bytes), which also holds the
// program, its libraries, OpenBLAS's buffers and the host copies of weights
// and batches.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/Device.h"
#include "remat/runtime/Workspace.h"

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
    setWorkspace(nullptr, 0);
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
    setWorkspace(allocate(bytes), bytes);
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

  int64_t measuredPeakBytes() override { return allocatedBytes_; }

private:
  std::vector<void *> blocks_;
  int64_t allocatedBytes_ = 0;
};

} // namespace

std::unique_ptr<Device> createDevice() {
  return std::make_unique<CpuDevice>();
}

} // namespace remat::rt
