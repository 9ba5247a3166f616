//===- ConvPoolTest.cpp - conv vs direct convolution, pooling -------------===//
//
// F16/BF16 results are checked by the rule in TestUtil.h: for conv n is the
// window's length (C/group x kernel taps, plus the bias) and M the same sum
// over |x|, |w| and |bias|; for average pooling n is the window and M the
// inputs' bound. Max pooling is exact.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

using namespace remat::rt;
using namespace remat::rt::test;

namespace {

/// Output extent of one spatial dim (floor or ceil mode, as ONNX).
int64_t outDim(int64_t in, int64_t k, int64_t s, int64_t pb, int64_t pe,
               int64_t d, bool ceil = false) {
  int64_t span = in + pb + pe - ((k - 1) * d + 1);
  int64_t o = (ceil ? (span + s - 1) / s : span / s) + 1;
  // ONNX ceil mode: the last window must start inside the input or left pad.
  if (ceil && (o - 1) * s >= in + pb)
    --o;
  return o;
}

struct ConvCase {
  Shape x;       // [N, C, spatial...]
  int64_t M;     // output channels
  int64_t group;
  std::vector<int64_t> kernel, strides, pads, dilations;
  bool bias;
};

/// Direct convolution: every output element is a sum over its window.
std::vector<double> refConv(const std::vector<double> &x, const Shape &xs,
                            const std::vector<double> &w, const Shape &ws,
                            const std::vector<double> &b, const Shape &ys,
                            const ConvCase &c) {
  const int64_t k = xs.size() - 2, Cg = ws[1], Mg = c.M / c.group;
  std::vector<double> y(numElements(ys));
  for (int64_t flat = 0; flat < numElements(ys); ++flat) {
    std::vector<int64_t> yi = unravel(flat, ys);
    const int64_t n = yi[0], m = yi[1], g = m / Mg;
    double sum = b.empty() ? 0 : b[m];
    Shape wSpatial(ws.begin() + 2, ws.end());
    for (int64_t ci = 0; ci < Cg; ++ci)
      for (int64_t t = 0; t < numElements(wSpatial); ++t) {
        std::vector<int64_t> ki = unravel(t, wSpatial);
        std::vector<int64_t> xi = {n, g * Cg + ci};
        bool inside = true;
        for (int64_t d = 0; d < k; ++d) {
          int64_t pos = yi[2 + d] * c.strides[d] - c.pads[d] +
                        ki[d] * c.dilations[d];
          inside = inside && pos >= 0 && pos < xs[2 + d];
          xi.push_back(pos);
        }
        if (!inside)
          continue;
        std::vector<int64_t> wi = {m, ci};
        wi.insert(wi.end(), ki.begin(), ki.end());
        sum += x[ravel(xi, xs)] * w[ravel(wi, ws)];
      }
    y[flat] = sum;
  }
  return y;
}

const std::vector<ConvCase> &convCases() {
  static const std::vector<ConvCase> cases = {
      {{2, 3, 10}, 4, 1, {3}, {1}, {1, 1}, {1}, true},                // 1-D
      {{1, 4, 9}, 6, 2, {3}, {2}, {0, 2}, {2}, false},                // 1-D all
      {{2, 3, 7, 8}, 5, 1, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, true},
      {{2, 4, 9, 7}, 6, 2, {3, 2}, {2, 1}, {1, 0, 2, 1}, {2, 3}, true}, // groups, dilation, asym pads
      {{1, 6, 8, 8}, 6, 6, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, true}, // depthwise
      {{2, 8, 5, 5}, 4, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, true}, // pointwise
      {{1, 2, 4, 4}, 3, 1, {1, 1}, {1, 1}, {0, 0, 1, 1}, {1, 1}, false}, // 1x1, end pad
      {{1, 4, 5, 6, 7}, 4, 2, {2, 3, 2}, {1, 2, 2}, {1, 0, 1, 0, 1, 1},
       {2, 1, 1}, true}, // 3-D
  };
  return cases;
}

/// |v| elementwise.
std::vector<double> absolute(std::vector<double> v) {
  for (double &x : v)
    x = std::abs(x);
  return v;
}

/// Runs conv on random operands of dtype dt and checks it against the
/// direct convolution of the same (widened) values.
void checkConv(DType dt, const ConvCase &c) {
  const int64_t k = c.kernel.size();
  Shape ws = {c.M, c.x[1] / c.group};
  ws.insert(ws.end(), c.kernel.begin(), c.kernel.end());
  Shape ys = {c.x[0], c.M};
  for (int64_t d = 0; d < k; ++d)
    ys.push_back(outDim(c.x[2 + d], c.kernel[d], c.strides[d], c.pads[d],
                        c.pads[k + d], c.dilations[d]));
  SCOPED_TRACE(std::string(dtypeName(dt)) + " x " + shapeToString(c.x) +
               " y " + shapeToString(ys));
  Tensor x = randomTensor(dt, c.x, 1), w = randomTensor(dt, ws, 2);
  Tensor b = randomTensor(dt, {c.M}, 3), y(dt, ys);
  WindowParams p{c.kernel, c.strides, c.pads, c.dilations};
  conv(x.view(), w.view(), c.bias ? b.view() : TensorView(), y.view(), p,
       c.group);
  std::vector<double> bias = c.bias ? values(b) : std::vector<double>{};
  const std::vector<double> expected =
      refConv(values(x), c.x, values(w), ws, bias, ys, c);
  if (dt == DType::F32 || dt == DType::F64) {
    expectAllNear(values(y), expected, dt == DType::F32 ? 1e-5 : 1e-12);
    return;
  }
  const int64_t window = numElements(ws) / c.M + 1;
  expectHalfNear(values(y), expected, dt, window,
                 refConv(absolute(values(x)), c.x, absolute(values(w)), ws,
                         absolute(bias), ys, c));
}

TEST(ConvPoolTest, ConvMatchesDirectConvolution) {
  for (DType dt : {DType::F32, DType::F64})
    for (const ConvCase &c : convCases())
      checkConv(dt, c);
}

TEST(ConvPoolTest, ConvOnHalfStorage) {
  for (DType dt : kHalfTypes)
    for (const ConvCase &c : convCases())
      checkConv(dt, c);
}

TEST(ConvPoolTest, ConvDefaultsAndErrors) {
  // Empty strides/pads/dilations mean 1/0/1; empty kernel comes from w.
  Tensor x = make(DType::F32, {1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor w = make(DType::F32, {1, 1, 2, 2}, {1, 0, 0, -1});
  Tensor y(DType::F32, {1, 1, 2, 2});
  conv(x.view(), w.view(), TensorView(), y.view(), WindowParams{}, 1);
  EXPECT_EQ(values(y), (std::vector<double>{-4, -4, -4, -4}));
  Tensor wBad(DType::F32, {1, 2, 2, 2});
  EXPECT_THROW(conv(x.view(), wBad.view(), TensorView(), y.view(),
                    WindowParams{}, 1),
               RuntimeError);
  EXPECT_THROW(conv(x.view(), w.view(), TensorView(), y.view(),
                    WindowParams{}, 2),
               RuntimeError);
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

struct PoolCase {
  Shape x;
  std::vector<int64_t> kernel, strides, pads, dilations;
  bool ceil;
};

const std::vector<PoolCase> &poolCases() {
  static const std::vector<PoolCase> cases = {
      {{1, 2, 9}, {3}, {2}, {1, 1}, {1}, false},
      {{2, 3, 6, 7}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, false},
      {{2, 2, 7, 7}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, false},
      {{1, 2, 6, 7}, {3, 2}, {2, 2}, {1, 0, 1, 0}, {1, 1}, true},  // ceil overhang
      {{1, 1, 8, 8}, {3, 3}, {3, 2}, {0, 1, 0, 0}, {1, 1}, true},  // asym pads
      {{1, 1, 9, 9}, {2, 2}, {1, 2}, {1, 1, 1, 1}, {2, 2}, false}, // dilated
      {{1, 2, 9, 8}, {3, 2}, {2, 1}, {1, 0, 0, 1}, {2, 3}, true},  // dilated, ceil overhang
      {{1, 1, 5, 6, 7}, {2, 2, 2}, {1, 2, 3}, {0, 1, 1, 0, 0, 1}, {2, 2, 3},
       false}, // dilated 3-D
      {{1, 2, 4, 5, 6}, {2, 2, 3}, {2, 1, 2}, {1, 0, 1, 0, 1, 1}, {1, 1, 1},
       true},
  };
  return cases;
}

Shape poolOutShape(const PoolCase &c) {
  const int64_t k = c.kernel.size();
  Shape ys = {c.x[0], c.x[1]};
  for (int64_t d = 0; d < k; ++d)
    ys.push_back(outDim(c.x[2 + d], c.kernel[d], c.strides[d], c.pads[d],
                        c.pads[k + d], c.dilations[d], c.ceil));
  return ys;
}

/// Visits every window tap of output `yi`: (flat x index or -1 if in the
/// padding, whether inside the padded input).
template <typename F>
void refWindow(const PoolCase &c, const std::vector<int64_t> &yi, F &&visit) {
  const int64_t k = c.kernel.size();
  Shape kShape(c.kernel.begin(), c.kernel.end());
  for (int64_t t = 0; t < numElements(kShape); ++t) {
    std::vector<int64_t> ki = unravel(t, kShape);
    std::vector<int64_t> xi = {yi[0], yi[1]};
    bool inInput = true, inPadded = true;
    for (int64_t d = 0; d < k; ++d) {
      int64_t pos = yi[2 + d] * c.strides[d] - c.pads[d] + ki[d] * c.dilations[d];
      inInput = inInput && pos >= 0 && pos < c.x[2 + d];
      inPadded = inPadded && pos >= -c.pads[d] && pos < c.x[2 + d] + c.pads[k + d];
      xi.push_back(pos);
    }
    visit(inInput ? ravel(xi, c.x) : -1, inPadded);
  }
}

TEST(ConvPoolTest, MaxPoolWithPaddingAndIndices) {
  for (DType dt : {DType::F32, DType::F64, DType::F16, DType::BF16})
    for (const PoolCase &c : poolCases()) {
      Shape ys = poolOutShape(c);
      SCOPED_TRACE("x " + shapeToString(c.x) + " y " + shapeToString(ys));
      // All-negative inputs: a zero from padding must never win.
      Tensor x = randomTensor(dt, c.x, 4, -10, -1);
      Tensor y(dt, ys), idx(DType::I64, ys);
      maxPool(x.view(), y.view(), idx.view(),
              {c.kernel, c.strides, c.pads, c.dilations});
      std::vector<double> xv = values(x), yv = values(y), iv = values(idx);
      for (int64_t o = 0; o < numElements(ys); ++o) {
        double best = -INFINITY;
        refWindow(c, unravel(o, ys), [&](int64_t xi, bool) {
          if (xi >= 0)
            best = std::max(best, xv[xi]);
        });
        ASSERT_EQ(yv[o], best) << "output " << o;
        ASSERT_EQ(xv[static_cast<int64_t>(iv[o])], best) << "index " << o;
      }
    }
}

TEST(ConvPoolTest, AveragePoolBothPadModes) {
  for (bool includePad : {false, true})
    for (DType dt : {DType::F32, DType::F64})
      for (const PoolCase &c : poolCases()) {
        Shape ys = poolOutShape(c);
        SCOPED_TRACE("x " + shapeToString(c.x) + (includePad ? " incl" : ""));
        Tensor x = randomTensor(dt, c.x, 6, -3, 5);
        Tensor y(dt, ys);
        averagePool(x.view(), y.view(),
                    {c.kernel, c.strides, c.pads, c.dilations}, includePad);
        std::vector<double> xv = values(x), expected(numElements(ys));
        for (int64_t o = 0; o < numElements(ys); ++o) {
          double sum = 0;
          int64_t count = 0;
          refWindow(c, unravel(o, ys), [&](int64_t xi, bool inPadded) {
            sum += xi >= 0 ? xv[xi] : 0;
            count += includePad ? inPadded : xi >= 0;
          });
          expected[o] = sum / count;
        }
        expectAllNear(values(y), expected, dt == DType::F32 ? 1e-6 : 1e-13);
      }
}

TEST(ConvPoolTest, AveragePoolOnHalfStorage) {
  for (bool includePad : {false, true})
    for (DType dt : kHalfTypes)
      for (const PoolCase &c : poolCases()) {
        Shape ys = poolOutShape(c);
        SCOPED_TRACE(std::string(dtypeName(dt)) + " x " +
                     shapeToString(c.x) + (includePad ? " incl" : ""));
        Tensor x = randomTensor(dt, c.x, 6, -3, 5);
        Tensor y(dt, ys);
        averagePool(x.view(), y.view(),
                    {c.kernel, c.strides, c.pads, c.dilations}, includePad);
        std::vector<double> xv = values(x), expected(numElements(ys));
        for (int64_t o = 0; o < numElements(ys); ++o) {
          double sum = 0;
          int64_t count = 0;
          refWindow(c, unravel(o, ys), [&](int64_t xi, bool inPadded) {
            sum += xi >= 0 ? xv[xi] : 0;
            count += includePad ? inPadded : xi >= 0;
          });
          expected[o] = sum / count;
        }
        const int64_t window = numElements(Shape(c.kernel.begin(),
                                                  c.kernel.end()));
        expectHalfNear(values(y), expected, dt, window, 5.0);
      }
}

TEST(ConvPoolTest, AveragePoolHandComputedBorder) {
  // 3x3 input, 2x2 kernel, stride 2, pad 1 on all sides: four windows that
  // each see one to four input values.
  Tensor x = make(DType::F64, {1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor y(DType::F64, {1, 1, 2, 2});
  WindowParams p{{2, 2}, {2, 2}, {1, 1, 1, 1}, {}};
  averagePool(x.view(), y.view(), p, false);
  EXPECT_EQ(values(y), (std::vector<double>{1, 2.5, 5.5, 7}));
  averagePool(x.view(), y.view(), p, true);
  EXPECT_EQ(values(y), (std::vector<double>{0.25, 1.25, 2.75, 7}));
}

TEST(ConvPoolTest, AveragePoolHandComputedDilated) {
  // x = 1..5, kernel 2, dilation 2 (taps o*s - pad and o*s - pad + 2); the
  // expected values are also what onnx.reference gives for AveragePool-19.
  Tensor x = make(DType::F64, {1, 1, 5}, {1, 2, 3, 4, 5});
  // Stride 1, pad 1 each side: the first and last windows each have one tap
  // in the padding, which only count_include_pad counts.
  Tensor y(DType::F64, {1, 1, 5});
  WindowParams p{{2}, {1}, {1, 1}, {2}};
  averagePool(x.view(), y.view(), p, false);
  EXPECT_EQ(values(y), (std::vector<double>{2, 2, 3, 4, 4}));
  averagePool(x.view(), y.view(), p, true);
  EXPECT_EQ(values(y), (std::vector<double>{1, 2, 3, 4, 2}));
  // Stride 2, end pad 1, ceil mode: the last window's second tap (6) lies
  // past the padded input, so neither divisor counts it.
  Tensor yc(DType::F64, {1, 1, 3});
  WindowParams pc{{2}, {2}, {0, 1}, {2}};
  for (bool includePad : {false, true}) {
    averagePool(x.view(), yc.view(), pc, includePad);
    EXPECT_EQ(values(yc), (std::vector<double>{2, 4, 5})) << includePad;
  }
}

TEST(ConvPoolTest, GlobalAveragePool) {
  Tensor x = randomTensor(DType::F32, {2, 3, 4, 5}, 7);
  Tensor y(DType::F32, {2, 3, 1, 1});
  globalAveragePool(x.view(), y.view());
  std::vector<double> xv = values(x), expected(6, 0);
  for (size_t i = 0; i < xv.size(); ++i)
    expected[i / 20] += xv[i] / 20;
  expectAllNear(values(y), expected, 1e-6);
  for (DType dt : kHalfTypes) {
    Tensor xh = make(dt, x.shape(), xv);
    Tensor yh(dt, {2, 3, 1, 1});
    globalAveragePool(xh.view(), yh.view());
    std::vector<double> xhv = values(xh), mean(6, 0);
    for (size_t i = 0; i < xhv.size(); ++i)
      mean[i / 20] += xhv[i] / 20;
    expectHalfNear(values(yh), mean, dt, 20, 1.0);
  }
}

} // namespace
