//===- Reduction.cuh - Block reductions and a generic reducer ---*- CUDA
//-*-===//
//
// Reductions (ReduceSum/Mean/Max, softmax and normalisation statistics,
// parameter gradients) share one scheme: the threads of a block form groups
// of G lanes, each group owns one output and its lanes stride over that
// output's reduced elements, then combine with warp shuffles (and, for
// groups wider than a warp, shared memory). Row reductions (consecutive
// reduced elements adjacent in memory) take wide groups, a warp per output
// when there are outputs enough; column reductions (consecutive outputs
// adjacent: bias gradients) a lane per output, with the warps of a block
// splitting the reduced range. When there are too few outputs to fill the
// GPU, the reduced range is split across blocks and the partial results
// (in workspace scratch) are combined by a second, column reduction. Sums
// accumulate in SumOf<C> for compute type C: compensated fp32 for F32, F16
// and BF16 data (no f64 arithmetic, error independent of the length), plain
// double for F64, int64 for integers. The combination order is fixed, so
// results are deterministic. Also here: 16-byte vector accesses (Vec) and
// the layout of the kernels that hold whole rows in registers (RowPlan:
// LayerNorm and its backward).
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

//===----------------------------------------------------------------------===//
// Warp shuffles and group reductions
//===----------------------------------------------------------------------===//

/// v from the lane whose index differs from this one's by `mask` (all 32
/// lanes of the warp must call it).
template <typename A> __device__ inline A shuffleXor(A v, int mask) {
  return __shfl_xor_sync(0xffffffffu, v, mask);
}
__device__ inline CompensatedSum shuffleXor(CompensatedSum v, int mask) {
  CompensatedSum r;
  r.hi = __shfl_xor_sync(0xffffffffu, v.hi, mask);
  r.lo = __shfl_xor_sync(0xffffffffu, v.lo, mask);
  return r;
}

/// Two sums reduced together (one pass through the shuffles and shared
/// memory instead of two). Trivially constructible, like CompensatedSum.
template <typename S> struct SumPair {
  S a, b;
  __device__ SumPair &operator+=(const SumPair &o) {
    a += o.a;
    b += o.b;
    return *this;
  }
  __device__ friend SumPair operator+(SumPair x, const SumPair &y) {
    return x += y;
  }
};
template <typename S>
__device__ inline SumPair<S> shuffleXor(SumPair<S> v, int mask) {
  return {shuffleXor(v.a, mask), shuffleXor(v.b, mask)};
}

/// Combines v across the G lanes of each group of the block; every lane
/// gets the group's result, with the same bits. Groups are consecutive
/// threads: G is a power of two up to 32, or a multiple of 32 (whole
/// warps); `lane` is the thread's index in its group. All threads of the
/// block must call it (it synchronises the block when G > 32), and
/// blockDim.x must be a multiple of 32. `buf` holds blockDim.x / 32
/// elements. Order, fixed: within a warp a butterfly over lanes 1, 2, 4,
/// ... apart, each combination taking the lower lanes' value first (so the
/// partner lanes compute the same op(lower, upper)); then the group's warps
/// in order. No shared memory or barrier for G <= 32.
template <typename Acc, typename Op>
__device__ Acc groupReduce(Acc v, Acc *buf, int lane, int G, Op op) {
#pragma unroll
  for (int s = 1; s < 32; s <<= 1)
    if (s < G) { // (the same for the whole block)
      const Acc other = shuffleXor(v, s);
      v = (threadIdx.x & s) ? op(other, v) : op(v, other);
    }
  if (G <= 32)
    return v;
  const int warp = static_cast<int>(threadIdx.x >> 5);
  if ((threadIdx.x & 31) == 0)
    buf[warp] = v;
  __syncthreads();
  const int first = warp - (lane >> 5);
  Acc result = buf[first];
  for (int w = 1; w < (G >> 5); ++w)
    result = op(result, buf[first + w]);
  __syncthreads(); // buf is free for the next call
  return result;
}

