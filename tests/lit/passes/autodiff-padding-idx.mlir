// RUN: remat-opt %s --remat-autodiff='optimizer=sgd return-gradients=true' | FileCheck %s
// A gather with padding_idx (torch.nn.Embedding's, restored by the
// importer's --padding-idx) zeroes dy where the indices name that row, by
// its index or its negative alias, before the scatter-add: the row gets no
// gradient from this lookup. (PyTorch's reference step of the bert export
// checks the values: tests/training/CMakeLists.txt.)
// CHECK-LABEL: func.func @train_step
// CHECK: %[[E:.*]] = remat.gather %[[W:[^,]*]], %[[I:[^ ]*]] {axis = 0 : i64, padding_idx = 2 : i64}
// CHECK-DAG: %[[P:.*]] = remat.constant dense<2> : tensor<i64>
// CHECK-DAG: %[[A:.*]] = remat.constant dense<-3> : tensor<i64>
// CHECK-DAG: %[[IS:.*]] = remat.equal %[[I]], %[[P]]
// CHECK-DAG: %[[ALIAS:.*]] = remat.equal %[[I]], %[[A]]
// CHECK: %[[EITHER:.*]] = remat.or %[[IS]], %[[ALIAS]]
// CHECK: %[[MASK:.*]] = remat.reshape %[[EITHER]] {{.*}} -> tensor<2x3x1xi1>
// CHECK: %[[DY:.*]] = remat.where %[[MASK]], %{{.*}}, %{{.*}} : (tensor<2x3x1xi1>, tensor<f32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK: remat.gather_backward %[[DY]], %[[I]] {axis = 0 : i64} : (tensor<2x3x4xf32>, tensor<2x3xi64>) -> tensor<5x4xf32>
func.func @forward(%w: tensor<5x4xf32> {remat.name = "w", remat.role = "parameter"}, %i: tensor<2x3xi64> {remat.name = "i", remat.role = "input"}) -> tensor<f32> {
  %0 = remat.gather %w, %i {axis = 0 : i64, padding_idx = 2 : i64} : (tensor<5x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  %1 = remat.mul %0, %0 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %2 = remat.reduce_sum %1 {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  return %2 : tensor<f32>
}
