//===- Philox.h - Philox-4x32-10 counter-based RNG ---------------*- C++
//-*-===//
//
// Salmon et al., "Parallel random numbers: as easy as 1, 2, 3" (SC'11), the
// generator of Random123, cuRAND and JAX. Being a pure function of (counter,
// key), it lets dropout regenerate any element's mask without state, which is
// what rematerialisation of dropout needs.
//
// Shared by the CPU and CUDA backends (hence public and usable from device
// code): both must draw bitwise the same mask for the same (seed, stream,
// step, index), so the generator, the key derivation and the keep decision
// live here once.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_PHILOX_H
#define REMAT_RUNTIME_PHILOX_H

#include "remat/runtime/HostDevice.h"

#include <cstdint>

namespace remat::rt {

/// Four 32-bit words (the counter, and the generator's output). An aggregate,
/// so `PhiloxCounter{a, b, c, d}` works; not std::array, which device code
/// cannot index.
struct PhiloxCounter {
  uint32_t word[4];
  REMAT_HOST_DEVICE uint32_t &operator[](int i) { return word[i]; }
  REMAT_HOST_DEVICE uint32_t operator[](int i) const { return word[i]; }
  friend bool operator==(const PhiloxCounter &a, const PhiloxCounter &b) {
    return a.word[0] == b.word[0] && a.word[1] == b.word[1] &&
           a.word[2] == b.word[2] && a.word[3] == b.word[3];
  }
  friend bool operator!=(const PhiloxCounter &a, const PhiloxCounter &b) {
    return !(a == b);
  }
};

struct PhiloxKey {
  uint32_t word[2];
  REMAT_HOST_DEVICE uint32_t &operator[](int i) { return word[i]; }
  REMAT_HOST_DEVICE uint32_t operator[](int i) const { return word[i]; }
};

/// Philox-4x32 with 10 rounds (matches the Random123 known-answer vectors).
REMAT_HOST_DEVICE inline PhiloxCounter philox4x32_10(PhiloxCounter ctr,
                                                     PhiloxKey key) {
  constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key[0] += kWeyl0;
      key[1] += kWeyl1;
    }
    const uint64_t p0 = uint64_t(kMul0) * ctr[0];
    const uint64_t p1 = uint64_t(kMul1) * ctr[2];
    ctr = {{uint32_t(p1 >> 32) ^ ctr[1] ^ key[0], uint32_t(p1),
            uint32_t(p0 >> 32) ^ ctr[3] ^ key[1], uint32_t(p0)}};
  }
  return ctr;
}

/// SplitMix64 finaliser: spreads a stream id over all 64 key bits so that
/// nearby (seed, stream) pairs give unrelated keys.
REMAT_HOST_DEVICE inline uint64_t splitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

//===----------------------------------------------------------------------===//
// Dropout's use of the generator. Element i's 32 random bits are word i % 4
// of philox4x32_10(counter = (i / 4, step), key = dropoutKey(seed, stream)).
//===----------------------------------------------------------------------===//

REMAT_HOST_DEVICE inline PhiloxKey dropoutKey(uint64_t seed,
                                              uint64_t streamId) {
  const uint64_t key64 = seed ^ splitMix64(streamId);
  return {{uint32_t(key64), uint32_t(key64 >> 32)}};
}

REMAT_HOST_DEVICE inline PhiloxCounter
dropoutBits(PhiloxKey key, uint64_t block, uint64_t step) {
  return philox4x32_10({{uint32_t(block), uint32_t(block >> 32), uint32_t(step),
                         uint32_t(step >> 32)}},
                       key);
}

/// The keep test "bits * 2^-32 < keepProb" as an integer comparison: with
/// r = keepProb * 2^32 (exact in double), an integer b satisfies b < r iff
/// b < ceil(r). Computed once on the host, so the CPU and the GPU compare
/// the same integers. keepProb in [0, 1]; the result is in [0, 2^32].
inline uint64_t dropoutThreshold(double keepProb) {
  const double scaled = keepProb * 4294967296.0; // 2^32
  uint64_t threshold = static_cast<uint64_t>(scaled);
  if (static_cast<double>(threshold) < scaled)
    ++threshold; // ceil without <cmath>
  return threshold;
}

REMAT_HOST_DEVICE inline bool dropoutKeeps(uint32_t bits, uint64_t threshold) {
  return static_cast<uint64_t>(bits) < threshold;
}

} // namespace remat::rt

#endif // REMAT_RUNTIME_PHILOX_H
