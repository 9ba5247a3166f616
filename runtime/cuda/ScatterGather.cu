//===- ScatterGather.cu - GatherND, its backward, and ScatterND -----------===//
//
// The CUDA versions of runtime/cpu/ScatterGather.cpp. GatherND gives each
// output element a thread. Its backward and ScatterND must apply repeated
// index tuples in order without atomics: each thread owns one column (a
// batch element and a position within the slice), walks the tuples in
// row-major order and updates that column of every slice it names, so
// every element receives its contributions in the CPU's order, in the same
// type (bitwise-equal results). The parallelism is therefore batch x slice,
// not the number of tuples.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/cuda/CudaKernels.h"

#include "Common.cuh"
#include "common/FloatStorage.h"
#include "common/IndexingChecks.h"
#include "common/ScatterCombine.h"

#include <type_traits>

namespace remat::rt::cuda {
using namespace detail;

namespace {

/// One thread per element of y ([batch * tuples, slice]).
template <typename T, typename I>
__global__ void gatherNDKernel(const T *data, const I *indices, T *y,
                               int64_t n, GatherNDGeometry g,
                               DeviceStatus *status) {
  REMAT_GRID_STRIDE_LOOP(e, n) {
    const int64_t t = e / g.slice, s = e % g.slice;
    int64_t bad = 0;
    const int64_t offset = g.sliceOffset(t, indices + t * g.depth, bad);
    if (offset < 0) {
      reportError(status, kGatherNDIndex, bad);
      y[e] = T{};
      continue;
    }
    y[e] = data[offset + s];
  }
}

/// One thread per (batch element, slice position): the tuples of its batch
/// element in order.
template <typename T, typename C, typename I>
__global__ void gatherNDBackwardKernel(const T *dy, const I *indices, C *acc,
                                       int64_t columns, GatherNDGeometry g,
                                       DeviceStatus *status) {
  REMAT_GRID_STRIDE_LOOP(column, columns) {
    const int64_t b = column / g.slice, s = column % g.slice;
    for (int64_t t = b * g.tuples; t < (b + 1) * g.tuples; ++t) {
      int64_t bad = 0;
      const int64_t offset = g.sliceOffset(t, indices + t * g.depth, bad);
      if (offset < 0) {
        reportError(status, kGatherNDBackwardIndex, bad);
        continue;
      }
      acc[offset + s] += toCompute(dy[t * g.slice + s]);
    }
  }
}

template <typename T, typename C>
__global__ void storeKernel(const C *acc, T *out, int64_t n) {
  REMAT_GRID_STRIDE_LOOP(i, n) { out[i] = fromCompute<T>(acc[i]); }
}

/// One thread per slice position (ScatterND has no batch dims).
template <typename T, typename I>
__global__ void scatterNDKernel(const T *updates, const I *indices, T *y,
                                GatherNDGeometry g,
                                ScatterReduction reduction,
                                DeviceStatus *status) {
  REMAT_GRID_STRIDE_LOOP(s, g.slice) {
    for (int64_t t = 0; t < g.tuples; ++t) {
      int64_t bad = 0;
      const int64_t offset = g.sliceOffset(t, indices + t * g.depth, bad);
      if (offset < 0) {
        reportError(status, kScatterNDIndex, bad);
        continue;
      }
      const T update = updates[t * g.slice + s];
      T &target = y[offset + s];
      if constexpr (std::is_unsigned_v<T>)
        target = update; // dispatchBySize: reduction None
      else
        target = scatterCombine(reduction, target, update);
    }
  }
}

} // namespace

void gatherND(const TensorView &data, const TensorView &indices,
              const TensorView &y, int64_t batchDims) {
  const char *kernel = "gatherND";
  const GatherNDGeometry g =
      gatherNDGeometry(kernel, data, indices, y, batchDims);
  Context &ctx = context(kernel);
  const int64_t n = y.numel();
  if (n == 0)
    return;
  dispatchIndex(indices.dtype, kernel, [&](auto indexTag) {
    using I = typename decltype(indexTag)::type;
    dispatchBySize(data.dtype, kernel, [&](auto tag) {
      using T = typename decltype(tag)::type;
      gatherNDKernel<T, I><<<gridFor(n), kThreads, 0, ctx.stream>>>(
          data.as<const T>(), indices.as<const I>(), y.as<T>(), n, g,
          ctx.status);
      checkLaunch(kernel);
    });
  });
}

void gatherNDBackward(const TensorView &dy, const TensorView &indices,
                      const TensorView &dx, int64_t batchDims) {
  const char *kernel = "gatherNDBackward";
  const GatherNDGeometry g =
      gatherNDGeometry(kernel, dx, indices, dy, batchDims);
  Context &ctx = context(kernel);
  dispatchFloatStorage(dx.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const int64_t n = dx.numel();
    // f32 and f64 accumulate in dx itself, 16-bit storage in float scratch
    // (the CPU's accumulator, so the same sums round the same way).
    Scratch scratch(kernel);
    C *acc = nullptr;
    if constexpr (std::is_same_v<T, C>)
      acc = dx.as<C>();
    else
      acc = scratch.take<C>(n);
    zeroAsync(acc, n * sizeof(C), kernel);
    const int64_t columns = g.batch * g.slice;
    if (columns > 0 && g.tuples > 0)
      dispatchIndex(indices.dtype, kernel, [&](auto indexTag) {
        using I = typename decltype(indexTag)::type;
        gatherNDBackwardKernel<T, C, I>
            <<<gridFor(columns), kThreads, 0, ctx.stream>>>(
                dy.as<const T>(), indices.as<const I>(), acc, columns, g,
                ctx.status);
        checkLaunch(kernel);
      });
    if constexpr (!std::is_same_v<T, C>) {
      if (n > 0) {
        storeKernel<T, C><<<gridFor(n), kThreads, 0, ctx.stream>>>(
            acc, dx.as<T>(), n);
        checkLaunch(kernel);
      }
    }
  });
}

void scatterND(const TensorView &data, const TensorView &indices,
               const TensorView &updates, const TensorView &y,
               ScatterReduction reduction) {
  const char *kernel = "scatterND";
  const GatherNDGeometry g =
      scatterNDGeometry(kernel, data, indices, updates, y);
  Context &ctx = context(kernel);
  if (y.data != data.data && data.bytes() > 0)
    checkCuda(cudaMemcpyAsync(y.data, data.data, data.bytes(),
                              cudaMemcpyDeviceToDevice, ctx.stream),
              kernel, "cudaMemcpyAsync");
  if (g.slice == 0 || g.tuples == 0)
    return;
  auto launch = [&](auto tag) {
    using T = typename decltype(tag)::type;
    dispatchIndex(indices.dtype, kernel, [&](auto indexTag) {
      using I = typename decltype(indexTag)::type;
      scatterNDKernel<T, I><<<gridFor(g.slice), kThreads, 0, ctx.stream>>>(
          updates.as<const T>(), indices.as<const I>(), y.as<T>(), g,
          reduction, ctx.status);
      checkLaunch(kernel);
    });
  };
  if (reduction == ScatterReduction::None)
    dispatchBySize(data.dtype, kernel, launch);
  else
    dispatchScatterArith(data.dtype, kernel, launch);
}

} // namespace remat::rt::cuda
