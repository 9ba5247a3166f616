//===- DropoutChecks.h - Dropout operand checks ------------------*- C++ -*-===//
//
// Shared by both backends so that dropout accepts the same arguments with
// the same messages (the mask itself comes from Philox.h, also shared).
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_COMMON_DROPOUTCHECKS_H
#define REMAT_RUNTIME_COMMON_DROPOUTCHECKS_H

#include "common/Check.h"

namespace remat::rt::common {

/// y like x in dtype and size, an optional Bool mask of x's size, ratio in
/// [0, 1].
inline void checkDropout(const char *kernel, const TensorView &x,
                         const TensorView &y, const TensorView &mask,
                         double ratio) {
  requireDType(y, x.dtype, kernel, "output");
  requireNumel(y, x.numel(), kernel, "output");
  if (!mask.empty()) {
    requireDType(mask, DType::Bool, kernel, "mask");
    requireNumel(mask, x.numel(), kernel, "mask");
  }
  require(ratio >= 0 && ratio <= 1, kernel, "ratio must be in [0, 1]");
}

} // namespace remat::rt::common

#endif // REMAT_RUNTIME_COMMON_DROPOUTCHECKS_H