/// Blocks of `kernel` (`threads` threads, no dynamic shared memory) that
/// the device holds at once: a grid of at most this many runs in one wave.
template <typename Kernel>
int64_t residentBlocks(Kernel kernel, int threads, const char *name) {
  int device = 0, sms = 0, perSm = 0;
  checkCuda(cudaGetDevice(&device), name, "cudaGetDevice");
  checkCuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount,
                                   device),
            name, "cudaDeviceGetAttribute");
  checkCuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel,
                                                          threads, 0),
            name, "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  return std::max<int64_t>(1, int64_t(sms) * perSm);
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
      int64_t r = r0 + lane;
      for (; r + 3 * G < r1; r += 4 * G) { // four loads in flight
        const Acc v0 = static_cast<Acc>(load.at(base, r));
        const Acc v1 = static_cast<Acc>(load.at(base, r + G));
        const Acc v2 = static_cast<Acc>(load.at(base, r + 2 * G));
        const Acc v3 = static_cast<Acc>(load.at(base, r + 3 * G));
        acc = op(op(op(op(acc, v0), v1), v2), v3);
      }
      for (; r < r1; r += G)
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

/// Warps per block of reduceColumnsKernel, and the blocks per SM its
/// registers must allow (ptxas left to itself held some instantiations to
/// 32 registers, for 8 blocks, and spilled).
constexpr int kColumnWarps = 8;
constexpr int kColumnBlocksPerSM = 6;

/// The reducer for consecutive outputs adjacent in memory (column sums such
/// as bias gradients, and the partial results of a split reduction): a
/// block of 32 x kColumnWarps threads covers 32 outputs, lane x output x,
/// so each warp reads 32 adjacent elements; warp y takes reduced elements
/// y, y + kColumnWarps, ... of the block row's chunk (four loads in
/// flight before their additions, which stay in order), and the warps'
/// results combine in warp order through shared memory. Partial results as
/// in reducePartialKernel.
template <typename Acc, typename Load, typename Op, typename Store>
__global__ void __launch_bounds__(32 * kColumnWarps, kColumnBlocksPerSM)
    reduceColumnsKernel(Load load, Op op, Acc init, Store store, int64_t outN,
                        int64_t redN, int64_t chunk, Acc *partial) {
  __shared__ Acc buf[kColumnWarps][32];
  constexpr int W = kColumnWarps;
  const int64_t r0 = static_cast<int64_t>(blockIdx.y) * chunk;
  const int64_t r1 = r0 + chunk < redN ? r0 + chunk : redN;
  const int64_t o = static_cast<int64_t>(blockIdx.x) * 32 + threadIdx.x;
  Acc acc = init;
  if (o < outN) {
    const int64_t base = load.base(o);
    int64_t r = r0 + threadIdx.y;
    for (; r + 3 * W < r1; r += 4 * W) { // four loads in flight
      const Acc v0 = static_cast<Acc>(load.at(base, r));
      const Acc v1 = static_cast<Acc>(load.at(base, r + W));
      const Acc v2 = static_cast<Acc>(load.at(base, r + 2 * W));
      const Acc v3 = static_cast<Acc>(load.at(base, r + 3 * W));
      acc = op(op(op(op(acc, v0), v1), v2), v3);
    }
    for (; r < r1; r += W)
      acc = op(acc, static_cast<Acc>(load.at(base, r)));
  }
  buf[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y != 0 || o >= outN)
    return;
  for (int w = 1; w < W; ++w)
    acc = op(acc, buf[w][threadIdx.x]);
  if (partial)
    partial[static_cast<int64_t>(blockIdx.y) * outN + o] = acc;
  else
    store(o, acc);
}

/// Reads the partial results [splits, outN] of a split reduction.
template <typename Acc> struct PartialLoad {
  const Acc *partial;
  int64_t outN;
  __device__ int64_t base(int64_t o) const { return o; }
  __device__ Acc at(int64_t o, int64_t split) const {
    return partial[split * outN + o];
  }
};

