// RUN: remat-opt %s --remat-fuse-gelu | FileCheck %s
// RUN: remat-opt %s --pass-pipeline='builtin.module(func.func(remat-fuse-gelu))' --mlir-print-ir-after-all 2>&1 | FileCheck %s --check-prefix=DUMP

// PyTorch 1.13's export of nn.GELU(): x * 0.5 * (1 + erf(x / sqrt(2))).
// CHECK-LABEL: func.func @exported_gelu
// CHECK-NEXT: %[[G:.*]] = remat.gelu %arg0 : (tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: return %[[G]]
// DUMP: // -----// IR Dump After FuseGelu (remat-fuse-gelu) //----- //
// DUMP: remat.gelu
func.func @exported_gelu(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %sqrt2 = remat.constant dense<1.41421354> : tensor<f32>
  %one = remat.constant dense<1.0> : tensor<f32>
  %half = remat.constant dense<5.0e-01> : tensor<f32>
  %0 = remat.div %x, %sqrt2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %1 = remat.erf %0 : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %2 = remat.add %1, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %3 = remat.mul %x, %2 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %4 = remat.mul %3, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  return %4 : tensor<2x8xf32>
}

// A different constant is not GELU: nothing changes.
// CHECK-LABEL: func.func @not_gelu
// CHECK-NOT: remat.gelu
// CHECK: remat.erf
func.func @not_gelu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = remat.constant dense<2.0> : tensor<f32>
  %one = remat.constant dense<1.0> : tensor<f32>
  %half = remat.constant dense<5.0e-01> : tensor<f32>
  %0 = remat.div %x, %c : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = remat.erf %0 : (tensor<4xf32>) -> tensor<4xf32>
  %2 = remat.add %1, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = remat.mul %x, %2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = remat.mul %3, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %4 : tensor<4xf32>
}
