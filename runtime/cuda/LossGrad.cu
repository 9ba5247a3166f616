//===- LossGrad.cu - SoftmaxCrossEntropyLoss and NLL backward -------------===//
//
// The CUDA versions of runtime/cpu/LossGrad.cpp. Target t's coefficient is
// w[label_t] * r_t with r_t the reduction's factor (dloss[t] for None, dloss
// for Sum, dloss / sum(w) for Mean). For Mean, one block first sums the
// weights into workspace scratch; then every element of the input gradient
// gets its value from its target's coefficient.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/cuda/CudaKernels.h"

#include "Common.cuh"
#include "Reduction.cuh"

#include "common/LossChecks.h"

namespace remat::rt::cuda {
using namespace detail;

namespace {

template <typename C> struct LossArgs {
  LossShape s;
  LossReduction reduction;
  int64_t ignoreIndex;
  bool hasIgnoreIndex;
  const C *weightSum; // Mean only
  DeviceStatus *status;
};

/// Target t's label (-1 when ignored or out of range) and coefficient.
template <typename T, typename I, typename C>
__device__ int64_t targetCoefficient(const T *dloss, const I *labels,
                                     const T *weights, const LossArgs<C> &a,
                                     int64_t t, C &coefficient) {
  coefficient = 0;
  const int64_t label = static_cast<int64_t>(labels[t]);
  if (a.hasIgnoreIndex && label == a.ignoreIndex)
    return -1;
  if (label < 0 || label >= a.s.C) {
    reportError(a.status, kLossBackwardLabel, label);
    return -1;
  }
  const C w = weights ? toCompute(weights[label]) : C(1);
  switch (a.reduction) {
  case LossReduction::None:
    coefficient = w * toCompute(dloss[t]);
    break;
  case LossReduction::Sum:
    coefficient = w * toCompute(dloss[0]);
    break;
  case LossReduction::Mean:
    coefficient = w * (toCompute(dloss[0]) / *a.weightSum);
    break;
  }
  return label;
}

/// The Mean denominator: the weights of the non-ignored targets.
template <typename T, typename I, typename C>
__global__ void __launch_bounds__(kThreads)
    weightSumKernel(const I *labels, const T *weights, LossArgs<C> a,
                    C *weightSum) {
  __shared__ SumOf<C> buf[kThreads];
  SumOf<C> sum{};
  for (int64_t t = threadIdx.x; t < a.s.N * a.s.D; t += blockDim.x) {
    const int64_t label = static_cast<int64_t>(labels[t]);
    if ((a.hasIgnoreIndex && label == a.ignoreIndex) || label < 0 ||
        label >= a.s.C)
      continue;
    sum += weights ? toCompute(weights[label]) : C(1);
  }
  const C total = sumValue(groupReduce(sum, buf, threadIdx.x, kThreads, SumOp{}));
  if (threadIdx.x == 0)
    *weightSum = total;
}

/// dscores[n, c, d] = (exp(logProb) - [c == label]) * coefficient.
template <typename T, typename I, typename C>
__global__ void
softmaxCrossEntropyBackwardKernel(const T *dloss, const T *logProb,
                                  const I *labels, const T *weights, T *dscores,
                                  LossArgs<C> a) {
  const int64_t CD = a.s.C * a.s.D;
  REMAT_GRID_STRIDE_LOOP(at, a.s.N * CD) {
    const int64_t n = at / CD, c = (at / a.s.D) % a.s.C, d = at % a.s.D;
    C coefficient;
    const int64_t label = targetCoefficient(dloss, labels, weights, a,
                                            n * a.s.D + d, coefficient);
    if (label < 0) {
      dscores[at] = fromCompute<T>(C(0));
      continue;
    }
    const C p = dExp(toCompute(logProb[at]));
    dscores[at] = fromCompute<T>((p - (c == label ? C(1) : C(0))) * coefficient);
  }
}

/// Rows at least this long (D == 1) get a block each.
constexpr int64_t kBlockRowMin = 512;

/// softmaxCrossEntropyBackwardKernel for D == 1 and long rows: a block per
/// row of C classes, its target's coefficient taken once, then the row
/// streamed in 16-byte vectors from its first 16-byte boundary (when
/// logProb and dscores share the alignment; scalars otherwise and for the
/// few elements outside the vectors), with the same formula. Each thread
/// reads an element before writing it, so dscores may alias logProb.
template <typename T, typename I, typename C>
__global__ void __launch_bounds__(kThreads)
    softmaxCrossEntropyBackwardRowsKernel(const T *dloss, const T *logProb,
                                          const I *labels, const T *weights,
                                          T *dscores, LossArgs<C> a) {
  constexpr int V = 16 / sizeof(T);
  using P = Vec<T, V>;
  const int64_t size = a.s.C;
  const int threads = static_cast<int>(blockDim.x);
  const int t = static_cast<int>(threadIdx.x);
  for (int64_t n = blockIdx.x; n < a.s.N; n += gridDim.x) {
    C coefficient;
    const int64_t label =
        targetCoefficient(dloss, labels, weights, a, n, coefficient);
    const T *lp = logProb + n * size;
    T *ds = dscores + n * size;
    auto value = [&](int64_t c, T v) {
      if (label < 0)
        return fromCompute<T>(C(0));
      const C p = dExp(toCompute(v));
      return fromCompute<T>((p - (c == label ? C(1) : C(0))) * coefficient);
    };
    if (reinterpret_cast<uintptr_t>(ds) % 16 !=
        reinterpret_cast<uintptr_t>(lp) % 16) {
      for (int64_t c = t; c < size; c += threads)
        ds[c] = value(c, lp[c]);
      continue;
    }
    const int misaligned =
        static_cast<int>(reinterpret_cast<uintptr_t>(lp) % 16 / sizeof(T));
    const int toBoundary = (V - misaligned) % V;
    const int64_t head = size < toBoundary ? size : toBoundary;
    const int64_t vectors = (size - head) / V;
    const int64_t tail = head + vectors * V;
    if (t < head)
      ds[t] = value(t, lp[t]);
    if (tail + t < size)
      ds[tail + t] = value(tail + t, lp[tail + t]);
    // Four vectors in flight per thread.
    int64_t j = t;
    for (; j + 3 * threads < vectors; j += 4 * threads) {
      P p[4];
#pragma unroll
      for (int u = 0; u < 4; ++u)
        p[u] = *reinterpret_cast<const P *>(lp + head + (j + u * threads) * V);
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int64_t c0 = head + (j + u * threads) * V;
        P q;
#pragma unroll
        for (int e = 0; e < V; ++e)
          q.e[e] = value(c0 + e, p[u].e[e]);
        *reinterpret_cast<P *>(ds + c0) = q;
      }
    }
    for (; j < vectors; j += threads) {
      const int64_t c0 = head + j * V;
      const P p = *reinterpret_cast<const P *>(lp + c0);
      P q;
#pragma unroll
      for (int e = 0; e < V; ++e)
        q.e[e] = value(c0 + e, p.e[e]);
      *reinterpret_cast<P *>(ds + c0) = q;
    }
  }
}

/// dinput (zeroed first) [n, label, d] = -coefficient.
template <typename T, typename I, typename C>
__global__ void nllBackwardKernel(const T *dloss, const I *labels,
                                  const T *weights, T *dinput, LossArgs<C> a) {
  REMAT_GRID_STRIDE_LOOP(t, a.s.N * a.s.D) {
    C coefficient;
    const int64_t label =
        targetCoefficient(dloss, labels, weights, a, t, coefficient);
    if (label >= 0)
      dinput[((t / a.s.D) * a.s.C + label) * a.s.D + t % a.s.D] =
          fromCompute<T>(-coefficient);
  }
}

/// Checks the operands ([N, C, d...] input and gradient, [N, d...] labels,
/// dloss per reduction), computes the Mean denominator and runs
/// launch(T tag, I tag, args).
template <typename Launch>
void lossBackwardCommon(const char *kernel, const TensorView &dloss,
                        const TensorView &input, const TensorView &labels,
                        const TensorView &weights, const TensorView &dinput,
                        LossReduction reduction, int64_t ignoreIndex,
                        bool hasIgnoreIndex, Launch &&launch) {
  const LossShape s = checkLossBackward(kernel, dloss, input, labels, weights,
                                        dinput, reduction);
  Context &ctx = context(kernel);
  dispatchFloatStorage(input.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    dispatchIndex(labels.dtype, kernel, [&](auto indexTag) {
      using I = typename decltype(indexTag)::type;
      LossArgs<C> args{s,       reduction, ignoreIndex, hasIgnoreIndex,
                       nullptr, ctx.status};
      const T *w = weights.empty() ? nullptr : weights.as<const T>();
      if (reduction == LossReduction::Mean && s.N * s.D > 0) {
        Scratch scratch(kernel);
        C *weightSum = scratch.take<C>(1);
        weightSumKernel<T, I, C><<<1, kThreads, 0, ctx.stream>>>(
            labels.as<const I>(), w, args, weightSum);
        checkLaunch(kernel);
        args.weightSum = weightSum;
      }
      launch(tag, indexTag, args, w, ctx.stream);
    });
  });
}

} // namespace

