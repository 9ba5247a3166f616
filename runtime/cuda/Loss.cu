//===- Loss.cu - SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss ----===//
//
// The CUDA versions of runtime/cpu/Loss.cpp. Losses per target are computed
// in double; Sum and Mean are one block's reduction (the target count is the
// batch, or batch times spatial dims: small next to the scores). A label out
// of range is recorded for checkDeviceErrors() and contributes nothing.
// Cross-entropy without a logProb output never materialises the
// log-probabilities (a language model's are gigabytes): each target's row
// gets its log-sum-exp and only the target's entry.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/cuda/CudaKernels.h"

#include "Common.cuh"
#include "Reduction.cuh"

#include "common/LossChecks.h"

namespace remat::rt::cuda {
using namespace detail;

namespace {

/// Target t = (n, d): its loss -logProb[n, label, d] * w and weight w (both
/// 0 when ignored or out of range).
template <typename T, typename I>
__device__ void targetLoss(const T *logProb, const I *labels, const T *weights,
                           LossShape s, int64_t t, int64_t ignoreIndex,
                           bool hasIgnoreIndex, DeviceStatus *status,
                           double &loss, double &weight) {
  loss = 0;
  weight = 0;
  const int64_t label = static_cast<int64_t>(labels[t]);
  if (hasIgnoreIndex && label == ignoreIndex)
    return;
  if (label < 0 || label >= s.C) {
    reportError(status, kLossLabel, label);
    return;
  }
  const int64_t n = t / s.D, d = t % s.D;
  weight = weights ? static_cast<double>(weights[label]) : 1.0;
  loss = -static_cast<double>(logProb[(n * s.C + label) * s.D + d]) * weight;
}

template <typename T, typename I>
__global__ void nllNoneKernel(const T *logProb, const I *labels,
                              const T *weights, T *loss, LossShape s,
                              int64_t ignoreIndex, bool hasIgnoreIndex,
                              DeviceStatus *status) {
  REMAT_GRID_STRIDE_LOOP(t, s.N * s.D) {
    double l, w;
    targetLoss(logProb, labels, weights, s, t, ignoreIndex, hasIgnoreIndex,
               status, l, w);
    loss[t] = static_cast<T>(l);
  }
}

/// One block: the summed loss, divided by the summed weight for Mean
/// (NaN when every target is ignored, as ONNX and the CPU).
template <typename T, typename I>
__global__ void __launch_bounds__(kThreads)
    nllReduceKernel(const T *logProb, const I *labels, const T *weights,
                    T *loss, LossShape s, int64_t ignoreIndex,
                    bool hasIgnoreIndex, bool mean, DeviceStatus *status) {
  __shared__ double buf[kThreads];
  double total = 0, weightSum = 0;
  for (int64_t t = threadIdx.x; t < s.N * s.D; t += blockDim.x) {
    double l, w;
    targetLoss(logProb, labels, weights, s, t, ignoreIndex, hasIgnoreIndex,
               status, l, w);
    total += l;
    weightSum += w;
  }
  total = groupReduce(total, buf, threadIdx.x, kThreads, SumOp{});
  weightSum = groupReduce(weightSum, buf, threadIdx.x, kThreads, SumOp{});
  if (threadIdx.x == 0)
    loss[0] = static_cast<T>(mean ? total / weightSum : total);
}

/// SoftmaxCrossEntropyLoss without a logProb output: a group of lanes per
/// target computes its row's log-sum-exp as logSoftmax does and then only
/// the target's log-probability (no scores-sized scratch). For None the
/// loss goes to `loss`, else (loss, weight) pairs to `pairs`.
template <typename T, typename I>
__global__ void __launch_bounds__(kThreads)
    fusedCrossEntropyKernel(const T *scores, const I *labels, const T *weights,
                            LossShape s, int64_t ignoreIndex,
                            bool hasIgnoreIndex, int log2G, T *loss,
                            double *pairs, DeviceStatus *status) {
  __shared__ double buf[kThreads];
  const int G = 1 << log2G;
  const int lane = threadIdx.x & (G - 1);
  const int groupsPerBlock = kThreads >> log2G;
  const int64_t rows = s.N * s.D;
  for (int64_t first = static_cast<int64_t>(blockIdx.x) * groupsPerBlock;
       first < rows;
       first += static_cast<int64_t>(gridDim.x) * groupsPerBlock) {
    const int64_t t = first + (threadIdx.x >> log2G);
    const bool active = t < rows;
    // Target t = (n, d) reads scores[n, :, d].
    const T *xr = scores + (active ? (t / s.D) * s.C * s.D + t % s.D : 0);
    T m = -dInfinity<T>();
    if (active)
      for (int64_t c = lane; c < s.C; c += G) {
        const T v = xr[c * s.D];
        m = m < v ? v : m;
      }
    T maxValue = static_cast<T>(
        groupReduce(static_cast<double>(m), buf, lane, G,
                    [](double a, double b) { return a < b ? b : a; }));
    if (dIsInf(maxValue))
      maxValue = maxValue > 0 ? maxValue : T(0);
    double sum = 0;
    if (active)
      for (int64_t c = lane; c < s.C; c += G)
        sum += static_cast<double>(dExp(xr[c * s.D] - maxValue));
    sum = groupReduce(sum, buf, lane, G, SumOp{});
    if (!active || lane != 0)
      continue;
    double l = 0, w = 0;
    const int64_t label = static_cast<int64_t>(labels[t]);
    if (!(hasIgnoreIndex && label == ignoreIndex)) {
      if (label < 0 || label >= s.C) {
        reportError(status, kLossLabel, label);
      } else {
        const T logSum = static_cast<T>(::log(sum));
        const T logProb = (xr[label * s.D] - maxValue) - logSum;
        w = weights ? static_cast<double>(weights[label]) : 1.0;
        l = -static_cast<double>(logProb) * w;
      }
    }
    if (loss) {
      loss[t] = static_cast<T>(l);
    } else {
      pairs[2 * t] = l;
      pairs[2 * t + 1] = w;
    }
  }
}

/// One block: loss[0] = sum of the losses (divided by the summed weights for
/// Mean) from (loss, weight) pairs.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    sumPairsKernel(const double *pairs, int64_t count, T *loss, bool mean) {
  __shared__ double buf[kThreads];
  double total = 0, weightSum = 0;
  for (int64_t t = threadIdx.x; t < count; t += blockDim.x) {
    total += pairs[2 * t];
    weightSum += pairs[2 * t + 1];
  }
  total = groupReduce(total, buf, threadIdx.x, kThreads, SumOp{});
  weightSum = groupReduce(weightSum, buf, threadIdx.x, kThreads, SumOp{});
  if (threadIdx.x == 0)
    loss[0] = static_cast<T>(mean ? total / weightSum : total);
}

/// The shared checks (common/LossChecks.h) and the dtypes launchNll
/// dispatches on; returns the [N, C, D] view of the input.
LossShape checkNllOperands(const char *kernel, const TensorView &logProb,
                          const TensorView &target, const TensorView &weights,
                          const TensorView &loss, LossReduction reduction) {
  const LossShape s =
      checkNll(kernel, logProb, target, weights, loss, reduction);
  dispatchFloat(logProb.dtype, kernel, [](auto) {});
  dispatchIndex(target.dtype, kernel, [](auto) {});
  return s;
}

void launchNll(const char *kernel, const TensorView &logProb,
               const TensorView &target, const TensorView &weights,
               const TensorView &loss, LossReduction reduction,
               int64_t ignoreIndex, bool hasIgnoreIndex, LossShape s) {
  Context &ctx = context(kernel);
  dispatchFloat(logProb.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    dispatchIndex(target.dtype, kernel, [&](auto indexTag) {
      using I = typename decltype(indexTag)::type;
      const T *w = weights.empty() ? nullptr : weights.as<const T>();
      if (reduction == LossReduction::None) {
        if (s.N * s.D == 0)
          return;
        nllNoneKernel<T, I><<<gridFor(s.N * s.D), kThreads, 0, ctx.stream>>>(
            logProb.as<const T>(), target.as<const I>(), w, loss.as<T>(), s,
            ignoreIndex, hasIgnoreIndex, ctx.status);
      } else {
        nllReduceKernel<T, I><<<1, kThreads, 0, ctx.stream>>>(
            logProb.as<const T>(), target.as<const I>(), w, loss.as<T>(), s,
            ignoreIndex, hasIgnoreIndex, reduction == LossReduction::Mean,
            ctx.status);
      }
      checkLaunch(kernel);
    });
  });
}

} // namespace

