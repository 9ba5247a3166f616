//===- DeviceProbe.cpp - Is there a CUDA device, or is CUDA broken? -------===//

#include "remat/runtime/cuda/DeviceProbe.h"

namespace remat::rt::cuda {

DeviceStatus classifyDeviceCount(cudaError_t error, int count) {
  switch (error) {
  case cudaSuccess:
    return count > 0 ? DeviceStatus::Available : DeviceStatus::Absent;
  case cudaErrorNoDevice:
  case cudaErrorInsufficientDriver:
  case cudaErrorStubLibrary:
    return DeviceStatus::Absent;
  default:
    return DeviceStatus::Error;
  }
}

std::string describeCudaError(cudaError_t error) {
  return std::string(cudaGetErrorName(error)) + ": " +
         cudaGetErrorString(error);
}

DeviceProbe probeDevices() {
  DeviceProbe probe;
  const cudaError_t error = cudaGetDeviceCount(&probe.count);
  if (error != cudaSuccess) {
    probe.count = 0;
    probe.error = describeCudaError(error);
    // A failed runtime call leaves its error as the thread's last error;
    // clear it so that later checks see only their own.
    cudaGetLastError();
  }
  probe.status = classifyDeviceCount(error, probe.count);
  return probe;
}

} // namespace remat::rt::cuda
