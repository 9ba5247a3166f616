//===- NormalizationTest.cpp - softmax, layerNorm, batchNorm --------------===//
//
// F16/BF16 results are checked by the rule in TestUtil.h with n = 4 (the
// fp32 formula applied after the statistics, which are kept in double) and
// M the magnitude of that formula's terms.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

using namespace remat::rt;
using namespace remat::rt::test;

namespace {

/// Reference softmax over `axis` in float64.
std::vector<double> refSoftmax(const std::vector<double> &x, const Shape &shape,
                               int64_t axis, bool log) {
  int64_t outer = 1, inner = 1, n = shape[axis];
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d)
    inner *= shape[d];
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      auto at = [&](int64_t i) { return (o * n + i) * inner + j; };
      double m = -INFINITY, sum = 0;
      for (int64_t i = 0; i < n; ++i)
        m = std::max(m, x[at(i)]);
      for (int64_t i = 0; i < n; ++i)
        sum += std::exp(x[at(i)] - m);
      for (int64_t i = 0; i < n; ++i)
        y[at(i)] = log ? x[at(i)] - m - std::log(sum)
                       : std::exp(x[at(i)] - m) / sum;
    }
  return y;
}

TEST(NormalizationTest, SoftmaxAndLogSoftmaxOverEachAxis) {
  const Shape shape = {3, 4, 5};
  for (DType dt : {DType::F32, DType::F64})
    for (int64_t axis = 0; axis < 3; ++axis) {
      Tensor x = randomTensor(dt, shape, 5, -10, 10);
      Tensor y(dt, shape), ly(dt, shape);
      softmax(x.view(), y.view(), axis);
      logSoftmax(x.view(), ly.view(), axis);
      const double tol = dt == DType::F32 ? 1e-6 : 1e-13;
      expectAllNear(values(y), refSoftmax(values(x), shape, axis, false), tol);
      expectAllNear(values(ly), refSoftmax(values(x), shape, axis, true), tol);
      // Identity: exp(logSoftmax) == softmax.
      std::vector<double> sm = values(y), lsm = values(ly);
      for (size_t i = 0; i < sm.size(); ++i)
        ASSERT_NEAR(std::exp(lsm[i]), sm[i], tol);
    }
}

TEST(NormalizationTest, SoftmaxAndLogSoftmaxOnHalfStorage) {
  const Shape shape = {3, 4, 5};
  for (DType dt : kHalfTypes)
    for (int64_t axis = 0; axis < 3; ++axis) {
      SCOPED_TRACE(std::string(dtypeName(dt)) + " axis " +
                   std::to_string(axis));
      Tensor x = randomTensor(dt, shape, 5, -10, 10);
      Tensor y(dt, shape), ly(dt, shape);
      softmax(x.view(), y.view(), axis);
      logSoftmax(x.view(), ly.view(), axis);
      expectHalfNear(values(y), refSoftmax(values(x), shape, axis, false), dt,
                     4);
      // log-softmax is (x - max) - log(sum): terms of up to 20 + log(5).
      expectHalfNear(values(ly), refSoftmax(values(x), shape, axis, true), dt,
                     4, 20 + std::log(5.0));
    }
}

TEST(NormalizationTest, SoftmaxRowsSumToOneWithLargeInputs) {
  Tensor x = randomTensor(DType::F32, {8, 64}, 9, 500, 1000); // exp overflows
  Tensor y(DType::F32, {8, 64});
  softmax(x.view(), y.view(), 1);
  std::vector<double> v = values(y);
  for (int r = 0; r < 8; ++r) {
    double sum = 0;
    for (int c = 0; c < 64; ++c) {
      ASSERT_TRUE(std::isfinite(v[r * 64 + c]));
      sum += v[r * 64 + c];
    }
    EXPECT_NEAR(sum, 1.0, 1e-5);
  }
}

/// Reference LayerNorm over dims [axis, rank).
void refLayerNorm(const std::vector<double> &x, const Shape &shape,
                  int64_t axis, const std::vector<double> &scale,
                  const std::vector<double> &bias, double eps,
                  std::vector<double> &y, std::vector<double> &mean,
                  std::vector<double> &invStd) {
  int64_t n = 1;
  for (size_t d = axis; d < shape.size(); ++d)
    n *= shape[d];
  const int64_t rows = static_cast<int64_t>(x.size()) / n;
  y.assign(x.size(), 0);
  mean.assign(rows, 0);
  invStd.assign(rows, 0);
  for (int64_t r = 0; r < rows; ++r) {
    double mu = 0, var = 0;
    for (int64_t i = 0; i < n; ++i)
      mu += x[r * n + i] / n;
    for (int64_t i = 0; i < n; ++i)
      var += (x[r * n + i] - mu) * (x[r * n + i] - mu) / n;
    mean[r] = mu;
    invStd[r] = 1 / std::sqrt(var + eps);
    for (int64_t i = 0; i < n; ++i)
      y[r * n + i] = (x[r * n + i] - mu) * invStd[r] * scale[i] +
                     (bias.empty() ? 0 : bias[i]);
  }
}

