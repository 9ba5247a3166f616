//===- LossTest.cpp - SoftmaxCrossEntropyLoss and NLLLoss -----------------===//
//
// F16/BF16 results are checked by the rule in TestUtil.h: the
// log-probabilities with n = 4 and M their terms' bound, the losses (summed
// in double from the 16-bit log-probabilities) with n = 0.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

using namespace remat::rt;
using namespace remat::rt::test;

namespace {

/// Reference per-element NLL and reduction (ONNX reference semantics).
struct RefLoss {
  std::vector<double> perElement;
  double sum = 0, weightSum = 0;
};

RefLoss refNll(const std::vector<double> &logProb, const Shape &shape,
               const std::vector<double> &labels,
               const std::vector<double> &weights, int64_t ignore,
               bool hasIgnore) {
  const int64_t N = shape[0], C = shape[1];
  const int64_t D = numElements(shape) / (N * C);
  RefLoss r;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t d = 0; d < D; ++d) {
      const int64_t t = static_cast<int64_t>(labels[n * D + d]);
      double l = 0, w = 0;
      if (!(hasIgnore && t == ignore)) {
        w = weights.empty() ? 1 : weights[t];
        l = -logProb[(n * C + t) * D + d] * w;
      }
      r.perElement.push_back(l);
      r.sum += l;
      r.weightSum += w;
    }
  return r;
}

std::vector<double> refLogSoftmaxAxis1(const std::vector<double> &x,
                                       const Shape &shape) {
  const int64_t N = shape[0], C = shape[1];
  const int64_t D = numElements(shape) / (N * C);
  std::vector<double> y(x.size());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t d = 0; d < D; ++d) {
      double m = -INFINITY, s = 0;
      for (int64_t c = 0; c < C; ++c)
        m = std::max(m, x[(n * C + c) * D + d]);
      for (int64_t c = 0; c < C; ++c)
        s += std::exp(x[(n * C + c) * D + d] - m);
      for (int64_t c = 0; c < C; ++c)
        y[(n * C + c) * D + d] = x[(n * C + c) * D + d] - m - std::log(s);
    }
  return y;
}

TEST(LossTest, SoftmaxCrossEntropyAllModes) {
  const Shape scoresShape = {4, 5, 3}; // [N, C, d1]
  const Shape labelShape = {4, 3};
  std::vector<double> labels = {0, 1, 2, 3, 4, -100, 4, 4, 1, 0, -100, 2};
  std::vector<double> weights = {0.5, 1, 2, 1.5, 0.25};
  for (DType dt : {DType::F32, DType::F64})
    for (DType ldt : {DType::I64, DType::I32})
      for (bool useWeights : {false, true})
        for (bool useIgnore : {false, true}) {
          // Without ignore_index, -100 labels would be out of range.
          std::vector<double> lab = labels;
          if (!useIgnore)
            for (double &l : lab)
              l = l < 0 ? 1 : l;
          Tensor scores = randomTensor(dt, scoresShape, 3, -3, 3);
          Tensor tl = make(ldt, labelShape, lab);
          Tensor tw = make(dt, {5}, weights);
          std::vector<double> lp =
              refLogSoftmaxAxis1(values(scores), scoresShape);
          RefLoss ref = refNll(lp, scoresShape, lab,
                               useWeights ? weights : std::vector<double>{},
                               -100, useIgnore);
          const double tol = dt == DType::F32 ? 1e-5 : 1e-12;
          for (LossReduction red :
               {LossReduction::None, LossReduction::Sum, LossReduction::Mean}) {
            Tensor loss(dt, red == LossReduction::None ? labelShape : Shape{});
            Tensor logProb(dt, scoresShape);
            softmaxCrossEntropyLoss(scores.view(), tl.view(),
                                    useWeights ? tw.view() : TensorView(),
                                    loss.view(), logProb.view(), red, -100,
                                    useIgnore);
            expectAllNear(values(logProb), lp, tol);
            if (red == LossReduction::None)
              expectAllNear(values(loss), ref.perElement, tol);
            else if (red == LossReduction::Sum)
              expectAllNear(values(loss), {ref.sum}, tol);
            else
              expectAllNear(values(loss), {ref.sum / ref.weightSum}, tol);
          }
        }
}

