//===- ConvCommon.cuh - im2col on the device, scratch chunking --*- CUDA
//-*-===//
//
// Shared by the convolution forward (ConvPool.cu) and backward
// (ConvPoolGrad.cu). Columns are laid out per image as [C * kernel, out...]
// (row (c, kd, kh, kw) holds what each output position sees through that
// tap, 0 in padding), so group g's K x P block starts at g * K * P, as the
// CPU's im2col writes it.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_CUDA_CONVCOMMON_CUH
#define REMAT_RUNTIME_CUDA_CONVCOMMON_CUH

#include "Common.cuh"
#include "Window.cuh"

namespace remat::rt::cuda::detail {

/// Column entry e of col [images, C * kernel, out...] unrolled from x
/// [images, C, in...]: the input value that output position p sees through
/// tap (c, kd, kh, kw), or 0 in padding.
template <typename T>
__host__ __device__ inline T im2colAt(const T *x, int64_t e, const Window3 &w) {
  const int64_t P = w.outSize(), taps = w.kernelSize();
  const int64_t p = e % P;
  int64_t t = e / P;
  const int64_t tap = t % taps;
  t /= taps; // image * C + c
  const int64_t kw = tap % w.kernel[2];
  const int64_t kh = (tap / w.kernel[2]) % w.kernel[1];
  const int64_t kd = tap / (w.kernel[2] * w.kernel[1]);
  const int64_t ow = p % w.out[2];
  const int64_t oh = (p / w.out[2]) % w.out[1];
  const int64_t od = p / (w.out[2] * w.out[1]);
  const int64_t id = w.inputIndex(0, od, kd);
  const int64_t ih = w.inputIndex(1, oh, kh);
  const int64_t iw = w.inputIndex(2, ow, kw);
  const bool inside = id >= 0 && id < w.in[0] && ih >= 0 && ih < w.in[1] &&
                      iw >= 0 && iw < w.in[2];
  return inside ? x[t * w.inSize() + (id * w.in[1] + ih) * w.in[2] + iw]
                : T{}; // zero bits: +0 in every float format
}

/// The adjoint for element e of dx [images, C, in...]: the sum, in T's
/// compute type and in col order (taps ascending, as the CPU's col2im adds
/// them), of the col entries im2col copied from that input position (at
/// most the kernel's taps: a short sum).
template <typename T>
__host__ __device__ inline ComputeType<T> col2imAt(const T *col, int64_t e,
                                                   const Window3 &w) {
  const int64_t P = w.outSize(), taps = w.kernelSize();
  const Position3 i = unravel3(e, w.in); // i.plane = image * C + c
  const T *rows = col + i.plane * taps * P;
  ComputeType<T> acc = 0;
  for (int64_t kd = 0; kd < w.kernel[0]; ++kd) {
    const int64_t od = w.outputFor(0, i.d, kd);
    if (od < 0)
      continue;
    for (int64_t kh = 0; kh < w.kernel[1]; ++kh) {
      const int64_t oh = w.outputFor(1, i.h, kh);
      if (oh < 0)
        continue;
      for (int64_t kw = 0; kw < w.kernel[2]; ++kw) {
        const int64_t ow = w.outputFor(2, i.w, kw);
        if (ow < 0)
          continue;
        const int64_t tap = (kd * w.kernel[1] + kh) * w.kernel[2] + kw;
        acc += toCompute(rows[tap * P + (od * w.out[1] + oh) * w.out[2] + ow]);
      }
    }
  }
  return acc;
}

/// Unrolls `images` consecutive images of x [images, C, in...] into col
/// [images, C * kernel, out...].
template <typename T>
__global__ void im2colKernel(const T *x, T *col, int64_t total, Window3 w) {
  REMAT_GRID_STRIDE_LOOP(e, total) { col[e] = im2colAt(x, e, w); }
}

template <typename T>
void launchIm2col(const char *kernel, const T *x, T *col, int64_t images,
                  int64_t channels, const Window3 &w) {
  const int64_t total = images * channels * w.kernelSize() * w.outSize();
  if (total == 0)
    return;
  im2colKernel<T><<<gridFor(total), kThreads, 0, context(kernel).stream>>>(
      x, col, total, w);
  checkLaunch(kernel);
}

/// How many images' columns (colPerImage elements each) fit in the scratch,
/// at most maxImages; throws naming the bytes one image needs if none fits.
template <typename T>
int64_t imagesPerChunk(const Scratch &scratch, int64_t colPerImage,
                       int64_t maxImages, const char *kernel) {
  const size_t perImage = static_cast<size_t>(colPerImage) * sizeof(T);
  if (perImage == 0 || maxImages == 0)
    return std::max<int64_t>(maxImages, 1);
  int64_t count = std::min<int64_t>(
      maxImages, static_cast<int64_t>(scratch.available() / perImage));
  while (count > 0 && Scratch::alignUp(static_cast<size_t>(count) * perImage) >
                          scratch.available())
    --count;
  if (count == 0)
    fail(kernel, "needs " + std::to_string(Scratch::alignUp(perImage)) +
                     " bytes of workspace scratch for one image's im2col "
                     "columns, but only " +
                     std::to_string(scratch.available()) +
                     " are available (reserve a larger workspace)");
  return count;
}

} // namespace remat::rt::cuda::detail

#endif // REMAT_RUNTIME_CUDA_CONVCOMMON_CUH
