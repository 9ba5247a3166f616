//===- Device.h - Memory and execution on the harness's device --*- C++ -*-===//
//
// What the harness needs of a backend: allocate the two regions once, move
// bytes in and out, run the train step, and measure peak memory. The CPU
// backend (runtime/harness/CpuDevice.cpp) and the CUDA backend
// (runtime/cuda/CudaDevice.cu) each define createDevice(); an executable
// links exactly one of them.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_DEVICE_H
#define REMAT_RUNTIME_DEVICE_H

#include "remat/runtime/Program.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace remat::rt {

class Device {
public:
  virtual ~Device() = default;

  /// "cpu", or the GPU's name.
  virtual std::string name() const = 0;

  /// Device memory, 256-byte aligned, zero-filled. Called only before the
  /// first step. Throws RuntimeError when the device is out of memory.
  virtual void *allocate(size_t bytes) = 0;

  /// Reserves `bytes` of runtime workspace (cuBLAS, kernel scratch) before
  /// the first step and hands it to the kernels.
  virtual void reserveWorkspace(size_t bytes) = 0;

  virtual void copyToDevice(void *device, const void *host, size_t bytes) = 0;
  virtual void copyToHost(void *host, const void *device, size_t bytes) = 0;

  /// Runs one train step with `context` (its `step` set by the caller) and
  /// waits for it. The CUDA device sets context.deviceStep, runs the first
  /// call eagerly as a warm-up, captures the step as a CUDA Graph on the
  /// second and replays the graph afterwards.
  virtual void runStep(TrainStepFn step, StepContext &context) = 0;

  /// Peak device memory in bytes, measured: on CUDA from the device's own
  /// free-memory figures (total - lowest free seen, minus what was in use
  /// before the harness started); on CPU the bytes the harness allocated
  /// (regions + workspace), which are all a step uses: kernels take their
  /// scratch from the workspace and the harness counts any heap allocation
  /// inside a step (step_allocations).
  virtual int64_t measuredPeakBytes() = 0;
};

/// The backend this executable was built with.
std::unique_ptr<Device> createDevice();

} // namespace remat::rt

#endif // REMAT_RUNTIME_DEVICE_H
