// RUN: remat-opt %s --remat-autodiff='loss=cross-entropy optimizer=adam loss-scale=dynamic growth-interval=7' | FileCheck %s
// RUN: remat-opt %s --remat-autodiff='loss=cross-entropy optimizer=sgd loss-scale=128 return-gradients=true' | FileCheck %s --check-prefix=FIXED
// RUN: remat-opt %s --remat-autodiff='loss=cross-entropy optimizer=adam' | FileCheck %s --check-prefix=NONE
// RUN: not remat-opt %s --remat-autodiff='loss=cross-entropy loss-scale=-3' 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not remat-opt %s --remat-autodiff='loss=cross-entropy loss-scale=dynamic init-loss-scale=1e39' 2>&1 | FileCheck %s --check-prefix=BADINIT

// Dynamic loss scaling (torch.amp.GradScaler): the scale and its growth
// tracker are persistent state, the scale starting at 2^16; the backward is
// seeded with the scale; every parameter gradient joins the overflow check;
// the updates unscale and skip on overflow; the returned step counter only
// advances on a taken step; the scale update runs last.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[SCALE:[^:]*]]: tensor<f32> {remat.initial_value = 6.553600e+04 : f64, remat.name = "loss_scale", remat.role = "loss_scale"}
// CHECK-SAME: %[[TRACKER:[^:]*]]: tensor<i32> {remat.name = "loss_scale_growth_tracker", remat.role = "loss_scale"}
// CHECK-SAME: %[[STEP:[^:]*]]: tensor<i64> {remat.name = "step", remat.role = "step"}
// CHECK-SAME: tensor<f32> {remat.name = "loss_scale", remat.role = "loss_scale"}, tensor<i32> {remat.name = "loss_scale_growth_tracker", remat.role = "loss_scale"})
// CHECK-SAME: remat.loss_scale = "dynamic"
// CHECK: remat.softmax_cross_entropy_loss_backward %[[SCALE]],
// CHECK: %[[NEXT:.*]] = remat.add %[[STEP]]
// CHECK: %[[CLEAR:.*]] = remat.constant dense<false> : tensor<i1>
// CHECK: %[[F1:.*]] = remat.any_nonfinite %{{.*}}, %[[CLEAR]] : (tensor<3x5xf32>, tensor<i1>) -> tensor<i1>
// CHECK: %[[F2:.*]] = remat.any_nonfinite %{{.*}}, %[[F1]] : (tensor<5xf32>, tensor<i1>) -> tensor<i1>
// CHECK: %[[TAKEN:.*]] = remat.where %[[F2]], %[[STEP]], %[[NEXT]]
// CHECK: remat.adam %arg1, %{{.*}}, %[[NEXT]] unscale %[[SCALE]] skip_if %[[F2]]
// CHECK: remat.adam %arg2, %{{.*}}, %[[NEXT]] unscale %[[SCALE]] skip_if %[[F2]]
// CHECK: %[[NEWSCALE:.*]], %[[NEWTRACKER:.*]] = remat.loss_scale_update %[[SCALE]], %[[TRACKER]], %[[F2]] {growth_interval = 7 : i64}
// CHECK: return {{.*}}%[[TAKEN]], %[[NEWSCALE]], %[[NEWTRACKER]]

// A fixed scale is a constant: no state and no scale update, but steps with
// overflowing gradients are still skipped; returned gradients are unscaled
// as GradScaler.unscale_ leaves them.
// FIXED-LABEL: func.func @train_step
// FIXED-NOT: remat.role = "loss_scale"
// FIXED: %[[S:.*]] = remat.constant dense<1.280000e+02> : tensor<f32>
// FIXED: remat.softmax_cross_entropy_loss_backward %[[S]],
// FIXED: remat.sgd %arg1, %{{.*}} unscale %[[S]] skip_if %{{.*}}
// FIXED: %[[INV:.*]] = remat.reciprocal %[[S]]
// FIXED: remat.mul %{{.*}}, %[[INV]] : (tensor<3x5xf32>, tensor<f32>) -> tensor<3x5xf32>
// FIXED-NOT: remat.loss_scale_update

// NONE-LABEL: func.func @train_step
// NONE-NOT: any_nonfinite
// NONE-NOT: unscale
// NONE-NOT: loss_scale

// BAD: remat-autodiff: loss-scale must be none, dynamic or a positive number that fits fp32, got '-3'
// BADINIT: remat-autodiff: init-loss-scale must be a positive number that fits fp32, got 1.000000e+39
func.func @forward(%x: tensor<4x3xf32> {remat.name = "x", remat.role = "input"},
                   %w: tensor<3x5xf32> {remat.name = "w", remat.role = "parameter"},
                   %b: tensor<5xf32> {remat.name = "b", remat.role = "parameter"}) -> tensor<4x5xf32> {
  %0 = remat.matmul %x, %w : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %1 = remat.add %0, %b : (tensor<4x5xf32>, tensor<5xf32>) -> tensor<4x5xf32>
  return %1 : tensor<4x5xf32>
}
