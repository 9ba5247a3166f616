//===- HarnessRandom.h - Reproducible random numbers for the harness -*- C++ -*-===//
//
// Synthetic batches and --random-weights must be the same on every machine
// and standard library, so that two runs (CPU and CUDA builds, two
// compilers) see the same data. std::normal_distribution is
// implementation-defined, so the harness uses SplitMix64 and Box-Muller.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_HARNESS_HARNESSRANDOM_H
#define REMAT_RUNTIME_HARNESS_HARNESSRANDOM_H

#include <cmath>
#include <cstdint>
#include <string>

namespace remat::rt::harness {

/// The harness's fixed seed; every stream derives from it and a name.
constexpr uint64_t kHarnessSeed = 0x5EED'2E3A'7000'0001ULL;

/// SplitMix64 (Steele, Lea, Flood 2014): tiny, fast, well mixed.
class Random {
public:
  explicit Random(uint64_t seed) : state_(seed) {}

  /// A stream keyed by a name (a tensor's), independent of the order in
  /// which tensors are visited. FNV-1a of the name, mixed with the seed.
  static Random forName(const std::string &name, uint64_t seed = kHarnessSeed) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (unsigned char c : name)
      h = (h ^ c) * 0x100000001b3ULL;
    return Random(seed ^ h);
  }

  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

  /// Uniform in (0, 1]: never 0, so log() below is finite.
  double uniformOpen() { return ((next() >> 11) + 1) * 0x1.0p-53; }

  /// Uniform integer in [0, bound), bound > 0 (modulo bias is negligible
  /// for the bounds used here: vocabulary sizes, class counts).
  uint64_t below(uint64_t bound) { return next() % bound; }

  /// Standard normal, Box-Muller (one value per call; the pair's second
  /// half is dropped to keep the stream position simple).
  double normal() {
    const double r = std::sqrt(-2.0 * std::log(uniformOpen()));
    return r * std::cos(2.0 * M_PI * uniformOpen());
  }

private:
  uint64_t state_;
};

} // namespace remat::rt::harness

#endif // REMAT_RUNTIME_HARNESS_HARNESSRANDOM_H
