// RUN: remat-opt %s --remat-autodiff='loss=cross-entropy optimizer=sgd' | remat-opt --pass-pipeline='builtin.module(func.func(remat-schedule-updates))' | FileCheck %s

// Two linear layers. After scheduling, the second layer's weight update runs
// as soon as its gradient exists, but only after the backward matmul that
// still reads the old weight (updates are written in place).
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x3xf32> {remat.name = "x"
// CHECK-SAME: %[[W1:[^:]*]]: tensor<3x6xf32> {remat.name = "w1"
// CHECK-SAME: %[[W2:[^:]*]]: tensor<6x5xf32> {remat.name = "w2"
// CHECK: remat.softmax_cross_entropy_loss_backward
// CHECK: %[[DH:.*]] = remat.matmul %{{.*}}, %[[W2]] {transpose_rhs = true}
// CHECK: %[[DW2:.*]] = remat.matmul %{{.*}}, %{{.*}} {transpose_lhs = true}
// CHECK-NEXT: remat.sgd %[[W2]], %[[DW2]]
// CHECK: %[[DW1:.*]] = remat.matmul %[[X]], %{{.*}} {transpose_lhs = true}
// CHECK-NEXT: remat.sgd %[[W1]], %[[DW1]]
// CHECK: return
func.func @forward(%x: tensor<4x3xf32> {remat.name = "x", remat.role = "input"},
                   %w1: tensor<3x6xf32> {remat.name = "w1", remat.role = "parameter"},
                   %w2: tensor<6x5xf32> {remat.name = "w2", remat.role = "parameter"}) -> tensor<4x5xf32> {
  %0 = remat.matmul %x, %w1 : (tensor<4x3xf32>, tensor<3x6xf32>) -> tensor<4x6xf32>
  %1 = remat.tanh %0 : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %2 = remat.matmul %1, %w2 : (tensor<4x6xf32>, tensor<6x5xf32>) -> tensor<4x5xf32>
  return %2 : tensor<4x5xf32>
}
