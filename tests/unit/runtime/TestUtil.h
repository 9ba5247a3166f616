//===- TestUtil.h - Helpers for the runtime kernel tests ---------*- C++ -*-===//
//
// Tensors built from double values, deterministic random data, and the
// index arithmetic the naive float64 reference loops need.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TESTS_UNIT_RUNTIME_TESTUTIL_H
#define REMAT_TESTS_UNIT_RUNTIME_TESTUTIL_H

#include "remat/runtime/Kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace remat::rt::test {

inline double getElement(const TensorView &t, int64_t i) {
  switch (t.dtype) {
  case DType::F32: return t.as<float>()[i];
  case DType::F64: return t.as<double>()[i];
  case DType::F16: return halfToFloat(t.as<uint16_t>()[i]);
  case DType::BF16: return bfloat16ToFloat(t.as<uint16_t>()[i]);
  case DType::I64: return static_cast<double>(t.as<int64_t>()[i]);
  case DType::I32: return t.as<int32_t>()[i];
  case DType::I8: return t.as<int8_t>()[i];
  case DType::U8: return t.as<uint8_t>()[i];
  case DType::Bool: return t.as<uint8_t>()[i] ? 1 : 0;
  }
  return 0;
}

inline void setElement(const TensorView &t, int64_t i, double v) {
  switch (t.dtype) {
  case DType::F32: t.as<float>()[i] = static_cast<float>(v); break;
  case DType::F64: t.as<double>()[i] = v; break;
  case DType::F16: t.as<uint16_t>()[i] = floatToHalf(static_cast<float>(v)); break;
  case DType::BF16:
    t.as<uint16_t>()[i] = floatToBfloat16(static_cast<float>(v));
    break;
  case DType::I64: t.as<int64_t>()[i] = static_cast<int64_t>(v); break;
  case DType::I32: t.as<int32_t>()[i] = static_cast<int32_t>(v); break;
  case DType::I8: t.as<int8_t>()[i] = static_cast<int8_t>(v); break;
  case DType::U8: t.as<uint8_t>()[i] = static_cast<uint8_t>(v); break;
  case DType::Bool: t.as<uint8_t>()[i] = v != 0; break;
  }
}

inline Tensor make(DType dtype, Shape shape, const std::vector<double> &values) {
  Tensor t(dtype, std::move(shape));
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.numel());
  for (size_t i = 0; i < values.size(); ++i)
    setElement(t.view(), static_cast<int64_t>(i), values[i]);
  return t;
}

inline std::vector<double> values(const TensorView &t) {
  std::vector<double> v(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i)
    v[i] = getElement(t, i);
  return v;
}
inline std::vector<double> values(const Tensor &t) { return values(t.view()); }

/// Uniform values in [lo, hi) from a fixed seed.
inline std::vector<double> randomValues(int64_t n, unsigned seed,
                                        double lo = -1, double hi = 1) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(n);
  for (double &x : v)
    x = dist(gen);
  return v;
}

inline Tensor randomTensor(DType dtype, Shape shape, unsigned seed,
                           double lo = -1, double hi = 1) {
  return make(dtype, shape, randomValues(numElements(shape), seed, lo, hi));
}

/// Row-major multi-index of flat index `flat` in `shape`.
inline std::vector<int64_t> unravel(int64_t flat, const Shape &shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  return idx;
}

inline int64_t ravel(const std::vector<int64_t> &idx, const Shape &shape) {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    flat = flat * shape[d] + idx[d];
  return flat;
}

/// Flat index into `in` of output multi-index `outIdx` under numpy
/// broadcasting (in's dims right-aligned, size-1 dims pinned to 0).
inline int64_t broadcastSource(const std::vector<int64_t> &outIdx,
                               const Shape &in) {
  size_t lead = outIdx.size() - in.size();
  std::vector<int64_t> idx(in.size());
  for (size_t d = 0; d < in.size(); ++d)
    idx[d] = in[d] == 1 ? 0 : outIdx[lead + d];
  return ravel(idx, in);
}

