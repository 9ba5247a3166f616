// RUN: remat-opt %s -split-input-file -verify-diagnostics
// gather_nd, scatter_nd, resize and their backward ops refuse operands that
// do not fit, naming the problem.

func.func @gather_nd_deep(%x: tensor<2x3xf32>, %i: tensor<4x3xi64>) -> tensor<4xf32> {
  // expected-error@+2 {{gather_nd index tuples of 3 coordinates do not fit the input 2x3 after 0 batch dims}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = remat.gather_nd %x, %i : (tensor<2x3xf32>, tensor<4x3xi64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @gather_nd_batch(%x: tensor<2x3xf32>, %i: tensor<3x1xi64>) -> tensor<3xf32> {
  // expected-error@+2 {{gather_nd batch dims of the input 2 and the indices 3 differ}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = remat.gather_nd %x, %i {batch_dims = 1 : i64} : (tensor<2x3xf32>, tensor<3x1xi64>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @gather_nd_backward_shape(%dy: tensor<4x2xf32>, %i: tensor<5x1xi64>) -> tensor<3x2xf32> {
  // expected-error@+1 {{output_grad must be the gathered 5x2 tensor of input_grad's element type}}
  %0 = remat.gather_nd_backward %dy, %i : (tensor<4x2xf32>, tensor<5x1xi64>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @scatter_nd_updates(%x: tensor<4x3xf32>, %i: tensor<2x1xi64>, %u: tensor<2x4xf32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{updates must be 2x3 of the input's element type}}
  %0 = remat.scatter_nd %x, %i, %u : (tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @scatter_nd_bool_add(%x: tensor<4xi1>, %i: tensor<2x1xi64>, %u: tensor<2xi1>) -> tensor<4xi1> {
  // expected-error@+1 {{reduction 'add' needs numbers, not booleans}}
  %0 = remat.scatter_nd %x, %i, %u {reduction = "add"} : (tensor<4xi1>, tensor<2x1xi64>, tensor<2xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @scatter_nd_unknown_reduction(%x: tensor<4xf32>, %i: tensor<2x1xi64>, %u: tensor<2xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{one of: none, add, mul, max, min}}
  %0 = remat.scatter_nd %x, %i, %u {reduction = "mean"} : (tensor<4xf32>, tensor<2x1xi64>, tensor<2xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @resize_scales(%x: tensor<2x3xf32>) -> tensor<4x6xf32> {
  // expected-error@+1 {{needs one scale per dim (2), got 1}}
  %0 = remat.resize %x {mode = "linear", scales = array<f64: 2.0>} : (tensor<2x3xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @resize_negative_scale(%x: tensor<2x3xf32>) -> tensor<4x6xf32> {
  // expected-error@+1 {{scale -2.000000e+00 of dim 1 is not positive}}
  %0 = remat.resize %x {mode = "nearest", scales = array<f64: 2.0, -2.0>} : (tensor<2x3xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @resize_linear_ints(%x: tensor<2x3xi64>) -> tensor<4x6xi64> {
  // expected-error@+1 {{linear mode needs a float element type, got 'i64'}}
  %0 = remat.resize %x {mode = "linear", scales = array<f64: 2.0, 2.0>} : (tensor<2x3xi64>) -> tensor<4x6xi64>
  return %0 : tensor<4x6xi64>
}

// -----

func.func @resize_bicubic(%x: tensor<2x3xf32>) -> tensor<4x6xf32> {
  // expected-error@+1 {{one of: nearest, linear, cubic}}
  %0 = remat.resize %x {mode = "bicubic", scales = array<f64: 2.0, 2.0>} : (tensor<2x3xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @resize_cubic_ints(%x: tensor<2x3xi32>) -> tensor<4x6xi32> {
  // expected-error@+1 {{cubic mode needs a float element type, got 'i32'}}
  %0 = remat.resize %x {mode = "cubic", scales = array<f64: 2.0, 2.0>} : (tensor<2x3xi32>) -> tensor<4x6xi32>
  return %0 : tensor<4x6xi32>
}

// -----

func.func @resize_backward_rank(%dy: tensor<4x6xf32>) -> tensor<2x3x1xf32> {
  // expected-error@+1 {{input rank 3 and output rank 2 differ}}
  %0 = remat.resize_backward %dy {mode = "nearest", scales = array<f64: 2.0, 2.0, 1.0>} : (tensor<4x6xf32>) -> tensor<2x3x1xf32>
  return %0 : tensor<2x3x1xf32>
}
