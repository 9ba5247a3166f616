//===- Philox.h - Philox-4x32-10 counter-based RNG ---------------*- C++ -*-===//
//
// Salmon et al., "Parallel random numbers: as easy as 1, 2, 3" (SC'11), the
// generator of Random123, cuRAND and JAX. Being a pure function of (counter,
// key), it lets dropout regenerate any element's mask without state, which is
// what rematerialisation of dropout needs.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_CPU_PHILOX_H
#define REMAT_RUNTIME_CPU_PHILOX_H

#include <array>
#include <cstdint>

namespace remat::rt::cpu {

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

/// Philox-4x32 with 10 rounds (matches the Random123 known-answer vectors).
inline PhiloxCounter philox4x32_10(PhiloxCounter ctr, PhiloxKey key) {
  constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key[0] += kWeyl0;
      key[1] += kWeyl1;
    }
    const uint64_t p0 = uint64_t(kMul0) * ctr[0];
    const uint64_t p1 = uint64_t(kMul1) * ctr[2];
    ctr = {uint32_t(p1 >> 32) ^ ctr[1] ^ key[0], uint32_t(p1),
           uint32_t(p0 >> 32) ^ ctr[3] ^ key[1], uint32_t(p0)};
  }
  return ctr;
}

/// SplitMix64 finaliser: spreads a stream id over all 64 key bits so that
/// nearby (seed, stream) pairs give unrelated keys.
inline uint64_t splitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

} // namespace remat::rt::cpu

#endif // REMAT_RUNTIME_CPU_PHILOX_H