inline void expectAllNear(const std::vector<double> &actual,
                          const std::vector<double> &expected, double tol) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i)
    ASSERT_NEAR(actual[i], expected[i], tol * (1 + std::abs(expected[i])))
        << "at flat index " << i;
}

//===----------------------------------------------------------------------===//
// 16-bit results. A kernel on F16/BF16 storage widens its inputs exactly,
// computes in fp32 (or double) and rounds each result once, so against a
// float64 reference computed from the same widened inputs (the references
// read values(), which widens exactly) every element satisfies
//
//   |actual - reference| <= 2^-p |reference| + n 2^-22 M + s
//
//   2^-p |reference|  the rounding on store: p significant bits of the
//                     output format, BF16 8, F16 11 (half an ulp);
//   n 2^-22 M         the fp32 arithmetic before it: a sum of n terms whose
//                     magnitudes add up to M errs by at most n 2^-24 M
//                     (Higham's gamma_n); 2^-22 leaves a factor 4 for fp32
//                     library functions' last-bit errors and parameters
//                     rounded to fp32. n is the accumulation length for
//                     GEMMs and other fp32 sums, a few for elementwise
//                     formulas (M then |reference| or the operands' scale),
//                     0 where the kernel computes in double;
//   s                 half the format's smallest subnormal (F16 2^-25,
//                     BF16 2^-134): rounding near zero.
//
// A sum accumulated in 16 bits instead misses this bound by far (see
// ReduceTest's and MatMulTest's long sums).
//===----------------------------------------------------------------------===//

inline constexpr DType kHalfTypes[] = {DType::BF16, DType::F16};

/// Significant bits (the implicit one included) of a float dtype.
inline int significantBits(DType dtype) {
  switch (dtype) {
  case DType::BF16: return 8;
  case DType::F16: return 11;
  case DType::F32: return 24;
  default: return 53;
  }
}

inline double halfTolerance(DType dtype, double reference, int64_t n,
                            double magnitude) {
  const double subnormal = dtype == DType::F16 ? 0x1p-25 : 0x1p-134;
  return std::ldexp(std::abs(reference), -significantBits(dtype)) +
         static_cast<double>(n) * 0x1p-22 * magnitude + subnormal;
}

/// Checks `actual` (a 16-bit kernel's result) against `reference` by the
/// rule above, with M = magnitude[i] (|reference[i]| when empty).
inline void expectHalfNear(const std::vector<double> &actual,
                           const std::vector<double> &reference, DType dtype,
                           int64_t n = 1,
                           const std::vector<double> &magnitude = {}) {
  ASSERT_EQ(actual.size(), reference.size());
  ASSERT_TRUE(magnitude.empty() || magnitude.size() == reference.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    const double m = magnitude.empty() ? std::abs(reference[i]) : magnitude[i];
    ASSERT_NEAR(actual[i], reference[i],
                halfTolerance(dtype, reference[i], n, m))
        << dtypeName(dtype) << " at flat index " << i;
  }
}

/// The same with one magnitude M for every element (the tensor's scale).
inline void expectHalfNear(const std::vector<double> &actual,
                           const std::vector<double> &reference, DType dtype,
                           int64_t n, double magnitude) {
  expectHalfNear(actual, reference, dtype, n,
                 std::vector<double>(reference.size(), magnitude));
}

/// The largest |v|.
inline double maxAbsValue(const std::vector<double> &v) {
  double m = 0;
  for (double x : v)
    m = std::max(m, std::abs(x));
  return m;
}

/// t's values (widened exactly) as an F64 tensor of t's shape.
inline Tensor widened(const Tensor &t) {
  return make(DType::F64, t.shape(), values(t));
}

} // namespace remat::rt::test

#endif // REMAT_TESTS_UNIT_RUNTIME_TESTUTIL_H
