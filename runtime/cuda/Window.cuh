//===- Window.cuh - Pooling windows on the device ---------------*- CUDA
//-*-===//
//
// Pooling on the device over common/Window.h's Window3 (shared with the CPU,
// passed to kernels by value). The device loops visit taps and outputs in
// the CPU's order; sums run in the data's compute type (fp32 for F32, F16
// and BF16; double for F64) over a window's few taps.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_CUDA_WINDOW_CUH
#define REMAT_RUNTIME_CUDA_WINDOW_CUH

#include "Common.cuh"

#include "common/Window.h"

#include <limits>

namespace remat::rt::cuda::detail {

/// Splits a flat index over [planes, out0, out1, out2] (or in...).
struct Position3 {
  int64_t plane, d, h, w;
};
__host__ __device__ inline Position3 unravel3(int64_t i, const int64_t *dims) {
  Position3 p;
  p.w = i % dims[2];
  i /= dims[2];
  p.h = i % dims[1];
  i /= dims[1];
  p.d = i % dims[0];
  p.plane = i / dims[0];
  return p;
}

//===----------------------------------------------------------------------===//
// Pooling, one output (or input) element at a time. The window taps and the
// outputs are visited in the CPU's order, so sums and ties come out the same.
//===----------------------------------------------------------------------===//

template <typename T> __host__ __device__ inline T negativeInfinity() {
#ifdef __CUDA_ARCH__
  return -dInfinity<T>();
#else
  return -std::numeric_limits<T>::infinity();
#endif
}

/// Calls visit(flatIndexInPlane) for each tap of output position o that lies
/// inside the input (padding and ceil-mode overhang are skipped).
template <typename Visit>
__host__ __device__ inline void forEachTap(const Window3 &w, const Position3 &o,
                                           Visit &&visit) {
  for (int64_t kd = 0; kd < w.kernel[0]; ++kd) {
    const int64_t id = w.inputIndex(0, o.d, kd);
    if (id < 0 || id >= w.in[0])
      continue;
    for (int64_t kh = 0; kh < w.kernel[1]; ++kh) {
      const int64_t ih = w.inputIndex(1, o.h, kh);
      if (ih < 0 || ih >= w.in[1])
        continue;
      for (int64_t kw = 0; kw < w.kernel[2]; ++kw) {
        const int64_t iw = w.inputIndex(2, o.w, kw);
        if (iw < 0 || iw >= w.in[2])
          continue;
        visit((id * w.in[1] + ih) * w.in[2] + iw);
      }
    }
  }
}

/// MaxPool output e of y [planes, out...]; `index` receives the flat index
/// into all of x of the first maximum (-1 for a window in padding only).
/// Compared in the compute type; the winner is stored back unchanged (the
/// 16-bit conversions of FloatStorage.h round-trip every value, NaN
/// payloads included).
template <typename T>
__host__ __device__ inline T maxPoolAt(const T *x, int64_t e, const Window3 &w,
                                       int64_t &index) {
  using C = ComputeType<T>;
  const Position3 o = unravel3(e, w.out);
  const T *plane = x + o.plane * w.inSize();
  C best = C(0);
  int64_t bestIndex = -1;
  forEachTap(w, o, [&](int64_t flat) {
    const C v = toCompute(plane[flat]);
    if (bestIndex < 0 || v > best) {
      best = v;
      bestIndex = flat;
    }
  });
  index = bestIndex < 0 ? -1 : o.plane * w.inSize() + bestIndex;
  // A window entirely in padding yields -inf, the CPU's initial value.
  return fromCompute<T>(bestIndex < 0 ? negativeInfinity<C>() : best);
}

/// AveragePool output e: the window's sum over the divisor, in the compute
/// type.
template <typename T>
__host__ __device__ inline T
averagePoolAt(const T *x, int64_t e, const Window3 &w, bool countIncludePad) {
  using C = ComputeType<T>;
  const Position3 o = unravel3(e, w.out);
  const T *plane = x + o.plane * w.inSize();
  C sum = 0;
  forEachTap(w, o, [&](int64_t flat) { sum += toCompute(plane[flat]); });
  const int64_t count = w.averagePoolCount(o.d, o.h, o.w, countIncludePad);
  return fromCompute<T>(sum / static_cast<C>(count));
}

/// Calls visit(od, oh, ow) for each output position whose window holds
/// input position i, in ascending output order (taps descending): the
/// order in which the CPU's backward scatters add their terms.
template <typename Visit>
__host__ __device__ inline void forEachWindowHolding(const Window3 &w,
                                                     const Position3 &i,
                                                     Visit &&visit) {
  for (int64_t kd = w.kernel[0] - 1; kd >= 0; --kd) {
    const int64_t od = w.outputFor(0, i.d, kd);
    if (od < 0)
      continue;
    for (int64_t kh = w.kernel[1] - 1; kh >= 0; --kh) {
      const int64_t oh = w.outputFor(1, i.h, kh);
      if (oh < 0)
        continue;
      for (int64_t kw = w.kernel[2] - 1; kw >= 0; --kw) {
        const int64_t ow = w.outputFor(2, i.w, kw);
        if (ow >= 0)
          visit(od, oh, ow);
      }
    }
  }
}

/// AveragePool backward for element e of dx [planes, in...]: the shares
/// dy / divisor of the windows containing it, summed in the compute type in
/// the CPU's order.
template <typename T>
__host__ __device__ inline ComputeType<T>
averagePoolBackwardAt(const T *dy, int64_t e, const Window3 &w,
                      bool countIncludePad) {
  using C = ComputeType<T>;
  const Position3 i = unravel3(e, w.in);
  const T *planeDy = dy + i.plane * w.outSize();
  C acc = 0;
  forEachWindowHolding(w, i, [&](int64_t od, int64_t oh, int64_t ow) {
    acc += toCompute(planeDy[(od * w.out[1] + oh) * w.out[2] + ow]) /
           static_cast<C>(w.averagePoolCount(od, oh, ow, countIncludePad));
  });
  return acc;
}

/// MaxPool backward for element e of dx [planes, in...]: dy of the windows
/// containing it whose recorded argmax is e, summed in the compute type in
/// the CPU's order.
template <typename T>
__host__ __device__ inline ComputeType<T>
maxPoolBackwardAt(const T *dy, const int64_t *indices, int64_t e,
                  const Window3 &w) {
  using C = ComputeType<T>;
  const Position3 i = unravel3(e, w.in);
  const int64_t base = i.plane * w.outSize();
  C acc = 0;
  forEachWindowHolding(w, i, [&](int64_t od, int64_t oh, int64_t ow) {
    const int64_t o = base + (od * w.out[1] + oh) * w.out[2] + ow;
    if (indices[o] == e)
      acc += toCompute(dy[o]);
  });
  return acc;
}

} // namespace remat::rt::cuda::detail

#endif // REMAT_RUNTIME_CUDA_WINDOW_CUH
