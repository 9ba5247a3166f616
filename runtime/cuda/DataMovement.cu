//===- DataMovement.cu - Transpose, concat, ..., expand, pad, trilu -------===//
//
// The CUDA versions of runtime/cpu/DataMovement.cpp. They move whole
// elements without looking at them, so they dispatch on the element size
// only and work for every dtype. Row copies (concat, split, gather) use the
// widest unit (up to 16 bytes) that the row size and addresses allow.
// Transpose moves whole rows the same way where its last dim stays
// contiguous, and goes through shared-memory tiles where it does not, so
// that both its reads and its writes are coalesced; other strided copies
// (slice, expand, the rest of transpose) take one element per thread.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/cuda/CudaKernels.h"

#include "Common.cuh"
#include "DataMovement.cuh"
#include "Indexing.cuh"

#include <cstring>

namespace remat::rt::cuda {
using namespace detail;

namespace detail {

namespace {

template <typename T>
__global__ void stridedCopyKernel(const T *x, T *y, int64_t n, Indexer<1> ix) {
  REMAT_GRID_STRIDE_LOOP(i, n) { y[i] = x[ix.offset(i)]; }
}

template <typename U>
__global__ void copyRowsKernel(const char *src, int64_t srcPitch, char *dst,
                               int64_t dstPitch, int64_t rowUnits,
                               int64_t total) {
  REMAT_GRID_STRIDE_LOOP(e, total) {
    const int64_t row = e / rowUnits, k = e - row * rowUnits;
    reinterpret_cast<U *>(dst + row * dstPitch)[k] =
        reinterpret_cast<const U *>(src + row * srcPitch)[k];
  }
}

/// Index type I (int64 or int32); rows of `unitsPerRow` units U.
template <typename U, typename I>
__global__ void gatherRowsKernel(const U *x, const I *indices, U *y,
                                 int64_t total, int64_t count,
                                 int64_t unitsPerRow, int64_t axisSize,
                                 DeviceStatus *status) {
  REMAT_GRID_STRIDE_LOOP(e, total) {
    const int64_t k = e % unitsPerRow;
    const int64_t t = e / unitsPerRow; // outer * count + p
    const int64_t p = t % count, o = t / count;
    const int64_t v = static_cast<int64_t>(indices[p]);
    if (v < -axisSize || v >= axisSize) {
      reportError(status, kGatherIndex, v);
      y[e] = U{};
      continue;
    }
    const int64_t i = v < 0 ? v + axisSize : v;
    y[e] = x[(o * axisSize + i) * unitsPerRow + k];
  }
}

/// One thread per output element.
template <typename T, typename I>
__global__ void gatherElementsKernel(const T *x, const I *indices, T *y,
                                     int64_t n, GatherElementsGeometry g,
                                     DeviceStatus *status) {
  REMAT_GRID_STRIDE_LOOP(p, n) {
    const int64_t v = static_cast<int64_t>(indices[p]);
    const int64_t c = gatherElementsCoordinate(v, g.axisSize);
    if (c < 0) {
      reportError(status, kGatherElementsIndex, v);
      y[p] = T{};
      continue;
    }
    y[p] = x[g.dataBase(p) + c * g.dataStride[g.axis]];
  }
}

/// One thread per output element; the geometry says what it reads.
template <typename T>
__global__ void padKernel(const T *x, T *y, int64_t n, PadGeometry g,
                          T fillValue) {
  REMAT_GRID_STRIDE_LOOP(o, n) {
    const int64_t at = padReadOffset(g, o);
    y[o] = at < 0 ? fillValue : x[at];
  }
}

/// One thread per element of [outer, rows, cols].
template <typename T>
__global__ void triluKernel(const T *x, T *y, int64_t n, int64_t rows,
                            int64_t cols, bool upper, int64_t k) {
  REMAT_GRID_STRIDE_LOOP(e, n) {
    const int64_t j = e % cols, i = (e / cols) % rows;
    y[e] = triluKeeps(i, j, upper, k) ? x[e] : T{0};
  }
}

/// Transpose whose output rows are contiguous in x too (the last dim keeps
/// stride 1: attention's head split and merge, [B, T, H, D] <-> [B, H, T,
/// D]): y's rows of rowUnits units U, row `row` read from x at element
/// rowIx.offset(row). One thread per unit, so the index math is per 16
/// bytes where the row allows.
template <typename U>
__global__ void transposeRowsKernel(const char *x, U *y, int64_t rowUnits,
                                    int64_t total, Indexer<1> rowIx,
                                    int64_t elementBytes) {
  REMAT_GRID_STRIDE_LOOP(e, total) {
    const int64_t row = e / rowUnits, k = e - row * rowUnits;
    y[e] = reinterpret_cast<const U *>(x + rowIx.offset(row) * elementBytes)[k];
  }
}

constexpr int kTile = 64;     // transpose tile edge
constexpr int kTileRows = 8;  // thread rows of a transpose block (x: 32)

/// Transpose whose output's last dim j is strided in x: through 64 x 64
/// tiles in shared memory, so that the reads run along x's contiguous dim
/// i and the writes along y's last dim j, each warp access 32 adjacent
/// elements; a thread moves 16 elements, all loads issued before the
/// stores. y[b, i, j] (dims other than i and j are `batch`, whose Indexer
/// gives the x and y offsets) = x[b + i + j * xStrideJ]. grid.x = the tiles
/// of one batch entry (tilesJ per tile row), grid.y strides over the batch.
template <typename T>
__global__ void __launch_bounds__(32 * kTileRows)
    transposeTileKernel(const T *x, T *y, int64_t ni, int64_t nj,
                        int64_t xStrideJ, int64_t yStrideI, Indexer<2> batch,
                        int64_t batches, int64_t tilesJ) {
  __shared__ T tile[kTile][kTile + 1]; // +1: columns hit distinct banks
  const int64_t ti = blockIdx.x / tilesJ, tj = blockIdx.x - ti * tilesJ;
  const int64_t i0 = ti * kTile, j0 = tj * kTile;
  const int tx = static_cast<int>(threadIdx.x);
  const int ty = static_cast<int>(threadIdx.y);
  for (int64_t b = blockIdx.y; b < batches; b += gridDim.y) {
    int64_t off[2];
    batch.offsets64(b, off); // once per tile: 64 bits cost nothing here
    const T *xb = x + off[0];
    T *yb = y + off[1];
#pragma unroll
    for (int c = 0; c < kTile; c += 32)
#pragma unroll
      for (int k = ty; k < kTile; k += kTileRows)
        if (i0 + c + tx < ni && j0 + k < nj)
          tile[k][c + tx] = xb[(i0 + c + tx) + (j0 + k) * xStrideJ];
    __syncthreads();
#pragma unroll
    for (int c = 0; c < kTile; c += 32)
#pragma unroll
      for (int k = ty; k < kTile; k += kTileRows)
        if (j0 + c + tx < nj && i0 + k < ni)
          yb[(i0 + k) * yStrideI + j0 + c + tx] = tile[c + tx][k];
    __syncthreads();
  }
}

} // namespace

size_t copyUnit(uintptr_t bits) {
  for (size_t unit : {16, 8, 4, 2})
    if (bits % unit == 0)
      return unit;
  return 1;
}

void stridedCopy(const char *kernel, const TensorView &x, int64_t base,
                 const Strides &xStrides, const TensorView &y) {
  const int64_t n = y.numel();
  if (n == 0)
    return;
  const Indexer<1> ix = makeIndexer1(y.shape, xStrides, kernel);
  cudaStream_t stream = context(kernel).stream;
  dispatchBySize(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    stridedCopyKernel<T><<<gridFor(n), kThreads, 0, stream>>>(
        x.as<const T>() + base, y.as<T>(), n, ix);
    checkLaunch(kernel);
  });
}

void copyRows(const char *kernel, const void *src, int64_t srcPitch, void *dst,
              int64_t dstPitch, int64_t width, int64_t rows) {
  if (width == 0 || rows == 0)
    return;
  cudaStream_t stream = context(kernel).stream;
  if ((srcPitch == width && dstPitch == width) || rows == 1) {
    checkCuda(cudaMemcpyAsync(dst, src, static_cast<size_t>(width * rows),
                              cudaMemcpyDeviceToDevice, stream),
              kernel, "cudaMemcpyAsync");
    return;
  }
  const size_t unit = copyUnit(
      static_cast<uintptr_t>(width | srcPitch | dstPitch) |
      reinterpret_cast<uintptr_t>(src) | reinterpret_cast<uintptr_t>(dst));
  const int64_t rowUnits = width / static_cast<int64_t>(unit);
  const int64_t total = rowUnits * rows;
  const char *s = static_cast<const char *>(src);
  char *d = static_cast<char *>(dst);
  dispatchCopyUnit(unit, [&](auto unitTag) {
    using U = typename decltype(unitTag)::type;
    copyRowsKernel<U><<<gridFor(total), kThreads, 0, stream>>>(
        s, srcPitch, d, dstPitch, rowUnits, total);
  });
  checkLaunch(kernel);
}

} // namespace detail

