//===- DataMovementGrad.cu - Gather(Elements), slice and pad backward -----===//
//
// The CUDA versions of runtime/cpu/DataMovementGrad.cpp. Gather backward
// scatter-adds dy into the zeroed dx with atomicAdd in the compute type
// (repeated indices, e.g. an embedding's tokens, accumulate in a
// nondeterministic order; the CPU sums in double). Slice backward zeroes dx
// and scatters dy to the sliced positions, which are distinct. Pad backward
// gathers instead: one thread per dx element sums, in the compute type and
// a fixed order, the dy positions that read it (deterministic, no atomics).
// GatherElements backward gives each line along the axis to one thread,
// which adds its dy elements in order into its own line of the zeroed dx:
// lines are disjoint, so no atomics, and the order is the CPU's. For F16 and
// BF16 the two scatter-adds accumulate in fp32 (FloatAccumulation.cuh) and
// round each dx element once.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/cuda/CudaKernels.h"

#include "Common.cuh"
#include "DataMovement.cuh"
#include "FloatAccumulation.cuh"
#include "Indexing.cuh"

namespace remat::rt::cuda {
using namespace detail;

namespace {

/// Adds each dy element to its dx element when that lies in [lo, hi) (dx
/// points at element lo: all of dx for F32/F64, a window of an fp32
/// accumulator for 16-bit data).
template <typename T, typename I, typename Acc>
__global__ void gatherBackwardKernel(const T *dy, const I *indices, Acc *dx,
                                     int64_t total, int64_t count,
                                     int64_t inner, int64_t axisSize,
                                     int64_t lo, int64_t hi,
                                     DeviceStatus *status) {
  REMAT_GRID_STRIDE_LOOP(e, total) {
    const int64_t k = e % inner;
    const int64_t t = e / inner; // outer * count + p
    const int64_t p = t % count, o = t / count;
    const int64_t v = static_cast<int64_t>(indices[p]);
    if (v < -axisSize || v >= axisSize) {
      reportError(status, kGatherBackwardIndex, v);
      continue;
    }
    const int64_t i = v < 0 ? v + axisSize : v;
    const int64_t target = (o * axisSize + i) * inner + k;
    if (target >= lo && target < hi)
      atomicAdd(dx + (target - lo), static_cast<Acc>(toCompute(dy[e])));
  }
}

template <typename T>
__global__ void scatterKernel(const T *dy, T *dx, int64_t n, Indexer<1> ix) {
  REMAT_GRID_STRIDE_LOOP(i, n) { dx[ix.offset(i)] = dy[i]; }
}

/// One thread per line of indices along the axis; adds in the
/// accumulator's type the dy elements whose dx element lies in [lo, hi) (dx
/// points at element lo, as for gather backward).
template <typename T, typename I, typename Acc>
__global__ void gatherElementsBackwardKernel(const T *dy, const I *indices,
                                             Acc *dx, int64_t lines,
                                             GatherElementsGeometry g,
                                             int64_t lo, int64_t hi,
                                             DeviceStatus *status) {
  REMAT_GRID_STRIDE_LOOP(line, lines) {
    const int64_t start = g.lineStart(line);
    const int64_t base = g.dataBase(start);
    const int64_t step = g.indexStride[g.axis];
    for (int64_t k = 0; k < g.index[g.axis]; ++k) {
      const int64_t p = start + k * step;
      const int64_t v = static_cast<int64_t>(indices[p]);
      const int64_t c = gatherElementsCoordinate(v, g.axisSize);
      if (c < 0) {
        reportError(status, kGatherElementsBackwardIndex, v);
        continue;
      }
      const int64_t target = base + c * g.dataStride[g.axis];
      if (target >= lo && target < hi)
        dx[target - lo] = dx[target - lo] + static_cast<Acc>(toCompute(dy[p]));
    }
  }
}

template <typename T>
__global__ void padBackwardKernel(const T *dy, T *dx, int64_t n,
                                  PadGeometry g) {
  REMAT_GRID_STRIDE_LOOP(i, n) {
    dx[i] = fromCompute<T>(padGradient<ComputeType<T>>(g, dy, i));
  }
}

} // namespace

void gatherBackward(const TensorView &dy, const TensorView &indices,
                    const TensorView &dx, int64_t axis) {
  const char *kernel = "gatherBackward";
  const AxisExtents e = checkGatherBackward(kernel, dy, indices, dx, axis);
  const int64_t count = indices.numel();
  Context &ctx = context(kernel);
  dispatchFloatStorage(dy.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    dispatchIndex(indices.dtype, kernel, [&](auto indexTag) {
      using I = typename decltype(indexTag)::type;
      const int64_t total = dy.numel(), size = dx.numel();
      auto scatter = [&](auto *acc, int64_t lo, int64_t hi) {
        if (total == 0)
          return;
        gatherBackwardKernel<<<gridFor(total), kThreads, 0, ctx.stream>>>(
            dy.as<const T>(), indices.as<const I>(), acc, total, count,
            e.inner, e.size, lo, hi, ctx.status);
        checkLaunch(kernel);
      };
      if constexpr (kIsHalfStorage<T>) {
        accumulateInFloat(kernel, dx.as<T>(), size, 1, scatter);
      } else {
        zeroAsync(dx.data, dx.bytes(), kernel);
        scatter(dx.as<T>(), 0, size);
      }
    });
  });
}

