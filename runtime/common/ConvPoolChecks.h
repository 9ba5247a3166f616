//===- ConvPoolChecks.h - Convolution / pooling operand checks ---*- C++ -*-===//
//
// The operand checks of conv, pooling and their backward, shared by both
// backends so that they accept the same arguments with the same messages.
// The conv and pool checks end in makeWindow and return the geometry.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_COMMON_CONVPOOLCHECKS_H
#define REMAT_RUNTIME_COMMON_CONVPOOLCHECKS_H

#include "common/Window.h"

namespace remat::rt::common {

/// conv: x [N, C, s...], w [M, C/group, k...], optional bias [M], y
/// [N, M, s...].
Window3 checkConv(const char *kernel, const TensorView &x, const TensorView &w,
                  const TensorView &bias, const TensorView &y,
                  const WindowParams &params, int64_t group);

/// Conv backward: x-like [N, C, ...], w [M, C/group, k...], y-like
/// [N, M, ...] (the gradient dy).
Window3 checkConvGrad(const char *kernel, const TensorView &x,
                      const TensorView &w, const TensorView &y,
                      const WindowParams &params, int64_t group);

/// Pooling forward: x and y [N, C, spatial...] of one dtype.
void checkPoolShapes(const char *kernel, const TensorView &x,
                     const TensorView &y);

/// maxPool: checkPoolShapes, optional I64 indices shaped as y, and the window.
Window3 checkMaxPool(const char *kernel, const TensorView &x,
                     const TensorView &y, const TensorView &indices,
                     const WindowParams &params);

/// Pooling backward: dy and dx [N, C, spatial...] of one dtype.
void checkPoolGrad(const char *kernel, const TensorView &dy,
                   const TensorView &dx);

/// maxPoolBackward: checkPoolGrad, I64 indices shaped as dy, and the
/// forward's window.
Window3 checkMaxPoolBackward(const char *kernel, const TensorView &dy,
                             const TensorView &indices, const TensorView &dx,
                             const WindowParams &params);

} // namespace remat::rt::common

#endif // REMAT_RUNTIME_COMMON_CONVPOOLCHECKS_H
