//===- ResizeTest.cpp - Resize and its backward ---------------------------===//
//
// Against the ONNX documentation's examples and a float64 port of ONNX's
// reference implementation (onnx/reference/ops/op_resize.py): per dim, a
// [out, in] matrix of the coefficients with which each output reads its
// neighbours (the two indices around the coordinate, the left one first,
// an integer coordinate read as the window [x - 1, x] with coefficients
// [0, 1], neighbours clamped into the input; for cubic, the four indices
// of the edge-padded input nearest the coordinate, found by sorting by
// distance as ONNX does), applied dim after dim. The
// backward's reference applies the transposed matrices to dy (the adjoint
// of the forward), which the kernel computes quite differently: each dx
// element gathers the outputs that read it.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <string>

namespace remat::rt::test {
namespace {

using Matrix = std::vector<std::vector<double>>; // [out][in]

/// ONNX's x_original for output index o of a dim (op_resize.py).
double onnxCoordinate(ResizeCoordinates mode, double o, double scale,
                      int64_t in, int64_t outInt) {
  const double out = scale * static_cast<double>(in);
  switch (mode) {
  case ResizeCoordinates::AlignCorners:
    return out == 1 ? 0 : o * (in - 1) / (out - 1);
  case ResizeCoordinates::Asymmetric: return o / scale;
  case ResizeCoordinates::PytorchHalfPixel:
    return out == 1 ? -0.5 : (o + 0.5) / scale - 0.5;
  case ResizeCoordinates::HalfPixel: return (o + 0.5) / scale - 0.5;
  case ResizeCoordinates::HalfPixelSymmetric: {
    const double adjustment = outInt / out;
    const double center = in / 2.0;
    return center * (1 - adjustment) + (o + 0.5) / scale - 0.5;
  }
  }
  return 0;
}

/// ONNX's _cubic_coeffs(ratio, A) and _get_neighbor: the four indices of
/// the input padded by two edge copies on each side nearest x (ties to the
/// lower), in order, as indices of the unpadded input.
void addOnnxCubicCoefficients(const ResizeParams &p, int64_t in, double x,
                              std::vector<double> &row) {
  const double xi = std::floor(x);
  const double ratio = x == xi ? 1.0 : x - xi;
  const double a = p.cubicCoeffA, s = 1 - ratio;
  double c[4] = {((a * (ratio + 1) - 5 * a) * (ratio + 1) + 8 * a) *
                         (ratio + 1) -
                     4 * a,
                 ((a + 2) * ratio - (a + 3)) * ratio * ratio + 1,
                 ((a + 2) * s - (a + 3)) * s * s + 1,
                 ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a};
  const int64_t pad = 2, padded = in + 2 * pad;
  std::vector<int64_t> order(padded);
  for (int64_t i = 0; i < padded; ++i)
    order[i] = i;
  const double at = x + pad;
  std::stable_sort(order.begin(), order.end(), [&](int64_t l, int64_t r) {
    return std::fabs(at - l) < std::fabs(at - r);
  });
  std::vector<int64_t> window(order.begin(), order.begin() + 4);
  std::sort(window.begin(), window.end());
  if (p.excludeOutside) {
    double sum = 0;
    for (int k = 0; k < 4; ++k) {
      if (window[k] - pad < 0 || window[k] - pad >= in)
        c[k] = 0;
      sum += c[k];
    }
    for (double &ck : c)
      ck /= sum;
  }
  for (int k = 0; k < 4; ++k)
    row[std::clamp<int64_t>(window[k] - pad, 0, in - 1)] += c[k];
}

Matrix onnxCoefficients(const ResizeParams &p, int64_t in, int64_t out,
                        double scale) {
  Matrix w(out, std::vector<double>(in, 0.0));
  const bool copied = in == out && std::fabs(scale - 1) <= 1e-9;
  for (int64_t o = 0; o < out; ++o) {
    if (copied) {
      w[o][o] = 1;
      continue;
    }
    const double x = onnxCoordinate(p.coordinates, o, scale, in, out);
    if (p.mode == ResizeMode::Cubic) {
      addOnnxCubicCoefficients(p, in, x, w[o]);
      continue;
    }
    const double xi = std::floor(x);
    const bool integer = x == xi;
    const double ratio = integer ? 1.0 : x - xi;
    // The window of two neighbours, the left one first.
    const int64_t left = integer ? static_cast<int64_t>(x) - 1
                                 : static_cast<int64_t>(xi);
    double c[2];
    if (p.mode == ResizeMode::Linear) {
      c[0] = 1 - ratio;
      c[1] = ratio;
    } else if (integer) {
      c[0] = 0;
      c[1] = 1;
    } else {
      bool right = false;
      switch (p.nearest) {
      case ResizeNearest::RoundPreferFloor: right = ratio > 0.5; break;
      case ResizeNearest::RoundPreferCeil: right = ratio >= 0.5; break;
      case ResizeNearest::Floor: right = false; break;
      case ResizeNearest::Ceil: right = true; break;
      }
      c[0] = right ? 0 : 1;
      c[1] = right ? 1 : 0;
    }
    for (int k = 0; k < 2; ++k) {
      const int64_t i = std::clamp<int64_t>(left + k, 0, in - 1);
      w[o][i] += c[k];
    }
  }
  return w;
}

/// Applies `w` ([out][in], or its transpose) along dim d of `x`.
std::vector<double> applyAlong(const std::vector<double> &x, Shape &shape,
                               int64_t d, const Matrix &w, bool transpose) {
  const int64_t from = shape[d];
  const int64_t to = transpose ? static_cast<int64_t>(w[0].size())
                               : static_cast<int64_t>(w.size());
  Shape outShape = shape;
  outShape[d] = to;
  std::vector<double> y(numElements(outShape), 0.0);
  for (int64_t e = 0; e < numElements(outShape); ++e) {
    std::vector<int64_t> idx = unravel(e, outShape);
    const int64_t t = idx[d];
    for (int64_t f = 0; f < from; ++f) {
      idx[d] = f;
      y[e] += (transpose ? w[f][t] : w[t][f]) * x[ravel(idx, shape)];
    }
  }
  shape = outShape;
  return y;
}

std::vector<double> refResize(const std::vector<double> &x, const Shape &in,
                              const Shape &out, const ResizeParams &p) {
  std::vector<double> y = x;
  Shape shape = in;
  for (size_t d = 0; d < in.size(); ++d)
    y = applyAlong(y, shape, d, onnxCoefficients(p, in[d], out[d], p.scales[d]),
                   false);
  return y;
}

std::vector<double> refResizeBackward(const std::vector<double> &dy,
                                      const Shape &in, const Shape &out,
                                      const ResizeParams &p) {
  std::vector<double> dx = dy;
  Shape shape = out;
  for (size_t d = 0; d < in.size(); ++d)
    dx = applyAlong(dx, shape, d,
                    onnxCoefficients(p, in[d], out[d], p.scales[d]), true);
  return dx;
}

ResizeParams params(ResizeMode mode, ResizeCoordinates coordinates,
                    std::vector<double> scales,
                    ResizeNearest nearest = ResizeNearest::RoundPreferFloor) {
  ResizeParams p;
  p.mode = mode;
  p.coordinates = coordinates;
  p.nearest = nearest;
  p.scales = DimScales(scales.begin(), scales.end());
  return p;
}

TEST(ResizeTest, OnnxExamples) {
  // test_resize_upsample_scales_linear (half_pixel).
  Tensor x = make(DType::F32, {1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor y(DType::F32, {1, 1, 4, 4});
  resize(x.view(), y.view(),
         params(ResizeMode::Linear, ResizeCoordinates::HalfPixel,
                {1, 1, 2, 2}));
  expectAllNear(values(y),
                {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5,
                 3, 3.25, 3.75, 4},
                1e-7);
  // test_resize_upsample_scales_linear_align_corners.
  resize(x.view(), y.view(),
         params(ResizeMode::Linear, ResizeCoordinates::AlignCorners,
                {1, 1, 2, 2}));
  expectAllNear(values(y),
                {1, 4.0 / 3, 5.0 / 3, 2, 5.0 / 3, 2, 7.0 / 3, 8.0 / 3,
                 7.0 / 3, 8.0 / 3, 3, 10.0 / 3, 3, 10.0 / 3, 11.0 / 3, 4},
                1e-6);
  // test_resize_upsample_scales_nearest: scales 2 x 3.
  Tensor y23(DType::F32, {1, 1, 4, 6});
  resize(x.view(), y23.view(),
         params(ResizeMode::Nearest, ResizeCoordinates::HalfPixel,
                {1, 1, 2, 3}));
  EXPECT_EQ(values(y23),
            (std::vector<double>{1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3,
                                 4, 4, 4, 3, 3, 3, 4, 4, 4}));
  // test_resize_downsample_scales_nearest: [1, 2, 3, 4; 5, 6, 7, 8] at 0.6.
  Tensor big = make(DType::F32, {1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor small(DType::F32, {1, 1, 1, 2});
  resize(big.view(), small.view(),
         params(ResizeMode::Nearest, ResizeCoordinates::HalfPixel,
                {1, 1, 0.6, 0.6}));
  EXPECT_EQ(values(small), (std::vector<double>{1, 3}));
}

TEST(ResizeTest, EveryModeAgainstOnnxReference) {
  const Shape in = {2, 3, 5, 4};
  const std::vector<double> xv = randomValues(numElements(in), 21);
  struct Size {
    Shape out;
    std::vector<double> scales;
  };
  // Up and down, ONNX's floor(in * scale) sizes and sizes given (scale
  // out / in), unchanged dims, a one-element output.
  const Size sizes[] = {{{2, 3, 10, 8}, {1, 1, 2, 2}},
                        {{2, 3, 3, 2}, {1, 1, 0.6, 0.6}},
                        {{2, 3, 8, 7}, {1, 1, 1.7, 1.75}},
                        {{2, 3, 7, 3}, {1, 1, 7.0 / 5, 3.0 / 4}},
                        {{2, 3, 1, 9}, {1, 1, 0.2, 9.0 / 4}},
                        {{2, 6, 5, 4}, {1, 2, 1, 1}}};
  const ResizeCoordinates coordinates[] = {
      ResizeCoordinates::HalfPixel, ResizeCoordinates::HalfPixelSymmetric,
      ResizeCoordinates::PytorchHalfPixel, ResizeCoordinates::AlignCorners,
      ResizeCoordinates::Asymmetric};
  const ResizeNearest nearest[] = {
      ResizeNearest::RoundPreferFloor, ResizeNearest::RoundPreferCeil,
      ResizeNearest::Floor, ResizeNearest::Ceil};
  for (const Size &s : sizes)
    for (ResizeCoordinates c : coordinates)
      for (int m = 0; m < 7; ++m) {
        // Four nearest modes, linear, cubic, and cubic at a = -0.5
        // excluding outside taps.
        ResizeParams p =
            m == 4   ? params(ResizeMode::Linear, c, s.scales)
            : m >= 5 ? params(ResizeMode::Cubic, c, s.scales)
                     : params(ResizeMode::Nearest, c, s.scales, nearest[m]);
        if (m == 6) {
          p.cubicCoeffA = -0.5;
          p.excludeOutside = true;
        }
        SCOPED_TRACE(shapeToString(s.out) + " coordinates " +
                     std::to_string(static_cast<int>(c)) + " mode " +
                     std::to_string(m));
        Tensor x = make(DType::F64, in, xv);
        Tensor y(DType::F64, s.out);
        resize(x.view(), y.view(), p);
        expectAllNear(values(y), refResize(xv, in, s.out, p), 1e-13);
        const std::vector<double> dyv = randomValues(numElements(s.out), 23);
        Tensor dy = make(DType::F64, s.out, dyv);
        Tensor dx(DType::F64, in);
        resizeBackward(dy.view(), dx.view(), p);
        expectAllNear(values(dx), refResizeBackward(dyv, in, s.out, p), 1e-12);
      }
}

TEST(ResizeTest, StorageTypes) {
  // Nearest copies every dtype exactly; linear computes f32 for 16-bit
  // storage and rounds once.
  const Shape in = {1, 2, 3, 3}, out = {1, 2, 5, 4};
  const std::vector<double> xv = randomValues(numElements(in), 31);
  ResizeParams nearest = params(ResizeMode::Nearest,
                                ResizeCoordinates::Asymmetric,
                                {1, 1, 5.0 / 3, 4.0 / 3}, ResizeNearest::Floor);
  for (DType dt : {DType::I64, DType::F16, DType::Bool, DType::I8}) {
    Tensor x = make(dt, in, xv);
    Tensor y(dt, out);
    resize(x.view(), y.view(), nearest);
    EXPECT_EQ(values(y), refResize(values(x), in, out, nearest))
        << dtypeName(dt);
  }
  ResizeParams linear = params(ResizeMode::Linear,
                               ResizeCoordinates::PytorchHalfPixel,
                               {1, 1, 5.0 / 3, 4.0 / 3});
  for (auto [dt, tol] : {std::pair{DType::F32, 1e-6},
                         std::pair{DType::BF16, 1e-2},
                         std::pair{DType::F16, 2e-3}}) {
    Tensor x = make(dt, in, xv);
    Tensor y(dt, out);
    resize(x.view(), y.view(), linear);
    expectAllNear(values(y), refResize(values(x), in, out, linear), tol);
    Tensor dy = make(dt, out, randomValues(numElements(out), 33));
    Tensor dx(dt, in);
    resizeBackward(dy.view(), dx.view(), linear);
    expectAllNear(values(dx), refResizeBackward(values(dy), in, out, linear),
                  4 * tol);
  }
  Tensor ints = make(DType::I64, in, xv);
  Tensor intsOut(DType::I64, out);
  EXPECT_THROW(resize(ints.view(), intsOut.view(), linear), RuntimeError);
}

TEST(ResizeTest, RejectsBadParameters) {
  Tensor x(DType::F32, {2, 3}), y(DType::F32, {4, 6});
  EXPECT_THROW(resize(x.view(), y.view(),
                      params(ResizeMode::Linear, ResizeCoordinates::HalfPixel,
                             {2})),
               RuntimeError);
  EXPECT_THROW(resize(x.view(), y.view(),
                      params(ResizeMode::Linear, ResizeCoordinates::HalfPixel,
                             {2, 0})),
               RuntimeError);
  Tensor y3(DType::F32, {4, 6, 1});
  EXPECT_THROW(resize(x.view(), y3.view(),
                      params(ResizeMode::Nearest, ResizeCoordinates::HalfPixel,
                             {2, 2})),
               RuntimeError);
  Tensor yi(DType::I32, {4, 6});
  EXPECT_THROW(resize(x.view(), yi.view(),
                      params(ResizeMode::Nearest, ResizeCoordinates::HalfPixel,
                             {2, 2})),
               RuntimeError);
}

} // namespace
} // namespace remat::rt::test
