// RUN: remat-opt %s --split-input-file --remat-autodiff='optimizer=sgd return-gradients=true' | FileCheck %s
// The gradients of gather_nd, scatter_nd and resize (their values are
// checked against finite differences in tests/unit/autodiff).

// gather_nd's gradient is gather_nd_backward with the forward's tuples and
// batch_dims.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[G:.*]] = remat.gather_nd %[[X:[^,]*]], %[[I:[^ ]*]] {batch_dims = 1 : i64}
// CHECK: remat.gather_nd_backward %{{.*}}, %[[I]] {batch_dims = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x3x1xi64>) -> tensor<2x5x4xf32>
func.func @forward(%x: tensor<2x5x4xf32> {remat.name = "x", remat.role = "parameter"}, %i: tensor<2x3x1xi64> {remat.name = "i", remat.role = "input"}) -> tensor<f32> {
  %0 = remat.gather_nd %x, %i {batch_dims = 1 : i64} : (tensor<2x5x4xf32>, tensor<2x3x1xi64>) -> tensor<2x3x4xf32>
  %1 = remat.reduce_sum %0 {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// scatter_nd (none): the input's gradient is dy with the written slices
// zeroed (a scatter of zeros), the updates' a gather_nd of dy.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[ZERO:.*]] = remat.constant dense<0.000000e+00> : tensor<2x3xf32>
// CHECK: remat.scatter_nd %[[DY:[^,]*]], %[[I:[^,]*]], %[[ZERO]] : (tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x3xf32>) -> tensor<4x3xf32>
// CHECK: remat.gather_nd %[[DY]], %[[I]] : (tensor<4x3xf32>, tensor<2x1xi64>) -> tensor<2x3xf32>
func.func @forward(%x: tensor<4x3xf32> {remat.name = "x", remat.role = "parameter"}, %i: tensor<2x1xi64> {remat.name = "i", remat.role = "input"}, %u: tensor<2x3xf32> {remat.name = "u", remat.role = "parameter"}) -> tensor<f32> {
  %0 = remat.scatter_nd %x, %i, %u : (tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %1 = remat.mul %0, %0 : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %2 = remat.reduce_sum %1 {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x3xf32>) -> tensor<f32>
  return %2 : tensor<f32>
}

// -----

// resize's gradient is resize_backward with the forward's attributes.
// CHECK-LABEL: func.func @train_step
// CHECK: remat.resize_backward %{{.*}} {coordinate_transformation_mode = "align_corners", cubic_coeff_a = -5.000000e-01 : f64, exclude_outside = true, mode = "cubic", scales = array<f64: 1.000000e+00, 2.500000e+00>} : (tensor<2x5xf32>) -> tensor<2x2xf32>
func.func @forward(%x: tensor<2x2xf32> {remat.name = "x", remat.role = "parameter"}) -> tensor<f32> {
  %0 = remat.resize %x {mode = "cubic", coordinate_transformation_mode = "align_corners", cubic_coeff_a = -0.5, exclude_outside = true, scales = array<f64: 1.0, 2.5>} : (tensor<2x2xf32>) -> tensor<2x5xf32>
  %1 = remat.mul %0, %0 : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
  %2 = remat.reduce_sum %1 {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x5xf32>) -> tensor<f32>
  return %2 : tensor<f32>
}