TEST(LossTest, LossesOnHalfStorage) {
  const Shape scoresShape = {4, 5, 3};
  const Shape labelShape = {4, 3};
  const std::vector<double> labels = {0, 1, 2, 3, 4, -100,
                                      4, 4, 1, 0, -100, 2};
  const std::vector<double> weights = {0.5, 1, 2, 1.5, 0.25};
  for (DType dt : kHalfTypes)
    for (LossReduction red :
         {LossReduction::None, LossReduction::Sum, LossReduction::Mean}) {
      SCOPED_TRACE(std::string(dtypeName(dt)) + " reduction " +
                   std::to_string(static_cast<int>(red)));
      Tensor scores = randomTensor(dt, scoresShape, 3, -3, 3);
      Tensor tl = make(DType::I64, labelShape, labels);
      Tensor tw = make(dt, {5}, weights);
      const Shape lossShape =
          red == LossReduction::None ? labelShape : Shape{};
      Tensor loss(dt, lossShape), logProb(dt, scoresShape);
      softmaxCrossEntropyLoss(scores.view(), tl.view(), tw.view(),
                              loss.view(), logProb.view(), red, -100, true);
      // log-softmax terms: |x - max| <= 6 and log(sum) <= log(5).
      expectHalfNear(values(logProb),
                     refLogSoftmaxAxis1(values(scores), scoresShape), dt, 4,
                     6 + std::log(5.0));
      // The loss is the NLL of the (16-bit) log-probabilities; nllLoss on
      // them directly must agree.
      const RefLoss ref = refNll(values(logProb), scoresShape, labels,
                                 values(tw), -100, true);
      const std::vector<double> expected =
          red == LossReduction::None  ? ref.perElement
          : red == LossReduction::Sum ? std::vector<double>{ref.sum}
                                      : std::vector<double>{ref.sum /
                                                            ref.weightSum};
      expectHalfNear(values(loss), expected, dt, 0);
      Tensor nll(dt, lossShape);
      nllLoss(logProb.view(), tl.view(), tw.view(), nll.view(), red, -100,
              true);
      expectHalfNear(values(nll), expected, dt, 0);
    }
}

TEST(LossTest, HandComputedCrossEntropy) {
  // Uniform scores over 4 classes: every target costs log(4).
  Tensor scores(DType::F64, {3, 4});
  Tensor labels = make(DType::I64, {3}, {0, 3, 1});
  Tensor loss(DType::F64, {});
  softmaxCrossEntropyLoss(scores.view(), labels.view(), TensorView(),
                          loss.view(), TensorView(), LossReduction::Mean, 0,
                          false);
  EXPECT_NEAR(values(loss)[0], std::log(4.0), 1e-12);
  // Ignoring label 3 with weights {1, 2, 1, 1}: mean over weights 1 + 2.
  Tensor w = make(DType::F64, {4}, {1, 2, 1, 1});
  softmaxCrossEntropyLoss(scores.view(), labels.view(), w.view(), loss.view(),
                          TensorView(), LossReduction::Mean, 3, true);
  EXPECT_NEAR(values(loss)[0], std::log(4.0), 1e-12);
  softmaxCrossEntropyLoss(scores.view(), labels.view(), w.view(), loss.view(),
                          TensorView(), LossReduction::Sum, 3, true);
  EXPECT_NEAR(values(loss)[0], 3 * std::log(4.0), 1e-12);
}

TEST(LossTest, NllLossMatchesReference) {
  const Shape shape = {3, 4, 2, 2};
  Tensor input = randomTensor(DType::F32, shape, 8, -4, 0);
  std::vector<double> lab = {0, 1, 2, 3, 3, 2, 1, 0, 1, 1, 2, 2};
  Tensor labels = make(DType::I32, {3, 2, 2}, lab);
  std::vector<double> weights = {1, 0.5, 2, 3};
  Tensor w = make(DType::F32, {4}, weights);
  RefLoss ref = refNll(values(input), shape, lab, weights, 2, true);
  Tensor none(DType::F32, {3, 2, 2});
  nllLoss(input.view(), labels.view(), w.view(), none.view(),
          LossReduction::None, 2, true);
  expectAllNear(values(none), ref.perElement, 1e-6);
  Tensor mean(DType::F32, {});
  nllLoss(input.view(), labels.view(), w.view(), mean.view(),
          LossReduction::Mean, 2, true);
  expectAllNear(values(mean), {ref.sum / ref.weightSum}, 1e-6);
}

TEST(LossTest, OutOfRangeLabelThrows) {
  Tensor input(DType::F32, {2, 3});
  Tensor labels = make(DType::I64, {2}, {0, 3});
  Tensor loss(DType::F32, {});
  EXPECT_THROW(nllLoss(input.view(), labels.view(), TensorView(), loss.view(),
                       LossReduction::Mean, -1, true),
               RuntimeError);
  Tensor wrongLoss(DType::F32, {2});
  Tensor ok = make(DType::I64, {2}, {0, 1});
  EXPECT_THROW(nllLoss(input.view(), ok.view(), TensorView(), wrongLoss.view(),
                       LossReduction::Sum, -1, false),
               RuntimeError);
}

} // namespace