void softmaxCrossEntropyLossBackward(const TensorView &dloss,
                                     const TensorView &logProb,
                                     const TensorView &labels,
                                     const TensorView &weights,
                                     const TensorView &dscores,
                                     LossReduction reduction,
                                     int64_t ignoreIndex, bool hasIgnoreIndex) {
  const char *kernel = "softmaxCrossEntropyLossBackward";
  lossBackwardCommon(kernel, dloss, logProb, labels, weights, dscores,
                     reduction, ignoreIndex, hasIgnoreIndex,
                     [&](auto tag, auto indexTag, const auto &args, auto *w,
                         cudaStream_t stream) {
                       using T = typename decltype(tag)::type;
                       using I = typename decltype(indexTag)::type;
                       const int64_t total = dscores.numel();
                       if (total == 0)
                         return;
                       if (args.s.D == 1 && args.s.C >= kBlockRowMin) {
                         softmaxCrossEntropyBackwardRowsKernel<T, I>
                             <<<static_cast<unsigned>(std::min<int64_t>(
                                    args.s.N, INT32_MAX)),
                                kThreads, 0, stream>>>(
                                 dloss.as<const T>(), logProb.as<const T>(),
                                 labels.as<const I>(), w, dscores.as<T>(),
                                 args);
                         checkLaunch(kernel);
                         return;
                       }
                       softmaxCrossEntropyBackwardKernel<T, I>
                           <<<gridFor(total), kThreads, 0, stream>>>(
                               dloss.as<const T>(), logProb.as<const T>(),
                               labels.as<const I>(), w, dscores.as<T>(), args);
                       checkLaunch(kernel);
                     });
}

void nllLossBackward(const TensorView &dloss, const TensorView &target,
                     const TensorView &weights, const TensorView &dinput,
                     LossReduction reduction, int64_t ignoreIndex,
                     bool hasIgnoreIndex) {
  const char *kernel = "nllLossBackward";
  // The input itself is not needed: dinput has its shape.
  lossBackwardCommon(
      kernel, dloss, dinput, target, weights, dinput, reduction, ignoreIndex,
      hasIgnoreIndex,
      [&](auto tag, auto indexTag, const auto &args, auto *w,
          cudaStream_t stream) {
        using T = typename decltype(tag)::type;
        using I = typename decltype(indexTag)::type;
        zeroAsync(dinput.data, dinput.bytes(), kernel);
        const int64_t targets = args.s.N * args.s.D;
        if (targets == 0)
          return;
        nllBackwardKernel<T, I><<<gridFor(targets), kThreads, 0, stream>>>(
            dloss.as<const T>(), target.as<const I>(), w, dinput.as<T>(), args);
        checkLaunch(kernel);
      });
}

} // namespace remat::rt::cuda
