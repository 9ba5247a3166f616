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

} // namespace remat::rt::cuda::detail

#endif // REMAT_RUNTIME_CUDA_PACK_CUH