TEST(NormalizationTest, LayerNormWithAxisAndStatistics) {
  const Shape shape = {2, 3, 4, 5};
  for (DType dt : {DType::F32, DType::F64})
    for (int64_t axis : {1, 2, 3}) {
      Shape normShape(shape.begin() + axis, shape.end());
      Shape statShape(shape.begin(), shape.begin() + axis);
      statShape.resize(shape.size(), 1);
      Tensor x = randomTensor(dt, shape, 3, -2, 5);
      Tensor scale = randomTensor(dt, normShape, 4, 0.5, 2);
      Tensor bias = randomTensor(dt, normShape, 5);
      Tensor y(dt, shape), mean(DType::F32, statShape),
          invStd(DType::F32, statShape);
      layerNorm(x.view(), scale.view(), bias.view(), y.view(), mean.view(),
                invStd.view(), axis, 1e-5);
      std::vector<double> ry, rm, ri;
      refLayerNorm(values(x), shape, axis, values(scale), values(bias), 1e-5,
                   ry, rm, ri);
      const double tol = dt == DType::F32 ? 1e-5 : 1e-12;
      expectAllNear(values(y), ry, tol);
      expectAllNear(values(mean), rm, 1e-6);
      expectAllNear(values(invStd), ri, 1e-6);
    }
}

TEST(NormalizationTest, LayerNormOnHalfStorage) {
  const Shape shape = {2, 3, 4, 5};
  for (DType dt : kHalfTypes)
    for (int64_t axis : {1, 3}) {
      SCOPED_TRACE(std::string(dtypeName(dt)) + " axis " +
                   std::to_string(axis));
      Shape normShape(shape.begin() + axis, shape.end());
      Shape statShape(shape.begin(), shape.begin() + axis);
      statShape.resize(shape.size(), 1);
      Tensor x = randomTensor(dt, shape, 3, -2, 5);
      Tensor scale = randomTensor(dt, normShape, 4, 0.5, 2);
      Tensor bias = randomTensor(dt, normShape, 5);
      Tensor y(dt, shape), mean(dt, statShape), invStd(dt, statShape);
      layerNorm(x.view(), scale.view(), bias.view(), y.view(), mean.view(),
                invStd.view(), axis, 1e-5);
      std::vector<double> ry, rm, ri;
      const std::vector<double> xv = values(x), g = values(scale),
                                b = values(bias);
      refLayerNorm(xv, shape, axis, g, b, 1e-5, ry, rm, ri);
      // M: the terms (|x| + |mean|) * invStd * |scale| and |bias|.
      const int64_t n = numElements(normShape);
      std::vector<double> m(ry.size());
      for (size_t i = 0; i < m.size(); ++i) {
        const size_t r = i / n, j = i % n;
        m[i] = (std::abs(xv[i]) + std::abs(rm[r])) * ri[r] * std::abs(g[j]) +
               std::abs(b[j]);
      }
      expectHalfNear(values(y), ry, dt, 4, m);
      expectHalfNear(values(mean), rm, dt, 0);
      expectHalfNear(values(invStd), ri, dt, 0);
    }
}

TEST(NormalizationTest, LayerNormBroadcastScaleAndNoBias) {
  const Shape shape = {4, 3, 6};
  Tensor x = randomTensor(DType::F64, shape, 8);
  Tensor scale = make(DType::F64, {1, 6}, {1, 2, 3, 4, 5, 6}); // broadcast
  Tensor y(DType::F64, shape);
  layerNorm(x.view(), scale.view(), TensorView(), y.view(), TensorView(),
            TensorView(), 1, 1e-5);
  std::vector<double> fullScale;
  for (int i = 0; i < 3; ++i)
    for (int j = 1; j <= 6; ++j)
      fullScale.push_back(j);
  std::vector<double> ry, rm, ri;
  refLayerNorm(values(x), shape, 1, fullScale, {}, 1e-5, ry, rm, ri);
  expectAllNear(values(y), ry, 1e-12);
}

