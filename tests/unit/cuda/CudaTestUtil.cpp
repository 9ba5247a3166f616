//===- CudaTestUtil.cpp - Device buffers, context and comparisons ---------===//

#include "CudaTestUtil.h"

#include <cmath>
#include <random>
#include <sstream>
#include <stdexcept>

namespace remat::rt::cudatest {

namespace {

void check(cudaError_t error, const char *what) {
  if (error != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " +
                             cudaGetErrorString(error));
}

struct TestContext {
  cudaStream_t stream = nullptr;
  void *workspace = nullptr;
  size_t workspaceBytes = 0; // allocated
  size_t boundBytes = 0;     // bound by the last bindContext (0: none)
};

TestContext &testContext() {
  static TestContext context;
  return context;
}

/// The stream the kernels run on. Test copies use it too: the legacy
/// default stream would not order them with the kernels' non-blocking one.
cudaStream_t testStream() {
  TestContext &c = testContext();
  if (!c.stream)
    check(cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking),
          "cudaStreamCreateWithFlags");
  return c.stream;
}

} // namespace

const cuda::DeviceProbe &deviceProbe() {
  static const cuda::DeviceProbe probe = cuda::probeDevices();
  return probe;
}

void bindContext(size_t bytes) {
  TestContext &c = testContext();
  testStream();
  if (c.boundBytes == bytes)
    return;
  if (bytes > c.workspaceBytes) {
    if (c.workspace) {
      cuda::shutdown();
      check(cudaFree(c.workspace), "cudaFree");
    }
    check(cudaMalloc(&c.workspace, bytes), "cudaMalloc");
    c.workspaceBytes = bytes;
  }
  cuda::initialize(c.stream, c.workspace, bytes);
  c.boundBytes = bytes;
}

void forgetContext() { testContext().boundBytes = 0; }

void syncDevice() { cuda::checkDeviceErrors(); }

DeviceTensor::DeviceTensor(DType dtype, Shape shape) {
  view_ = TensorView(dtype, std::move(shape), nullptr);
  void *p = nullptr;
  check(cudaMalloc(&p, std::max<size_t>(view_.bytes(), 256)), "cudaMalloc");
  view_.data = p;
  check(
      cudaMemsetAsync(p, 0, std::max<size_t>(view_.bytes(), 256), testStream()),
      "cudaMemsetAsync");
  check(cudaStreamSynchronize(testStream()), "cudaStreamSynchronize");
}

DeviceTensor::DeviceTensor(const Tensor &host)
    : DeviceTensor(host.dtype(), host.shape()) {
  check(cudaMemcpyAsync(view_.data, host.data(), host.bytes(),
                        cudaMemcpyHostToDevice, testStream()),
        "cudaMemcpyAsync to the device");
  check(cudaStreamSynchronize(testStream()), "cudaStreamSynchronize");
}

// cudaFree waits for the device, so no kernel still uses the buffer.
DeviceTensor::~DeviceTensor() { cudaFree(view_.data); }

Tensor DeviceTensor::host() const {
  Tensor t(view_.dtype, view_.shape);
  check(cudaMemcpyAsync(t.data(), view_.data, view_.bytes(),
                        cudaMemcpyDeviceToHost, testStream()),
        "cudaMemcpyAsync to the host");
  check(cudaStreamSynchronize(testStream()), "cudaStreamSynchronize");
  return t;
}

void expectSame(const Tensor &actual, const Tensor &expected,
                const std::string &what) {
  ASSERT_EQ(actual.dtype(), expected.dtype()) << what;
  ASSERT_EQ(actual.shape(), expected.shape()) << what;
  if (std::memcmp(actual.data(), expected.data(), expected.bytes()) == 0)
    return;
  const size_t size = dtypeSize(expected.dtype());
  const auto *a = static_cast<const unsigned char *>(actual.data());
  const auto *e = static_cast<const unsigned char *>(expected.data());
  for (int64_t i = 0; i < expected.numel(); ++i)
    if (std::memcmp(a + i * size, e + i * size, size) != 0) {
      // NaN payloads and signs are not specified (ONNX, IEEE min/max and
      // division): the CPU's and the GPU's NaNs differ in bits. Any NaN
      // matches any NaN; every other value must match bit for bit.
      if (isFloat(expected.dtype()) &&
          std::isnan(getElement(actual.view(), i)) &&
          std::isnan(getElement(expected.view(), i)))
        continue;
      FAIL() << what << ": element " << i << " differs: CUDA "
             << getElement(actual.view(), i) << ", CPU "
             << getElement(expected.view(), i) << " ("
             << dtypeName(expected.dtype()) << ")";
    }
}

void expectNear(const Tensor &actual, const Tensor &expected, double tol,
                const std::string &what) {
  ASSERT_EQ(actual.dtype(), expected.dtype()) << what;
  ASSERT_EQ(actual.shape(), expected.shape()) << what;
  for (int64_t i = 0; i < expected.numel(); ++i) {
    const double a = getElement(actual.view(), i);
    const double e = getElement(expected.view(), i);
    if (std::isnan(e)) {
      ASSERT_TRUE(std::isnan(a))
          << what << ": element " << i << ": CUDA " << a << ", CPU NaN";
      continue;
    }
    if (std::isinf(e)) {
      ASSERT_EQ(a, e) << what << ": element " << i;
      continue;
    }
    ASSERT_NEAR(a, e, tol * (1 + std::abs(e))) << what << ": element " << i;
  }
}

Tensor randomIntegers(DType dtype, Shape shape, unsigned seed, int64_t lo,
                      int64_t hi) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int64_t> dist(lo, hi);
  Tensor t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i)
    setElement(t.view(), i, static_cast<double>(dist(gen)));
  return t;
}

} // namespace remat::rt::cudatest