namespace {

/// Bytes per (outer index) block of `t` from `axis` on.
struct AxisBlocks {
  int64_t outer = 1;      // product of dims before axis
  int64_t innerBytes = 0; // bytes of one index along axis
};
AxisBlocks axisBlocks(const TensorView &t, int64_t axis) {
  const AxisExtents e = axisExtents(t.shape, axis);
  return {e.outer, e.inner * static_cast<int64_t>(dtypeSize(t.dtype))};
}

/// Concat (toWhole) or split (!toWhole): one row copy per part.
void concatOrSplit(const char *kernel, TensorViewList parts,
                   const TensorView &whole, int64_t axis, bool toWhole) {
  checkConcatOrSplit(kernel, parts, whole, axis);
  context(kernel);
  const AxisBlocks wb = axisBlocks(whole, axis);
  const int64_t wholeRow = wb.innerBytes * whole.shape[axis];
  char *base = static_cast<char *>(whole.data);
  int64_t column = 0;
  for (const TensorView &p : parts) {
    const int64_t partRow = wb.innerBytes * p.shape[axis];
    if (toWhole)
      copyRows(kernel, p.data, partRow, base + column, wholeRow, partRow,
               wb.outer);
    else
      copyRows(kernel, base + column, wholeRow, p.data, partRow, partRow,
               wb.outer);
    column += partRow;
  }
}

} // namespace

