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

/// Checks a slice of `whole` with `part`'s shape (starts already clamped,
/// steps non-zero) and returns the strides of `whole` that walk it, with
/// `base` the element offset of its first element. `verb` ("reads",
/// "writes") and `what` name the operands in messages.
inline Strides sliceStrides(const char *kernel, const Shape &whole,
                            const Shape &part,
                            const std::vector<int64_t> &starts,
                            const std::vector<int64_t> &steps, const char *verb,
                            const char *what, int64_t &base) {
  const size_t rank = whole.size();
  require(starts.size() == rank && steps.size() == rank && part.size() == rank,
          kernel, what);
  const Strides ws = contiguousStrides(whole);
  Strides strides(rank);
  base = 0;
  for (size_t d = 0; d < rank; ++d) {
    require(steps[d] != 0, kernel, "step is zero");
    if (part[d] > 0) { // first and last element must be inside `whole`
      const int64_t last = starts[d] + (part[d] - 1) * steps[d];
      if (starts[d] < 0 || starts[d] >= whole[d] || last < 0 ||
          last >= whole[d])
        fail(kernel, "dim " + std::to_string(d) + " " + verb + " outside " +
                         shapeToString(whole));
    }
    base += starts[d] * ws[d];
    strides[d] = steps[d] * ws[d];
  }
  return strides;
}

} // namespace remat::rt::cuda::detail

#endif // REMAT_RUNTIME_CUDA_DATAMOVEMENT_CUH
