//===- gemm_bench.cpp - Throughput of GPT-2 small's GEMMs -----------------===//
//
// Times the GEMMs of a GPT-2 small training step (8 x 1024 tokens, width
// 768) through the runtime's cuda::matmul, in fp32 and bf16, in the forms
// the generated program calls: the linear layer, its input gradient, and
// its weight gradient, both as the batched [8, K, N] product the autodiff
// wrote before (then summed over the batch by a reduction, not timed here)
// and as one GEMM over the 8192 flattened rows, its form now. Each bf16
// shape is also timed through cuBLAS directly with the default math mode,
// with and without CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION, to tell
// the cost of the runtime's CUBLAS_PEDANTIC_MATH |
// CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION handle from the shapes'
// own; and with an fp32 output (default math: split-K partial sums are then
// fp32 whatever the flag) followed by the runtime's cast to bf16, the
// accurate alternative to the flag for shapes it slows (the LM head's input
// gradient). Prints one JSON object per line:
//
//   {"impl": "remat", "dtype": "bf16", "gemm": "c_attn forward",
//    "m": 8192, "n": 2304, "k": 768, "batch": 1, "ms": 0.1,
//    "tflops": 300.0}
//
//   gemm-bench [--iters 20]
//
//===----------------------------------------------------------------------===//

#include "BenchSupport.h"
#include "remat/runtime/cuda/CudaKernels.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

namespace {

namespace cuda = remat::rt::cuda;
using remat::rt::DType;
using remat::rt::Shape;
using remat::rt::TensorView;

void check(cudaError_t error, const char *what) {
  bench::check(error, what, "gemm-bench");
}

void checkBlas(cublasStatus_t status, const char *what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "gemm-bench: %s: cuBLAS status %d\n", what,
                 static_cast<int>(status));
    std::exit(1);
  }
}

/// A device tensor of 1/64 everywhere (GEMM time does not depend on the
/// values, only on NaN-free inputs).
TensorView filled(DType dtype, const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return bench::upload(dtype, shape, std::vector<float>(n, 1.0f / 64),
                       "gemm-bench");
}

/// Mean milliseconds of `f` over `iters` runs (BenchSupport.h).
template <typename F> double timeMs(cudaStream_t stream, int iters, F &&f) {
  return bench::timeMs(stream, iters, "gemm-bench", f);
}

/// One GEMM of the step: out = op(a) op(b), with the shapes the program
/// passes to cuda::matmul.
struct Gemm {
  std::string name;
  Shape a, b, out;
  bool transA, transB;
  int64_t m, n, k, batch;
};

std::vector<Gemm> gpt2Gemms() {
  const int64_t B = 8, S = 1024, T = B * S, W = 768;
  std::vector<Gemm> gemms;
  const struct {
    const char *layer;
    int64_t in, out;
  } layers[] = {{"c_attn", W, 3 * W},
                {"attn c_proj", W, W},
                {"c_fc", W, 4 * W},
                {"mlp c_proj", 4 * W, W},
                {"lm_head", W, 50257},
                // The GPT-2 program's form: the tied weight transposed once.
                {"lm_head [768, vocab]", W, 50257}};
  for (const auto &l : layers) {
    const std::string name = l.layer;
    // Conv1D-style weight [in, out]; the LM head is tied: [vocab, W], b^T.
    const bool tied = name == "lm_head";
    const Shape weight = tied ? Shape{l.out, l.in} : Shape{l.in, l.out};
    gemms.push_back({name + " forward",
                     {B, S, l.in},
                     weight,
                     {B, S, l.out},
                     false,
                     tied,
                     T,
                     l.out,
                     l.in,
                     1});
    gemms.push_back({name + " input grad",
                     {B, S, l.out},
                     weight,
                     {B, S, l.in},
                     false,
                     !tied,
                     T,
                     l.in,
                     l.out,
                     1});
    gemms.push_back({name + " weight grad, per batch",
                     {B, S, l.in},
                     {B, S, l.out},
                     {B, l.in, l.out},
                     true,
                     false,
                     l.in,
                     l.out,
                     S,
                     B});
    gemms.push_back({name + " weight grad, flattened",
                     {T, l.in},
                     {T, l.out},
                     {l.in, l.out},
                     true,
                     false,
                     l.in,
                     l.out,
                     T,
                     1});
  }
  return gemms;
}

