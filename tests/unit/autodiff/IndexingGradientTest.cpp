//===- IndexingGradientTest.cpp - gather_nd, scatter_nd, resize gradients -===//
//
// Finite-difference checks (GradCheck.h, float64, the defaults of
// GradientTest.cpp) of the gradients of the N-dimensional indexing and
// resampling ops: repeated and negative index tuples, batch dims, every
// Resize coordinate mode in both directions of scaling.
//
//===----------------------------------------------------------------------===//

#include "ForwardBuilder.h"
#include "GradCheck.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace remat;
using namespace remat::gradcheck;

namespace {

TEST(IndexingGradient, GatherNDRepeatedNegativeTuplesAndBatchDims) {
  {
    // Rows of a [4, 3] matrix; row 1 is named three times (1, -3, 1).
    Forward f;
    f.param("x", {4, 3}).input("i", T({5, 1}, "i64"));
    f.op("%y = remat.gather_nd %x, %i : (" + T({4, 3}) + ", " +
         T({5, 1}, "i64") + ") -> " + T({5, 3}));
    GradCheck(f.weighted("%y", {5, 3}))
        .value("i", i64Tensor({5, 1}, {1, -3, 0, 1, 3}))
        .run();
  }
  {
    // Single elements of a [2, 3, 2] tensor (full-depth tuples), repeated.
    Forward f;
    f.param("x", {2, 3, 2}).input("i", T({2, 2, 3}, "i64"));
    f.op("%y = remat.gather_nd %x, %i : (" + T({2, 3, 2}) + ", " +
         T({2, 2, 3}, "i64") + ") -> " + T({2, 2}));
    GradCheck(f.weighted("%y", {2, 2}))
        .value("i", i64Tensor({2, 2, 3}, {1, 2, 0, 0, 0, 1, 1, 2, 0, -1, -1, 1}))
        .run();
  }
  {
    // batch_dims = 1: each batch element's own rows.
    Forward f;
    f.param("x", {2, 4, 3}).input("i", T({2, 3, 1}, "i64"));
    f.op("%y = remat.gather_nd %x, %i {batch_dims = 1 : i64} : (" +
         T({2, 4, 3}) + ", " + T({2, 3, 1}, "i64") + ") -> " + T({2, 3, 3}));
    GradCheck(f.weighted("%y", {2, 3, 3}))
        .value("i", i64Tensor({2, 3, 1}, {3, 0, 3, 1, -1, 2}))
        .run();
  }
}

TEST(IndexingGradient, ScatterNDNoneAndAdd) {
  // Distinct tuples for `none` (ONNX leaves repeated ones undefined);
  // repeated ones for `add`, where each copy's update is added.
  struct Case {
    const char *reduction;
    std::vector<int64_t> tuples;
  };
  for (const Case &c : {Case{"none", {2, 0, -1}}, Case{"add", {2, 0, 2}}}) {
    SCOPED_TRACE(c.reduction);
    Forward f;
    f.param("x", {4, 3}).param("u", {3, 3}).input("i", T({3, 1}, "i64"));
    f.op(std::string("%y = remat.scatter_nd %x, %i, %u {reduction = \"") +
         c.reduction + "\"} : (" + T({4, 3}) + ", " + T({3, 1}, "i64") +
         ", " + T({3, 3}) + ") -> " + T({4, 3}));
    GradCheck(f.weighted("%y", {4, 3}))
        .value("i", i64Tensor({3, 1}, c.tuples))
        .run();
  }
  {
    // Element updates of a 3-D tensor.
    Forward f;
    f.param("x", {2, 2, 3}).param("u", {4}).input("i", T({4, 3}, "i64"));
    f.op("%y = remat.scatter_nd %x, %i, %u {reduction = \"add\"} : (" +
         T({2, 2, 3}) + ", " + T({4, 3}, "i64") + ", " + T({4}) + ") -> " +
         T({2, 2, 3}));
    GradCheck(f.weighted("%y", {2, 2, 3}))
        .value("i", i64Tensor({4, 3}, {0, 1, 2, 1, 0, 0, 0, 1, 2, 1, 1, -1}))
        .run();
  }
}

std::string f64Array(const std::vector<double> &values) {
  std::ostringstream text;
  text.precision(17);
  text << std::scientific;
  text << "array<f64";
  for (size_t i = 0; i < values.size(); ++i)
    text << (i ? ", " : ": ") << values[i];
  text << ">";
  return text.str();
}

TEST(IndexingGradient, ResizeEveryModeUpAndDown) {
  struct Size {
    rt::Shape in, out;
    std::vector<double> scales;
  };
  const Size sizes[] = {{{1, 2, 3, 4}, {1, 2, 6, 7}, {1, 1, 2, 1.75}},
                        {{1, 1, 5, 6}, {1, 1, 3, 2}, {1, 1, 0.6, 1.0 / 3}},
                        {{2, 3, 4}, {2, 5, 3}, {1, 5.0 / 3, 0.8}}};
  const char *coordinates[] = {"half_pixel", "half_pixel_symmetric",
                               "pytorch_half_pixel", "align_corners",
                               "asymmetric"};
  const char *modes[][2] = {{"cubic", "round_prefer_floor"},
                            {"linear", "round_prefer_floor"},
                            {"nearest", "round_prefer_floor"},
                            {"nearest", "round_prefer_ceil"},
                            {"nearest", "floor"},
                            {"nearest", "ceil"}};
  for (const Size &s : sizes)
    for (const char *c : coordinates)
      for (auto &mode : modes) {
        SCOPED_TRACE(rt::shapeToString(s.out) + " " + c + " " + mode[0] + " " +
                     mode[1]);
        Forward f;
        f.param("x", s.in);
        f.op(std::string("%y = remat.resize %x {mode = \"") + mode[0] +
             "\", coordinate_transformation_mode = \"" + c +
             "\", nearest_mode = \"" + mode[1] +
             "\", scales = " + f64Array(s.scales) + "} : (" + T(s.in) +
             ") -> " + T(s.out));
        GradCheck(f.weighted("%y", s.out)).run();
      }
  // Cubic at a = -0.5 without the taps outside the input (renormalised).
  for (const Size &s : sizes) {
    Forward f;
    f.param("x", s.in);
    f.op("%y = remat.resize %x {mode = \"cubic\", cubic_coeff_a = -5.0e-01, "
         "exclude_outside = true, scales = " +
         f64Array(s.scales) + "} : (" + T(s.in) + ") -> " + T(s.out));
    GradCheck(f.weighted("%y", s.out)).run();
  }
}

} // namespace