void gatherElementsBackward(const TensorView &dy, const TensorView &indices,
                            const TensorView &dx, int64_t axis) {
  const char *kernel = "gatherElementsBackward";
  const GatherElementsGeometry g =
      gatherElementsGeometry(kernel, dx, indices, dy, axis);
  Context &ctx = context(kernel);
  dispatchFloatStorage(dy.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    dispatchIndex(indices.dtype, kernel, [&](auto indexTag) {
      using I = typename decltype(indexTag)::type;
      const int64_t lines = dy.numel() == 0 ? 0 : g.lines();
      const int64_t size = dx.numel();
      auto add = [&](auto *acc, int64_t lo, int64_t hi) {
        if (lines == 0)
          return;
        gatherElementsBackwardKernel<<<gridFor(lines), kThreads, 0,
                                       ctx.stream>>>(
            dy.as<const T>(), indices.as<const I>(), acc, lines, g, lo, hi,
            ctx.status);
        checkLaunch(kernel);
      };
      if constexpr (kIsHalfStorage<T>) {
        accumulateInFloat(kernel, dx.as<T>(), size, 1, add);
      } else {
        zeroAsync(dx.data, dx.bytes(), kernel);
        add(dx.as<T>(), 0, size);
      }
    });
  });
}

void padBackward(const TensorView &dy, const TensorView &dx,
                 const Dims &begins, PadMode mode) {
  const char *kernel = "padBackward";
  requireDType(dx, dy.dtype, kernel, "dx");
  const PadGeometry g = padGeometry(kernel, dx.shape, dy.shape, begins, mode);
  cudaStream_t stream = context(kernel).stream;
  const int64_t n = dx.numel();
  dispatchFloatStorage(dy.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (n == 0)
      return;
    padBackwardKernel<T><<<gridFor(n), kThreads, 0, stream>>>(
        dy.as<const T>(), dx.as<T>(), n, g);
    checkLaunch(kernel);
  });
}

void sliceBackward(const TensorView &dy, const TensorView &dx,
                   const Dims &starts,
                   const Dims &steps) {
  const char *kernel = "sliceBackward";
  requireDType(dx, dy.dtype, kernel, "dx");
  int64_t base = 0;
  const Strides strides =
      sliceStrides(kernel, dx.shape, dy.shape, starts, steps, "writes",
                   "starts, steps, dy and dx need one entry per dim", base);
  cudaStream_t stream = context(kernel).stream;
  // Every dtype: all-zero bytes are 0 for every dtype.
  zeroAsync(dx.data, dx.bytes(), kernel);
  const int64_t n = dy.numel();
  if (n == 0)
    return;
  const Indexer<1> ix = makeIndexer1(dy.shape, strides, kernel);
  dispatchBySize(dx.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    scatterKernel<T><<<gridFor(n), kThreads, 0, stream>>>(
        dy.as<const T>(), dx.as<T>() + base, n, ix);
    checkLaunch(kernel);
  });
}

} // namespace remat::rt::cuda