/// Reduces, for each of outN outputs, redN elements given by `load`, and
/// hands the result to `store`. `lanesContiguous` says consecutive reduced
/// elements are adjacent in memory (else consecutive outputs are: the
/// column reducer). The partial results of a split come from `scratch`
/// when given (a caller that holds buffers of its own in the workspace),
/// else from the start of the workspace.
template <typename Acc, typename Load, typename Op, typename Store>
void launchReduction(const char *kernel, const Load &load, Op op, Acc init,
                     const Store &store, int64_t outN, int64_t redN,
                     bool lanesContiguous, Scratch *scratch = nullptr) {
  if (outN == 0)
    return;
  Context &ctx = context(kernel);
  // Rows: a warp per output when there are outputs enough to fill the GPU
  // (shuffles only), else up to a block.
  const int log2G =
      lanesContiguous ? log2Lanes(redN, outN >= 4096 ? 32 : kThreads) : 0;
  const int G = 1 << log2G;
  // Outputs per block, and the reduced elements a block row should at
  // least cover (so that each thread has several loads to overlap).
  const int64_t outputsPerBlock = lanesContiguous ? kThreads / G : 32;
  const int64_t minChunk =
      lanesContiguous ? std::max<int64_t>(64, int64_t(G) * 16)
                      : int64_t(kColumnWarps) * 16;
  // (The column reducer needs a block per 32 outputs: grid.x goes to 2^31.)
  const int64_t blocksX = std::min<int64_t>(
      (outN + outputsPerBlock - 1) / outputsPerBlock,
      lanesContiguous ? 65535 : INT32_MAX);

  // Split the reduced range when the outputs alone leave the GPU idle: up
  // to one wave of blocks.
  const int64_t targetBlocks =
      lanesContiguous
          ? residentBlocks(&reducePartialKernel<Acc, Load, Op, Store>, kThreads,
                           kernel)
          : residentBlocks(&reduceColumnsKernel<Acc, Load, Op, Store>,
                           32 * kColumnWarps, kernel);
  int64_t splits = 1;
  Acc *partial = nullptr;
  if (blocksX < targetBlocks && redN >= 2 * minChunk) {
    splits = std::min<int64_t>(
        {targetBlocks / blocksX, redN / minChunk, 1024});
    Scratch own(kernel);
    Scratch &from = scratch ? *scratch : own;
    const size_t perSplit = static_cast<size_t>(outN) * sizeof(Acc);
    splits = std::min<int64_t>(
        splits, static_cast<int64_t>(from.available() / (perSplit + 256)));
    if (splits >= 2)
      partial = from.take<Acc>(static_cast<size_t>(splits * outN));
    else
      splits = 1;
  }
  const int64_t chunk = std::max<int64_t>((redN + splits - 1) / splits, 1);
  if (splits > 1)
    splits = (redN + chunk - 1) / chunk;

  const dim3 grid(static_cast<unsigned>(blocksX),
                  static_cast<unsigned>(splits));
  if (lanesContiguous)
    reducePartialKernel<Acc><<<grid, kThreads, 0, ctx.stream>>>(
        load, op, init, store, outN, redN, log2G, chunk, partial);
  else
    reduceColumnsKernel<Acc><<<grid, dim3(32, kColumnWarps), 0, ctx.stream>>>(
        load, op, init, store, outN, redN, chunk, partial);
  checkLaunch(kernel);
  if (partial) {
    // The partial results are a column reduction of their own.
    const int64_t finishBlocks = (outN + 31) / 32;
    reduceColumnsKernel<Acc>
        <<<dim3(static_cast<unsigned>(finishBlocks), 1), dim3(32, kColumnWarps),
           0, ctx.stream>>>(PartialLoad<Acc>{partial, outN}, op, init, store,
                            outN, splits, splits, static_cast<Acc *>(nullptr));
    checkLaunch(kernel);
  }
}

//===----------------------------------------------------------------------===//
// Vector accesses and rows held in registers
//===----------------------------------------------------------------------===//

/// V consecutive elements of T moved as one access (128 bits for 16 bytes).
template <typename T, int V> struct alignas(sizeof(T) * V) Vec { T e[V]; };

/// Whether p is aligned for Vec<T, V> accesses.
template <typename T, int V> inline bool vecAligned(const void *p) {
  return reinterpret_cast<uintptr_t>(p) % (sizeof(T) * V) == 0;
}

/// The V elements at p (aligned), widened to the compute type.
template <int V, typename T>
__device__ inline void loadVec(const T *p, ComputeType<T> (&v)[V]) {
  const Vec<T, V> pk = *reinterpret_cast<const Vec<T, V> *>(p);
#pragma unroll
  for (int e = 0; e < V; ++e)
    v[e] = toCompute(pk.e[e]);
}

/// Stores v at p (aligned), each element rounded to T.
template <int V, typename T>
__device__ inline void storeVec(T *p, const ComputeType<T> (&v)[V]) {
  Vec<T, V> pk;
#pragma unroll
  for (int e = 0; e < V; ++e)
    pk.e[e] = fromCompute<T>(v[e]);
  *reinterpret_cast<Vec<T, V> *>(p) = pk;
}

