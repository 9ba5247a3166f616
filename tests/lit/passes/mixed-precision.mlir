// RUN: remat-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(remat-mixed-precision{precision=bf16}))' | FileCheck %s
// RUN: remat-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(remat-mixed-precision{precision=fp16}))' | FileCheck %s --check-prefix=FP16
// RUN: remat-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(remat-mixed-precision{precision=fp32}))' | FileCheck %s --check-prefix=FP32
// RUN: not remat-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(remat-mixed-precision{precision=fp8}))' 2>&1 | FileCheck %s --check-prefix=BAD

// A linear layer, GELU, a second linear layer, a residual add and layer norm.
// The weights are fp32 parameters (master weights): each is cast to bf16
// once, before its first use, and the transpose runs on the bf16 copy. The
// bias of a low-precision matmul joins it (as PyTorch's linear casts its
// bias); GELU follows its bf16 input; the residual add meets the fp32 input
// and promotes to fp32; layer norm and the loss-like reduction run in fp32.
// The output is cast back to the declared fp32.
// CHECK-LABEL: func.func @mlp_block
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x8xf32>
// CHECK-SAME: %[[W1:[^:]*]]: tensor<16x8xf32> {remat.name = "w1", remat.role = "parameter"}
// CHECK-SAME: attributes {remat.precision = "bf16"}
// CHECK: %[[XL:.*]] = remat.cast %[[X]] : (tensor<4x8xf32>) -> tensor<4x8xbf16>
// CHECK: %[[W1L:.*]] = remat.cast %[[W1]] : (tensor<16x8xf32>) -> tensor<16x8xbf16>
// CHECK: %[[W1T:.*]] = remat.transpose %[[W1L]] {{.*}} -> tensor<8x16xbf16>
// CHECK: %[[H:.*]] = remat.matmul %[[XL]], %[[W1T]] : (tensor<4x8xbf16>, tensor<8x16xbf16>) -> tensor<4x16xbf16>
// CHECK: %[[BL:.*]] = remat.cast %{{.*}} : (tensor<16xf32>) -> tensor<16xbf16>
// CHECK: %[[HB:.*]] = remat.add %[[H]], %[[BL]] : (tensor<4x16xbf16>, tensor<16xbf16>) -> tensor<4x16xbf16>
// CHECK: %[[G:.*]] = remat.gelu %[[HB]] : (tensor<4x16xbf16>) -> tensor<4x16xbf16>
// CHECK: %[[Y:.*]] = remat.matmul %[[G]], %{{.*}} -> tensor<4x8xbf16>
// CHECK: %[[YW:.*]] = remat.cast %[[Y]] : (tensor<4x8xbf16>) -> tensor<4x8xf32>
// CHECK: %[[R:.*]] = remat.add %[[X]], %[[YW]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK: remat.layer_norm %[[R]], {{.*}} -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
// CHECK: remat.reduce_sum {{.*}} : (tensor<4x8xf32>) -> tensor<f32>
// CHECK-NOT: remat.cast
// CHECK: return
// FP16-LABEL: func.func @mlp_block
// FP16: remat.matmul {{.*}} -> tensor<4x16xf16>
// FP16: remat.gelu {{.*}} : (tensor<4x16xf16>) -> tensor<4x16xf16>
// FP32-LABEL: func.func @mlp_block
// FP32-NOT: remat.cast
// FP32-NOT: bf16
// FP32-NOT: remat.precision
// FP32-LABEL: func.func @shared_weight
// BAD: unknown precision 'fp8' (valid: fp32, bf16, fp16)
func.func @mlp_block(%x: tensor<4x8xf32> {remat.name = "x", remat.role = "input"},
                     %w1: tensor<16x8xf32> {remat.name = "w1", remat.role = "parameter"},
                     %b1: tensor<16xf32> {remat.name = "b1", remat.role = "parameter"},
                     %w2: tensor<16x8xf32> {remat.name = "w2", remat.role = "parameter"},
                     %g: tensor<8xf32> {remat.name = "ln.weight", remat.role = "parameter"},
                     %b: tensor<8xf32> {remat.name = "ln.bias", remat.role = "parameter"})
    -> (tensor<f32> {remat.name = "loss"}) {
  %w1t = remat.transpose %w1 {permutation = array<i64: 1, 0>} : (tensor<16x8xf32>) -> tensor<8x16xf32>
  %h = remat.matmul %x, %w1t : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %hb = remat.add %h, %b1 : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %gelu = remat.gelu %hb : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = remat.matmul %gelu, %w2 : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %r = remat.add %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %ln, %mean, %inv = remat.layer_norm %r, %g, %b {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  %s = remat.reduce_sum %ln {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x8xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// One weight used by two matmuls is cast once. A 0-d constant does not
// promote the bf16 product (it is converted at compile time, as PyTorch
// treats Python scalars); softmax runs in fp32 and the next matmul casts its
// result back. exp is fp32 too.
// CHECK-LABEL: func.func @shared_weight
// CHECK: %[[WL:.*]] = remat.cast %arg1 : (tensor<8x8xf32>) -> tensor<8x8xbf16>
// CHECK: %[[HALF:.*]] = remat.constant dense<5.000000e-01> : tensor<bf16>
// CHECK: remat.mul %{{.*}}, %[[HALF]] : (tensor<4x8xbf16>, tensor<bf16>) -> tensor<4x8xbf16>
// CHECK: remat.softmax {{.*}} : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NOT: remat.cast %arg1
// CHECK: remat.matmul %{{.*}}, %[[WL]] : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xbf16>
// CHECK: remat.exp {{.*}} : (tensor<4x8xf32>) -> tensor<4x8xf32>
func.func @shared_weight(%x: tensor<4x8xf32> {remat.name = "x", remat.role = "input"},
                         %w: tensor<8x8xf32> {remat.name = "w", remat.role = "parameter"})
    -> (tensor<4x8xf32> {remat.name = "y"}, tensor<4x8xf32> {remat.name = "z"}) {
  %half = remat.constant dense<5.0e-01> : tensor<f32>
  %a = remat.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %s = remat.mul %a, %half : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %p = remat.softmax %s {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = remat.matmul %p, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %e = remat.exp %b : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %b, %e : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Attention computes in bf16 with an fp32 logsumexp; its additive mask is
// converted with the operands. Batch norm keeps its data's dtype (the conv's
// bf16 output) with fp32 statistics and affine parameters.
// CHECK-LABEL: func.func @attention_and_batch_norm
// CHECK: remat.attention {{.*}} : (tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x1x4x4xbf16>) -> (tensor<1x2x4x8xbf16>, tensor<1x2x4xf32>)
// CHECK: remat.conv {{.*}} -> tensor<2x4x6x6xbf16>
// CHECK: remat.batch_norm_training {{.*}} : (tensor<2x4x6x6xbf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x6x6xbf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK: remat.relu {{.*}} : (tensor<2x4x6x6xbf16>) -> tensor<2x4x6x6xbf16>
func.func @attention_and_batch_norm(
    %q: tensor<1x2x4x8xf32> {remat.name = "q", remat.role = "input"},
    %k: tensor<1x2x4x8xf32> {remat.name = "k", remat.role = "input"},
    %v: tensor<1x2x4x8xf32> {remat.name = "v", remat.role = "input"},
    %mask: tensor<1x1x4x4xf32> {remat.name = "mask", remat.role = "buffer"},
    %img: tensor<2x3x8x8xf32> {remat.name = "img", remat.role = "input"},
    %cw: tensor<4x3x3x3xf32> {remat.name = "conv.weight", remat.role = "parameter"},
    %scale: tensor<4xf32> {remat.name = "bn.weight", remat.role = "parameter"},
    %bias: tensor<4xf32> {remat.name = "bn.bias", remat.role = "parameter"},
    %rm: tensor<4xf32> {remat.name = "bn.running_mean", remat.role = "buffer"},
    %rv: tensor<4xf32> {remat.name = "bn.running_var", remat.role = "buffer"})
    -> (tensor<1x2x4x8xf32> {remat.name = "o"}, tensor<2x4x6x6xf32> {remat.name = "y"}) {
  %o, %lse = remat.attention %q, %k, %v, %mask {scale = 0.35355339059327373 : f64} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x1x4x4xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4xf32>)
  %c = remat.conv %img, %cw {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32>
  %y, %nm, %nv, %sm, %si = remat.batch_norm_training %c, %scale, %bias, %rm, %rv {epsilon = 1.0e-05 : f64, momentum = 0.9 : f64} : (tensor<2x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  %r = remat.relu %y : (tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32>
  return %o, %r : tensor<1x2x4x8xf32>, tensor<2x4x6x6xf32>
}

// -----

// Casts that cancel: a bf16 value widened (by the model's own Cast) and
// then needed in bf16 again reads the bf16 value; f64 computations are left
// alone.
// CHECK-LABEL: func.func @cancelling_casts
// CHECK: %[[A:.*]] = remat.matmul {{.*}} -> tensor<4x4xbf16>
// CHECK-NOT: remat.cast %[[A]] : (tensor<4x4xbf16>) -> tensor<4x4xf32>
// CHECK: remat.matmul %[[A]], {{.*}} : (tensor<4x4xbf16>, tensor<4x4xbf16>) -> tensor<4x4xbf16>
// CHECK: remat.add {{.*}} : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
func.func @cancelling_casts(%x: tensor<4x4xf32> {remat.name = "x", remat.role = "input"},
                            %d: tensor<4x4xf64> {remat.name = "d", remat.role = "input"})
    -> (tensor<4x4xf32> {remat.name = "y"}, tensor<4x4xf64> {remat.name = "z"}) {
  %a = remat.matmul %x, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %wide = remat.cast %a : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %b = remat.matmul %wide, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %z = remat.add %d, %d : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
  return %b, %z : tensor<4x4xf32>, tensor<4x4xf64>
}