/// Transpose without stridedCopy's per-element index math, where the merged
/// iteration space has a shape that allows it: contiguous rows
/// (transposeRowsKernel) or a strided last dim (transposeTileKernel).
/// Returns false (nothing launched) for the rest.
bool transposeFast(const char *kernel, const TensorView &x, const TensorView &y,
                   const Strides &xStrides) {
  const int64_t n = y.numel();
  Dims dims;
  std::array<Strides, 2> st;
  mergeDims<2>(y.shape, {xStrides, contiguousStrides(y.shape)}, dims, st);
  const int rank = static_cast<int>(dims.size());
  if (rank < 2 || rank > kMaxRank)
    return false;
  const Strides &xs = st[0], &ys = st[1];
  const int64_t elementBytes = static_cast<int64_t>(dtypeSize(x.dtype));
  cudaStream_t stream = context(kernel).stream;

  if (xs[rank - 1] == 1) {
    // Rows: y's last (merged) dim, contiguous in both.
    const int64_t rowBytes = dims[rank - 1] * elementBytes;
    uintptr_t bits = static_cast<uintptr_t>(rowBytes) |
                     reinterpret_cast<uintptr_t>(x.data) |
                     reinterpret_cast<uintptr_t>(y.data);
    Indexer<1> rowIx;
    rowIx.rank = rank - 1;
    for (int d = 0; d < rank - 1; ++d) {
      rowIx.shape[d] = dims[d];
      rowIx.strides[0][d] = xs[d];
      bits |= static_cast<uintptr_t>(xs[d] * elementBytes);
    }
    rowIx.chooseIndexWidth();
    const size_t unit = copyUnit(bits);
    const int64_t rowUnits = rowBytes / static_cast<int64_t>(unit);
    const int64_t total = n * elementBytes / static_cast<int64_t>(unit);
    dispatchCopyUnit(unit, [&](auto unitTag) {
      using U = typename decltype(unitTag)::type;
      transposeRowsKernel<U><<<gridFor(total), kThreads, 0, stream>>>(
          static_cast<const char *>(x.data), static_cast<U *>(y.data),
          rowUnits, total, rowIx, elementBytes);
    });
    checkLaunch(kernel);
    return true;
  }

  // Tiles: y's last dim j against the dim i that is contiguous in x.
  int i = -1;
  for (int d = 0; d < rank - 1; ++d)
    if (xs[d] == 1)
      i = d;
  if (i < 0)
    return false;
  const int j = rank - 1;
  Indexer<2> batch;
  int64_t batches = 1;
  for (int d = 0; d < rank - 1; ++d) {
    if (d == i)
      continue;
    batch.shape[batch.rank] = dims[d];
    batch.strides[0][batch.rank] = xs[d];
    batch.strides[1][batch.rank] = ys[d];
    ++batch.rank;
    batches *= dims[d];
  }
  const int64_t tilesI = (dims[i] + kTile - 1) / kTile;
  const int64_t tilesJ = (dims[j] + kTile - 1) / kTile;
  if (tilesI * tilesJ > INT32_MAX)
    return false;
  const dim3 grid(static_cast<unsigned>(tilesI * tilesJ),
                  static_cast<unsigned>(std::min<int64_t>(batches, 65535)));
  dispatchBySize(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    transposeTileKernel<T><<<grid, dim3(32, kTileRows), 0, stream>>>(
        x.as<const T>(), y.as<T>(), dims[i], dims[j], xs[j], ys[i], batch,
        batches, tilesJ);
  });
  checkLaunch(kernel);
  return true;
}

