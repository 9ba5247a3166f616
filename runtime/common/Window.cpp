//===- Window.cpp - Convolution / pooling window geometry -----------------===//

#include "common/Window.h"

#include "common/Check.h"

namespace remat::rt::common {

Window3 makeWindow(const char *kernelName, const TensorView &x,
                   const TensorView &y, const WindowParams &p,
                   const Dims &kernel) {
  const int64_t k = x.rank() - 2;
  require(k >= 1 && k <= kDims, kernelName,
          "expects 1 to 3 spatial dims (input rank 3 to 5)");
  require(y.rank() == x.rank(), kernelName, "output rank differs from input");
  require(static_cast<int64_t>(kernel.size()) == k, kernelName,
          "kernel shape has the wrong rank");
  require(p.strides.empty() || static_cast<int64_t>(p.strides.size()) == k,
          kernelName, "strides have the wrong length");
  require(p.dilations.empty() ||
              static_cast<int64_t>(p.dilations.size()) == k,
          kernelName, "dilations have the wrong length");
  require(p.pads.empty() || static_cast<int64_t>(p.pads.size()) == 2 * k,
          kernelName, "pads must hold begin and end values per spatial dim");
  Window3 w;
  for (int d = 0; d < kDims; ++d) {
    const int64_t lead = kDims - k; // unit dims fill the front
    const int64_t i = d - lead;
    const bool real = i >= 0;
    w.in[d] = real ? x.shape[2 + i] : 1;
    w.out[d] = real ? y.shape[2 + i] : 1;
    w.kernel[d] = real ? kernel[i] : 1;
    w.stride[d] = real && !p.strides.empty() ? p.strides[i] : 1;
    w.dilation[d] = real && !p.dilations.empty() ? p.dilations[i] : 1;
    w.padBegin[d] = real && !p.pads.empty() ? p.pads[i] : 0;
    w.padEnd[d] = real && !p.pads.empty() ? p.pads[k + i] : 0;
    require(w.stride[d] >= 1 && w.dilation[d] >= 1 && w.kernel[d] >= 1,
            kernelName, "kernel, strides and dilations must be positive");
  }
  return w;
}

} // namespace remat::rt::common
