//===- kernel_bench.cpp - Achieved bandwidth of the memory-bound kernels --===//
//
// Issue 17's bandwidth target: the runtime's memory-bound kernels at large
// sizes (every tensor well past the L2), in fp32 and bf16, timed through the
// kernel API as a generated program calls it. Each kernel's bytes are the
// least it must move (every operand read once, every result written once);
// its bandwidth is those bytes over its time, against the device-to-device
// copy (cudaMemcpyAsync) measured first in the same run, the ceiling a
// kernel can reach on this GPU. Prints one JSON object per line:
//
//   {"kernel": "unary relu", "dtype": "f32", "shape": "[268435456]",
//    "bytes": 2147483648, "ms": 0.6, "gbps": 3500.0, "of_copy": 0.85}
//
//   kernel-bench [--iters 20] [--scale 1]
//
// --scale divides every size (for a quick run on a small GPU).
//
//===----------------------------------------------------------------------===//

#include "BenchSupport.h"
#include "remat/runtime/cuda/CudaKernels.h"

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <string>
#include <vector>

namespace {

namespace cuda = remat::rt::cuda;
using remat::rt::DType;
using remat::rt::Shape;
using remat::rt::TensorView;

const char *kBench = "kernel-bench";

/// A device tensor filled with `value` (bandwidth does not depend on the
/// values; the fill avoids a host copy of gigabytes).
TensorView make(DType dtype, const Shape &shape, double value = 0.5) {
  TensorView view(dtype, shape, nullptr);
  bench::check(cudaMalloc(&view.data, view.bytes()), "cudaMalloc", kBench);
  cuda::fill(view, value);
  return view;
}

void release(std::initializer_list<TensorView> views) {
  for (const TensorView &v : views)
    bench::check(cudaFree(v.data), "cudaFree", kBench);
}

struct Bench {
  cudaStream_t stream;
  int iters;
  double copyGbps = 0; // the ceiling, measured first

  void report(const std::string &kernel, DType dtype, const Shape &shape,
              double bytes, const std::function<void()> &f) {
    const double ms = bench::timeMs(stream, iters, kBench, f);
    cuda::checkDeviceErrors();
    const double gbps = bytes / (ms * 1e-3) / 1e9;
    if (copyGbps == 0)
      copyGbps = gbps;
    std::printf("{\"kernel\": \"%s\", \"dtype\": \"%s\", \"shape\": \"%s\", "
                "\"bytes\": %.0f, \"ms\": %.4f, \"gbps\": %.1f, "
                "\"of_copy\": %.3f}\n",
                kernel.c_str(), remat::rt::dtypeName(dtype),
                remat::rt::shapeToString(shape).c_str(), bytes, ms, gbps,
                gbps / copyGbps);
    std::fflush(stdout);
  }
};

double bytesOf(std::initializer_list<TensorView> views) {
  double bytes = 0;
  for (const TensorView &v : views)
    bytes += static_cast<double>(v.bytes());
  return bytes;
}

} // namespace

