//===- CudaDevice.cu - The harness's device on CUDA -----------------------===//
//
// remat::rt::Device for a GPU: zeroed cudaMalloc regions, the kernels'
// workspace, copies on a private non-blocking stream, and the train step run
// as a CUDA Graph. The first step runs eagerly (a warm-up: module loading,
// cuBLAS heuristics, and data errors show up with the kernels still on the
// host's call stack); the second is captured and launched; later steps
// replay the graph. Per-step inputs reach the graph only through device
// memory at fixed addresses: the batch (copied into the arena by the
// harness) and the step counter, written before each launch into a device
// word that dropout reads (StepContext::deviceStep).
//
// Peak memory is measured from the device's own figures (cudaMemGetInfo):
// used bytes when sampled (after every allocation and every step), minus
// those in use when the device was created. REMAT_CUDA_MEMORY_TRACE prints
// each sample's rise over that baseline to stderr, with what preceded it;
// REMAT_CUDA_PROFILE runs every step eagerly and prints per-kernel times
// (OpProfile.cu).
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/Device.h"
#include "remat/runtime/cuda/CudaKernels.h"
#include "remat/runtime/cuda/DeviceProbe.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace remat::rt {

namespace {

void check(cudaError_t error, const char *what) {
  if (error != cudaSuccess)
    throw RuntimeError(std::string("CUDA device: ") + what +
                       " failed: " + cuda::describeCudaError(error));
}

class CudaDevice final : public Device {
public:
  CudaDevice();
  ~CudaDevice() override;

  std::string name() const override { return name_; }
  void *allocate(size_t bytes) override;
  void reserveWorkspace(size_t bytes) override;
  void copyToDevice(void *device, const void *host, size_t bytes) override;
  void copyToHost(void *host, const void *device, size_t bytes) override;
  void runStep(TrainStepFn step, StepContext &context) override;
  int64_t measuredPeakBytes() override;

private:
  void *allocateZeroed(size_t bytes, const char *what);
  void sampleMemory(const char *after = nullptr);
  void destroyGraph();
  void captureGraph(TrainStepFn step, StepContext &context);

  std::string name_;
  cudaStream_t stream_ = nullptr;
  std::vector<void *> allocations_; // regions, workspace, step word
  uint64_t *deviceStep_ = nullptr;
  bool workspaceReserved_ = false;
  bool traceMemory_ = false;

  // The captured step, and the function and regions it was captured with.
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t graphExec_ = nullptr;
  TrainStepFn capturedStep_ = nullptr;
  char *capturedArena_ = nullptr;
  char *capturedPersistent_ = nullptr;
  int64_t stepsRun_ = 0;
  uint64_t hostStep_ = 0; // source of the step word's copy

  size_t totalBytes_ = 0;
  size_t lowestFree_ = 0;
  size_t baselineUsed_ = 0;
};

CudaDevice::CudaDevice() {
  // Only a machine without a GPU (or without a driver) is "no device"; the
  // tests skip on that message alone, so any other error must not say it.
  const cuda::DeviceProbe probe = cuda::probeDevices();
  if (probe.status == cuda::DeviceStatus::Absent)
    throw RuntimeError(
        std::string("CUDA device: no CUDA device available") +
        (probe.error.empty() ? std::string() : " (" + probe.error + ")"));
  if (probe.status == cuda::DeviceStatus::Error)
    throw RuntimeError("CUDA device: cudaGetDeviceCount failed: " +
                       probe.error);
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  cudaDeviceProp properties{};
  check(cudaGetDeviceProperties(&properties, device),
        "cudaGetDeviceProperties");
  name_ = properties.name;
  check(cudaFree(nullptr), "creating the CUDA context");

  // The baseline: what the context (and anyone else) uses before us.
  traceMemory_ = std::getenv("REMAT_CUDA_MEMORY_TRACE") != nullptr;
  size_t freeBytes = 0;
  check(cudaMemGetInfo(&freeBytes, &totalBytes_), "cudaMemGetInfo");
  baselineUsed_ = totalBytes_ - freeBytes;
  lowestFree_ = freeBytes;

  // Non-blocking: legacy-stream work of other libraries cannot serialise
  // with the step, and stream capture needs a non-default stream.
  check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
        "cudaStreamCreateWithFlags");
  deviceStep_ = static_cast<uint64_t *>(
      allocateZeroed(sizeof(uint64_t), "allocating the step counter"));
}

CudaDevice::~CudaDevice() {
  // Best effort: destructors do not throw.
  if (stream_)
    cudaStreamSynchronize(stream_);
  cuda::profileReport();
  destroyGraph();
  if (workspaceReserved_)
    cuda::shutdown();
  for (void *p : allocations_)
    cudaFree(p);
  if (stream_)
    cudaStreamDestroy(stream_);
}

void *CudaDevice::allocateZeroed(size_t bytes, const char *what) {
  void *p = nullptr;
  // cudaMalloc returns 256-byte aligned memory; a zero-byte request still
  // gets a distinct, non-null buffer.
  const cudaError_t error = cudaMalloc(&p, std::max<size_t>(bytes, 256));
  if (error != cudaSuccess) {
    cudaGetLastError(); // clear the (non-sticky) allocation error
    throw RuntimeError(std::string("CUDA device: ") + what + " (" +
                       std::to_string(bytes) +
                       " bytes) failed: " + cudaGetErrorString(error));
  }
  allocations_.push_back(p);
  check(cudaMemsetAsync(p, 0, std::max<size_t>(bytes, 256), stream_),
        "cudaMemsetAsync");
  check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  sampleMemory(what);
  return p;
}