TEST(NormalizationTest, BatchNormInference) {
  const Shape shape = {2, 3, 4, 4};
  for (DType dt : {DType::F32, DType::F64}) {
    Tensor x = randomTensor(dt, shape, 1, -3, 3);
    Tensor scale = make(dt, {3}, {1, 0.5, 2});
    Tensor bias = make(dt, {3}, {0, 1, -1});
    Tensor mean = make(dt, {3}, {0.1, -0.2, 0.3});
    Tensor var = make(dt, {3}, {1, 4, 0.25});
    Tensor y(dt, shape);
    batchNormInference(x.view(), scale.view(), bias.view(), mean.view(),
                       var.view(), y.view(), 1e-5);
    std::vector<double> xv = values(x), expected(xv.size());
    std::vector<double> g = values(scale), b = values(bias), m = values(mean),
                        v = values(var);
    for (size_t i = 0; i < xv.size(); ++i) {
      int64_t c = unravel(static_cast<int64_t>(i), shape)[1];
      expected[i] = (xv[i] - m[c]) / std::sqrt(v[c] + 1e-5) * g[c] + b[c];
    }
    expectAllNear(values(y), expected, dt == DType::F32 ? 1e-5 : 1e-12);
  }
}

TEST(NormalizationTest, BatchNormInferenceOnHalfDataWithF32Parameters) {
  const Shape shape = {2, 3, 4, 4};
  for (DType dt : kHalfTypes) {
    SCOPED_TRACE(dtypeName(dt));
    Tensor x = randomTensor(dt, shape, 1, -3, 3);
    Tensor scale = make(DType::F32, {3}, {1, 0.5, 2});
    Tensor bias = make(DType::F32, {3}, {0, 1, -1});
    Tensor mean = make(DType::F32, {3}, {0.1, -0.2, 0.3});
    Tensor var = make(DType::F32, {3}, {1, 4, 0.25});
    Tensor y(dt, shape);
    batchNormInference(x.view(), scale.view(), bias.view(), mean.view(),
                       var.view(), y.view(), 1e-5);
    std::vector<double> xv = values(x), expected(xv.size()), m(xv.size());
    std::vector<double> g = values(scale), b = values(bias), mu = values(mean),
                        v = values(var);
    for (size_t i = 0; i < xv.size(); ++i) {
      int64_t c = unravel(static_cast<int64_t>(i), shape)[1];
      const double a = g[c] / std::sqrt(v[c] + 1e-5);
      expected[i] = (xv[i] - mu[c]) * a + b[c];
      m[i] = std::abs(xv[i] * a) + std::abs(b[c] - mu[c] * a); // x a + shift
    }
    expectHalfNear(values(y), expected, dt, 4, m);
  }
}

TEST(NormalizationTest, BatchNormTrainingOnHalfDataWithF32Statistics) {
  const Shape shape = {4, 2, 3, 5};
  const double eps = 1e-5, momentum = 0.9;
  for (DType dt : kHalfTypes) {
    SCOPED_TRACE(dtypeName(dt));
    Tensor x = randomTensor(dt, shape, 2, -1, 3);
    Tensor scale = make(DType::F32, {2}, {1.5, 0.5});
    Tensor bias = make(DType::F32, {2}, {0.1, -0.1});
    Tensor runMean = make(DType::F32, {2}, {1, -1});
    Tensor runVar = make(DType::F32, {2}, {2, 3});
    Tensor y(dt, shape), runMeanOut(DType::F32, {2}),
        runVarOut(DType::F32, {2}), savedMean(DType::F32, {2}),
        savedInvStd(DType::F32, {2});
    batchNormTraining(x.view(), scale.view(), bias.view(), runMean.view(),
                      runVar.view(), y.view(), runMeanOut.view(),
                      runVarOut.view(), savedMean.view(), savedInvStd.view(),
                      eps, momentum, /*unbiasedRunningVar=*/true);
    // Batch statistics of the widened data, in float64.
    const std::vector<double> xv = values(x), g = values(scale),
                              b = values(bias);
    const double count = 4 * 3 * 5;
    std::vector<double> mu(2, 0), var(2, 0);
    for (size_t i = 0; i < xv.size(); ++i)
      mu[unravel(i, shape)[1]] += xv[i] / count;
    for (size_t i = 0; i < xv.size(); ++i) {
      const int64_t c = unravel(i, shape)[1];
      var[c] += (xv[i] - mu[c]) * (xv[i] - mu[c]) / count;
    }
    std::vector<double> expected(xv.size()), m(xv.size());
    for (size_t i = 0; i < xv.size(); ++i) {
      const int64_t c = unravel(i, shape)[1];
      const double a = g[c] / std::sqrt(var[c] + eps);
      expected[i] = (xv[i] - mu[c]) * a + b[c];
      m[i] = std::abs(xv[i] * a) + std::abs(b[c] - mu[c] * a);
    }
    expectHalfNear(values(y), expected, dt, 4, m);
    // The F32 statistics are computed from the data in double: F32-accurate.
    expectAllNear(values(savedMean), mu, 1e-6);
    expectAllNear(values(savedInvStd),
                  {1 / std::sqrt(var[0] + eps), 1 / std::sqrt(var[1] + eps)},
                  1e-6);
    expectAllNear(values(runMeanOut),
                  {0.9 * 1 + 0.1 * mu[0], 0.9 * -1 + 0.1 * mu[1]}, 1e-6);
    expectAllNear(values(runVarOut),
                  {0.9 * 2 + 0.1 * var[0] * count / (count - 1),
                   0.9 * 3 + 0.1 * var[1] * count / (count - 1)},
                  1e-6);
  }
}

