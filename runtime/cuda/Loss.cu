//===- Loss.cu - SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss ----===//
//
// The CUDA versions of runtime/cpu/Loss.cpp. Losses per target are computed
// in the compute type C of the scores (fp32 for F32, F16 and BF16; double
// for F64); Sum and Mean are one block's reduction in SumOf<C> (compensated
// fp32 sums; the target count is the batch, or batch times spatial dims:
// small next to the scores). A label out
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
/// 0 when ignored or out of range), in the compute type C.
template <typename T, typename I, typename C = ComputeType<T>>
__device__ void targetLoss(const T *logProb, const I *labels, const T *weights,
                           LossShape s, int64_t t, int64_t ignoreIndex,
                           bool hasIgnoreIndex, DeviceStatus *status, C &loss,
                           C &weight) {
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
  weight = weights ? toCompute(weights[label]) : C(1);
  loss = -toCompute(logProb[(n * s.C + label) * s.D + d]) * weight;
}

template <typename T, typename I>
__global__ void nllNoneKernel(const T *logProb, const I *labels,
                              const T *weights, T *loss, LossShape s,
                              int64_t ignoreIndex, bool hasIgnoreIndex,
                              DeviceStatus *status) {
  REMAT_GRID_STRIDE_LOOP(t, s.N * s.D) {
    ComputeType<T> l, w;
    targetLoss(logProb, labels, weights, s, t, ignoreIndex, hasIgnoreIndex,
               status, l, w);
    loss[t] = fromCompute<T>(l);
  }
}

/// One block: the summed loss, divided by the summed weight for Mean
/// (NaN when every target is ignored, as ONNX and the CPU).
template <typename T, typename I>
__global__ void __launch_bounds__(kThreads)
    nllReduceKernel(const T *logProb, const I *labels, const T *weights,
                    T *loss, LossShape s, int64_t ignoreIndex,
                    bool hasIgnoreIndex, bool mean, DeviceStatus *status) {
  using C = ComputeType<T>;
  __shared__ SumOf<C> buf[kThreads];
  SumOf<C> total{}, weightSum{};
  for (int64_t t = threadIdx.x; t < s.N * s.D; t += blockDim.x) {
    C l, w;
    targetLoss(logProb, labels, weights, s, t, ignoreIndex, hasIgnoreIndex,
               status, l, w);
    total += l;
    weightSum += w;
  }
  const C sum =
      sumValue(groupReduce(total, buf, threadIdx.x, kThreads, SumOp{}));
  const C weightTotal =
      sumValue(groupReduce(weightSum, buf, threadIdx.x, kThreads, SumOp{}));
  if (threadIdx.x == 0)
    loss[0] = fromCompute<T>(mean ? sum / weightTotal : sum);
}

/// SoftmaxCrossEntropyLoss without a logProb output: a group of lanes per
/// target computes its row's log-sum-exp as logSoftmax does and then only
/// the target's log-probability (no scores-sized scratch). For None the
/// loss goes to `loss`, else (loss, weight) pairs to `pairs`.
template <typename T, typename I>
__global__ void __launch_bounds__(kThreads, 1)
    fusedCrossEntropyKernel(const T *scores, const I *labels, const T *weights,
                            LossShape s, int64_t ignoreIndex,
                            bool hasIgnoreIndex, int log2G, T *loss,
                            ComputeType<T> *pairs, DeviceStatus *status) {
  using C = ComputeType<T>;
  __shared__ C maxBuf[kThreads];
  __shared__ SumOf<C> sumBuf[kThreads];
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
    C m = -dInfinity<C>();
    if (active)
      for (int64_t c = lane; c < s.C; c += G) {
        const C v = toCompute(xr[c * s.D]);
        m = m < v ? v : m;
      }
    C maxValue = groupReduce(m, maxBuf, lane, G,
                             [](C a, C b) { return a < b ? b : a; });
    if (dIsInf(maxValue))
      maxValue = maxValue > 0 ? maxValue : C(0);
    SumOf<C> partial{};
    if (active)
      for (int64_t c = lane; c < s.C; c += G)
        partial += dExp(toCompute(xr[c * s.D]) - maxValue);
    const C sum = sumValue(groupReduce(partial, sumBuf, lane, G, SumOp{}));
    if (!active || lane != 0)
      continue;
    C l = 0, w = 0;
    const int64_t label = static_cast<int64_t>(labels[t]);
    if (!(hasIgnoreIndex && label == ignoreIndex)) {
      if (label < 0 || label >= s.C) {
        reportError(status, kLossLabel, label);
      } else {
        const C logProb = (toCompute(xr[label * s.D]) - maxValue) - dLog(sum);
        w = weights ? toCompute(weights[label]) : C(1);
        l = -logProb * w;
      }
    }
    if (loss) {
      loss[t] = fromCompute<T>(l);
    } else {
      pairs[2 * t] = l;
      pairs[2 * t + 1] = w;
    }
  }
}

/// One block: loss[0] = sum of the losses (divided by the summed weights for
/// Mean) from (loss, weight) pairs in the compute type.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    sumPairsKernel(const ComputeType<T> *pairs, int64_t count, T *loss,
                   bool mean) {
  using C = ComputeType<T>;
  __shared__ SumOf<C> buf[kThreads];
  SumOf<C> total{}, weightSum{};
  for (int64_t t = threadIdx.x; t < count; t += blockDim.x) {
    total += pairs[2 * t];
    weightSum += pairs[2 * t + 1];
  }
  const C sum =
      sumValue(groupReduce(total, buf, threadIdx.x, kThreads, SumOp{}));
  const C weightTotal =
      sumValue(groupReduce(weightSum, buf, threadIdx.x, kThreads, SumOp{}));
  if (threadIdx.x == 0)
    loss[0] = fromCompute<T>(mean ? sum / weightTotal : sum);
}

/// The shared checks (common/LossChecks.h) and the dtypes launchNll
/// dispatches on; returns the [N, C, D] view of the input.
LossShape checkNllOperands(const char *kernel, const TensorView &logProb,
                          const TensorView &target, const TensorView &weights,
                          const TensorView &loss, LossReduction reduction) {
  const LossShape s =
      checkNll(kernel, logProb, target, weights, loss, reduction);
  dispatchFloatStorage(logProb.dtype, kernel, [](auto) {});
  dispatchIndex(target.dtype, kernel, [](auto) {});
  return s;
}

void launchNll(const char *kernel, const TensorView &logProb,
               const TensorView &target, const TensorView &weights,
               const TensorView &loss, LossReduction reduction,
               int64_t ignoreIndex, bool hasIgnoreIndex, LossShape s) {
  Context &ctx = context(kernel);
  dispatchFloatStorage(logProb.dtype, kernel, [&](auto tag) {
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
  dispatchFloatStorage(scores.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    dispatchIndex(labels.dtype, kernel, [&](auto indexTag) {
      using I = typename decltype(indexTag)::type;
      const int64_t targets = s.N * s.D;
      const bool none = reduction == LossReduction::None;
      C *pairs = nullptr;
      if (!none) {
        Scratch scratch(kernel);
        pairs = scratch.take<C>(static_cast<size_t>(2 * targets));
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
