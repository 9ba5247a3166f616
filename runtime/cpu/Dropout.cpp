//===- Dropout.cpp - Dropout with a counter-based RNG ---------------------===//
//
// Element i's uniform is word i % 4 of Philox(counter = (i / 4, step),
// key = seed ^ splitMix64(streamId)): a pure function of
// (seed, streamId, step, i), so recomputing the op reproduces its mask.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/Kernels.h"

#include "DTypeDispatch.h"
#include "Philox.h"

#include <algorithm>
#include <cstring>

namespace remat::rt {
using namespace cpu;

void dropout(const TensorView &x, const TensorView &y, const TensorView &mask,
             double ratio, uint64_t seed, uint64_t streamId, uint64_t step) {
  const char *kernel = "dropout";
  requireDType(y, x.dtype, kernel, "output");
  requireNumel(y, x.numel(), kernel, "output");
  if (!mask.empty()) {
    requireDType(mask, DType::Bool, kernel, "mask");
    requireNumel(mask, x.numel(), kernel, "mask");
  }
  require(ratio >= 0 && ratio <= 1, kernel, "ratio must be in [0, 1]");
  const int64_t n = x.numel();
  uint8_t *pm = mask.empty() ? nullptr : mask.as<uint8_t>();

  if (ratio == 0) {
    copy(x, y);
    if (pm)
      std::fill(pm, pm + n, uint8_t(1));
    return;
  }

  const uint64_t key64 = seed ^ splitMix64(streamId);
  const PhiloxKey key = {uint32_t(key64), uint32_t(key64 >> 32)};
  const double keepProb = 1.0 - ratio;
  dispatchFloat(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T scale = ratio < 1 ? static_cast<T>(1.0 / keepProb) : T(0);
    const T *px = x.as<const T>();
    T *py = y.as<T>();
    for (int64_t block = 0; block * 4 < n; ++block) {
      const uint64_t b = static_cast<uint64_t>(block);
      const PhiloxCounter bits = philox4x32_10(
          {uint32_t(b), uint32_t(b >> 32), uint32_t(step), uint32_t(step >> 32)},
          key);
      for (int64_t j = 0, i = block * 4; j < 4 && i < n; ++j, ++i) {
        // uniform in [0, 1) with 32 random bits; exact in double.
        const bool keep = static_cast<double>(bits[j]) * 0x1p-32 < keepProb;
        py[i] = keep ? px[i] * scale : T(0);
        if (pm)
          pm[i] = keep;
      }
    }
  });
}

} // namespace remat::rt
