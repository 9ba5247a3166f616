//===- DataMovementGrad.cu - Gather(Elements), slice and pad backward -----===//
//
// The CUDA versions of runtime/cpu/DataMovementGrad.cpp, all deterministic
// (no float atomics):
// - Gather backward sorts the positions by the row they read (a stable
//   radix sort, cub::DeviceRadixSort, in the workspace scratch); the thread
//   at the start of each row's run then sums that run's dy elements in
//   position order, in the compute type, and writes the dx element once.
//   Repeated indices (an embedding's tokens) so add in the same order on
//   every run; rows no index reads are zero.
// - Slice backward zeroes dx and scatters dy to the sliced positions,
//   which are distinct.
// - Pad backward gathers: one thread per dx element sums, in the compute
//   type and a fixed order, the dy positions that read it.
// - GatherElements backward gives each line along the axis to one thread,
//   which adds its dy elements in order into its own line of the zeroed dx:
//   lines are disjoint, so no atomics, and the order is the CPU's. For F16
//   and BF16 it accumulates in fp32 (FloatAccumulation.cuh) and rounds each
//   dx element once.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/cuda/CudaKernels.h"

#include "Common.cuh"
#include "DataMovement.cuh"
#include "FloatAccumulation.cuh"
#include "Indexing.cuh"

#include <cub/device/device_radix_sort.cuh>

#include <climits>

namespace remat::rt::cuda {
using namespace detail;

namespace {

/// The sort keys of gather backward: the row along the axis that each
/// position reads (negative indices wrapped), or axisSize for an index out
/// of range (reported, sorted last and skipped); and the positions.
template <typename I>
__global__ void gatherRowKeysKernel(const I *indices, int32_t *rows,
                                    int32_t *positions, int64_t count,
                                    int64_t axisSize, DeviceStatus *status) {
  REMAT_GRID_STRIDE_LOOP(p, count) {
    const int64_t v = static_cast<int64_t>(indices[p]);
    int64_t row = v < 0 ? v + axisSize : v;
    if (v < -axisSize || v >= axisSize) {
      reportError(status, kGatherBackwardIndex, v);
      row = axisSize;
    }
    rows[p] = static_cast<int32_t>(row);
    positions[p] = static_cast<int32_t>(p);
  }
}

/// dx from the positions sorted by row (`rows`, `positions`): one thread
/// per (outer slice, sorted position, inner element); the thread at the
/// first position of a row's run sums the run's dy elements in position
/// order and writes that dx element, the others return.
template <typename T>
__global__ void gatherBackwardRunsKernel(const T *dy, const int32_t *rows,
                                         const int32_t *positions, T *dx,
                                         int64_t total, int64_t count,
                                         int64_t inner, int64_t axisSize) {
  REMAT_GRID_STRIDE_LOOP(e, total) {
    const int64_t k = e % inner;
    const int64_t t = e / inner; // outer * count + sorted position
    const int64_t q = t % count, o = t / count;
    const int32_t row = rows[q];
    if (row >= axisSize || (q > 0 && rows[q - 1] == row))
      continue;
    ComputeType<T> sum = ComputeType<T>(0);
    for (int64_t r = q; r < count && rows[r] == row; ++r)
      sum += toCompute(dy[(o * count + positions[r]) * inner + k]);
    dx[(o * axisSize + row) * inner + k] = fromCompute<T>(sum);
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
  if (count > INT_MAX || e.size >= INT_MAX)
    fail(kernel, "sorts 32-bit rows and positions: " + std::to_string(count) +
                     " indices into " + std::to_string(e.size) +
                     " rows is too many");
  Context &ctx = context(kernel);
  zeroAsync(dx.data, dx.bytes(), kernel);
  const int64_t total = dy.numel();
  if (total == 0 || count == 0)
    return;
  // Rows as keys, positions as values; the sort is stable, so each row's
  // positions stay in increasing order. Keys need the bits of axisSize.
  Scratch scratch(kernel);
  int32_t *rows = scratch.take<int32_t>(count);
  int32_t *positions = scratch.take<int32_t>(count);
  int32_t *sortedRows = scratch.take<int32_t>(count);
  int32_t *sortedPositions = scratch.take<int32_t>(count);
  int endBit = 1;
  while (endBit < 31 && (int64_t(1) << endBit) <= e.size)
    ++endBit;
  size_t sortBytes = 0;
  checkCuda(cub::DeviceRadixSort::SortPairs(
                nullptr, sortBytes, rows, sortedRows, positions,
                sortedPositions, static_cast<int>(count), 0, endBit,
                ctx.stream),
            kernel, "cub::DeviceRadixSort::SortPairs (sizing)");
  void *sortScratch = scratch.take<char>(sortBytes);
  dispatchIndex(indices.dtype, kernel, [&](auto indexTag) {
    using I = typename decltype(indexTag)::type;
    gatherRowKeysKernel<<<gridFor(count), kThreads, 0, ctx.stream>>>(
        indices.as<const I>(), rows, positions, count, e.size, ctx.status);
    checkLaunch(kernel);
  });
  checkCuda(cub::DeviceRadixSort::SortPairs(
                sortScratch, sortBytes, rows, sortedRows, positions,
                sortedPositions, static_cast<int>(count), 0, endBit,
                ctx.stream),
            kernel, "cub::DeviceRadixSort::SortPairs");
  dispatchFloatStorage(dy.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    gatherBackwardRunsKernel<<<gridFor(total), kThreads, 0, ctx.stream>>>(
        dy.as<const T>(), sortedRows, sortedPositions, dx.as<T>(), total,
        count, e.inner, e.size);
    checkLaunch(kernel);
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
