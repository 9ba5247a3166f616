//===- LossTest.cpp - CUDA cross-entropy and NLL losses and backward ------===//
//
// Per-target values are the CPU's formulas, in double on the CPU and in the
// data's compute type on the GPU (fp32 for F32); the reductions sum in
// another order and log-softmax's exp/log differ in the last bits:
// tolerance().
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtil.h"

using namespace remat::rt;
using namespace remat::rt::cudatest;
namespace rt = remat::rt;

namespace {

using CudaLoss = CudaTest;

struct LossCase {
  Shape scores; // [N, C, d...]
  bool weights, ignore;
  DType labelType;
};

const LossCase kCases[] = {
    {{8, 5}, false, false, DType::I64},
    {{8, 5}, true, true, DType::I32},
    {{3, 4, 6}, true, false, DType::I64},
    {{2, 7, 3, 2}, false, true, DType::I64},
    {{256, 1000}, false, true, DType::I32},
};

Shape labelShape(const Shape &scores) {
  Shape s = {scores[0]};
  s.insert(s.end(), scores.begin() + 2, scores.end());
  return s;
}

TEST_F(CudaLoss, ForwardAndBackwardMatchCpu) {
  unsigned seed = 1;
  for (const LossCase &c : kCases)
    for (DType dtype : {DType::F32, DType::F64})
      for (LossReduction reduction :
           {LossReduction::None, LossReduction::Sum, LossReduction::Mean}) {
        const int64_t C = c.scores[1];
        const Shape ls = labelShape(c.scores);
        const Shape lossShape = reduction == LossReduction::None ? ls : Shape{};
        Tensor scores = randomTensor(dtype, c.scores, ++seed, -3, 3);
        // Label 1 is the ignored one when ignoring.
        Tensor labels = randomIntegers(c.labelType, ls, ++seed, 0, C - 1);
        Tensor weights = randomTensor(dtype, {C}, ++seed, 0.5, 2);
        const TensorView w = c.weights ? weights.view() : TensorView();
        const std::string what = shapeToString(c.scores) + " reduction " +
                                 std::to_string(static_cast<int>(reduction));

        Tensor loss(dtype, lossShape), logProb(dtype, c.scores);
        rt::softmaxCrossEntropyLoss(scores.view(), labels.view(), w,
                                    loss.view(), logProb.view(), reduction, 1,
                                    c.ignore);
        DeviceTensor ds(scores), dl(labels), dw(weights),
            dloss(dtype, lossShape), dlogProb(dtype, c.scores);
        const TensorView dwv = c.weights ? dw.view() : TensorView();
        cuda::softmaxCrossEntropyLoss(ds.view(), dl.view(), dwv, dloss.view(),
                                      dlogProb.view(), reduction, 1, c.ignore);
        expectNear(dloss.host(), loss, tolerance(dtype), what + " loss");
        expectNear(dlogProb.host(), logProb, tolerance(dtype),
                   what + " logProb");
        // In place (the log-probabilities over the scores, InPlaceRowwise),
        // as a memory plan may put them: the same bits.
        {
          DeviceTensor dsOver(scores), dlossOver(dtype, lossShape);
          cuda::softmaxCrossEntropyLoss(dsOver.view(), dl.view(), dwv,
                                        dlossOver.view(), dsOver.view(),
                                        reduction, 1, c.ignore);
          expectSame(dlossOver.host(), dloss.host(), what + " loss in place");
          expectSame(dsOver.host(), dlogProb.host(),
                     what + " logProb in place");
        }
        // Without a logProb output (the fused path).
        DeviceTensor dloss2(dtype, lossShape);
        cuda::softmaxCrossEntropyLoss(ds.view(), dl.view(), dwv, dloss2.view(),
                                      TensorView(), reduction, 1, c.ignore);
        expectNear(dloss2.host(), loss, tolerance(dtype), what + " fused");

        // NLL on the CPU's log-probabilities.
        Tensor nll(dtype, lossShape);
        rt::nllLoss(logProb.view(), labels.view(), w, nll.view(), reduction, 1,
                    c.ignore);
        DeviceTensor dlp(logProb), dnll(dtype, lossShape);
        cuda::nllLoss(dlp.view(), dl.view(), dwv, dnll.view(), reduction, 1,
                      c.ignore);
        expectNear(dnll.host(), nll, tolerance(dtype), what + " nll");

        // Backward of both from the same incoming gradient.
        Tensor dLoss = randomTensor(dtype, lossShape, ++seed, 0.5, 1.5);
        Tensor dScores(dtype, c.scores), dInput(dtype, c.scores);
        rt::softmaxCrossEntropyLossBackward(dLoss.view(), logProb.view(),
                                            labels.view(), w, dScores.view(),
                                            reduction, 1, c.ignore);
        rt::nllLossBackward(dLoss.view(), labels.view(), w, dInput.view(),
                            reduction, 1, c.ignore);
        DeviceTensor ddLoss(dLoss), ddScores(dtype, c.scores),
            ddInput(dtype, c.scores);
        cuda::fill(ddInput.view(), 3); // must be cleared
        cuda::softmaxCrossEntropyLossBackward(ddLoss.view(), dlp.view(),
                                              dl.view(), dwv, ddScores.view(),
                                              reduction, 1, c.ignore);
        cuda::nllLossBackward(ddLoss.view(), dl.view(), dwv, ddInput.view(),
                              reduction, 1, c.ignore);
        expectNear(ddScores.host(), dScores, tolerance(dtype),
                   what + " dscores");
        expectNear(ddInput.host(), dInput, tolerance(dtype), what + " dinput");
        // In place (dscores over the log-probabilities), as a memory plan
        // may put it.
        cuda::softmaxCrossEntropyLossBackward(ddLoss.view(), dlp.view(),
                                              dl.view(), dwv, dlp.view(),
                                              reduction, 1, c.ignore);
        expectNear(dlp.host(), dScores, tolerance(dtype),
                   what + " dscores in place");
      }
}

TEST_F(CudaLoss, LabelsOutOfRangeAreReported) {
  Tensor lp = randomTensor(DType::F32, {2, 3}, 1);
  Tensor labels = make(DType::I64, {2}, {0, 3});
  DeviceTensor dlp(lp), dl(labels), loss(DType::F32, {});
  cuda::nllLoss(dlp.view(), dl.view(), TensorView(), loss.view(),
                LossReduction::Mean, -100, false);
  EXPECT_THROW(syncDevice(), RuntimeError);
  DeviceTensor dloss(DType::F32, {}), dinput(DType::F32, {2, 3});
  cuda::nllLossBackward(dloss.view(), dl.view(), TensorView(), dinput.view(),
                        LossReduction::Sum, -100, false);
  EXPECT_THROW(syncDevice(), RuntimeError);
}

} // namespace
