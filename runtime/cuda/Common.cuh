//===- Common.cuh - Shared internals of the CUDA kernels ---------*- CUDA
//-*-===//
//
// What every kernel family needs: argument checks that throw RuntimeError
// naming the kernel and dtype dispatch (common/, shared with the CPU), the
// float storage types (F16/BF16 stored, fp32 computed: common/FloatStorage.h),
// the context (stream, cuBLAS handle, workspace scratch, device status word),
// launch-error checking, launch geometry and type-generic device math.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_CUDA_COMMON_CUH
#define REMAT_RUNTIME_CUDA_COMMON_CUH

#include "remat/runtime/cuda/CudaKernels.h"

#include "common/Check.h"
#include "common/DTypeDispatch.h"
#include "common/FloatStorage.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>

namespace remat::rt::cuda::detail {

// The argument checks (fail, require, requireDType, ...) and the dtype
// dispatchers are shared with the CPU backend, so that both accept the same
// arguments with the same messages.
using namespace rt::common;

//===----------------------------------------------------------------------===//
// Argument checks the CPU does not need
//===----------------------------------------------------------------------===//

/// F32 or F64 (statistics and parameters that ONNX lets differ in precision
/// from the data).
inline void requireFloat(const TensorView &view, const char *kernel,
                         const char *what) {
  if (view.dtype != DType::F32 && view.dtype != DType::F64)
    fail(kernel, std::string(what) + " has dtype " + dtypeName(view.dtype) +
                     ", expected f32 or f64");
}

/// Types with arithmetic, 16-bit float storage included: F32, F64, F16,
/// BF16, I64, I32 (floats compute in ComputeType<T>).
template <typename F>
decltype(auto) dispatchArithStorage(DType dtype, const char *kernel, F &&f) {
  switch (dtype) {
  case DType::F16: return f(Tag<Half>{});
  case DType::BF16: return f(Tag<BFloat16>{});
  default: return dispatchArith(dtype, kernel, f);
  }
}

//===----------------------------------------------------------------------===//
// Context
//===----------------------------------------------------------------------===//

/// Data errors found on the device. The first one recorded wins; its code
/// selects the message checkDeviceErrors() throws and `value` is the
/// offending index, label or step.
enum DeviceErrorCode : unsigned {
  kNoError = 0,
  kGatherIndex,
  kGatherBackwardIndex,
  kLossLabel,
  kLossBackwardLabel,
  kMaxPoolBackwardIndex,
  kIntegerDivisionByZero,
  kOptimizerStep,
  kGatherElementsIndex,
  kGatherElementsBackwardIndex,
  kGatherNDIndex,
  kGatherNDBackwardIndex,
  kScatterNDIndex,
};

struct DeviceStatus {
  unsigned code;
  unsigned reserved;
  long long value;
};

/// Bytes at the start of the workspace reserved for the status word (keeps
/// the cuBLAS workspace and scratch 256-byte aligned).
constexpr size_t kStatusBytes = 256;

struct Context {
  bool initialized = false;
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  DeviceStatus *status = nullptr;
  char *scratch = nullptr;
  size_t scratchBytes = 0;
};

/// The context; throws (naming `kernel`) if initialize() was not called.
Context &context(const char *kernel);

/// The mark that context() puts on the stream at each kernel call when
/// REMAT_CUDA_PROFILE is set (OpProfile.cu; cuda::profiling()).
void profileMark(const char *kernel, cudaStream_t stream);

/// Throws RuntimeError naming the kernel if a launch failed.
void checkLaunch(const char *kernel);
/// Throws RuntimeError naming the kernel and the call if `error` is set.
void checkCuda(cudaError_t error, const char *kernel, const char *what);
void checkBlas(cublasStatus_t status, const char *kernel);

/// Carves 256-byte aligned buffers out of the workspace scratch for one
/// kernel call. Kernels run in stream order, so each call may reuse all of
/// the scratch; a call that takes several buffers takes them from one
/// Scratch.
class Scratch {
public:
  explicit Scratch(const char *kernel)
      : kernel_(kernel), base_(context(kernel).scratch),
        size_(context(kernel).scratchBytes) {}

