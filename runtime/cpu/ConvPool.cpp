//===- ConvPool.cpp - Convolution (im2col + GEMM) and pooling -------------===//
//
// 1-D and 2-D problems are run as 3-D ones with leading unit spatial dims
// (kernel 1, stride 1, no padding), so there is one loop nest per kernel.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/Kernels.h"

#include "DTypeDispatch.h"
#include "Gemm.h"

#include <algorithm>
#include <limits>

namespace remat::rt {
using namespace cpu;

namespace {

constexpr int kDims = 3;

/// Window geometry over exactly three spatial dims.
struct Window3 {
  int64_t in[kDims], out[kDims], kernel[kDims], stride[kDims];
  int64_t padBegin[kDims], padEnd[kDims], dilation[kDims];

  int64_t inSize() const { return in[0] * in[1] * in[2]; }
  int64_t outSize() const { return out[0] * out[1] * out[2]; }
  int64_t kernelSize() const { return kernel[0] * kernel[1] * kernel[2]; }
  /// Input coordinate of output position o, window offset k, along dim d.
  int64_t inputIndex(int d, int64_t o, int64_t k) const {
    return o * stride[d] - padBegin[d] + k * dilation[d];
  }
};

/// Reads x [N, C, s...] / y [N, M, s...] and the ONNX-style parameters;
/// `kernel` is the window (pooling) or the weight's spatial shape (conv).
Window3 makeWindow(const char *kernelName, const TensorView &x,
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
  require(p.dilations.empty() ||
              static_cast<int64_t>(p.dilations.size()) == k,
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

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

/// Unrolls one group's input [C, in...] into col [C * kernel, out...]:
/// row (c, kd, kh, kw) holds the input value each output position sees
/// through that kernel tap (0 in padding).
template <typename T>
void im2col(const T *x, int64_t channels, const Window3 &w, T *col) {
  const int64_t outSize = w.outSize();
  for (int64_t c = 0; c < channels; ++c) {
    const T *src = x + c * w.inSize();
    for (int64_t kd = 0; kd < w.kernel[0]; ++kd)
      for (int64_t kh = 0; kh < w.kernel[1]; ++kh)
        for (int64_t kw = 0; kw < w.kernel[2]; ++kw) {
          T *dst = col;
          col += outSize;
          for (int64_t od = 0; od < w.out[0]; ++od) {
            const int64_t id = w.inputIndex(0, od, kd);
            if (id < 0 || id >= w.in[0]) {
              std::fill(dst, dst + w.out[1] * w.out[2], T(0));
              dst += w.out[1] * w.out[2];
              continue;
            }
            for (int64_t oh = 0; oh < w.out[1]; ++oh) {
              const int64_t ih = w.inputIndex(1, oh, kh);
              if (ih < 0 || ih >= w.in[1]) {
                std::fill(dst, dst + w.out[2], T(0));
                dst += w.out[2];
                continue;
              }
              const T *row = src + (id * w.in[1] + ih) * w.in[2];
              for (int64_t ow = 0; ow < w.out[2]; ++ow) {
                const int64_t iw = w.inputIndex(2, ow, kw);
                *dst++ = iw >= 0 && iw < w.in[2] ? row[iw] : T(0);
              }
            }
          }
        }
  }
}

template <typename T>
void convImpl(const TensorView &x, const TensorView &weight,
              const TensorView &bias, const TensorView &y, const Window3 &w,
              int64_t group) {
  const int64_t N = x.shape[0], C = x.shape[1], M = weight.shape[0];
  const int64_t Cg = C / group, Mg = M / group;
  const int64_t K = Cg * w.kernelSize(), P = w.outSize(), I = w.inSize();

  // A 1x1 stride-1 unpadded conv reads the input as its own col matrix.
  bool pointwise = true;
  for (int d = 0; d < kDims; ++d)
    pointwise = pointwise && w.kernel[d] == 1 && w.stride[d] == 1 &&
                w.padBegin[d] == 0 && w.in[d] == w.out[d];
  std::vector<T> col(pointwise ? 0 : K * P);

  const T *px = x.as<const T>(), *pw = weight.as<const T>();
  const T *pb = bias.empty() ? nullptr : bias.as<const T>();
  T *py = y.as<T>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < group; ++g) {
      const T *xg = px + (n * C + g * Cg) * I;
      if (!pointwise)
        im2col(xg, Cg, w, col.data());
      T *yg = py + (n * M + g * Mg) * P;
      gemm(false, false, Mg, P, K, pw + g * Mg * K,
           pointwise ? xg : col.data(), yg);
      if (pb)
        for (int64_t m = 0; m < Mg; ++m) {
          const T b = pb[g * Mg + m];
          for (int64_t i = 0; i < P; ++i)
            yg[m * P + i] += b;
        }
    }
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

/// Number of taps along dim d at output position o whose input index lies in
/// [lo, hi).
int64_t tapsWithin(const Window3 &w, int d, int64_t o, int64_t lo,
                   int64_t hi) {
  int64_t count = 0;
  for (int64_t k = 0; k < w.kernel[d]; ++k) {
    const int64_t i = w.inputIndex(d, o, k);
    count += i >= lo && i < hi;
  }
  return count;
}

/// Calls visit(flatIndexInPlane, value) for each window tap inside the input
/// (padding and ceil-mode overhang are skipped), for one output position.
template <typename T, typename Visit>
void forEachTap(const T *plane, const Window3 &w, int64_t od, int64_t oh,
                int64_t ow, Visit &&visit) {
  for (int64_t kd = 0; kd < w.kernel[0]; ++kd) {
    const int64_t id = w.inputIndex(0, od, kd);
    if (id < 0 || id >= w.in[0])
      continue;
    for (int64_t kh = 0; kh < w.kernel[1]; ++kh) {
      const int64_t ih = w.inputIndex(1, oh, kh);
      if (ih < 0 || ih >= w.in[1])
        continue;
      for (int64_t kw = 0; kw < w.kernel[2]; ++kw) {
        const int64_t iw = w.inputIndex(2, ow, kw);
        if (iw < 0 || iw >= w.in[2])
          continue;
        const int64_t flat = (id * w.in[1] + ih) * w.in[2] + iw;
        visit(flat, plane[flat]);
      }
    }
  }
}

/// Runs poolOne(plane, planeIndex, od, oh, ow) -> output value for every
/// output position of every (n, c) plane.
template <typename T, typename PoolOne>
void poolLoop(const TensorView &x, const TensorView &y, const Window3 &w,
              PoolOne &&poolOne) {
  const int64_t planes = x.shape[0] * x.shape[1];
  const T *px = x.as<const T>();
  T *py = y.as<T>();
  for (int64_t p = 0; p < planes; ++p) {
    const T *plane = px + p * w.inSize();
    for (int64_t od = 0; od < w.out[0]; ++od)
      for (int64_t oh = 0; oh < w.out[1]; ++oh)
        for (int64_t ow = 0; ow < w.out[2]; ++ow)
          *py++ = poolOne(plane, p, od, oh, ow);
  }
}

void checkPoolShapes(const char *kernel, const TensorView &x,
                     const TensorView &y) {
  requireDType(y, x.dtype, kernel, "output");
  require(x.rank() >= 3 && y.rank() == x.rank() && y.shape[0] == x.shape[0] &&
              y.shape[1] == x.shape[1],
          kernel, "input and output must be [N, C, spatial...] alike");
}

} // namespace

void conv(const TensorView &x, const TensorView &w, const TensorView &bias,
          const TensorView &y, const WindowParams &params, int64_t group) {
  const char *kernel = "conv";
  requireDType(w, x.dtype, kernel, "weight");
  requireDType(y, x.dtype, kernel, "output");
  require(x.rank() >= 3 && w.rank() == x.rank(), kernel,
          "input and weight must be [N, C, spatial...] / [M, C/group, k...]");
  require(group >= 1 && x.shape[1] % group == 0 && w.shape[0] % group == 0,
          kernel, "channels are not divisible by group");
  require(w.shape[1] * group == x.shape[1], kernel,
          "weight channels times group differ from input channels");
  require(y.shape[0] == x.shape[0] && y.shape[1] == w.shape[0], kernel,
          "output must be [N, M, ...]");
  const std::vector<int64_t> weightKernel(w.shape.begin() + 2, w.shape.end());
  require(params.kernel.empty() || params.kernel == weightKernel, kernel,
          "kernel shape differs from the weight's spatial shape");
  if (!bias.empty()) {
    requireDType(bias, x.dtype, kernel, "bias");
    requireNumel(bias, w.shape[0], kernel, "bias");
  }
  const Window3 win = makeWindow(kernel, x, y, params, weightKernel);
  dispatchFloat(x.dtype, kernel, [&](auto tag) {
    convImpl<typename decltype(tag)::type>(x, w, bias, y, win, group);
  });
}

void maxPool(const TensorView &x, const TensorView &y,
             const TensorView &indices, const WindowParams &params) {
  const char *kernel = "maxPool";
  checkPoolShapes(kernel, x, y);
  if (!indices.empty()) {
    requireDType(indices, DType::I64, kernel, "indices");
    requireShape(indices, y.shape, kernel, "indices");
  }
  const Window3 w = makeWindow(kernel, x, y, params, params.kernel);
  int64_t *pi = indices.empty() ? nullptr : indices.as<int64_t>();
  dispatchFloat(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    poolLoop<T>(x, y, w, [&](const T *plane, int64_t p, int64_t od,
                             int64_t oh, int64_t ow) {
      T best = -std::numeric_limits<T>::infinity();
      int64_t bestIndex = -1;
      forEachTap(plane, w, od, oh, ow, [&](int64_t flat, T v) {
        if (bestIndex < 0 || v > best) {
          best = v;
          bestIndex = flat;
        }
      });
      if (pi) // flat index into all of x (ONNX storage_order 0)
        *pi++ = bestIndex < 0 ? -1 : p * w.inSize() + bestIndex;
      return best;
    });
  });
}

void averagePool(const TensorView &x, const TensorView &y,
                 const WindowParams &params, bool countIncludePad) {
  const char *kernel = "averagePool";
  checkPoolShapes(kernel, x, y);
  const Window3 w = makeWindow(kernel, x, y, params, params.kernel);
  dispatchFloat(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    poolLoop<T>(x, y, w, [&](const T *plane, int64_t, int64_t od, int64_t oh,
                             int64_t ow) {
      double sum = 0;
      forEachTap(plane, w, od, oh, ow, [&](int64_t, T v) { sum += v; });
      // The window is a box, so its tap count factors per dim. Including
      // padding still excludes ceil-mode overhang past the padded input.
      const int64_t pos[kDims] = {od, oh, ow};
      int64_t count = 1;
      for (int d = 0; d < kDims; ++d)
        count *= countIncludePad
                     ? tapsWithin(w, d, pos[d], -w.padBegin[d],
                                  w.in[d] + w.padEnd[d])
                     : tapsWithin(w, d, pos[d], 0, w.in[d]);
      return static_cast<T>(sum / static_cast<double>(count));
    });
  });
}

void globalAveragePool(const TensorView &x, const TensorView &y) {
  const char *kernel = "globalAveragePool";
  checkPoolShapes(kernel, x, y);
  requireNumel(y, x.shape[0] * x.shape[1], kernel, "output");
  dispatchFloat(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t planes = y.numel();
    const int64_t size = planes == 0 ? 0 : x.numel() / planes;
    const T *px = x.as<const T>();
    T *py = y.as<T>();
    for (int64_t p = 0; p < planes; ++p) {
      double sum = 0;
      for (int64_t i = 0; i < size; ++i)
        sum += px[p * size + i];
      py[p] = static_cast<T>(sum / static_cast<double>(size));
    }
  });
}

} // namespace remat::rt
