//===- LossScalingTest.cpp - CUDA loss scaling against the CPU ------------===//
//
// The overflow check and the scale update compute what the CPU kernels
// compute (tests/unit/runtime/LossScalingTest.cpp checks those against
// their meaning), bitwise. The fp32 updates compute in fp32 on CUDA (not
// the CPU's double): their unscale and skip are checked against the CUDA
// update of the unscaled gradient.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtil.h"

#include <limits>

using namespace remat::rt;
using namespace remat::rt::cudatest;
namespace rt = remat::rt;

namespace {

class CudaLossScaling : public CudaTest {};

Tensor scalar(DType dtype, double value) {
  Tensor t(dtype, {});
  Tensor wide(DType::F64, {});
  wide.as<double>()[0] = value;
  rt::cast(wide.view(), t.view());
  return t;
}

TEST_F(CudaLossScaling, AnyNonFiniteIsTheCpus) {
  const double inf = std::numeric_limits<double>::infinity();
  unsigned seed = 1;
  for (DType dtype : {DType::F32, DType::F64, DType::F16, DType::BF16})
    for (double bad : {0.0, inf, -inf, std::numeric_limits<double>::quiet_NaN()})
      for (bool foundBefore : {false, true}) {
        Tensor x = randomTensor(dtype, {1000, 7}, ++seed);
        if (bad != 0.0) {
          Tensor one = scalar(dtype, bad);
          std::memcpy(static_cast<char *>(x.data()) + 4321 * dtypeSize(dtype),
                      one.data(), dtypeSize(dtype));
        }
        Tensor in = scalar(DType::Bool, foundBefore), expected(DType::Bool, {});
        rt::anyNonFinite(x.view(), in.view(), expected.view());
        DeviceTensor dx(x), din(in), dout(in);
        cuda::anyNonFinite(dx.view(), din.view(), dout.view());
        expectSame(dout.host(), expected,
                   std::string(dtypeName(dtype)) + " " + std::to_string(bad));
        // In place, as the chain in a training step may be planned.
        cuda::anyNonFinite(dx.view(), din.view(), din.view());
        expectSame(din.host(), expected, "in place");
      }
}

TEST_F(CudaLossScaling, ScaleUpdateIsTheCpus) {
  const float big = std::numeric_limits<float>::max() / 1.5f;
  for (float scale : {65536.0f, 1.0f, big})
    for (int32_t tracker : {0, 1, 6})
      for (bool found : {false, true}) {
        Tensor s = scalar(DType::F32, scale), t = scalar(DType::I32, tracker);
        Tensor f = scalar(DType::Bool, found);
        Tensor sOut(DType::F32, {}), tOut(DType::I32, {});
        rt::lossScaleUpdate(s.view(), t.view(), f.view(), sOut.view(),
                            tOut.view(), 2.0, 0.5, 7);
        DeviceTensor ds(s), dt(t), df(f);
        cuda::lossScaleUpdate(ds.view(), dt.view(), df.view(), ds.view(),
                              dt.view(), 2.0, 0.5, 7);
        const std::string what = std::to_string(scale) + " tracker " +
                                  std::to_string(tracker) +
                                  (found ? " found" : "");
        expectSame(ds.host(), sOut, what + " scale");
        expectSame(dt.host(), tOut, what + " tracker");
      }
}

TEST_F(CudaLossScaling, UpdatesUnscaleInTheGradientsTypeAndSkip) {
  // A taken update given the stored gradient gs and the scale S equals the
  // unscaled update given gs * float(1 / S) rounded to the gradient's type
  // (GradScaler.unscale_), bitwise; a skipped one writes the inputs.
  const Shape shape = {33, 17};
  unsigned seed = 10;
  for (bool skip : {false, true})
    for (double scale : {65536.0, 3.0}) {
      AdamOptions adam;
      Tensor p = randomTensor(DType::F32, shape, ++seed);
      Tensor g = randomTensor(DType::F32, shape, ++seed, -1e3, 1e3);
      Tensor m = randomTensor(DType::F32, shape, ++seed, -0.1, 0.1);
      Tensor v = randomTensor(DType::F32, shape, ++seed, 0, 0.01);
      Tensor unscaled(DType::F32, shape);
      const float inverse = static_cast<float>(1.0 / scale);
      for (int64_t i = 0; i < g.numel(); ++i)
        unscaled.as<float>()[i] = g.as<float>()[i] * inverse;
      Tensor s = scalar(DType::F32, scale), f = scalar(DType::Bool, skip);
      const std::string what =
          std::string(skip ? "skipped" : "taken") + " scale " +
          std::to_string(scale);

      DeviceTensor rp(p), rg(unscaled), rm(m), rv(v);
      if (!skip)
        cuda::adamUpdate(rp.view(), rg.view(), rm.view(), rv.view(), rp.view(),
                         rm.view(), rv.view(), int64_t{3}, adam);
      DeviceTensor dp(p), dg(g), dm(m), dv(v), ds(s), df(f);
      cuda::adamUpdate(dp.view(), dg.view(), dm.view(), dv.view(), dp.view(),
                       dm.view(), dv.view(), int64_t{3}, adam, ds.view(),
                       df.view());
      expectSame(dp.host(), rp.host(), what + " param");
      expectSame(dm.host(), rm.host(), what + " m");
      expectSame(dv.host(), rv.host(), what + " v");

      SgdOptions sgd;
      sgd.momentum = 0.9;
      Tensor b = randomTensor(DType::F32, shape, ++seed);
      DeviceTensor rp2(p), rb(b), rpOut(p), rbOut(b);
      if (!skip)
        cuda::sgdUpdate(rp2.view(), rg.view(), rb.view(), rpOut.view(),
                        rbOut.view(), int64_t{2}, sgd);
      DeviceTensor dp2(p), db(b), dpOut(DType::F32, shape),
          dbOut(DType::F32, shape);
      cuda::sgdUpdate(dp2.view(), dg.view(), db.view(), dpOut.view(),
                      dbOut.view(), int64_t{2}, sgd, ds.view(), df.view());
      expectSame(dpOut.host(), rpOut.host(), what + " sgd param");
      expectSame(dbOut.host(), rbOut.host(), what + " sgd buffer");
    }
}

} // namespace