  /// Bytes still free.
  size_t available() const { return size_ - used_; }

  template <typename T> T *take(size_t count) {
    const size_t bytes = alignUp(count * sizeof(T));
    if (bytes > available())
      fail(kernel_, "needs " + std::to_string(used_ + bytes) +
                        " bytes of workspace scratch, but only " +
                        std::to_string(size_) +
                        " are available (reserve a larger workspace)");
    T *p = reinterpret_cast<T *>(base_ + used_);
    used_ += bytes;
    return p;
  }

  static size_t alignUp(size_t bytes) { return (bytes + 255) / 256 * 256; }

private:
  const char *kernel_;
  char *base_;
  size_t size_;
  size_t used_ = 0;
};

/// Enqueues a zero fill of `bytes` at `p` (no-op for 0 bytes).
void zeroAsync(void *p, size_t bytes, const char *kernel);

//===----------------------------------------------------------------------===//
// Launch geometry: grid-stride loops over int64 element counts.
//===----------------------------------------------------------------------===//

constexpr int kThreads = 256;

inline unsigned gridFor(int64_t n, int threads = kThreads) {
  const int64_t blocks = (n + threads - 1) / threads;
  return static_cast<unsigned>(
      std::max<int64_t>(1, std::min<int64_t>(blocks, 65535)));
}

#define REMAT_GRID_STRIDE_LOOP(i, n)                                           \
  for (int64_t i =                                                             \
           static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;        \
       i < (n); i += static_cast<int64_t>(gridDim.x) * blockDim.x)

/// Raises `kernel`'s dynamic shared memory limit when it needs more than
/// the default 48 KiB (attention tiles, a cached softmax row).
template <typename Kernel>
void allowSharedMemory(Kernel kernel, size_t bytes, const char *name) {
  if (bytes > (size_t(48) << 10))
    checkCuda(cudaFuncSetAttribute(
                  kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                  static_cast<int>(bytes)),
              name, "cudaFuncSetAttribute");
}

/// Records a data error; the first one wins.
__device__ inline void reportError(DeviceStatus *status, unsigned code,
                                   long long value) {
  if (atomicCAS(&status->code, 0u, code) == 0u)
    status->value = value;
}

//===----------------------------------------------------------------------===//
// Type-generic device math, mirroring the <cmath> overloads the CPU kernels
// call (float functions for float, double for double).
//===----------------------------------------------------------------------===//

__device__ inline float dSqrt(float v) { return sqrtf(v); }
__device__ inline double dSqrt(double v) { return sqrt(v); }
__device__ inline float dExp(float v) { return expf(v); }
__device__ inline double dExp(double v) { return exp(v); }
__device__ inline float dLog(float v) { return logf(v); }
__device__ inline double dLog(double v) { return log(v); }
__device__ inline float dErf(float v) { return erff(v); }
__device__ inline double dErf(double v) { return erf(v); }
__device__ inline float dTanh(float v) { return tanhf(v); }
__device__ inline double dTanh(double v) { return tanh(v); }
__device__ inline float dAbs(float v) { return fabsf(v); }
__device__ inline double dAbs(double v) { return fabs(v); }
__device__ inline float dPow(float a, float b) { return powf(a, b); }
__device__ inline double dPow(double a, double b) { return pow(a, b); }
__device__ inline float dExpm1(float v) { return expm1f(v); }
__device__ inline double dExpm1(double v) { return expm1(v); }
__device__ inline float dLog1p(float v) { return log1pf(v); }
__device__ inline double dLog1p(double v) { return log1p(v); }
__device__ inline float dSin(float v) { return sinf(v); }
__device__ inline double dSin(double v) { return sin(v); }
__device__ inline float dCos(float v) { return cosf(v); }
__device__ inline double dCos(double v) { return cos(v); }

template <typename T> __device__ inline bool dIsNan(T v) {
  if constexpr (std::is_floating_point_v<T>)
    return v != v;
  else
    return false;
}
template <typename T> __device__ inline T dInfinity();
template <> __device__ inline float dInfinity<float>() {
  return __int_as_float(0x7f800000);
}
template <> __device__ inline double dInfinity<double>() {
  return __longlong_as_double(0x7ff0000000000000ll);
}
template <typename T> __device__ inline bool dIsInf(T v) {
  return v == dInfinity<T>() || v == -dInfinity<T>();
}

/// A float array of a dtype chosen at run time, read and written in a
/// kernel's compute type C: BatchNorm's parameters and statistics (F32 or
/// F64: ONNX lets their precision differ from the data) and LayerNorm's
/// saved statistics and parameter gradients (F32, F64, or the data's 16-bit
/// type). A float kernel reading an F64 array only converts (no f64
/// arithmetic); kernels that must compute in double when such an array is
/// F64 pick C with statisticsInDouble().
struct FloatRef {
  void *data = nullptr;
  DType dtype = DType::F32;

