// RUN: remat-opt %s --split-input-file --remat-autodiff='loss=cross-entropy optimizer=adam' | FileCheck %s
// RUN: remat-opt %s --split-input-file --remat-autodiff='loss=cross-entropy optimizer=sgd momentum=0.9 nesterov=true' | FileCheck %s --check-prefix=SGD
// RUN: not remat-opt %s --split-input-file --remat-autodiff='loss=auto' 2>&1 | FileCheck %s --check-prefix=NOLOSS

// A linear layer with ReLU; cross-entropy is appended to the logits.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x3xf32> {remat.name = "x", remat.role = "input"}
// CHECK-SAME: %[[W:[^:]*]]: tensor<3x5xf32> {remat.name = "w", remat.role = "parameter"}
// CHECK-SAME: %[[B:[^:]*]]: tensor<5xf32> {remat.name = "b", remat.role = "parameter"}
// CHECK-SAME: %[[L:[^:]*]]: tensor<4xi64> {remat.name = "labels", remat.role = "input"}
// CHECK-SAME: {remat.name = "w.exp_avg", remat.role = "optimizer_state"}
// CHECK-SAME: {remat.name = "w.exp_avg_sq", remat.role = "optimizer_state"}
// CHECK-SAME: %[[STEP:[^:]*]]: tensor<i64> {remat.name = "step", remat.role = "step"}
// CHECK-SAME: -> (tensor<f32> {remat.name = "loss", remat.role = "loss"}
// CHECK-SAME: tensor<3x5xf32> {remat.name = "w", remat.role = "parameter"}
// CHECK-SAME: tensor<i64> {remat.name = "step", remat.role = "step"})
// CHECK: %[[Y:.*]] = remat.relu
// CHECK: %[[LOSS:.*]], %[[LOGP:.*]] = remat.softmax_cross_entropy_loss {{.*}} {ignore_index = -100 : i64, reduction = "mean"}
// CHECK: %[[DS:.*]] = remat.softmax_cross_entropy_loss_backward %{{.*}}, %[[LOGP]], %[[L]]
// The ReLU gradient is one op keyed on its output (no mask, no input kept).
// CHECK-NOT: remat.greater
// CHECK: %[[DZ:.*]] = remat.relu_backward %[[Y]], %[[DS]] : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
// The bias was broadcast over the batch: its gradient is summed back.
// CHECK: %[[DB0:.*]] = remat.reduce_sum %[[DZ]] {axes = array<i64: 0>} : (tensor<4x5xf32>) -> tensor<1x5xf32>
// CHECK: %[[DB:.*]] = remat.reshape %[[DB0]] : (tensor<1x5xf32>) -> tensor<5xf32>
// dW = xᵀ dZ without materialising the transpose.
// CHECK: %[[DW:.*]] = remat.matmul %[[X]], %[[DZ]] {transpose_lhs = true}
// CHECK: %[[NEXT:.*]] = remat.add %[[STEP]]
// CHECK: remat.adam %[[W]], %[[DW]], {{.*}}, %[[NEXT]] {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, eps = 1.000000e-08 : f64, lr = 1.000000e-03 : f64}
// CHECK: remat.adam %[[B]], %[[DB]]
// SGD: remat.sgd_momentum {{.*}} {lr = 1.000000e-02 : f64, momentum = 9.000000e-01 : f64, nesterov = true}
// NOLOSS: error: remat-autodiff: the model has no scalar output to use as the loss; pass --loss cross-entropy|mse (with --labels NAME)
func.func @forward(%x: tensor<4x3xf32> {remat.name = "x", remat.role = "input"},
                   %w: tensor<3x5xf32> {remat.name = "w", remat.role = "parameter"},
                   %b: tensor<5xf32> {remat.name = "b", remat.role = "parameter"}) -> tensor<4x5xf32> {
  %0 = remat.matmul %x, %w : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %1 = remat.add %0, %b : (tensor<4x5xf32>, tensor<5xf32>) -> tensor<4x5xf32>
  %2 = remat.relu %1 : (tensor<4x5xf32>) -> tensor<4x5xf32>
  return %2 : tensor<4x5xf32>
}

// -----

// A tied weight (used as embedding and as output projection) gets the sum
// of both gradients.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[G1:.*]] = remat.gather_backward
// CHECK: %[[SUM:.*]] = remat.add %{{.*}}, %[[G1]] : (tensor<10x4xf32>, tensor<10x4xf32>) -> tensor<10x4xf32>
// CHECK: remat.adam %{{.*}}, %[[SUM]]
func.func @forward(%ids: tensor<2xi64> {remat.name = "ids", remat.role = "input"},
                   %e: tensor<10x4xf32> {remat.name = "wte", remat.role = "parameter"}) -> tensor<2x10xf32> {
  %h = remat.gather %e, %ids {axis = 0 : i64} : (tensor<10x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  %logits = remat.matmul %h, %e {transpose_rhs = true} : (tensor<2x4xf32>, tensor<10x4xf32>) -> tensor<2x10xf32>
  return %logits : tensor<2x10xf32>
}

// -----

// A parameterised activation's gradient is one activation_backward from its
// input, with its parameters; PRelu's slope gradient is summed over the axes
// the slope was broadcast along.
// CHECK-LABEL: func.func @train_step
// CHECK: remat.activation_backward %{{.*}}, %{{.*}} {activation = "leaky_relu", alpha = 2.000000e-01 : f64} : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
// CHECK: %[[POS:.*]] = remat.greater %{{.*}}, %{{.*}} : (tensor<4x5xf32>, tensor<f32>) -> tensor<4x5xi1>
// CHECK: %[[XDY:.*]] = remat.mul %{{.*}}, %{{.*}} : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
// CHECK: %[[DS:.*]] = remat.where %[[POS]], %{{.*}}, %[[XDY]]
// CHECK: remat.reduce_sum %[[DS]] {axes = array<i64: 0>} : (tensor<4x5xf32>) -> tensor<1x5xf32>
func.func @forward(%x: tensor<4x5xf32> {remat.name = "x", remat.role = "input"},
                   %s: tensor<5xf32> {remat.name = "slope", remat.role = "parameter"}) -> tensor<4x5xf32> {
  %0 = remat.prelu %x, %s : (tensor<4x5xf32>, tensor<5xf32>) -> tensor<4x5xf32>
  %1 = remat.leaky_relu %0 {alpha = 0.2} : (tensor<4x5xf32>) -> tensor<4x5xf32>
  return %1 : tensor<4x5xf32>
}
