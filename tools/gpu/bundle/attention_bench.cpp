//===- attention_bench.cpp - Throughput of the fused attention kernels ----===//
//
// Times remat's CUDA attention forward and backward (cuda::attention,
// cuda::attentionBackward) on one GPU at GPT-2-small-like sizes, bf16 and
// fp32, in three forms: no mask, the causal flag, and an additive
// [1, 1, s, s] causal mask with the flag off (what a GPT-2 export whose
// mask is a graph input compiles to: every score is computed). Prints one
// JSON object per line:
//
//   {"impl": "remat", "dtype": "bf16", "mask": "causal", "pass": "forward",
//    "ms": 1.23, "tflops": 45.6, ...}
//
// attention_bench.py runs this and PyTorch's scaled_dot_product_attention
// on the same shapes and prints the table. FLOPs are counted as the
// compiler's cost model does: forward 4*b*h*s^2*d (halved when causal,
// not with the additive mask, whose hidden half is computed), backward 2.5x
// the forward.
//
//   attention-bench [--batch 8] [--heads 12] [--seq 1024] [--dim 64]
//                   [--iters 20]
//
//===----------------------------------------------------------------------===//

#include "BenchSupport.h"
#include "remat/runtime/cuda/CudaKernels.h"

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <random>
#include <string>
#include <vector>

namespace {

namespace cuda = remat::rt::cuda;
using remat::rt::DType;
using remat::rt::Shape;
using remat::rt::TensorView;

void check(cudaError_t error, const char *what) {
  bench::check(error, what, "attention-bench");
}

/// A device tensor (bf16 or f32) holding `values` (BenchSupport.h).
TensorView upload(DType dtype, const Shape &shape,
                  const std::vector<float> &values) {
  return bench::upload(dtype, shape, values, "attention-bench");
}

/// A device tensor (bf16 or f32) of uniform values in [-1, 1).
TensorView randomTensor(DType dtype, const Shape &shape, unsigned seed) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> values(n);
  for (float &x : values)
    x = dist(gen);
  return upload(dtype, shape, values);
}

TensorView zeros(DType dtype, const Shape &shape) {
  TensorView view(dtype, shape, nullptr);
  check(cudaMalloc(&view.data, view.bytes()), "cudaMalloc");
  check(cudaMemset(view.data, 0, view.bytes()), "cudaMemset");
  return view;
}

/// Mean milliseconds of `f` over `iters` runs (BenchSupport.h).
template <typename F> double timeMs(cudaStream_t stream, int iters, F &&f) {
  return bench::timeMs(stream, iters, "attention-bench", f);
}

} // namespace

int main(int argc, char **argv) try {
  int64_t batch = 8, heads = 12, seq = 1024, dim = 64;
  int iters = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int64_t value = std::atoll(argv[i + 1]);
    if (flag == "--batch")
      batch = value;
    else if (flag == "--heads")
      heads = value;
    else if (flag == "--seq")
      seq = value;
    else if (flag == "--dim")
      dim = value;
    else if (flag == "--iters")
      iters = static_cast<int>(value);
    else {
      std::fprintf(stderr, "attention-bench: unknown flag %s\n", argv[i]);
      return 64;
    }
  }

  cudaStream_t stream = bench::startRuntime("attention-bench");

  const Shape qkv{batch, heads, seq, dim};
  const double scale = 1.0 / std::sqrt(double(dim));
  for (DType dtype : {DType::BF16, DType::F32}) {
    const char *dtypeName = dtype == DType::BF16 ? "bf16" : "f32";
    TensorView q = randomTensor(dtype, qkv, 1), k = randomTensor(dtype, qkv, 2),
               v = randomTensor(dtype, qkv, 3),
               dout = randomTensor(dtype, qkv, 4);
    TensorView out = zeros(dtype, qkv),
               lse = zeros(DType::F32, {batch, heads, seq});
    TensorView dq = zeros(dtype, qkv), dk = zeros(dtype, qkv),
               dv = zeros(dtype, qkv);
    // HF GPT-2's mask: 0 where visible, the lowest float where hidden.
    std::vector<float> maskValues(seq * seq);
    for (int64_t i = 0; i < seq; ++i)
      for (int64_t j = 0; j < seq; ++j)
        maskValues[i * seq + j] = j > i ? -3.4028234663852886e38f : 0.0f;
    TensorView mask = upload(dtype, {1, 1, seq, seq}, maskValues);

    for (const char *form : {"none", "causal", "additive"}) {
      const bool causal = std::strcmp(form, "causal") == 0;
      const TensorView maskView =
          std::strcmp(form, "additive") == 0 ? mask : TensorView();
      const double forwardFlops =
          4.0 * batch * heads * seq * seq * dim * (causal ? 0.5 : 1.0);
      const double forwardMs = timeMs(stream, iters, [&] {
        cuda::attention(q, k, v, maskView, out, lse, scale, causal, 0, 0, 0,
                        nullptr);
      });
      const double backwardMs = timeMs(stream, iters, [&] {
        cuda::attentionBackward(q, k, v, maskView, out, lse, dout, dq, dk, dv,
                                scale, causal, 0, 0, 0, nullptr);
      });
      cuda::checkDeviceErrors();
      const struct {
        const char *pass;
        double ms, flops;
      } rows[] = {{"forward", forwardMs, forwardFlops},
                  {"backward", backwardMs, 2.5 * forwardFlops}};
      for (const auto &row : rows)
        std::printf("{\"impl\": \"remat\", \"dtype\": \"%s\", "
                    "\"mask\": \"%s\", \"pass\": \"%s\", \"batch\": %lld, "
                    "\"heads\": %lld, \"seq\": %lld, \"dim\": %lld, "
                    "\"ms\": %.4f, \"tflops\": %.2f}\n",
                    dtypeName, form, row.pass, static_cast<long long>(batch),
                    static_cast<long long>(heads), static_cast<long long>(seq),
                    static_cast<long long>(dim), row.ms,
                    row.flops / (row.ms * 1e-3) / 1e12);
    }
    for (TensorView *t : {&q, &k, &v, &dout, &out, &lse, &dq, &dk, &dv, &mask})
      check(cudaFree(t->data), "cudaFree");
  }
  std::fflush(stdout);
  cuda::shutdown();
  return 0;
} catch (const std::exception &e) {
  std::fprintf(stderr, "attention-bench: %s\n", e.what());
  return 1;
}