int main(int argc, char **argv) try {
  int iters = 20;
  int64_t scale = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--iters") {
      iters = std::atoi(argv[i + 1]);
    } else if (flag == "--scale") {
      scale = std::atoll(argv[i + 1]);
    } else {
      std::fprintf(stderr, "kernel-bench: unknown flag %s\n", argv[i]);
      return 64;
    }
  }
  if (iters < 1 || scale < 1) {
    std::fprintf(stderr, "kernel-bench: --iters and --scale must be >= 1\n");
    return 64;
  }
  Bench b{bench::startRuntime(kBench), iters};
  // 2^28 elements: 1 GiB in fp32, about 17 times an H200's 60 MB L2. Rows
  // of GPT-2 small's widths (768, 1024 keys, 3072) over as many tokens.
  const int64_t n = (int64_t(1) << 28) / scale;
  const int64_t rows768 = n / 768, rows1024 = n / 1024, rows3072 = n / 3072;

  { // The ceiling: a plain device-to-device copy of n fp32 elements.
    TensorView x = make(DType::F32, {n}), y = make(DType::F32, {n});
    b.report("cudaMemcpyAsync", DType::F32, x.shape, bytesOf({x, y}), [&] {
      bench::check(cudaMemcpyAsync(y.data, x.data, x.bytes(),
                                   cudaMemcpyDeviceToDevice, b.stream),
                   "cudaMemcpyAsync", kBench);
    });
    release({x, y});
  }

  for (DType dtype : {DType::F32, DType::BF16}) {
    { // Elementwise over contiguous operands (16-byte packs).
      TensorView x = make(dtype, {n}), y = make(dtype, {n}),
                 z = make(dtype, {n});
      b.report("copy", dtype, x.shape, bytesOf({x, y}),
               [&] { cuda::copy(x, y); });
      b.report("unary relu", dtype, x.shape, bytesOf({x, y}),
               [&] { cuda::unary(remat::rt::UnaryOp::Relu, x, y); });
      b.report("unary gelu (tanh)", dtype, x.shape, bytesOf({x, y}),
               [&] { cuda::unary(remat::rt::UnaryOp::GeluTanh, x, y); });
      b.report("binary add", dtype, x.shape, bytesOf({x, y, z}), [&] {
        cuda::binary(remat::rt::BinaryOp::Add, x, y, z);
      });
      b.report("binary mul, in place", dtype, x.shape, bytesOf({x, y, y}),
               [&] { cuda::binary(remat::rt::BinaryOp::Mul, x, y, y); });
      b.report("gelu backward (tanh)", dtype, x.shape, bytesOf({x, y, z}),
               [&] { cuda::geluBackward(x, y, z, true); });
      b.report("relu backward", dtype, x.shape, bytesOf({x, y, z}), [&] {
        cuda::activationBackward(remat::rt::UnaryOp::Relu, x, y, z, {});
      });
      release({x, y, z});
    }
    { // Bias add: [rows, 3072] + [3072] (the row broadcast).
      Shape shape{rows3072, 3072};
      TensorView x = make(dtype, shape), bias = make(dtype, {3072}),
                 y = make(dtype, shape);
      b.report("binary add, bias broadcast", dtype, shape, bytesOf({x, y}),
               [&] { cuda::binary(remat::rt::BinaryOp::Add, x, bias, y); });
      release({x, bias, y});
    }
    { // Casts between fp32 and the 16-bit type.
      const DType other = dtype == DType::F32 ? DType::BF16 : DType::F32;
      TensorView x = make(dtype, {n}), y = make(other, {n});
      b.report(std::string("cast to ") + remat::rt::dtypeName(other), dtype,
               x.shape, bytesOf({x, y}), [&] { cuda::cast(x, y); });
      release({x, y});
    }
    { // Transposes: attention's head split and a 2-D weight gradient's.
      const int64_t batch = n / (1024 * 768);
      Shape heads{batch, 1024, 12, 64};
      TensorView x = make(dtype, heads),
                 y = make(dtype, {batch, 12, 1024, 64});
      b.report("transpose [b, s, h, d] -> [b, h, s, d]", dtype, heads,
               bytesOf({x, y}), [&] { cuda::transpose(x, y, {0, 2, 1, 3}); });
      TensorView m = make(dtype, {rows3072, 3072}),
                 mt = make(dtype, {3072, rows3072});
      b.report("transpose 2-D", dtype, m.shape, bytesOf({m, mt}),
               [&] { cuda::transpose(m, mt, {1, 0}); });
      release({x, y, m, mt});
    }
    { // Reductions: over the rows (a bias gradient) and within each row.
      Shape shape{rows768, 768};
      TensorView x = make(dtype, shape), cols = make(dtype, {1, 768}),
                 rowSums = make(dtype, {rows768, 1});
      b.report("reduce sum over rows", dtype, shape, bytesOf({x, cols}), [&] {
        cuda::reduce(remat::rt::ReduceOp::Sum, x, cols, {0});
      });
      b.report("reduce sum within rows", dtype, shape, bytesOf({x, rowSums}),
               [&] {
                 cuda::reduce(remat::rt::ReduceOp::Sum, x, rowSums, {1});
               });
      release({x, cols, rowSums});
    }
    { // Softmax over attention-score rows of 1024 keys, forward and back.
      Shape shape{rows1024, 1024};
      TensorView x = make(dtype, shape), y = make(dtype, shape),
                 dx = make(dtype, shape);
      b.report("softmax", dtype, shape, bytesOf({x, y}),
               [&] { cuda::softmax(x, y, 1); });
      b.report("log-softmax", dtype, shape, bytesOf({x, y}),
               [&] { cuda::logSoftmax(x, y, 1); });
      b.report("softmax backward", dtype, shape, bytesOf({y, x, dx}),
               [&] { cuda::softmaxBackward(y, x, dx, 1); });
      release({x, y, dx});
    }
    { // Layer norm over rows of 768, forward and backward (statistics fp32).
      Shape shape{rows768, 768};
      TensorView x = make(dtype, shape), scale = make(dtype, {768}),
                 bias = make(dtype, {768}), y = make(dtype, shape),
                 mean = make(DType::F32, {rows768, 1}),
                 inv = make(DType::F32, {rows768, 1}),
                 dx = make(dtype, shape), dscale = make(dtype, {768}),
                 dbias = make(dtype, {768});
      b.report("layer norm", dtype, shape, bytesOf({x, y, mean, inv}), [&] {
        cuda::layerNorm(x, scale, bias, y, mean, inv, 1, 1e-5);
      });
      b.report("layer norm backward", dtype, shape,
               bytesOf({x, y, mean, inv, dx}), [&] {
                 cuda::layerNormBackward(x, scale, mean, inv, y, dx, dscale,
                                         dbias, 1);
               });
      release({x, scale, bias, y, mean, inv, dx, dscale, dbias});
    }
  }
  { // Adam on 2^26 fp32 parameters (GPT-2 small has 1.24e8): p, g, m, v
    // read; p, m, v written (in place, as the programs update).
    const int64_t count = (int64_t(1) << 26) / scale;
    TensorView p = make(DType::F32, {count}), g = make(DType::F32, {count}),
               m = make(DType::F32, {count}), v = make(DType::F32, {count});
    remat::rt::AdamOptions options;
    b.report("adam update, in place", DType::F32, p.shape,
             bytesOf({p, g, m, v, p, m, v}),
             [&] { cuda::adamUpdate(p, g, m, v, p, m, v, 1, options); });
    release({p, g, m, v});
  }
  cuda::shutdown();
  return 0;
} catch (const std::exception &e) {
  std::fprintf(stderr, "kernel-bench: %s\n", e.what());
  return 1;
}