void print(const char *impl, const char *dtype, const Gemm &g, double ms) {
  const double flops = 2.0 * g.m * g.n * g.k * g.batch;
  std::printf("{\"impl\": \"%s\", \"dtype\": \"%s\", \"gemm\": \"%s\", "
              "\"m\": %lld, \"n\": %lld, \"k\": %lld, \"batch\": %lld, "
              "\"ms\": %.4f, \"tflops\": %.2f}\n",
              impl, dtype, g.name.c_str(), static_cast<long long>(g.m),
              static_cast<long long>(g.n), static_cast<long long>(g.k),
              static_cast<long long>(g.batch), ms, flops / (ms * 1e-3) / 1e12);
}

} // namespace

int main(int argc, char **argv) try {
  int iters = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--iters") {
      iters = std::atoi(argv[i + 1]);
    } else {
      std::fprintf(stderr, "gemm-bench: unknown flag %s\n", argv[i]);
      return 64;
    }
  }
  cudaStream_t stream = bench::startRuntime("gemm-bench");

  // Handles of cuBLAS's default math mode, with and without fp32 split-K
  // reductions, and the runtime's share of a 64 MiB workspace (16 MiB),
  // for the bf16 comparison.
  const struct {
    const char *impl;
    cublasMath_t mode;
  } variants[] = {{"cublas-default-math", CUBLAS_DEFAULT_MATH},
                  {"cublas-default-math-fp32-reduction",
                   static_cast<cublasMath_t>(
                       CUBLAS_DEFAULT_MATH |
                       CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)}};
  cublasHandle_t handles[2];
  for (int v = 0; v < 2; ++v) {
    checkBlas(cublasCreate(&handles[v]), "cublasCreate");
    checkBlas(cublasSetStream(handles[v], stream), "cublasSetStream");
    void *blasWorkspace = nullptr;
    check(cudaMalloc(&blasWorkspace, size_t(16) << 20), "cudaMalloc");
    checkBlas(cublasSetWorkspace(handles[v], blasWorkspace, size_t(16) << 20),
              "cublasSetWorkspace");
    checkBlas(cublasSetMathMode(handles[v], variants[v].mode),
              "cublasSetMathMode");
  }

  for (DType dtype : {DType::BF16, DType::F32}) {
    const char *dtypeName = dtype == DType::BF16 ? "bf16" : "f32";
    for (const Gemm &g : gpt2Gemms()) {
      TensorView a = filled(dtype, g.a), b = filled(dtype, g.b),
                 out = filled(dtype, g.out);
      print("remat", dtypeName, g, timeMs(stream, iters, [&] {
              cuda::matmul(a, b, out, g.transA, g.transB);
            }));
      if (dtype == DType::BF16) {
        // Row-major out = op(a) op(b) is column-major out^T = op(b)^T op(a)^T.
        const float alpha = 1, beta = 0;
        const int m = static_cast<int>(g.m), n = static_cast<int>(g.n),
                  k = static_cast<int>(g.k);
        const int lda = g.transA ? m : k, ldb = g.transB ? k : n;
        // The bf16 GEMM through cuBLAS directly, into c of type cType.
        auto blasGemm = [&](cublasHandle_t handle, void *c,
                            cudaDataType_t cType) {
          checkBlas(cublasGemmStridedBatchedEx(
                        handle, g.transB ? CUBLAS_OP_T : CUBLAS_OP_N,
                        g.transA ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &alpha,
                        b.data, CUDA_R_16BF, ldb,
                        g.batch > 1 ? int64_t(k) * n : 0, a.data, CUDA_R_16BF,
                        lda, g.batch > 1 ? int64_t(m) * k : 0, &beta, c, cType,
                        n, int64_t(m) * n, static_cast<int>(g.batch),
                        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                    "cublasGemmStridedBatchedEx");
        };
        for (int v = 0; v < 2; ++v)
          print(variants[v].impl, dtypeName, g, timeMs(stream, iters, [&] {
                  blasGemm(handles[v], out.data, CUDA_R_16BF);
                }));
        // fp32 output into a scratch, then one rounding to bf16 by the
        // runtime's cast: what the runtime would do instead of the flag.
        TensorView wide = filled(DType::F32, g.out);
        print("cublas-default-math-fp32-output+cast", dtypeName, g,
              timeMs(stream, iters, [&] {
                blasGemm(handles[0], wide.data, CUDA_R_32F);
                cuda::cast(wide, out);
              }));
        check(cudaFree(wide.data), "cudaFree");
      }
      cuda::checkDeviceErrors();
      for (TensorView *t : {&a, &b, &out})
        check(cudaFree(t->data), "cudaFree");
    }
  }
  std::fflush(stdout);
  for (cublasHandle_t h : handles)
    cublasDestroy(h);
  cuda::shutdown();
  return 0;
} catch (const std::exception &e) {
  std::fprintf(stderr, "gemm-bench: %s\n", e.what());
  return 1;
}
