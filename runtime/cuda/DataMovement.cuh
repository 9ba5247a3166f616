//===- DataMovement.cuh - Copies shared by data movement kernels -*- CUDA
//-*-===//
//
// Strided element copies and pitched row copies, used by the forward data
// movement kernels (DataMovement.cu) and their backward (DataMovementGrad.cu).
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_CUDA_DATAMOVEMENT_CUH
#define REMAT_RUNTIME_CUDA_DATAMOVEMENT_CUH

#include "Common.cuh"
#include "Indexing.cuh"

#include "common/DataMovementChecks.h"

namespace remat::rt::cuda::detail {

/// y (contiguous, y.shape) = x read at `base + sum(i_d * xStrides[d])`
/// elements; any dtype.
void stridedCopy(const char *kernel, const TensorView &x, int64_t base,
                 const Strides &xStrides, const TensorView &y);

/// Copies `rows` rows of `width` bytes between pitched buffers.
void copyRows(const char *kernel, const void *src, int64_t srcPitch, void *dst,
              int64_t dstPitch, int64_t width, int64_t rows);

/// The widest copy unit (16, 8, 4, 2 or 1 bytes) dividing `bits` (sizes
/// and addresses or-ed together).
size_t copyUnit(uintptr_t bits);

/// Calls f(Tag<U>{}) with U the type of a copy unit of `unit` bytes (as
/// copyUnit gives: 16, 8, 4, 2, else 1).
template <typename F> void dispatchCopyUnit(size_t unit, F &&f) {
  switch (unit) {
  case 16: f(Tag<uint4>{}); break;
  case 8: f(Tag<uint64_t>{}); break;
  case 4: f(Tag<uint32_t>{}); break;
  case 2: f(Tag<uint16_t>{}); break;
  default: f(Tag<uint8_t>{}); break;
  }
}

} // namespace remat::rt::cuda::detail

#endif // REMAT_RUNTIME_CUDA_DATAMOVEMENT_CUH
