//===- CudaTestUtil.h - Helpers for the CUDA kernel tests --------*- C++
//-*-===//
//
// The CUDA kernels are tested against the CPU kernels (which have their own
// tests against float64 references): same inputs, then the outputs compared
// bitwise where the computation is the same sequence of IEEE operations
// (data movement, casts, dropout, optimizers, pooling) and within a
// tolerance elsewhere. Every test skips ("no CUDA device") when the machine
// has no GPU (or no driver), so the binary builds and runs everywhere; any
// other CUDA error at start-up fails every test with the error's name.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TESTS_UNIT_CUDA_CUDATESTUTIL_H
#define REMAT_TESTS_UNIT_CUDA_CUDATESTUTIL_H

#include "TestUtil.h"

#include "remat/runtime/Kernels.h"
#include "remat/runtime/cuda/CudaKernels.h"
#include "remat/runtime/cuda/DeviceProbe.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace remat::rt::cudatest {

using namespace remat::rt::test;

/// Relative tolerances where the CUDA and CPU computations differ in
/// rounding (GEMM and reduction order, CUDA's vs glibc's exp/erf/tanh/pow).
inline double tolerance(DType dtype) {
  return dtype == DType::F64 ? 1e-12 : 1e-5;
}

/// cudaGetDeviceCount's answer, asked once.
const cuda::DeviceProbe &deviceProbe();

constexpr size_t kDefaultWorkspaceBytes = size_t(64) << 20;
/// Binds the kernels to the tests' stream and a workspace of `bytes`
/// (rebinding if a test changed it).
void bindContext(size_t bytes = kDefaultWorkspaceBytes);
/// Forgets the binding (after a test that let a Device own the context).
void forgetContext();

/// Waits for the kernels and throws their data errors.
void syncDevice();

/// A zero-initialised device buffer with a view on it.
class DeviceTensor {
public:
  DeviceTensor(DType dtype, Shape shape);
  /// A device copy of `host`.
  explicit DeviceTensor(const Tensor &host);
  ~DeviceTensor();
  DeviceTensor(const DeviceTensor &) = delete;
  DeviceTensor &operator=(const DeviceTensor &) = delete;

  const TensorView &view() const { return view_; }
  /// A host copy (waits for the stream).
  Tensor host() const;

private:
  TensorView view_;
};

/// The fixture of every CUDA test: skips without a GPU, fails on a broken
/// CUDA install, binds the context.
class CudaTest : public ::testing::Test {
protected:
  void SetUp() override {
    const cuda::DeviceProbe &probe = deviceProbe();
    if (probe.status == cuda::DeviceStatus::Absent)
      GTEST_SKIP() << "no CUDA device"
                   << (probe.error.empty() ? "" : " (" + probe.error + ")");
    ASSERT_EQ(probe.status, cuda::DeviceStatus::Available)
        << "cudaGetDeviceCount failed: " << probe.error;
    bindContext();
  }
};

/// Bitwise equality of dtype, shape and bytes; reports the first difference.
void expectSame(const Tensor &actual, const Tensor &expected,
                const std::string &what = "");

/// |actual - expected| <= tol * (1 + |expected|) per element (NaN matches
/// NaN, infinities must match exactly).
void expectNear(const Tensor &actual, const Tensor &expected, double tol,
                const std::string &what = "");

/// Random integers in [lo, hi] as a tensor of `dtype`.
Tensor randomIntegers(DType dtype, Shape shape, unsigned seed, int64_t lo,
                      int64_t hi);

} // namespace remat::rt::cudatest

#endif // REMAT_TESTS_UNIT_CUDA_CUDATESTUTIL_H
