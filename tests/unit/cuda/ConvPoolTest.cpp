//===- ConvPoolTest.cpp - CUDA convolution and pooling against the CPU ----===//
//
// Convolution differs from the CPU only in GEMM summation order:
// tolerance(). Pooling visits window taps in the CPU's order: max-pool is
// exact; average-pool sums in the compute type, double for F64 as the CPU
// (exact) and fp32 for F32 where the CPU sums in double (tolerance()).
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtil.h"

using namespace remat::rt;
using namespace remat::rt::cudatest;
namespace rt = remat::rt;

namespace {

using CudaConvPool = CudaTest;

/// Output extent of one spatial dim (floor mode).
int64_t outExtent(int64_t in, int64_t k, int64_t stride, int64_t padBegin,
                  int64_t padEnd, int64_t dilation) {
  return (in + padBegin + padEnd - dilation * (k - 1) - 1) / stride + 1;
}

struct ConvCase {
  Shape x; // [N, C, spatial...]
  int64_t M, group;
  Shape kernel;
  WindowParams params; // kernel filled in from `kernel`
  bool bias;
};

Shape convOutShape(const ConvCase &c) {
  Shape y = {c.x[0], c.M};
  const size_t k = c.kernel.size();
  for (size_t i = 0; i < k; ++i) {
    const int64_t stride = c.params.strides.empty() ? 1 : c.params.strides[i];
    const int64_t dil = c.params.dilations.empty() ? 1 : c.params.dilations[i];
    const int64_t pb = c.params.pads.empty() ? 0 : c.params.pads[i];
    const int64_t pe = c.params.pads.empty() ? 0 : c.params.pads[k + i];
    y.push_back(outExtent(c.x[2 + i], c.kernel[i], stride, pb, pe, dil));
  }
  return y;
}

std::vector<ConvCase> convCases() {
  return {
      {{2, 3, 9, 9}, 4, 1, {3, 3}, {{}, {1, 1}, {1, 1, 1, 1}, {}}, true},
      {{2, 4, 10, 7}, 6, 2, {3, 2}, {{}, {2, 1}, {1, 0, 0, 1}, {1, 2}}, true},
      {{3, 6, 8, 8}, 6, 6, {3, 3}, {{}, {1, 1}, {1, 1, 1, 1}, {}}, false},
      {{2, 8, 5, 5}, 16, 1, {1, 1}, {{}, {}, {}, {}}, true}, // pointwise
      {{2, 8, 5, 5}, 16, 2, {1, 1}, {{}, {}, {}, {}}, false},
      {{3, 5, 20}, 7, 1, {4}, {{}, {3}, {2, 1}, {2}}, true}, // 1-D
      {{1, 2, 5, 6, 4},
       3,
       1,
       {2, 3, 2},
       {{}, {1, 2, 1}, {0, 1, 1, 1, 0, 0}, {}},
       true}, // 3-D
  };
}

TEST_F(CudaConvPool, ConvMatchesCpu) {
  unsigned seed = 1;
  for (ConvCase c : convCases())
    for (DType dtype : {DType::F32, DType::F64}) {
      c.params.kernel = c.kernel;
      Shape wShape = {c.M, c.x[1] / c.group};
      wShape.insert(wShape.end(), c.kernel.begin(), c.kernel.end());
      const Shape yShape = convOutShape(c);
      Tensor x = randomTensor(dtype, c.x, ++seed);
      Tensor w = randomTensor(dtype, wShape, ++seed);
      Tensor b = randomTensor(dtype, {c.M}, ++seed);
      Tensor y(dtype, yShape);
      rt::conv(x.view(), w.view(), c.bias ? b.view() : TensorView(), y.view(),
               c.params, c.group);
      DeviceTensor dx(x), dw(w), db(b), dy(dtype, yShape);
      cuda::conv(dx.view(), dw.view(), c.bias ? db.view() : TensorView(),
                 dy.view(), c.params, c.group);
      expectNear(dy.host(), y, tolerance(dtype),
                 shapeToString(c.x) + " group " + std::to_string(c.group));
    }
}

TEST_F(CudaConvPool, ConvChunksImagesToFitTheWorkspace) {
  // Columns of one image: 16 * 9 * 32 * 32 floats = 590 KB. A 2 MB
  // workspace (1.5 MB scratch) holds two images at a time.
  ConvCase c{{5, 16, 32, 32}, 8, 1, {3, 3}, {{}, {}, {1, 1, 1, 1}, {}}, true};
  c.params.kernel = c.kernel;
  Tensor x = randomTensor(DType::F32, c.x, 1);
  Tensor w = randomTensor(DType::F32, {8, 16, 3, 3}, 2);
  Tensor b = randomTensor(DType::F32, {8}, 3);
  const Shape yShape = convOutShape(c);
  Tensor y(DType::F32, yShape);
  rt::conv(x.view(), w.view(), b.view(), y.view(), c.params, 1);
  DeviceTensor dx(x), dw(w), db(b), dy(DType::F32, yShape);
  bindContext(size_t(2) << 20);
  cuda::conv(dx.view(), dw.view(), db.view(), dy.view(), c.params, 1);
  expectNear(dy.host(), y, 1e-5);
  // Too small for a single image: a RuntimeError naming the bytes needed.
  bindContext(size_t(256) << 10);
  try {
    cuda::conv(dx.view(), dw.view(), db.view(), dy.view(), c.params, 1);
    ADD_FAILURE() << "expected a workspace error";
  } catch (const RuntimeError &e) {
    EXPECT_NE(std::string(e.what()).find("conv: needs 589824 bytes"),
              std::string::npos)
        << e.what();
  }
  bindContext();
}

TEST_F(CudaConvPool, MaxPoolWithIndicesIsExact) {
  struct Case {
    Shape x, kernel;
    WindowParams params;
  };
  const Case cases[] = {
      {{2, 3, 9, 9}, {3, 3}, {{3, 3}, {2, 2}, {1, 1, 1, 1}, {}}},
      {{2, 3, 8, 7}, {2, 2}, {{2, 2}, {2, 2}, {}, {}}},
      {{1, 2, 10}, {3}, {{3}, {1}, {2, 2}, {2}}},
      {{2, 2, 9, 8}, {3, 2}, {{3, 2}, {2, 1}, {1, 0, 0, 1}, {2, 3}}},
      {{1, 2, 4, 5, 6}, {2, 2, 3}, {{2, 2, 3}, {1, 2, 2}, {}, {}}},
  };
  for (const Case &c : cases)
    for (DType dtype : {DType::F32, DType::F64}) {
      Shape yShape = {c.x[0], c.x[1]};
      const size_t k = c.kernel.size();
      for (size_t i = 0; i < k; ++i) {
        const int64_t pb = c.params.pads.empty() ? 0 : c.params.pads[i];
        const int64_t pe = c.params.pads.empty() ? 0 : c.params.pads[k + i];
        const int64_t dil =
            c.params.dilations.empty() ? 1 : c.params.dilations[i];
        yShape.push_back(outExtent(c.x[2 + i], c.kernel[i], c.params.strides[i],
                                   pb, pe, dil));
      }
      // Few distinct values, so ties (first index wins) happen.
      Tensor x = randomIntegers(dtype, c.x, 5, -3, 3);
      Tensor y(dtype, yShape), idx(DType::I64, yShape);
      rt::maxPool(x.view(), y.view(), idx.view(), c.params);
      DeviceTensor dx(x), dy(dtype, yShape), didx(DType::I64, yShape);
      cuda::maxPool(dx.view(), dy.view(), didx.view(), c.params);
      expectSame(dy.host(), y, shapeToString(c.x));
      expectSame(didx.host(), idx, shapeToString(c.x) + " indices");

      // averagePool on the same windows, both divisor conventions.
      for (bool includePad : {false, true}) {
        Tensor a(dtype, yShape);
        Tensor xr = randomTensor(dtype, c.x, 6);
        rt::averagePool(xr.view(), a.view(), c.params, includePad);
        DeviceTensor dxr(xr), da(dtype, yShape);
        cuda::averagePool(dxr.view(), da.view(), c.params, includePad);
        if (dtype == DType::F64)
          expectSame(da.host(), a, shapeToString(c.x) + " average");
        else
          expectNear(da.host(), a, tolerance(dtype),
                     shapeToString(c.x) + " average");
      }
    }
}

TEST_F(CudaConvPool, GlobalAveragePool) {
  for (DType dtype : {DType::F32, DType::F64}) {
    Tensor x = randomTensor(dtype, {3, 4, 7, 9}, 1);
    Tensor y(dtype, {3, 4, 1, 1});
    rt::globalAveragePool(x.view(), y.view());
    DeviceTensor dx(x), dy(dtype, {3, 4, 1, 1});
    cuda::globalAveragePool(dx.view(), dy.view());
    expectNear(dy.host(), y, tolerance(dtype));
  }
}

} // namespace
