//===- Context.cu - Stream, cuBLAS handle, workspace, device errors -------===//
//
// The process-wide state the CUDA kernels share. Generated code is a
// straight-line list of kernel calls with no handle to pass around, so the
// stream and workspace are bound once (initialize) and every kernel reads
// them from here.
//
//===----------------------------------------------------------------------===//

#include "Common.cuh"

#include <cstdlib>
#include <string>

namespace remat::rt::cuda {
using namespace detail;

namespace {

Context gContext;

/// The cuBLAS share of the workspace: a quarter of what follows the status
/// word, at most 32 MiB (NVIDIA's recommendation for Hopper), 256-aligned.
size_t blasWorkspaceBytes(size_t workspaceBytes) {
  constexpr size_t kMaxBlas = size_t(32) << 20;
  const size_t quarter = (workspaceBytes - kStatusBytes) / 4;
  return std::min(kMaxBlas, quarter / 256 * 256);
}

const char *blasStatusName(cublasStatus_t status) {
  switch (status) {
  case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
  case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
  case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
  case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
  case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
  case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
  case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
  case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
  case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
  case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "unknown cuBLAS status";
}

std::string deviceErrorMessage(const DeviceStatus &status) {
  const std::string value = std::to_string(status.value);
  switch (status.code) {
  case kGatherIndex: return "gather: index " + value + " out of range";
  case kGatherBackwardIndex:
    return "gatherBackward: index " + value + " out of range";
  case kGatherElementsIndex:
    return "gatherElements: index " + value + " out of range";
  case kGatherElementsBackwardIndex:
    return "gatherElementsBackward: index " + value + " out of range";
  case kGatherNDIndex: return "gatherND: index " + value + " out of range";
  case kGatherNDBackwardIndex:
    return "gatherNDBackward: index " + value + " out of range";
  case kScatterNDIndex: return "scatterND: index " + value + " out of range";
  case kLossLabel: return "loss: label " + value + " out of range";
  case kLossBackwardLabel:
    return "loss backward: label " + value + " out of range";
  case kMaxPoolBackwardIndex:
    return "maxPoolBackward: index " + value +
           " is not in its output's window";
  case kIntegerDivisionByZero: return "binary: integer division by zero";
  case kOptimizerStep:
    return "optimizer update: step " + value + " (must be >= 1)";
  }
  return "unknown device error " + std::to_string(status.code) + " (value " +
         value + ")";
}

} // namespace

namespace detail {

Context &context(const char *kernel) {
  if (!gContext.initialized)
    fail(kernel, "the CUDA runtime is not initialized (call "
                 "remat::rt::cuda::initialize first)");
  if (profiling())
    profileMark(kernel, gContext.stream);
  return gContext;
}

void checkLaunch(const char *kernel) {
  const cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess)
    fail(kernel,
         std::string("kernel launch failed: ") + cudaGetErrorString(error));
}

void checkCuda(cudaError_t error, const char *kernel, const char *what) {
  if (error != cudaSuccess)
    fail(kernel, std::string(what) + " failed: " + cudaGetErrorString(error));
}

void checkBlas(cublasStatus_t status, const char *kernel) {
  if (status != CUBLAS_STATUS_SUCCESS)
    fail(kernel, std::string("cuBLAS failed: ") + blasStatusName(status));
}

void zeroAsync(void *p, size_t bytes, const char *kernel) {
  if (bytes == 0)
    return;
  checkCuda(cudaMemsetAsync(p, 0, bytes, context(kernel).stream), kernel,
            "cudaMemsetAsync");
}

} // namespace detail

void initialize(cudaStream_t stream, void *workspace, size_t workspaceBytes) {
  const char *kernel = "cuda::initialize";
  shutdown();
  require(workspace != nullptr, kernel, "workspace is null");
  require(reinterpret_cast<uintptr_t>(workspace) % 256 == 0, kernel,
          "workspace must be 256-byte aligned");
  if (workspaceBytes < kMinWorkspaceBytes)
    fail(kernel, "workspace of " + std::to_string(workspaceBytes) +
                     " bytes is below the minimum of " +
                     std::to_string(kMinWorkspaceBytes));

  // cuBLAS gets its workspace from ours (below), so its default workspace
  // pool is dead weight: on an H100 and an H200 (cuBLAS 13.0) cublasCreate
  // took 69 MiB for it, memory no plan counts. An empty pool brings the
  // handle down to 2 MiB. A setting of the user's own is left as it is.
  setenv("CUBLAS_WORKSPACE_CONFIG", ":0:0", /*overwrite=*/0);
  cublasHandle_t handle = nullptr;
  checkBlas(cublasCreate(&handle), kernel);
  char *base = static_cast<char *>(workspace);
  const size_t blasBytes = blasWorkspaceBytes(workspaceBytes);
  try {
    checkBlas(cublasSetStream(handle, stream), kernel);
    // A workspace of our own keeps GEMMs capturable in a CUDA Graph (no
    // allocation from cuBLAS's pool while capturing).
    checkBlas(cublasSetWorkspace(handle, base + kStatusBytes, blasBytes),
              kernel);
    // Full FP32/FP64 (no TF32): results stay comparable with the CPU
    // backend. Pedantic rather than default math, which newer cuBLAS lets
    // pick emulated (BF16x9 / fixed-point) GEMMs, e.g. via environment.
    // The 16-bit GEMMs name CUBLAS_COMPUTE_32F themselves (MatMul.cu), which
    // the math mode does not override; for them the flag keeps split-K
    // reductions in fp32 instead of the 16-bit output type.
    checkBlas(cublasSetMathMode(
                  handle, static_cast<cublasMath_t>(
                              CUBLAS_PEDANTIC_MATH |
                              CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)),
              kernel);
    checkCuda(cudaMemsetAsync(base, 0, kStatusBytes, stream), kernel,
              "cudaMemsetAsync");
  } catch (...) {
    cublasDestroy(handle);
    throw;
  }
  gContext.stream = stream;
  gContext.blas = handle;
  gContext.status = reinterpret_cast<DeviceStatus *>(base);
  gContext.scratch = base + kStatusBytes + blasBytes;
  gContext.scratchBytes = workspaceBytes - kStatusBytes - blasBytes;
  gContext.initialized = true;
}

cudaStream_t stream() { return context("cuda::stream").stream; }

void shutdown() {
  if (gContext.blas)
    cublasDestroy(gContext.blas);
  gContext = Context();
}

size_t scratchBytes() { return context("cuda::scratchBytes").scratchBytes; }

void checkDeviceErrors() {
  const char *kernel = "cuda::checkDeviceErrors";
  Context &ctx = context(kernel);
  checkCuda(cudaStreamSynchronize(ctx.stream), kernel, "cudaStreamSynchronize");
  DeviceStatus status{};
  checkCuda(cudaMemcpyAsync(&status, ctx.status, sizeof status,
                            cudaMemcpyDeviceToHost, ctx.stream),
            kernel, "cudaMemcpyAsync");
  checkCuda(cudaStreamSynchronize(ctx.stream), kernel, "cudaStreamSynchronize");
  if (status.code == kNoError)
    return;
  // Clear it so that the next check reports only new errors.
  checkCuda(cudaMemsetAsync(ctx.status, 0, sizeof status, ctx.stream), kernel,
            "cudaMemsetAsync");
  checkCuda(cudaStreamSynchronize(ctx.stream), kernel, "cudaStreamSynchronize");
  throw RuntimeError(deviceErrorMessage(status));
}

} // namespace remat::rt::cuda
