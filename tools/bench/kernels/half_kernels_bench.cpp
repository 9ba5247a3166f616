//===- half_kernels_bench.cpp - 16-bit vs fp32 CPU kernel timings ---------===//
//
// Times the CPU kernels on BF16/F16 storage against F32 on the same shapes:
// GEMMs (linear layers of GPT-2 small, and its LM head's K x N at fewer
// rows) and elementwise ops at the size of GPT-2 small's MLP activation
// (batch 8 x 1024 tokens x 3072). Prints the median of a few runs of each;
// figures only, no assertion. OPENBLAS_NUM_THREADS picks the GEMM threads.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/KernelScratch.h"
#include "remat/runtime/Kernels.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace remat::rt;

namespace {

/// Random values in [-1, 1) stored as dtype (through F32, rounded once).
Tensor randomTensor(DType dtype, Shape shape, unsigned seed) {
  Tensor f32(DType::F32, shape);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (int64_t i = 0; i < f32.numel(); ++i)
    f32.as<float>()[i] = dist(gen);
  if (dtype == DType::F32)
    return f32;
  Tensor t(dtype, std::move(shape));
  cast(f32.view(), t.view());
  return t;
}

/// Median seconds of `runs` calls of fn, after one warm-up call.
double medianSeconds(int runs, const std::function<void()> &fn) {
  fn();
  std::vector<double> seconds;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    seconds.push_back(std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - start)
                          .count());
  }
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

const DType kTypes[] = {DType::F32, DType::BF16, DType::F16};

void benchMatmul(const char *name, int64_t M, int64_t K, int64_t N,
                 bool transB, int runs) {
  std::printf("%-34s", name);
  double f32 = 0;
  for (DType dt : kTypes) {
    Tensor a = randomTensor(dt, {M, K}, 1);
    Tensor b = randomTensor(dt, transB ? Shape{N, K} : Shape{K, N}, 2);
    Tensor out(dt, {M, N});
    const double s = medianSeconds(runs, [&] {
      matmul(a.view(), b.view(), out.view(), false, transB);
    });
    if (dt == DType::F32)
      f32 = s;
    std::printf(" %s %8.2f ms (%5.1f GFLOP/s, x%.2f)", dtypeName(dt),
                s * 1e3, 2.0 * M * N * K / s * 1e-9, s / f32);
  }
  std::printf("   scratch %zu bytes\n",
              matmulScratchBytes(TensorView(DType::BF16, {M, K}, nullptr),
                                 TensorView(DType::BF16,
                                            transB ? Shape{N, K}
                                                   : Shape{K, N},
                                            nullptr),
                                 TensorView(DType::BF16, {M, N}, nullptr),
                                 false, transB));
}

void benchElementwise(const char *name, const Shape &shape, int runs,
                      const std::function<void(const Tensor &, const Tensor &,
                                               const Tensor &)> &op) {
  std::printf("%-34s", name);
  double f32 = 0;
  for (DType dt : kTypes) {
    Tensor x = randomTensor(dt, shape, 3), y = randomTensor(dt, shape, 4);
    Tensor out(dt, shape);
    const double s = medianSeconds(runs, [&] { op(x, y, out); });
    if (dt == DType::F32)
      f32 = s;
    std::printf(" %s %8.2f ms (%5.2f ns/elem, x%.2f)", dtypeName(dt),
                s * 1e3, s / static_cast<double>(x.numel()) * 1e9, s / f32);
  }
  std::printf("\n");
}

} // namespace

int main() {
  std::printf("GEMMs (matmul kernel; bf16/f16 through fp32 panels):\n");
  benchMatmul("1024x768 * 768x3072 (MLP up)", 1024, 768, 3072, false, 5);
  benchMatmul("1024x3072 * (768x3072)^T (down)", 1024, 3072, 768, true, 5);
  benchMatmul("1024x1024 * 1024x1024", 1024, 1024, 1024, false, 5);
  benchMatmul("512x768 * 768x50257 (LM head)", 512, 768, 50257, false, 3);

  const Shape activation = {8, 1024, 3072}; // GPT-2 small, batch 8 x 1024
  std::printf("\nElementwise ops on [8, 1024, 3072] (25.2M elements):\n");
  benchElementwise("gelu (erf)", activation, 5,
                   [](const Tensor &x, const Tensor &, const Tensor &out) {
                     unary(UnaryOp::GeluErf, x.view(), out.view());
                   });
  benchElementwise("add", activation, 5,
                   [](const Tensor &x, const Tensor &y, const Tensor &out) {
                     binary(BinaryOp::Add, x.view(), y.view(), out.view());
                   });
  benchElementwise("geluBackward (erf)", activation, 5,
                   [](const Tensor &x, const Tensor &dy, const Tensor &dx) {
                     geluBackward(x.view(), dy.view(), dx.view(), false);
                   });
  return 0;
}
