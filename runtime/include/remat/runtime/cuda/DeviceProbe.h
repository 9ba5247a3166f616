//===- DeviceProbe.h - Is there a CUDA device, or is CUDA broken? -*- C++ -*-===//
//
// Tests and the harness skip CUDA work on a machine without a GPU, and only
// there: any other CUDA error at start-up (a driver that cannot initialise,
// a device in an error state, ...) is a failure, named, not a skip. The
// classification is a pure function of cudaGetDeviceCount's answer so that
// it can be tested on a machine without a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_CUDA_DEVICEPROBE_H
#define REMAT_RUNTIME_CUDA_DEVICEPROBE_H

#include <cuda_runtime_api.h>

#include <string>

namespace remat::rt::cuda {

enum class DeviceStatus {
  Available, // at least one device
  Absent,    // no device, or no driver at all: skip
  Error,     // anything else: fail
};

/// What cudaGetDeviceCount returning `error` and `count` means. Absent only
/// for cudaErrorNoDevice, a count of 0, and the missing-driver errors
/// (cudaErrorInsufficientDriver: no libcuda or one older than the runtime;
/// cudaErrorStubLibrary: only the toolkit's stub libcuda).
DeviceStatus classifyDeviceCount(cudaError_t error, int count);

/// "cudaErrorNoDevice: no CUDA-capable device is detected".
std::string describeCudaError(cudaError_t error);

struct DeviceProbe {
  DeviceStatus status = DeviceStatus::Absent;
  int count = 0;
  /// describeCudaError of cudaGetDeviceCount's error; empty on success.
  std::string error;
};

/// Asks cudaGetDeviceCount and classifies the answer.
DeviceProbe probeDevices();

} // namespace remat::rt::cuda

#endif // REMAT_RUNTIME_CUDA_DEVICEPROBE_H
