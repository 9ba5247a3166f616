//===- InPlaceTest.cpp - Backward kernels written over their operands -----===//
//
// The memory plan may put the first result of an op with the
// InPlaceElementwise trait on the storage of an operand of its type that
// dies there (compiler/include/remat/Dialect/InPlace.h). For every backward
// kernel of such an op, writing the result over each such operand must give
// the same bits as writing it elsewhere (the out-of-place values are checked
// against references in GradCheckTest.cpp and ElementwiseTest.cpp). The
// forward ops with the trait are here too, with a broadcast operand beside
// the one written over, and the row-wise ops (InPlaceRowwise: softmax,
// log-softmax, cross-entropy's log-probabilities) over their first operand.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <cstring>
#include <functional>

using namespace remat::rt;
using namespace remat::rt::test;

namespace {

/// A copy of `t` (so that the original survives being written over).
Tensor copyOf(const Tensor &t) {
  Tensor c(t.dtype(), t.shape());
  copy(t.view(), c.view());
  return c;
}

bool sameBits(const Tensor &a, const Tensor &b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.view().data, b.view().data, a.bytes()) == 0;
}

/// Runs `kernel(operands..., result)` once out of place and once with the
/// result written over operand `k`, for each k in `inPlace`; expects the
/// same bits. `kernel` gets the operands as views (index k's is the result's
/// storage in the in-place run) and the result's view.
void expectInPlaceSame(
    const std::string &what, const std::vector<const Tensor *> &operands,
    const std::vector<size_t> &inPlace,
    const std::function<void(const std::vector<TensorView> &,
                             const TensorView &)> &kernel) {
  const Tensor &like = *operands[inPlace.front()];
  Tensor expected(like.dtype(), like.shape());
  std::vector<TensorView> views;
  for (const Tensor *t : operands)
    views.push_back(t->view());
  kernel(views, expected.view());
  for (size_t k : inPlace) {
    SCOPED_TRACE(what + ": result over operand " + std::to_string(k));
    std::vector<Tensor> copies;
    for (const Tensor *t : operands)
      copies.push_back(copyOf(*t));
    std::vector<TensorView> inPlaceViews;
    for (const Tensor &t : copies)
      inPlaceViews.push_back(t.view());
    kernel(inPlaceViews, copies[k].view());
    EXPECT_TRUE(sameBits(copies[k], expected));
  }
}

const DType kFloatTypes[] = {DType::F32, DType::F64};

} // namespace

TEST(InPlaceTest, BinaryOverTheOperandOfTheResultsShape) {
  // (a, b): the result has a's shape; b broadcasts, or has that shape too.
  const std::pair<Shape, Shape> shapes[] = {
      {{2, 3, 4}, {2, 3, 4}}, {{2, 3, 4}, {4}}, {{2, 3, 4}, {3, 1}},
      {{2, 3, 4}, {}}};
  for (DType dt : kFloatTypes)
    for (BinaryOp op : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul,
                        BinaryOp::Div, BinaryOp::Max, BinaryOp::Min,
                        BinaryOp::Pow, BinaryOp::PRelu})
      for (const auto &[as, bs] : shapes) {
        if (op == BinaryOp::PRelu && bs.size() > 1)
          continue; // the slope broadcasts one way
        Tensor a = randomTensor(dt, as, 16, 0.5, 2);
        Tensor b = randomTensor(dt, bs, 17, 0.5, 2);
        std::vector<size_t> over{0};
        if (as == bs)
          over.push_back(1);
        expectInPlaceSame("binary " + std::to_string(static_cast<int>(op)),
                          {&a, &b}, over,
                          [&](const auto &in, const TensorView &out) {
                            binary(op, in[0], in[1], out);
                          });
        // The result over b, with a broadcast: b has the result's shape.
        if (as != bs && op != BinaryOp::PRelu)
          expectInPlaceSame("binary reversed", {&b, &a}, {1},
                            [&](const auto &in, const TensorView &out) {
                              binary(op, in[0], in[1], out);
                            });
      }
}

TEST(InPlaceTest, WhereOverEitherBranch) {
  for (DType dt : kFloatTypes) {
    Tensor cond = make(DType::Bool, {3, 1}, {1, 0, 1});
    Tensor x = randomTensor(dt, {3, 4}, 18);
    Tensor y = randomTensor(dt, {3, 4}, 19);
    Tensor zero = make(dt, {}, {0});
    expectInPlaceSame("where", {&cond, &x, &y}, {1, 2},
                      [&](const auto &in, const TensorView &out) {
                        where(in[0], in[1], in[2], out);
                      });
    expectInPlaceSame("where, broadcast false branch", {&cond, &x, &zero}, {1},
                      [&](const auto &in, const TensorView &out) {
                        where(in[0], in[1], in[2], out);
                      });
  }
}