/// Elements per vector of the register-resident row kernels (LayerNorm and
/// its backward): 16 bytes of fp32 data, 8 of 16-bit data.
constexpr int kRowVec = 4;
/// Threads per block of the row kernels: few warps, so that blocks of
/// register-heavy groups still fill an SM (measured on an H200: 128 and
/// 256 run alike where both fit).
constexpr int kRowThreads = 128;

/// How rows of n elements spread over a block of the row kernels: groups of
/// `lanes` lanes (a power of two up to 32, or a multiple of 32), one row per
/// group at a time; lane l holds vectors l, l + lanes, ... of the row, at
/// most `per` (a template argument: 1, 2, 3, 4, 6 or 8, up to the kernel's
/// maxPer, beyond which its registers would spill) of them; a block of
/// kRowThreads threads holds `groups` groups. Narrow groups (up to
/// `maxLanes`) keep more rows in flight and reduce with shuffles alone;
/// wider ones are tried for longer rows. ok is false when n is not a
/// multiple of kRowVec or the row exceeds kRowThreads * maxPer vectors (the
/// generic kernels take those).
struct RowPlan {
  bool ok = false;
  int per = 0, lanes = 0, groups = 0;
  int threads() const { return lanes * groups; }
};
inline RowPlan planRows(int64_t n, int maxLanes, int maxPer) {
  RowPlan p;
  if (n <= 0 || n % kRowVec != 0)
    return p;
  const int64_t vectors = n / kRowVec;
  for (int most = maxLanes; most <= kRowThreads; most *= 2)
    for (int per : {1, 2, 3, 4, 6, 8}) {
      const int64_t need = (vectors + per - 1) / per;
      if (per > maxPer || need > most)
        continue;
      int lanes = 1;
      if (need <= 32)
        while (lanes < need)
          lanes *= 2;
      else
        lanes = static_cast<int>((need + 31) / 32 * 32);
      p.ok = true;
      p.per = per;
      p.lanes = lanes;
      p.groups = std::max(1, kRowThreads / lanes);
      return p;
    }
  return p;
}

/// Calls f(std::integral_constant<int, per>{}) for a RowPlan's per (at
/// most MaxPer: larger ones are not instantiated).
template <int MaxPer, typename F> void dispatchPer(int per, F &&f) {
  switch (per) {
  case 1: f(std::integral_constant<int, 1>{}); break;
  case 2: f(std::integral_constant<int, 2>{}); break;
  case 3: f(std::integral_constant<int, 3>{}); break;
  case 4: f(std::integral_constant<int, 4>{}); break;
  case 6:
    if constexpr (MaxPer >= 6)
      f(std::integral_constant<int, 6>{});
    break;
  default:
    if constexpr (MaxPer >= 8)
      f(std::integral_constant<int, 8>{});
    break;
  }
}

/// Rows per block of a row kernel whose groups take `groups` rows at a
/// time: enough that `maxBlocks` blocks cover the rows, a multiple of
/// `groups` so that only the last block has idle groups.
inline int64_t rowsPerBlock(int64_t rows, int groups, int64_t maxBlocks) {
  const int64_t blocks = std::max<int64_t>(
      1, std::min(maxBlocks, (rows + groups - 1) / groups));
  const int64_t per = (rows + blocks - 1) / blocks;
  return (per + groups - 1) / groups * groups;
}

/// Lane `lane` of a group of L lanes loads its vectors of a row of nVec
/// vectors (zeros where it has none).
template <int PER, typename T>
__device__ inline void loadRowVectors(const T *row, int lane, int L, int nVec,
                                      float (&v)[PER][kRowVec]) {
#pragma unroll
  for (int k = 0; k < PER; ++k) {
    const int j = lane + k * L;
    if (j < nVec) {
      loadVec<kRowVec>(row + static_cast<int64_t>(j) * kRowVec, v[k]);
    } else {
#pragma unroll
      for (int e = 0; e < kRowVec; ++e)
        v[k][e] = 0.0f;
    }
  }
}

} // namespace remat::rt::cuda::detail

#endif // REMAT_RUNTIME_CUDA_REDUCTION_CUH
