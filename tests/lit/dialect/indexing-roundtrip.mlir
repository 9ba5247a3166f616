// RUN: remat-opt %s | remat-opt | FileCheck %s
// gather_nd, scatter_nd, resize and their backward ops print and parse
// back unchanged; gather_nd's result type is inferred and checked.

// CHECK-LABEL: func.func @indexing
func.func @indexing(%x: tensor<2x3x4xf32>, %i: tensor<5x2xi64>, %j: tensor<2x6x1xi32>, %u: tensor<5x4xf32>) -> (tensor<5x4xf32>, tensor<2x6x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  // CHECK: remat.gather_nd %{{.*}}, %{{.*}} : (tensor<2x3x4xf32>, tensor<5x2xi64>) -> tensor<5x4xf32>
  %0 = remat.gather_nd %x, %i : (tensor<2x3x4xf32>, tensor<5x2xi64>) -> tensor<5x4xf32>
  // CHECK: remat.gather_nd %{{.*}}, %{{.*}} {batch_dims = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x6x1xi32>) -> tensor<2x6x4xf32>
  %1 = remat.gather_nd %x, %j {batch_dims = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x6x1xi32>) -> tensor<2x6x4xf32>
  // CHECK: remat.gather_nd_backward %{{.*}}, %{{.*}} {batch_dims = 1 : i64} : (tensor<2x6x4xf32>, tensor<2x6x1xi32>) -> tensor<2x3x4xf32>
  %2 = remat.gather_nd_backward %1, %j {batch_dims = 1 : i64} : (tensor<2x6x4xf32>, tensor<2x6x1xi32>) -> tensor<2x3x4xf32>
  // CHECK: remat.scatter_nd %{{.*}}, %{{.*}}, %{{.*}} {reduction = "add"} : (tensor<2x3x4xf32>, tensor<5x2xi64>, tensor<5x4xf32>) -> tensor<2x3x4xf32>
  %3 = remat.scatter_nd %x, %i, %u {reduction = "add"} : (tensor<2x3x4xf32>, tensor<5x2xi64>, tensor<5x4xf32>) -> tensor<2x3x4xf32>
  return %0, %1, %2, %3 : tensor<5x4xf32>, tensor<2x6x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @resampling
func.func @resampling(%x: tensor<1x2x3x4xbf16>, %n: tensor<1x1x3x3xi64>) -> (tensor<1x2x6x7xbf16>, tensor<1x2x3x4xbf16>, tensor<1x1x1x2xi64>) {
  // CHECK: remat.resize %{{.*}} {coordinate_transformation_mode = "pytorch_half_pixel", mode = "linear", scales = array<f64: 1.000000e+00, 1.000000e+00, 2.000000e+00, 1.750000e+00>} : (tensor<1x2x3x4xbf16>) -> tensor<1x2x6x7xbf16>
  %0 = remat.resize %x {mode = "linear", coordinate_transformation_mode = "pytorch_half_pixel", scales = array<f64: 1.0, 1.0, 2.0, 1.75>} : (tensor<1x2x3x4xbf16>) -> tensor<1x2x6x7xbf16>
  // CHECK: remat.resize_backward %{{.*}} {coordinate_transformation_mode = "pytorch_half_pixel", mode = "linear", scales = {{.*}}} : (tensor<1x2x6x7xbf16>) -> tensor<1x2x3x4xbf16>
  %1 = remat.resize_backward %0 {mode = "linear", coordinate_transformation_mode = "pytorch_half_pixel", scales = array<f64: 1.0, 1.0, 2.0, 1.75>} : (tensor<1x2x6x7xbf16>) -> tensor<1x2x3x4xbf16>
  // CHECK: remat.resize %{{.*}} {coordinate_transformation_mode = "asymmetric", mode = "nearest", nearest_mode = "floor", scales = {{.*}}} : (tensor<1x1x3x3xi64>) -> tensor<1x1x1x2xi64>
  %2 = remat.resize %n {mode = "nearest", coordinate_transformation_mode = "asymmetric", nearest_mode = "floor", scales = array<f64: 1.0, 1.0, 0.5, 0.6>} : (tensor<1x1x3x3xi64>) -> tensor<1x1x1x2xi64>
  return %0, %1, %2 : tensor<1x2x6x7xbf16>, tensor<1x2x3x4xbf16>, tensor<1x1x1x2xi64>
}