TEST(InPlaceTest, ActivationBackwardOverXAndDy) {
  for (DType dt : kFloatTypes)
    for (UnaryOp op : {UnaryOp::Relu, UnaryOp::LeakyRelu, UnaryOp::Elu,
                       UnaryOp::Softplus, UnaryOp::Clip, UnaryOp::Sin}) {
      Tensor x = randomTensor(dt, {6, 7}, 1, -2, 2);
      Tensor dy = randomTensor(dt, {6, 7}, 2, -2, 2);
      UnaryParams params;
      params.alpha = 0.3;
      params.lower = -0.5;
      params.upper = 1.0;
      expectInPlaceSame(
          "activationBackward " + std::to_string(static_cast<int>(op)),
          {&x, &dy}, {0, 1}, [&](const auto &in, const TensorView &out) {
            activationBackward(op, in[0], in[1], out, params);
          });
    }
}

TEST(InPlaceTest, GeluBackwardOverXAndDy) {
  for (DType dt : kFloatTypes)
    for (bool tanhApproximation : {false, true}) {
      Tensor x = randomTensor(dt, {3, 4, 5}, 3, -3, 3);
      Tensor dy = randomTensor(dt, {3, 4, 5}, 4, -2, 2);
      expectInPlaceSame("geluBackward", {&x, &dy}, {0, 1},
                        [&](const auto &in, const TensorView &out) {
                          geluBackward(in[0], in[1], out, tanhApproximation);
                        });
    }
}

TEST(InPlaceTest, SoftmaxBackwardsOverYAndDy) {
  for (DType dt : kFloatTypes)
    for (int64_t axis : {0, 1, 2}) {
      Tensor x = randomTensor(dt, {3, 5, 4}, 5, -2, 2);
      Tensor y(dt, x.shape()), logY(dt, x.shape());
      softmax(x.view(), y.view(), axis);
      logSoftmax(x.view(), logY.view(), axis);
      Tensor dy = randomTensor(dt, x.shape(), 6, -2, 2);
      expectInPlaceSame("softmaxBackward", {&y, &dy}, {0, 1},
                        [&](const auto &in, const TensorView &out) {
                          softmaxBackward(in[0], in[1], out, axis);
                        });
      expectInPlaceSame("logSoftmaxBackward", {&logY, &dy}, {0, 1},
                        [&](const auto &in, const TensorView &out) {
                          logSoftmaxBackward(in[0], in[1], out, axis);
                        });
    }
}

// Row-wise forward ops (InPlaceRowwise): the result over operand 0, along
// every axis, in the 16-bit storage types too (whose softmax recomputes the
// exponentials from x instead of keeping them in y).
TEST(InPlaceTest, SoftmaxAndLogSoftmaxOverX) {
  for (DType dt : {DType::F32, DType::F64, DType::F16, DType::BF16})
    for (int64_t axis : {0, 1, 2}) {
      Tensor x = randomTensor(dt, {3, 5, 4}, 20, -4, 4);
      expectInPlaceSame("softmax", {&x}, {0},
                        [&](const auto &in, const TensorView &out) {
                          softmax(in[0], out, axis);
                        });
      expectInPlaceSame("logSoftmax", {&x}, {0},
                        [&](const auto &in, const TensorView &out) {
                          logSoftmax(in[0], out, axis);
                        });
    }
}

TEST(InPlaceTest, CrossEntropyLogProbabilitiesOverScores) {
  // [N, C] and [N, C, d]; the loss, taken from the log-probabilities after
  // they overwrote the scores, must not change either.
  for (DType dt : {DType::F32, DType::F64, DType::F16, DType::BF16})
    for (const Shape &shape : {Shape{6, 7}, Shape{3, 5, 4}}) {
      Tensor scores = randomTensor(dt, shape, 21, -4, 4);
      Shape labelShape = {shape[0]};
      if (shape.size() == 3)
        labelShape.push_back(shape[2]);
      std::vector<double> labelValues;
      for (int64_t i = 0; i < numElements(labelShape); ++i)
        labelValues.push_back(static_cast<double>((i * 3) % shape[1]));
      Tensor labels = make(DType::I64, labelShape, labelValues);
      for (LossReduction reduction :
           {LossReduction::Mean, LossReduction::Sum, LossReduction::None}) {
        const Shape lossShape =
            reduction == LossReduction::None ? labelShape : Shape{};
        Tensor lossOut(dt, lossShape), lossIn(dt, lossShape);
        expectInPlaceSame(
            "softmaxCrossEntropyLoss", {&scores}, {0},
            [&](const auto &in, const TensorView &out) {
              const bool inPlace = in[0].data == out.data;
              softmaxCrossEntropyLoss(in[0], labels.view(), TensorView(),
                                      inPlace ? lossIn.view() : lossOut.view(),
                                      out, reduction, -1, false);
            });
        EXPECT_TRUE(sameBits(lossIn, lossOut));
      }
    }
}