TEST(NormalizationTest, BatchNormTrainingUsesBatchStatsAndUpdatesRunning) {
  const Shape shape = {4, 2, 3};
  Tensor x = randomTensor(DType::F32, shape, 2, -1, 3);
  Tensor scale = make(DType::F32, {2}, {1.5, 0.5});
  Tensor bias = make(DType::F32, {2}, {0.1, -0.1});
  Tensor runMean = make(DType::F32, {2}, {1, -1});
  Tensor runVar = make(DType::F32, {2}, {2, 3});
  Tensor y(DType::F32, shape), runMeanOut(DType::F32, {2}),
      runVarOut(DType::F32, {2}), savedMean(DType::F32, {2}),
      savedInvStd(DType::F32, {2});
  const double eps = 1e-5, momentum = 0.9;
  batchNormTraining(x.view(), scale.view(), bias.view(), runMean.view(),
                    runVar.view(), y.view(), runMeanOut.view(),
                    runVarOut.view(), savedMean.view(), savedInvStd.view(),
                    eps, momentum, /*unbiasedRunningVar=*/false);

  std::vector<double> xv = values(x);
  std::vector<double> mu(2, 0), var(2, 0);
  const double count = 4 * 3;
  for (size_t i = 0; i < xv.size(); ++i)
    mu[unravel(i, shape)[1]] += xv[i] / count;
  for (size_t i = 0; i < xv.size(); ++i) {
    int64_t c = unravel(i, shape)[1];
    var[c] += (xv[i] - mu[c]) * (xv[i] - mu[c]) / count; // biased
  }
  std::vector<double> expectedY(xv.size());
  for (size_t i = 0; i < xv.size(); ++i) {
    int64_t c = unravel(i, shape)[1];
    expectedY[i] = (xv[i] - mu[c]) / std::sqrt(var[c] + eps) *
                       values(scale)[c] + values(bias)[c];
  }
  expectAllNear(values(y), expectedY, 1e-5);
  expectAllNear(values(runMeanOut),
                {0.9 * 1 + 0.1 * mu[0], 0.9 * -1 + 0.1 * mu[1]}, 1e-6);
  expectAllNear(values(runVarOut),
                {0.9 * 2 + 0.1 * var[0], 0.9 * 3 + 0.1 * var[1]}, 1e-6);
  expectAllNear(values(savedMean), mu, 1e-6);

  // torch.nn.BatchNorm tracks the unbiased variance (count / (count - 1));
  // the output still uses the biased one.
  Tensor yUnbiased(DType::F32, shape);
  batchNormTraining(x.view(), scale.view(), bias.view(), runMean.view(),
                    runVar.view(), yUnbiased.view(), runMeanOut.view(),
                    runVarOut.view(), TensorView(), TensorView(), eps, momentum,
                    /*unbiasedRunningVar=*/true);
  expectAllNear(values(yUnbiased), expectedY, 1e-5);
  expectAllNear(values(runVarOut),
                {0.9 * 2 + 0.1 * var[0] * count / (count - 1),
                 0.9 * 3 + 0.1 * var[1] * count / (count - 1)},
                1e-6);
  expectAllNear(values(savedInvStd),
                {1 / std::sqrt(var[0] + eps), 1 / std::sqrt(var[1] + eps)},
                1e-5);
  // The normalised (pre-affine) output has zero mean per channel.
  for (int c = 0; c < 2; ++c) {
    double s = 0;
    for (size_t i = 0; i < xv.size(); ++i)
      if (unravel(i, shape)[1] == c)
        s += (values(y)[i] - values(bias)[c]) / count;
    EXPECT_NEAR(s, 0, 1e-5);
  }
}

} // namespace