void transpose(const TensorView &x, const TensorView &y,
               const Dims &perm) {
  const char *kernel = "transpose";
  const Strides strides = transposeStrides(kernel, x, y, perm);
  if (y.numel() > 0 && transposeFast(kernel, x, y, strides))
    return;
  stridedCopy(kernel, x, 0, strides, y);
}

void concat(TensorViewList inputs, const TensorView &y,
            int64_t axis) {
  concatOrSplit("concat", inputs, y, axis, true);
}

void split(const TensorView &x, TensorViewList outputs,
           int64_t axis) {
  concatOrSplit("split", outputs, x, axis, false);
}

void slice(const TensorView &x, const TensorView &y,
           const Dims &starts,
           const Dims &steps) {
  const char *kernel = "slice";
  requireDType(y, x.dtype, kernel, "output");
  int64_t base = 0;
  const Strides strides = sliceStrides(
      kernel, x.shape, y.shape, starts, steps, "reads",
      "starts, steps, input and output need one entry per dim", base);
  if (y.numel() == 0)
    return;
  stridedCopy(kernel, x, base, strides, y);
}

void gather(const TensorView &x, const TensorView &indices, const TensorView &y,
            int64_t axis) {
  const char *kernel = "gather";
  requireDType(y, x.dtype, kernel, "output");
  require(axis >= 0 && axis < x.rank(), kernel, "axis out of range");
  require(y.rank() == x.rank() - 1 + indices.rank(), kernel,
          "output rank must be rank(x) - 1 + rank(indices)");
  const AxisExtents e = axisExtents(x.shape, axis);
  const int64_t count = indices.numel();
  requireNumel(y, e.outer * count * e.inner, kernel, "output");
  Context &ctx = context(kernel);
  dispatchIndex(indices.dtype, kernel, [&](auto indexTag) {
    using I = typename decltype(indexTag)::type;
    const int64_t rowBytes = e.inner * static_cast<int64_t>(dtypeSize(x.dtype));
    const int64_t total = e.outer * count * e.inner;
    if (total == 0)
      return;
    const size_t unit = copyUnit(static_cast<uintptr_t>(rowBytes) |
                                 reinterpret_cast<uintptr_t>(x.data) |
                                 reinterpret_cast<uintptr_t>(y.data));
    const int64_t unitsPerRow = rowBytes / static_cast<int64_t>(unit);
    const int64_t units = e.outer * count * unitsPerRow;
    dispatchCopyUnit(unit, [&](auto unitTag) {
      using U = typename decltype(unitTag)::type;
      gatherRowsKernel<U, I><<<gridFor(units), kThreads, 0, ctx.stream>>>(
          static_cast<const U *>(x.data), indices.as<const I>(),
          static_cast<U *>(y.data), units, count, unitsPerRow, e.size,
          ctx.status);
      checkLaunch(kernel);
    });
  });
}

