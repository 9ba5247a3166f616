//===- Reduce.cu - ReduceSum / ReduceMean / ReduceMax, CumSum -------------===//
//
// The CUDA version of runtime/cpu/Reduce.cpp on the generic reducer of
// Reduction.cuh: output o's elements are x at kept(o) + reduced(r), two
// Indexers over x's strides. Sums accumulate in SumOf<C> (compensated fp32
// for F32, F16 and BF16; double for F64) or int64 (integers); max in the
// compute type. CumSum runs one thread per line along the axis (adjacent
// threads on adjacent inner positions, so loads coalesce), summing in order
// in x's compute type: for F32/F64 the CPU's bits, deterministically; 16-bit
// data accumulates in fp32 and rounds each output once.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/cuda/CudaKernels.h"

#include "Common.cuh"
#include "Indexing.cuh"
#include "Reduction.cuh"

#include "common/ReduceChecks.h"

#include <limits>

namespace remat::rt::cuda {
using namespace detail;

namespace {

template <typename T> struct ReduceLoad {
  const T *x;
  Indexer<1> kept, reduced;
  __device__ int64_t base(int64_t o) const { return kept.offset(o); }
  __device__ ComputeType<T> at(int64_t base, int64_t r) const {
    return toCompute(x[base + reduced.offset(r)]);
  }
};

template <typename T> struct ReduceStore {
  T *out;
  bool mean;
  int64_t count; // elements per output, for the mean
  template <typename Acc> __device__ void operator()(int64_t o, Acc acc) const {
    using C = ComputeType<T>;
    if constexpr (std::is_floating_point_v<C>) {
      const C value = sumValue(acc);
      out[o] = fromCompute<T>(mean ? value / static_cast<C>(count) : value);
    } else if (!mean) {
      out[o] = static_cast<T>(acc);
    } else { // the int64 sum divided before narrowing
      out[o] = count == 0 ? T(0) : static_cast<T>(acc / count);
    }
  }
};

template <typename T>
void reduceImpl(ReduceOp op, const TensorView &x, const TensorView &out,
                const Dims &axes) {
  const char *kernel = "reduce";
  using C = ComputeType<T>;
  using Sum = std::conditional_t<std::is_floating_point_v<C>, SumOf<C>, int64_t>;
  const int64_t outN = out.numel();
  if (outN == 0)
    return;
  const int64_t redN = x.numel() / outN;

  // Kept dims iterate like out (reduced dims are 1 there); reduced dims
  // like x with the kept dims set to 1. Both read x's strides.
  const Strides xStrides = contiguousStrides(x.shape);
  Shape reducedShape(x.rank(), 1);
  for (int64_t axis : axes)
    reducedShape[axis] = x.shape[axis];
  ReduceLoad<T> load{x.as<const T>(), makeIndexer1(out.shape, xStrides, kernel),
                     makeIndexer1(reducedShape, xStrides, kernel)};

  // Lanes read adjacent elements when x's innermost non-unit dim is reduced.
  bool lanesContiguous = true;
  for (int64_t d = x.rank(); d-- > 0;)
    if (x.shape[d] != 1) {
      lanesContiguous = std::find(axes.begin(), axes.end(), d) != axes.end();
      break;
    }

  const ReduceStore<T> store{out.as<T>(), op == ReduceOp::Mean, redN};
  if (op == ReduceOp::Max) {
    C init;
    if constexpr (std::is_floating_point_v<C>)
      init = -std::numeric_limits<C>::infinity();
    else
      init = std::numeric_limits<C>::lowest();
    launchReduction<C>(kernel, load, MaxOp{}, init, store, outN, redN,
                       lanesContiguous);
  } else {
    launchReduction<Sum>(kernel, load, SumOp{}, Sum{}, store, outN, redN,
                         lanesContiguous);
  }
}

template <typename T>
__global__ void cumSumKernel(const T *x, T *y, int64_t lines, int64_t size,
                             int64_t inner, bool exclusive, bool reverse) {
  using C = ComputeType<T>;
  REMAT_GRID_STRIDE_LOOP(line, lines) {
    const int64_t o = line / inner, i = line - o * inner;
    const int64_t base = o * size * inner + i;
    C sum = C(0);
    for (int64_t s = 0; s < size; ++s) {
      const int64_t at = base + (reverse ? size - 1 - s : s) * inner;
      const C v = toCompute(x[at]);
      if (exclusive) {
        y[at] = fromCompute<T>(sum);
        sum = sum + v;
      } else { // the first element as it is (keeps -0), as the CPU
        sum = s == 0 ? v : sum + v;
        y[at] = fromCompute<T>(sum);
      }
    }
  }
}

} // namespace

void reduce(ReduceOp op, const TensorView &x, const TensorView &out,
            const Dims &axes) {
  const char *kernel = "reduce";
  checkReduce(kernel, x, out, axes);
  if (axes.empty())
    return cuda::copy(x, out);
  context(kernel);
  dispatchArithStorage(x.dtype, kernel, [&](auto tag) {
    reduceImpl<typename decltype(tag)::type>(op, x, out, axes);
  });
}

void cumSum(const TensorView &x, const TensorView &y, int64_t axis,
            bool exclusive, bool reverse) {
  const char *kernel = "cumSum";
  const AxisExtents e = checkCumSum(kernel, x, y, axis);
  cudaStream_t stream = context(kernel).stream;
  const int64_t lines = e.outer * e.inner;
  dispatchArithStorage(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (lines == 0 || e.size == 0)
      return;
    cumSumKernel<T><<<gridFor(lines), kThreads, 0, stream>>>(
        x.as<const T>(), y.as<T>(), lines, e.size, e.inner, exclusive,
        reverse);
    checkLaunch(kernel);
  });
}

} // namespace remat::rt::cuda