  template <typename C> __device__ C load(int64_t i) const {
    switch (dtype) {
    case DType::F64: return static_cast<C>(static_cast<const double *>(data)[i]);
    case DType::F16: return static_cast<C>(toCompute(static_cast<const Half *>(data)[i]));
    case DType::BF16:
      return static_cast<C>(toCompute(static_cast<const BFloat16 *>(data)[i]));
    default: return static_cast<C>(static_cast<const float *>(data)[i]);
    }
  }
  template <typename C> __device__ void store(int64_t i, C v) const {
    switch (dtype) {
    case DType::F64: static_cast<double *>(data)[i] = static_cast<double>(v); return;
    case DType::F16:
      static_cast<Half *>(data)[i] = fromCompute<Half>(static_cast<float>(v));
      return;
    case DType::BF16:
      static_cast<BFloat16 *>(data)[i] =
          fromCompute<BFloat16>(static_cast<float>(v));
      return;
    default: static_cast<float *>(data)[i] = static_cast<float>(v); return;
    }
  }
};

/// A FloatRef for an optional F32/F64 view (null data when empty).
inline FloatRef floatRef(const TensorView &view, const char *kernel,
                         const char *what) {
  if (!view.empty())
    requireFloat(view, kernel, what);
  return FloatRef{view.data, view.dtype};
}

/// A FloatRef for an optional view of `x`'s dtype or F32/F64 (LayerNorm's
/// statistics and parameter gradients).
inline FloatRef floatRefLike(const TensorView &view, DType x,
                             const char *kernel, const char *what) {
  if (!view.empty() && view.dtype != x)
    requireFloat(view, kernel, what);
  return FloatRef{view.data, view.dtype};
}

/// Whether a kernel whose data has `dtype` and whose F32/F64 side arrays
/// are `refs` computes its statistics in double: when any of them is F64
/// (the CPU computes them in double, and a caller asking for F64 statistics
/// gets them to double precision). Otherwise the statistics are fp32, the
/// compute type of F32, F16 and BF16 data.
inline bool statisticsInDouble(DType dtype,
                               std::initializer_list<FloatRef> refs) {
  if (dtype == DType::F64)
    return true;
  for (const FloatRef &r : refs)
    if (r.data && r.dtype == DType::F64)
      return true;
  return false;
}

/// Calls f(Tag<T>{}, Tag<A>{}) for the float storage type T of `dtype` and
/// the statistics type A (double when `inDouble`, else float).
template <typename F>
void dispatchWithStatistics(DType dtype, bool inDouble, const char *kernel,
                            F &&f) {
  dispatchFloatStorage(dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, double>)
      f(tag, Tag<double>{});
    else if (inDouble)
      f(tag, Tag<double>{});
    else
      f(tag, Tag<float>{});
  });
}

} // namespace remat::rt::cuda::detail

#endif // REMAT_RUNTIME_CUDA_COMMON_CUH
