//===- Dropout.cpp - Dropout with a counter-based RNG ---------------------===//
//
// Element i's uniform is word i % 4 of Philox(counter = (i / 4, step),
// key = seed ^ splitMix64(streamId)): a pure function of
// (seed, streamId, step, i), so recomputing the op reproduces its mask. The
// generator and the keep test are shared with the CUDA backend
// (remat/runtime/Philox.h), which draws the same masks.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/Kernels.h"
#include "remat/runtime/Philox.h"

#include "DTypeDispatch.h"
#include "common/DropoutChecks.h"

#include <algorithm>
#include <cstring>

namespace remat::rt {
using namespace cpu;

void dropout(const TensorView &x, const TensorView &y, const TensorView &mask,
             double ratio, uint64_t seed, uint64_t streamId, uint64_t step) {
  const char *kernel = "dropout";
  checkDropout(kernel, x, y, mask, ratio);
  const int64_t n = x.numel();
  uint8_t *pm = mask.empty() ? nullptr : mask.as<uint8_t>();

  if (ratio == 0) {
    copy(x, y);
    if (pm)
      std::fill(pm, pm + n, uint8_t(1));
    return;
  }

  const PhiloxKey key = dropoutKey(seed, streamId);
  const double keepProb = 1.0 - ratio;
  const uint64_t threshold = dropoutThreshold(keepProb);
  dispatchFloatStorage(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C scale = ratio < 1 ? static_cast<C>(1.0 / keepProb) : C(0);
    const T *px = x.as<const T>();
    T *py = y.as<T>();
    for (int64_t block = 0; block * 4 < n; ++block) {
      const PhiloxCounter bits =
          dropoutBits(key, static_cast<uint64_t>(block), step);
      for (int64_t j = 0, i = block * 4; j < 4 && i < n; ++j, ++i) {
        // bits * 2^-32 < keepProb, as the integer test the CUDA kernel uses.
        const bool keep = dropoutKeeps(bits[static_cast<int>(j)], threshold);
        py[i] = fromCompute<T>(keep ? toCompute(px[i]) * scale : C(0));
        if (pm)
          pm[i] = keep;
      }
    }
  });
}

} // namespace remat::rt
