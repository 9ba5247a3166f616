//===- Reduction.cuh - Block reductions and a generic reducer ---*- CUDA
//-*-===//
//
// Reductions (ReduceSum/Mean/Max, softmax and normalisation statistics,
// parameter gradients) share one scheme: the threads of a block form groups
// of G lanes (a power of two), each group owns one output and its lanes
// stride over that output's reduced elements, then combine through shared
// memory. G is large when consecutive reduced elements are adjacent in
// memory (row reductions) and 1 when consecutive outputs are (column
// reductions), so loads coalesce either way. When there are too few outputs
// to fill the GPU, the reduced range is split across blocks and the partial
// results (in workspace scratch) are combined by a second kernel. Sums
// accumulate in SumOf<C> for compute type C: compensated fp32 for F32, F16
// and BF16 data (no f64 arithmetic, error independent of the length), plain
// double for F64, int64 for integers. The combination order is fixed, so
// results are deterministic.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_CUDA_REDUCTION_CUH
#define REMAT_RUNTIME_CUDA_REDUCTION_CUH

#include "Common.cuh"

namespace remat::rt::cuda::detail {

/// log2 of the smallest power of two >= length, clamped to [0, log2(maxLanes)].
inline int log2Lanes(int64_t length, int maxLanes) {
  int log2 = 0;
  while ((int64_t(1) << log2) < length && (1 << log2) < maxLanes)
    ++log2;
  return log2;
}

//===----------------------------------------------------------------------===//
// Sum accumulators
//===----------------------------------------------------------------------===//

/// An fp32 sum carried as an unevaluated pair hi + lo (lo holds the rounding
/// errors of the additions so far, each captured exactly by Knuth's
/// TwoSum). Adding n values loses about one rounding of the final sum plus
/// O(n eps^2) of the summed magnitudes, against O(n eps) for a plain float
/// loop: a long row (a vocabulary, a batch-norm channel) sums about as
/// accurately as in double, at fp32 speed. Merging two partial sums (lanes,
/// blocks) is the same operation, so any combination tree keeps it.
/// Relies on additions not being reassociated (nvcc never does without
/// fast-math). Trivially constructible, so that it can live in shared
/// memory: `CompensatedSum s{}` is zero.
struct CompensatedSum {
  float hi, lo;

  CompensatedSum() = default;
  __host__ __device__ CompensatedSum(float v) : hi(v), lo(0) {}

