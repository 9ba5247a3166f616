//===- Pack.cuh - 16-byte packs for elementwise loads and stores -*- CUDA -*-===//
//
// An elementwise kernel over contiguous operands moves 16 bytes per thread
// access when it reads and writes them as packs (one 128-bit load or store
// instruction), against 2 or 4 bytes per instruction element by element:
// fewer memory instructions per byte for the same bandwidth, which 16-bit
// types need most. A pack is aligned to 16 bytes, so the host checks every
// pointer's alignment before choosing the packed kernel (views into the
// arena are aligned; an offset slice may not be).
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_CUDA_PACK_CUH
#define REMAT_RUNTIME_CUDA_PACK_CUH

#include "Common.cuh"

#include <algorithm>
#include <cstdint>
#include <initializer_list>

namespace remat::rt::cuda::detail {

/// 16 bytes of T (T's size divides 16), loaded and stored as one access.
template <typename T> struct alignas(16) Pack {
  static_assert(16 % sizeof(T) == 0, "T's size must divide 16 bytes");
  static constexpr int kSize = 16 / sizeof(T);
  T v[kSize];
};

/// Whether every pointer may be read or written as packs.
inline bool packAligned(std::initializer_list<const void *> pointers) {
  for (const void *p : pointers)
    if (reinterpret_cast<uintptr_t>(p) % 16 != 0)
      return false;
  return true;
}

/// The grid of a packed kernel over n elements of T: one thread per pack,
/// at least one block (whose first threads take the tail).
template <typename T> unsigned packedGrid(int64_t n) {
  return gridFor(std::max<int64_t>(n / Pack<T>::kSize, 1));
}

/// y[i] = f(x[i]) for i < n, x and y packAligned (y may be x): a
/// grid-stride loop over packs, then the last n % kSize elements one per
/// thread of block 0 (launch at least one block of kSize threads).
template <typename T, typename F>
__device__ inline void mapPacks(const T *x, T *y, int64_t n, F f) {
  using P = Pack<T>;
  const int64_t packs = n / P::kSize;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < packs;
       i += int64_t(gridDim.x) * blockDim.x) {
    const P in = reinterpret_cast<const P *>(x)[i];
    P out;
#pragma unroll
    for (int k = 0; k < P::kSize; ++k)
      out.v[k] = f(in.v[k]);
    reinterpret_cast<P *>(y)[i] = out;
  }
  const int64_t tail = packs * P::kSize + threadIdx.x;
  if (blockIdx.x == 0 && tail < n)
    y[tail] = f(x[tail]);
}

/// out[i] = f(a[i], b[i]) likewise (out may be a or b).
template <typename T, typename F>
__device__ inline void mapPacks(const T *a, const T *b, T *out, int64_t n,
                                F f) {
  using P = Pack<T>;
  const int64_t packs = n / P::kSize;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < packs;
       i += int64_t(gridDim.x) * blockDim.x) {
    const P x = reinterpret_cast<const P *>(a)[i];
    const P y = reinterpret_cast<const P *>(b)[i];
    P r;
#pragma unroll
    for (int k = 0; k < P::kSize; ++k)
      r.v[k] = f(x.v[k], y.v[k]);
    reinterpret_cast<P *>(out)[i] = r;
  }
  const int64_t tail = packs * P::kSize + threadIdx.x;
  if (blockIdx.x == 0 && tail < n)
    out[tail] = f(a[tail], b[tail]);
}

} // namespace remat::rt::cuda::detail

#endif // REMAT_RUNTIME_CUDA_PACK_CUH
