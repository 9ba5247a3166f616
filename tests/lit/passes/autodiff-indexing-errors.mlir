// RUN: not remat-opt %s --remat-autodiff 2>&1 | FileCheck %s
// Only 'none' and 'add' scatters are differentiable; the others are refused
// by name when a gradient must flow through them.
// CHECK: error: 'remat.scatter_nd' op has no gradient for reduction 'mul' (only 'none' and 'add' are differentiable)
func.func @forward(%x: tensor<4xf32> {remat.name = "x", remat.role = "parameter"}, %i: tensor<2x1xi64> {remat.name = "i", remat.role = "input"}, %u: tensor<2xf32> {remat.name = "u", remat.role = "parameter"}) -> tensor<f32> {
  %0 = remat.scatter_nd %x, %i, %u {reduction = "mul"} : (tensor<4xf32>, tensor<2x1xi64>, tensor<2xf32>) -> tensor<4xf32>
  %1 = remat.reduce_sum %0 {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}
