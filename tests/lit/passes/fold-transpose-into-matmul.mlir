// RUN: remat-opt %s -split-input-file --remat-fold-transpose-into-matmul | FileCheck %s

// A weight transposed for a linear layer (the exported `MatMul(x,
// Transpose(W))`): the matmul reads W through transpose_rhs, and the
// transpose, read by nothing else, is gone.
// CHECK-LABEL: func.func @linear
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x3x4xf32>, %[[W:[^:]*]]: tensor<5x4xf32>
// CHECK-NOT: remat.transpose
// CHECK: remat.matmul %[[X]], %[[W]] {transpose_rhs = true} : (tensor<2x3x4xf32>, tensor<5x4xf32>) -> tensor<2x3x5xf32>
func.func @linear(%x: tensor<2x3x4xf32>, %w: tensor<5x4xf32>) -> tensor<2x3x5xf32> {
  %wt = remat.transpose %w {permutation = array<i64: 1, 0>} : (tensor<5x4xf32>) -> tensor<4x5xf32>
  %y = remat.matmul %x, %wt : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  return %y : tensor<2x3x5xf32>
}

// -----

// Batched, on the left, with batch dims in place; a flag already set is
// toggled off (the transpose of a transposed read is the plain read).
// CHECK-LABEL: func.func @batched_both_sides
// CHECK-SAME: %[[A:[^:]*]]: tensor<2x4x3xf32>, %[[B:[^:]*]]: tensor<2x4x5xf32>
// CHECK-NOT: remat.transpose
// CHECK: remat.matmul %[[A]], %[[B]] {transpose_lhs = true} : (tensor<2x4x3xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
func.func @batched_both_sides(%a: tensor<2x4x3xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %at = remat.transpose %a {permutation = array<i64: 0, 2, 1>} : (tensor<2x4x3xf32>) -> tensor<2x3x4xf32>
  %bt = remat.transpose %b {permutation = array<i64: 0, 2, 1>} : (tensor<2x4x5xf32>) -> tensor<2x5x4xf32>
  %y = remat.matmul %at, %bt {transpose_rhs = true} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x3x5xf32>
  return %y : tensor<2x3x5xf32>
}

// -----

// Not folded: a permutation that moves a batch dim is no GEMM flag.
// CHECK-LABEL: func.func @batch_dims_moved
// CHECK: %[[T:.*]] = remat.transpose
// CHECK: remat.matmul %[[T]], %{{.*}} : (tensor<3x2x4xf32>, tensor<4x5xf32>)
func.func @batch_dims_moved(%a: tensor<2x3x4xf32>, %w: tensor<4x5xf32>) -> tensor<3x2x5xf32> {
  %t = remat.transpose %a {permutation = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  %y = remat.matmul %t, %w : (tensor<3x2x4xf32>, tensor<4x5xf32>) -> tensor<3x2x5xf32>
  return %y : tensor<3x2x5xf32>
}

// -----

// A transpose something else reads stays for that reader; the matmul still
// reads the original.
// CHECK-LABEL: func.func @transpose_read_elsewhere
// CHECK-SAME: %[[X:[^:]*]]: tensor<3x4xf32>, %[[W:[^:]*]]: tensor<5x4xf32>
// CHECK: %[[WT:.*]] = remat.transpose %[[W]]
// CHECK: remat.matmul %[[X]], %[[W]] {transpose_rhs = true}
// CHECK: return %{{.*}}, %[[WT]]
func.func @transpose_read_elsewhere(%x: tensor<3x4xf32>, %w: tensor<5x4xf32>) -> (tensor<3x5xf32>, tensor<4x5xf32>) {
  %wt = remat.transpose %w {permutation = array<i64: 1, 0>} : (tensor<5x4xf32>) -> tensor<4x5xf32>
  %y = remat.matmul %x, %wt : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  return %y, %wt : tensor<3x5xf32>, tensor<4x5xf32>
}