void *CudaDevice::allocate(size_t bytes) {
  return allocateZeroed(bytes, "allocating device memory");
}

/// What the CUDA runtime and cuBLAS take beyond remat's own allocations, left
/// unallocated out of a plan's workspace of at least 4x this: measured on an
/// H200 (CUDA and cuBLAS 13.0), the cuBLAS handle 2 MiB, the kernel modules
/// loaded by the first step 2-4 MiB, and up to 2 MiB of allocation
/// granularity on each of the four allocations (14.1 MiB at most, bf16
/// GPT-2 small). The plan counts the whole workspace, so the measured peak
/// stays within the planned one.
constexpr size_t kRuntimeReserveBytes = size_t(16) << 20;

void CudaDevice::reserveWorkspace(size_t bytes) {
  if (workspaceReserved_)
    throw RuntimeError("CUDA device: the workspace is already reserved");
  if (bytes >= 4 * kRuntimeReserveBytes)
    bytes -= kRuntimeReserveBytes;
  bytes = std::max(bytes, cuda::kMinWorkspaceBytes);
  void *workspace = allocateZeroed(bytes, "allocating the workspace");
  cuda::initialize(stream_, workspace, bytes);
  workspaceReserved_ = true;
  sampleMemory("creating the cuBLAS handle"); // the handle's own memory
}

void CudaDevice::copyToDevice(void *device, const void *host, size_t bytes) {
  if (bytes == 0)
    return;
  check(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream_),
        "cudaMemcpyAsync to the device");
  check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
}

void CudaDevice::copyToHost(void *host, const void *device, size_t bytes) {
  if (bytes == 0)
    return;
  check(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream_),
        "cudaMemcpyAsync to the host");
  check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
}

void CudaDevice::destroyGraph() {
  if (graphExec_)
    cudaGraphExecDestroy(graphExec_);
  if (graph_)
    cudaGraphDestroy(graph_);
  graphExec_ = nullptr;
  graph_ = nullptr;
}

void CudaDevice::captureGraph(TrainStepFn step, StepContext &context) {
  destroyGraph();
  // Global mode: any call in this process that could break the capture
  // (a synchronisation, an allocation) fails instead of running.
  check(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal),
        "cudaStreamBeginCapture");
  try {
    step(context);
  } catch (...) {
    cudaGraph_t partial = nullptr;
    cudaStreamEndCapture(stream_, &partial);
    if (partial)
      cudaGraphDestroy(partial);
    cudaGetLastError();
    throw;
  }
  check(cudaStreamEndCapture(stream_, &graph_), "cudaStreamEndCapture");
  check(cudaGraphInstantiate(&graphExec_, graph_, 0), "cudaGraphInstantiate");
  capturedStep_ = step;
  capturedArena_ = context.arena;
  capturedPersistent_ = context.persistent;
}

void CudaDevice::runStep(TrainStepFn step, StepContext &context) {
  if (!workspaceReserved_)
    reserveWorkspace(0);
  context.deviceStep = deviceStep_;
  // The step number reaches the kernels through device memory, written
  // outside the graph so that a replay sees the new value.
  hostStep_ = context.step;
  check(cudaMemcpyAsync(deviceStep_, &hostStep_, sizeof hostStep_,
                        cudaMemcpyHostToDevice, stream_),
        "cudaMemcpyAsync of the step counter");

  // A graph bakes in the function and the region addresses: recapture if
  // either changed.
  const bool stale =
      graphExec_ && (step != capturedStep_ || context.arena != capturedArena_ ||
                     context.persistent != capturedPersistent_);
  const char *how = "an eager step";
  if (stepsRun_ == 0 || cuda::profiling()) {
    step(context); // warm-up, eagerly (every step, when profiling)
  } else if (!graphExec_ || stale) {
    captureGraph(step, context);
    check(cudaGraphLaunch(graphExec_, stream_), "cudaGraphLaunch");
    how = "capturing and launching the step's CUDA Graph";
  } else {
    check(cudaGraphLaunch(graphExec_, stream_), "cudaGraphLaunch");
    how = "a graph replay";
  }
  ++stepsRun_;
  check(cudaStreamSynchronize(stream_), "running the train step");
  cuda::profileStepDone(stream_);
  sampleMemory(how);
  cuda::checkDeviceErrors();
}

void CudaDevice::sampleMemory(const char *after) {
  size_t freeBytes = 0, total = 0;
  if (cudaMemGetInfo(&freeBytes, &total) != cudaSuccess)
    return;
  lowestFree_ = std::min(lowestFree_, freeBytes);
  if (traceMemory_ && after)
    std::fprintf(stderr, "remat CUDA memory: %lld bytes over the baseline "
                         "after %s\n",
                 static_cast<long long>(total - freeBytes) -
                     static_cast<long long>(baselineUsed_),
                 after);
}

int64_t CudaDevice::measuredPeakBytes() {
  sampleMemory();
  const size_t peakUsed = totalBytes_ - lowestFree_;
  return peakUsed > baselineUsed_
             ? static_cast<int64_t>(peakUsed - baselineUsed_)
             : 0;
}

} // namespace

std::unique_ptr<Device> createDevice() {
  return std::make_unique<CudaDevice>();
}

} // namespace remat::rt