TEST(InPlaceTest, LayerNormBackwardOverXAndDy) {
  for (DType dt : kFloatTypes) {
    Tensor x = randomTensor(dt, {4, 3, 6}, 7, -2, 2);
    Tensor scale = randomTensor(dt, {3, 6}, 8, 0.5, 1.5);
    Tensor y(dt, x.shape()), mean(dt, {4, 1, 1}), inv(dt, {4, 1, 1});
    layerNorm(x.view(), scale.view(), TensorView(), y.view(), mean.view(),
              inv.view(), 1, 1e-5);
    Tensor dy = randomTensor(dt, x.shape(), 9, -2, 2);
    // The parameter gradients must not change either: they are computed
    // from x and dy before dx overwrites one of them.
    Tensor dscaleOut(dt, {3, 6}), dscaleIn(dt, {3, 6});
    expectInPlaceSame("layerNormBackward dx", {&x, &dy}, {0, 1},
                      [&](const auto &in, const TensorView &out) {
                        layerNormBackward(in[0], scale.view(), mean.view(),
                                          inv.view(), in[1], out,
                                          TensorView(), TensorView(), 1);
                      });
    Tensor dx(dt, x.shape()), db(dt, {3, 6});
    layerNormBackward(x.view(), scale.view(), mean.view(), inv.view(),
                      dy.view(), dx.view(), dscaleOut.view(), db.view(), 1);
    Tensor dyCopy = copyOf(dy);
    layerNormBackward(x.view(), scale.view(), mean.view(), inv.view(),
                      dyCopy.view(), dyCopy.view(), dscaleIn.view(),
                      TensorView(), 1);
    EXPECT_TRUE(sameBits(dscaleIn, dscaleOut));
    EXPECT_TRUE(sameBits(dyCopy, dx));
  }
}

TEST(InPlaceTest, BatchNormTrainingBackwardOverXAndDy) {
  for (DType dt : kFloatTypes) {
    const Shape xs{3, 4, 5, 2};
    Tensor x = randomTensor(dt, xs, 10, -2, 3);
    Tensor scale = randomTensor(dt, {4}, 11, 0.5, 1.5);
    Tensor bias = randomTensor(dt, {4}, 12);
    Tensor y(dt, xs), mean(dt, {4}), inv(dt, {4});
    batchNormTraining(x.view(), scale.view(), bias.view(), TensorView(),
                      TensorView(), y.view(), TensorView(), TensorView(),
                      mean.view(), inv.view(), 1e-5, 0.9, false);
    Tensor dy = randomTensor(dt, xs, 13, -2, 2);
    expectInPlaceSame("batchNormTrainingBackward dx", {&x, &dy}, {0, 1},
                      [&](const auto &in, const TensorView &out) {
                        batchNormTrainingBackward(in[0], scale.view(),
                                                  mean.view(), inv.view(),
                                                  in[1], out, TensorView(),
                                                  TensorView());
                      });
    // dscale and dbias are the same with dx written over dy.
    Tensor dx(dt, xs), ds(dt, {4}), db(dt, {4});
    batchNormTrainingBackward(x.view(), scale.view(), mean.view(), inv.view(),
                              dy.view(), dx.view(), ds.view(), db.view());
    Tensor dyCopy = copyOf(dy), dsIn(dt, {4}), dbIn(dt, {4});
    batchNormTrainingBackward(x.view(), scale.view(), mean.view(), inv.view(),
                              dyCopy.view(), dyCopy.view(), dsIn.view(),
                              dbIn.view());
    EXPECT_TRUE(sameBits(dyCopy, dx));
    EXPECT_TRUE(sameBits(dsIn, ds));
    EXPECT_TRUE(sameBits(dbIn, db));
  }
}

TEST(InPlaceTest, SoftmaxCrossEntropyLossBackwardOverLogProb) {
  for (DType dt : kFloatTypes)
    for (LossReduction r :
         {LossReduction::None, LossReduction::Sum, LossReduction::Mean}) {
      Tensor scores = randomTensor(dt, {4, 5, 3}, 14, -2, 2);
      Tensor labels =
          make(DType::I64, {4, 3}, {0, 4, 2, 1, 1, 3, 4, 0, -100, 2, 2, 1});
      Tensor loss(dt, r == LossReduction::None ? Shape{4, 3} : Shape{});
      Tensor logProb(dt, scores.shape());
      softmaxCrossEntropyLoss(scores.view(), labels.view(), TensorView(),
                              loss.view(), logProb.view(), r, -100, true);
      Tensor dloss = randomTensor(dt, loss.shape(), 15, 0.5, 1.5);
      expectInPlaceSame("softmaxCrossEntropyLossBackward", {&logProb}, {0},
                        [&](const auto &in, const TensorView &out) {
                          softmaxCrossEntropyLossBackward(
                              dloss.view(), in[0], labels.view(),
                              TensorView(), out, r, -100, true);
                        });
    }
}
