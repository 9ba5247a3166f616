//===- LossScalingTest.cpp - CUDA loss scaling against the CPU ------------===//
//
// The overflow check, the scale update and the optimizers' unscale and skip
// compute what the CPU kernels compute (tests/unit/runtime/
// LossScalingTest.cpp checks those against their meaning): the flag and
// the scale bitwise, the updates bitwise with the step on the host.
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

TEST_F(CudaLossScaling, UpdatesUnscaleAndSkipAsTheCpu) {
  const Shape shape = {33, 17};
  unsigned seed = 10;
  for (bool skip : {false, true})
    for (double scale : {65536.0, 3.0}) {
      AdamOptions adam;
      Tensor p = randomTensor(DType::F32, shape, ++seed);
      Tensor g = randomTensor(DType::F32, shape, ++seed, -1e3, 1e3);
      Tensor m = randomTensor(DType::F32, shape, ++seed, -0.1, 0.1);
      Tensor v = randomTensor(DType::F32, shape, ++seed, 0, 0.01);
      Tensor s = scalar(DType::F32, scale), f = scalar(DType::Bool, skip);
      Tensor pOut(DType::F32, shape), mOut(DType::F32, shape),
          vOut(DType::F32, shape);
      rt::adamUpdate(p.view(), g.view(), m.view(), v.view(), pOut.view(),
                     mOut.view(), vOut.view(), 3, adam, s.view(), f.view());
      DeviceTensor dp(p), dg(g), dm(m), dv(v), ds(s), df(f);
      cuda::adamUpdate(dp.view(), dg.view(), dm.view(), dv.view(), dp.view(),
                       dm.view(), dv.view(), int64_t{3}, adam, ds.view(),
                       df.view());
      const std::string what =
          std::string(skip ? "skipped" : "taken") + " scale " +
          std::to_string(scale);
      expectSame(dp.host(), pOut, what + " param");
      expectSame(dm.host(), mOut, what + " m");
      expectSame(dv.host(), vOut, what + " v");

      SgdOptions sgd;
      sgd.momentum = 0.9;
      Tensor b = randomTensor(DType::F32, shape, ++seed);
      Tensor sgdOut(DType::F32, shape), bOut(DType::F32, shape);
      rt::sgdUpdate(p.view(), g.view(), b.view(), sgdOut.view(), bOut.view(),
                    2, sgd, s.view(), f.view());
      DeviceTensor dp2(p), db(b), dsgdOut(sgdOut), dbOut(bOut);
      cuda::sgdUpdate(dp2.view(), dg.view(), db.view(), dsgdOut.view(),
                      dbOut.view(), int64_t{2}, sgd, ds.view(), df.view());
      expectSame(dsgdOut.host(), sgdOut, what + " sgd param");
      expectSame(dbOut.host(), bOut, what + " sgd buffer");
    }
}

} // namespace
