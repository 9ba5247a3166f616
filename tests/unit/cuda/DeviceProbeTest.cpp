//===- DeviceProbeTest.cpp - Skip on "no GPU", fail on a broken CUDA ------===//
//
// The classification behind every CUDA skip, fed cudaGetDeviceCount's
// possible answers; runs (and must pass) on machines without a GPU.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/cuda/DeviceProbe.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

using namespace remat::rt::cuda;

namespace {

TEST(DeviceProbe, NoDeviceOrNoDriverIsAbsent) {
  EXPECT_EQ(classifyDeviceCount(cudaErrorNoDevice, 0), DeviceStatus::Absent);
  EXPECT_EQ(classifyDeviceCount(cudaErrorInsufficientDriver, 0),
            DeviceStatus::Absent);
  EXPECT_EQ(classifyDeviceCount(cudaErrorStubLibrary, 0),
            DeviceStatus::Absent);
  EXPECT_EQ(classifyDeviceCount(cudaSuccess, 0), DeviceStatus::Absent);
}

TEST(DeviceProbe, DevicesPresentIsAvailable) {
  EXPECT_EQ(classifyDeviceCount(cudaSuccess, 1), DeviceStatus::Available);
  EXPECT_EQ(classifyDeviceCount(cudaSuccess, 8), DeviceStatus::Available);
}

// Errors of a machine that has a GPU or a driver but cannot use it: these
// must fail the tests, not skip them.
TEST(DeviceProbe, BrokenCudaIsAnError) {
  for (cudaError_t error :
       {cudaErrorInitializationError, cudaErrorDevicesUnavailable,
        cudaErrorSystemDriverMismatch, cudaErrorSystemNotReady,
        cudaErrorCompatNotSupportedOnDevice, cudaErrorECCUncorrectable,
        cudaErrorInvalidDevice, cudaErrorMemoryAllocation,
        cudaErrorOperatingSystem, cudaErrorUnknown})
    EXPECT_EQ(classifyDeviceCount(error, 0), DeviceStatus::Error)
        << cudaGetErrorName(error);
  // A count that came with an error is not trusted.
  EXPECT_EQ(classifyDeviceCount(cudaErrorInitializationError, 1),
            DeviceStatus::Error);
}

TEST(DeviceProbe, ErrorsAreDescribedByName) {
  const std::string text = describeCudaError(cudaErrorDevicesUnavailable);
  EXPECT_EQ(text.rfind("cudaErrorDevicesUnavailable: ", 0), 0u) << text;
  EXPECT_GT(text.size(), std::string("cudaErrorDevicesUnavailable: ").size());
}

// This machine: a GPU, or none; never a CUDA error (which would otherwise
// turn every other CUDA test into a failure without saying why here).
TEST(DeviceProbe, ThisMachineIsUsableOrHasNoDevice) {
  const DeviceProbe probe = probeDevices();
  EXPECT_NE(probe.status, DeviceStatus::Error) << probe.error;
  if (probe.status == DeviceStatus::Available)
    EXPECT_GT(probe.count, 0);
  else
    EXPECT_EQ(probe.count, 0);
  std::printf("CUDA devices: %d%s%s\n", probe.count,
              probe.error.empty() ? "" : ", ", probe.error.c_str());
}

} // namespace
