// RUN: remat-opt %s --remat-autodiff='loss=auto optimizer=sgd' | FileCheck %s
// No weight gradient is a batched product reduced afterwards:
// RUN: remat-opt %s --remat-autodiff='loss=auto optimizer=sgd' | not grep -E '2x4x5xf32|2x5x4xf32'

// A linear layer applied to a batch, x [2, 3, 4] times a weight matrix: the
// weight's gradient is one GEMM over the 6 flattened rows (reshapes are
// views), not a [2, 4, 5] partial per batch element summed afterwards. The
// same holds with the weight transposed (a tied LM head, [vocab, hidden]),
// where the product is taken in the weight's own layout.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x3x4xf32>
// CHECK: %[[H:.*]] = remat.matmul %[[X]], %{{.*}} : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
// CHECK: %[[H2:.*]] = remat.matmul %[[H]], %{{.*}} : (tensor<2x3x5xf32>, tensor<5x4xf32>) -> tensor<2x3x4xf32>
// The transposed use: dE = dYᵀ H2, [6, 5]ᵀ [6, 4].
// CHECK: %[[H2F:.*]] = remat.reshape %[[H2]] : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
// CHECK: %[[DYF:.*]] = remat.reshape %{{.*}} : (tensor<2x3x5xf32>) -> tensor<6x5xf32>
// CHECK: %[[DE1:.*]] = remat.matmul %[[DYF]], %[[H2F]] {transpose_lhs = true} : (tensor<6x5xf32>, tensor<6x4xf32>) -> tensor<5x4xf32>
// The plain uses: dE = Hᵀ dH2 and dW = Xᵀ dH, over flattened rows.
// CHECK: %[[HF:.*]] = remat.reshape %[[H]] : (tensor<2x3x5xf32>) -> tensor<6x5xf32>
// CHECK: remat.matmul %[[HF]], %{{.*}} {transpose_lhs = true} : (tensor<6x5xf32>, tensor<6x4xf32>) -> tensor<5x4xf32>
// CHECK: %[[XF:.*]] = remat.reshape %[[X]] : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
// CHECK: %[[DW:.*]] = remat.matmul %[[XF]], %{{.*}} {transpose_lhs = true} : (tensor<6x4xf32>, tensor<6x5xf32>) -> tensor<4x5xf32>
// CHECK: remat.sgd %{{.*}}, %[[DW]]
func.func @forward(%x: tensor<2x3x4xf32> {remat.name = "x", remat.role = "input"},
                   %w: tensor<4x5xf32> {remat.name = "w", remat.role = "parameter"},
                   %e: tensor<5x4xf32> {remat.name = "e", remat.role = "parameter"}) -> tensor<f32> {
  %0 = remat.matmul %x, %w : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  %1 = remat.matmul %0, %e : (tensor<2x3x5xf32>, tensor<5x4xf32>) -> tensor<2x3x4xf32>
  %2 = remat.matmul %1, %e {transpose_rhs = true} : (tensor<2x3x4xf32>, tensor<5x4xf32>) -> tensor<2x3x5xf32>
  %3 = remat.reduce_sum %2 {axes = array<i64: 0, 1, 2>} : (tensor<2x3x5xf32>) -> tensor<1x1x1xf32>
  %4 = remat.reshape %3 : (tensor<1x1x1xf32>) -> tensor<f32>
  return %4 : tensor<f32>
}