void expand(const TensorView &x, const TensorView &y) {
  requireDType(y, x.dtype, "expand", "output");
  stridedCopy("expand", x, 0, broadcastStrides(x.shape, y.shape, "expand"), y);
}

void gatherElements(const TensorView &x, const TensorView &indices,
                    const TensorView &y, int64_t axis) {
  const char *kernel = "gatherElements";
  const GatherElementsGeometry g =
      gatherElementsGeometry(kernel, x, indices, y, axis);
  Context &ctx = context(kernel);
  const int64_t n = y.numel();
  if (n == 0)
    return;
  dispatchIndex(indices.dtype, kernel, [&](auto indexTag) {
    using I = typename decltype(indexTag)::type;
    dispatchBySize(x.dtype, kernel, [&](auto tag) {
      using T = typename decltype(tag)::type;
      gatherElementsKernel<T, I><<<gridFor(n), kThreads, 0, ctx.stream>>>(
          x.as<const T>(), indices.as<const I>(), y.as<T>(), n, g,
          ctx.status);
      checkLaunch(kernel);
    });
  });
}

void pad(const TensorView &x, const TensorView &y, const Dims &begins,
         PadMode mode, double value) {
  const char *kernel = "pad";
  requireDType(y, x.dtype, kernel, "output");
  const PadGeometry g = padGeometry(kernel, x.shape, y.shape, begins, mode);
  cudaStream_t stream = context(kernel).stream;
  // The constant's bytes, converted on the host by the CPU's fill().
  uint64_t constant = 0;
  ::remat::rt::fill(TensorView(y.dtype, Shape{}, &constant), value);
  const int64_t n = y.numel();
  if (n == 0)
    return;
  dispatchBySize(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T fillValue;
    std::memcpy(&fillValue, &constant, sizeof(T));
    padKernel<T><<<gridFor(n), kThreads, 0, stream>>>(x.as<const T>(),
                                                      y.as<T>(), n, g,
                                                      fillValue);
    checkLaunch(kernel);
  });
}

void trilu(const TensorView &x, const TensorView &y, bool upper, int64_t k) {
  const char *kernel = "trilu";
  const AxisExtents e = checkTrilu(kernel, x, y);
  cudaStream_t stream = context(kernel).stream;
  const int64_t n = x.numel();
  if (n == 0)
    return;
  dispatchBySize(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    triluKernel<T><<<gridFor(n), kThreads, 0, stream>>>(
        x.as<const T>(), y.as<T>(), n, e.size, e.inner, upper, k);
    checkLaunch(kernel);
  });
}

} // namespace remat::rt::cuda
