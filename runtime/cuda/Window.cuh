//===- Window.cuh - Convolution / pooling window geometry -------*- CUDA
//-*-===//
//
// runtime/cpu/Im2Col.h's Window3 for the device: 1-D and 2-D problems run
// as 3-D ones with leading unit spatial dims (kernel 1, stride 1, no
// padding), so every kernel has one loop nest. Passed to kernels by value.
// The device loops visit taps and outputs in the CPU's order, so sums over
// them round identically.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_CUDA_WINDOW_CUH
#define REMAT_RUNTIME_CUDA_WINDOW_CUH

#include "Common.cuh"

#include <limits>

namespace remat::rt::cuda::detail {

constexpr int kDims = 3;

struct Window3 {
  int64_t in[kDims], out[kDims], kernel[kDims], stride[kDims];
  int64_t padBegin[kDims], padEnd[kDims], dilation[kDims];

  __host__ __device__ int64_t inSize() const { return in[0] * in[1] * in[2]; }
  __host__ __device__ int64_t outSize() const {
    return out[0] * out[1] * out[2];
  }
  __host__ __device__ int64_t kernelSize() const {
    return kernel[0] * kernel[1] * kernel[2];
  }
  /// Input coordinate of output position o, window offset k, along dim d.
  __host__ __device__ int64_t inputIndex(int d, int64_t o, int64_t k) const {
    return o * stride[d] - padBegin[d] + k * dilation[d];
  }
  /// The output position whose tap k reads input coordinate i along dim d,
  /// or -1 if there is none.
  __host__ __device__ int64_t outputFor(int d, int64_t i, int64_t k) const {
    const int64_t t = i + padBegin[d] - k * dilation[d];
    if (t < 0 || t % stride[d] != 0)
      return -1;
    const int64_t o = t / stride[d];
    return o < out[d] ? o : -1;
  }
  /// A 1x1 stride-1 unpadded window: the input is its own col matrix.
  bool pointwise() const {
    bool result = true;
    for (int d = 0; d < kDims; ++d)
      result = result && kernel[d] == 1 && stride[d] == 1 && padBegin[d] == 0 &&
               in[d] == out[d];
    return result;
  }
  /// Number of taps along dim d at output position o whose input index lies
  /// in [lo, hi).
  __host__ __device__ int64_t tapsWithin(int d, int64_t o, int64_t lo,
                                         int64_t hi) const {
    int64_t count = 0;
    for (int64_t k = 0; k < kernel[d]; ++k) {
      const int64_t i = inputIndex(d, o, k);
      count += i >= lo && i < hi;
    }
    return count;
  }
  /// AveragePool's divisor at one output position (as the CPU's
  /// averagePoolCount).
  __host__ __device__ int64_t averagePoolCount(int64_t od, int64_t oh,
                                               int64_t ow,
                                               bool countIncludePad) const {
    const int64_t pos[kDims] = {od, oh, ow};
    int64_t count = 1;
    for (int d = 0; d < kDims; ++d)
      count *= countIncludePad
                   ? tapsWithin(d, pos[d], -padBegin[d], in[d] + padEnd[d])
                   : tapsWithin(d, pos[d], 0, in[d]);
    return count;
  }
};

/// Reads x [N, C, s...] / y [N, M, s...] and the ONNX-style parameters;
/// `kernel` is the window (pooling) or the weight's spatial shape (conv).
inline Window3 makeWindow(const char *kernelName, const TensorView &x,
                          const TensorView &y, const WindowParams &p,
                          const std::vector<int64_t> &kernel) {
  const int64_t k = x.rank() - 2;
  require(k >= 1 && k <= kDims, kernelName,
          "expects 1 to 3 spatial dims (input rank 3 to 5)");
  require(y.rank() == x.rank(), kernelName, "output rank differs from input");
  require(static_cast<int64_t>(kernel.size()) == k, kernelName,
          "kernel shape has the wrong rank");
  require(p.strides.empty() || static_cast<int64_t>(p.strides.size()) == k,
          kernelName, "strides have the wrong length");
  require(p.dilations.empty() || static_cast<int64_t>(p.dilations.size()) == k,
          kernelName, "dilations have the wrong length");
  require(p.pads.empty() || static_cast<int64_t>(p.pads.size()) == 2 * k,
          kernelName, "pads must hold begin and end values per spatial dim");
  Window3 w;
  for (int d = 0; d < kDims; ++d) {
    const int64_t lead = kDims - k; // unit dims fill the front
    const int64_t i = d - lead;
    const bool real = i >= 0;
    w.in[d] = real ? x.shape[2 + i] : 1;
    w.out[d] = real ? y.shape[2 + i] : 1;
    w.kernel[d] = real ? kernel[i] : 1;
    w.stride[d] = real && !p.strides.empty() ? p.strides[i] : 1;
    w.dilation[d] = real && !p.dilations.empty() ? p.dilations[i] : 1;
    w.padBegin[d] = real && !p.pads.empty() ? p.pads[i] : 0;
    w.padEnd[d] = real && !p.pads.empty() ? p.pads[k + i] : 0;
    require(w.stride[d] >= 1 && w.dilation[d] >= 1 && w.kernel[d] >= 1,
            kernelName, "kernel, strides and dilations must be positive");
  }
  return w;
}

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
template <typename T>
__host__ __device__ inline T maxPoolAt(const T *x, int64_t e, const Window3 &w,
                                       int64_t &index) {
  const Position3 o = unravel3(e, w.out);
  const T *plane = x + o.plane * w.inSize();
  T best = T(0);
  int64_t bestIndex = -1;
  forEachTap(w, o, [&](int64_t flat) {
    const T v = plane[flat];
    if (bestIndex < 0 || v > best) {
      best = v;
      bestIndex = flat;
    }
  });
  index = bestIndex < 0 ? -1 : o.plane * w.inSize() + bestIndex;
  // A window entirely in padding yields -inf, the CPU's initial value.
  return bestIndex < 0 ? negativeInfinity<T>() : best;
}

/// AveragePool output e: the window's sum in double over the divisor.
template <typename T>
__host__ __device__ inline T
averagePoolAt(const T *x, int64_t e, const Window3 &w, bool countIncludePad) {
  const Position3 o = unravel3(e, w.out);
  const T *plane = x + o.plane * w.inSize();
  double sum = 0;
  forEachTap(w, o,
             [&](int64_t flat) { sum += static_cast<double>(plane[flat]); });
  const int64_t count = w.averagePoolCount(o.d, o.h, o.w, countIncludePad);
  return static_cast<T>(sum / static_cast<double>(count));
}

/// AveragePool backward for element e of dx [planes, in...]: the shares
/// dy / divisor of the windows containing it, summed in double in ascending
/// output order (taps descending), the order in which the CPU adds them.
template <typename T>
__host__ __device__ inline double averagePoolBackwardAt(const T *dy, int64_t e,
                                                        const Window3 &w,
                                                        bool countIncludePad) {
  const Position3 i = unravel3(e, w.in);
  const T *planeDy = dy + i.plane * w.outSize();
  double acc = 0;
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
        if (ow < 0)
          continue;
        acc +=
            static_cast<double>(planeDy[(od * w.out[1] + oh) * w.out[2] + ow]) /
            static_cast<double>(
                w.averagePoolCount(od, oh, ow, countIncludePad));
      }
    }
  }
  return acc;
}

} // namespace remat::rt::cuda::detail

#endif // REMAT_RUNTIME_CUDA_WINDOW_CUH