  __host__ __device__ CompensatedSum &operator+=(const CompensatedSum &o) {
    const float s = hi + o.hi;
    const float b = s - hi; // TwoSum: s + e == hi + o.hi exactly
    const float e = (hi - (s - b)) + (o.hi - b);
    hi = s;
    lo = lo + o.lo + e;
    return *this;
  }
  __host__ __device__ friend CompensatedSum operator+(CompensatedSum a,
                                                      const CompensatedSum &b) {
    return a += b;
  }
  /// The sum rounded to fp32.
  __host__ __device__ float value() const { return hi + lo; }
};

/// The accumulator of sums of compute type C.
template <typename C> struct SumTypeOf { using type = C; };
template <> struct SumTypeOf<float> { using type = CompensatedSum; };
template <typename C> using SumOf = typename SumTypeOf<C>::type;

/// The value of an accumulated sum.
__host__ __device__ inline float sumValue(const CompensatedSum &s) {
  return s.value();
}
template <typename A> __host__ __device__ inline A sumValue(A s) { return s; }

struct SumOp {
  template <typename A> __device__ A operator()(A a, A b) const {
    return a + b;
  }
};

/// Max where NaN wins and stays (as the CPU's ReduceMax).
struct MaxOp {
  template <typename A> __device__ A operator()(A a, A b) const {
    return (b > a || dIsNan(b)) ? b : a;
  }
};

/// Combines v across the G lanes of each group of the block; every lane
/// gets the group's result. All threads of the block must call it.
/// `buf` holds blockDim.x elements.
template <typename Acc, typename Op>
__device__ Acc groupReduce(Acc v, Acc *buf, int lane, int G, Op op) {
  buf[threadIdx.x] = v;
  __syncthreads();
  for (int s = G >> 1; s > 0; s >>= 1) {
    if (lane < s)
      buf[threadIdx.x] = op(buf[threadIdx.x], buf[threadIdx.x + s]);
    __syncthreads();
  }
  const Acc result = buf[threadIdx.x - lane];
  __syncthreads();
  return result;
}

/// Loads are split in two so the per-output offset is computed once:
/// load.base(o) for output o, then load.at(base, r) for its r-th element
/// (a value convertible to Acc: an fp32 value starts a CompensatedSum).
/// With `partial` null each group writes store(o, acc); otherwise block row
/// blockIdx.y covers reduced elements [y * chunk, (y + 1) * chunk) and
/// writes its partial result to partial[y * outN + o].
template <typename Acc, typename Load, typename Op, typename Store>
__global__ void __launch_bounds__(kThreads)
    reducePartialKernel(Load load, Op op, Acc init, Store store, int64_t outN,
                        int64_t redN, int log2G, int64_t chunk, Acc *partial) {
  __shared__ Acc buf[kThreads];
  const int G = 1 << log2G;
  const int lane = threadIdx.x & (G - 1);
  const int group = threadIdx.x >> log2G;
  const int groupsPerBlock = kThreads >> log2G;
  const int64_t r0 = static_cast<int64_t>(blockIdx.y) * chunk;
  const int64_t r1 = r0 + chunk < redN ? r0 + chunk : redN;
  for (int64_t first = static_cast<int64_t>(blockIdx.x) * groupsPerBlock;
       first < outN;
       first += static_cast<int64_t>(gridDim.x) * groupsPerBlock) {
    const int64_t o = first + group;
    Acc acc = init;
    if (o < outN) {
      const int64_t base = load.base(o);
      for (int64_t r = r0 + lane; r < r1; r += G)
        acc = op(acc, static_cast<Acc>(load.at(base, r)));
    }
    acc = groupReduce(acc, buf, lane, G, op);
    if (lane == 0 && o < outN) {
      if (partial)
        partial[static_cast<int64_t>(blockIdx.y) * outN + o] = acc;
      else
        store(o, acc);
    }
  }
}

template <typename Acc, typename Op, typename Store>
__global__ void reduceFinishKernel(const Acc *partial, Op op, Acc init,
                                   Store store, int64_t outN, int64_t splits) {
  REMAT_GRID_STRIDE_LOOP(o, outN) {
    Acc acc = init;
    for (int64_t s = 0; s < splits; ++s)
      acc = op(acc, partial[s * outN + o]);
    store(o, acc);
  }
}

/// Reduces, for each of outN outputs, redN elements given by `load`, and
/// hands the result to `store`. `lanesContiguous` says consecutive reduced
/// elements are adjacent in memory (else consecutive outputs are).
template <typename Acc, typename Load, typename Op, typename Store>
void launchReduction(const char *kernel, const Load &load, Op op, Acc init,
                     const Store &store, int64_t outN, int64_t redN,
                     bool lanesContiguous) {
  if (outN == 0)
    return;
  Context &ctx = context(kernel);
  const int log2G = lanesContiguous ? log2Lanes(redN, kThreads) : 0;
  const int G = 1 << log2G;
  const int64_t groupsPerBlock = kThreads / G;
  const int64_t blocksX =
      std::min<int64_t>((outN + groupsPerBlock - 1) / groupsPerBlock, 65535);

  // Split the reduced range when the outputs alone leave the GPU idle.
  constexpr int64_t kTargetBlocks = 512;
  const int64_t minChunk = std::max<int64_t>(64, int64_t(G) * 16);
  int64_t splits = 1;
  Acc *partial = nullptr;
  if (blocksX < kTargetBlocks && redN >= 2 * minChunk) {
    splits = std::min<int64_t>(
        {(kTargetBlocks + blocksX - 1) / blocksX, redN / minChunk, 1024});
    Scratch scratch(kernel);
    const size_t perSplit = static_cast<size_t>(outN) * sizeof(Acc);
    splits = std::min<int64_t>(
        splits, static_cast<int64_t>(scratch.available() / (perSplit + 256)));
    if (splits >= 2)
      partial = scratch.take<Acc>(static_cast<size_t>(splits * outN));
    else
      splits = 1;
  }
  const int64_t chunk = (redN + splits - 1) / splits;
  if (splits > 1)
    splits = (redN + chunk - 1) / chunk;

  const dim3 grid(static_cast<unsigned>(blocksX),
                  static_cast<unsigned>(splits));
  reducePartialKernel<Acc><<<grid, kThreads, 0, ctx.stream>>>(
      load, op, init, store, outN, redN, log2G, std::max<int64_t>(chunk, 1),
      partial);
  checkLaunch(kernel);
  if (partial) {
    reduceFinishKernel<Acc><<<gridFor(outN), kThreads, 0, ctx.stream>>>(
        partial, op, init, store, outN, splits);
    checkLaunch(kernel);
  }
}

} // namespace remat::rt::cuda::detail

#endif // REMAT_RUNTIME_CUDA_REDUCTION_CUH