void softmaxCrossEntropyLoss(const TensorView &scores, const TensorView &labels,
                             const TensorView &weights, const TensorView &loss,
                             const TensorView &logProb, LossReduction reduction,
                             int64_t ignoreIndex, bool hasIgnoreIndex) {
  const char *kernel = "softmaxCrossEntropyLoss";
  require(scores.rank() >= 2, kernel, "scores must be [N, C, d...]");
  const LossShape s =
      checkNllOperands(kernel, scores, labels, weights, loss, reduction);
  if (!logProb.empty()) {
    cuda::logSoftmax(scores, logProb, 1);
    launchNll(kernel, logProb, labels, weights, loss, reduction, ignoreIndex,
              hasIgnoreIndex, s);
    return;
  }
  // Without the log-probabilities: only the targets' entries are computed.
  Context &ctx = context(kernel);
  dispatchFloat(scores.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    dispatchIndex(labels.dtype, kernel, [&](auto indexTag) {
      using I = typename decltype(indexTag)::type;
      const int64_t targets = s.N * s.D;
      const bool none = reduction == LossReduction::None;
      double *pairs = nullptr;
      if (!none) {
        Scratch scratch(kernel);
        pairs = scratch.take<double>(static_cast<size_t>(2 * targets));
      }
      if (targets > 0) {
        const int log2G = s.D == 1 ? log2Lanes(s.C, kThreads) : 0;
        fusedCrossEntropyKernel<T, I>
            <<<gridFor(targets, kThreads >> log2G), kThreads, 0, ctx.stream>>>(
                scores.as<const T>(), labels.as<const I>(),
                weights.empty() ? nullptr : weights.as<const T>(), s,
                ignoreIndex, hasIgnoreIndex, log2G,
                none ? loss.as<T>() : nullptr, pairs, ctx.status);
        checkLaunch(kernel);
      }
      if (!none) {
        sumPairsKernel<T><<<1, kThreads, 0, ctx.stream>>>(
            pairs, targets, loss.as<T>(), reduction == LossReduction::Mean);
        checkLaunch(kernel);
      }
    });
  });
}

void nllLoss(const TensorView &input, const TensorView &target,
             const TensorView &weights, const TensorView &loss,
             LossReduction reduction, int64_t ignoreIndex,
             bool hasIgnoreIndex) {
  const char *kernel = "nllLoss";
  const LossShape s =
      checkNllOperands(kernel, input, target, weights, loss, reduction);
  launchNll(kernel, input, target, weights, loss, reduction, ignoreIndex,
            hasIgnoreIndex, s);
}

} // namespace remat::rt::cuda
