//===- Reduce.cpp - ReduceSum / ReduceMean / ReduceMax, CumSum ------------===//
//
// Walks x once in memory order; the output is read as x's shape broadcast
// from out's (stride 0 along reduced dims), so each element lands in its
// accumulator without index arithmetic. Sums accumulate in double (floats,
// 16-bit ones included) or int64 (integers). CumSum instead sums each line
// in order in x's compute type (x's own type, float for F16/BF16), as
// numpy.cumsum and the CUDA kernel do.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/Kernels.h"

#include "DTypeDispatch.h"
#include "Scratch.h"
#include "common/ReduceChecks.h"
#include "common/StridedLoop.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace remat::rt {
using namespace cpu;

namespace {

template <typename A> bool isNan(A v) {
  if constexpr (std::is_floating_point_v<A>)
    return std::isnan(v);
  else
    return false;
}

/// An accumulator stored as T: rounded once for floats.
template <typename T, typename Acc> T fromAccumulator(Acc v) {
  if constexpr (kIsFloatStorage<T>)
    return fromDouble<T>(v);
  else
    return static_cast<T>(v);
}

template <typename T>
void reduceImpl(ReduceOp op, const TensorView &x, const TensorView &out,
                Scratch &scratch) {
  using Acc = std::conditional_t<kIsFloatStorage<T>, double, int64_t>;
  const bool isMax = op == ReduceOp::Max;
  const Acc init = !isMax ? Acc(0)
                   : std::numeric_limits<Acc>::has_infinity
                       ? -std::numeric_limits<Acc>::infinity()
                       : std::numeric_limits<Acc>::lowest();
  static_assert(sizeof(Acc) == sizeof(double), "reduceScratchBytes");
  Acc *acc = scratch.take<Acc>(out.numel());
  std::fill(acc, acc + out.numel(), init);
  const T *px = x.as<const T>();

  std::array<Strides, 2> strides = {
      contiguousStrides(x.shape),
      broadcastStrides(out.shape, x.shape, "reduce")};
  forEachRun<2>(x.shape, strides,
                [&](const std::array<int64_t, 2> &off,
                    const std::array<int64_t, 2> &st, int64_t n) {
                  const T *in = px + off[0];
                  Acc *a = acc + off[1];
                  if (isMax) {
                    for (int64_t i = 0; i < n; ++i) {
                      Acc v = toCompute(in[i]), &dst = a[i * st[1]];
                      if (v > dst || isNan(v)) // NaN wins and stays
                        dst = v;
                    }
                  } else if (st[1] == 0) { // reducing along the run
                    Acc sum = 0;
                    for (int64_t i = 0; i < n; ++i)
                      sum += toCompute(in[i]);
                    *a += sum;
                  } else {
                    for (int64_t i = 0; i < n; ++i)
                      a[i] += toCompute(in[i]);
                  }
                });

  T *po = out.as<T>();
  const int64_t outN = out.numel();
  if (op == ReduceOp::Mean) {
    const int64_t count = outN == 0 ? 0 : x.numel() / outN;
    for (int64_t i = 0; i < outN; ++i) {
      if constexpr (kIsFloatStorage<T>)
        po[i] = fromDouble<T>(acc[i] / static_cast<double>(count));
      else
        po[i] = count == 0 ? T(0) : static_cast<T>(acc[i] / count);
    }
  } else {
    for (int64_t i = 0; i < outN; ++i)
      po[i] = fromAccumulator<T>(acc[i]);
  }
}

} // namespace

void reduce(ReduceOp op, const TensorView &x, const TensorView &out,
            const Dims &axes) {
  const char *kernel = "reduce";
  checkReduce(kernel, x, out, axes);
  if (axes.empty())
    return copy(x, out);
  Scratch scratch(kernel, reduceScratchBytes(x, out, axes));
  dispatchArithStorage(x.dtype, kernel, [&](auto tag) {
    reduceImpl<typename decltype(tag)::type>(op, x, out, scratch);
  });
}

void cumSum(const TensorView &x, const TensorView &y, int64_t axis,
            bool exclusive, bool reverse) {
  const char *kernel = "cumSum";
  const AxisExtents e = checkCumSum(kernel, x, y, axis);
  dispatchArithStorage(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    // Each line along the axis, walked in summation order with its running
    // sum in C (so a 16-bit sum is not rounded at every step).
    for (int64_t o = 0; o < e.outer; ++o)
      for (int64_t i = 0; i < e.inner; ++i) {
        const int64_t base = o * e.size * e.inner + i;
        const T *px = x.as<const T>() + base;
        T *py = y.as<T>() + base;
        C sum = C(0);
        for (int64_t s = 0; s < e.size; ++s) {
          const int64_t at = (reverse ? e.size - 1 - s : s) * e.inner;
          const C v = toCompute(px[at]);
          if (exclusive) { // sum starts at 0
            py[at] = fromCompute<T>(sum);
            sum = C(sum + v);
          } else { // sum starts at the first element
            sum = s == 0 ? v : C(sum + v);
            py[at] = fromCompute<T>(sum);
          }
        }
      }
  });
}

} // namespace remat::rt
