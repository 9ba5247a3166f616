// RUN: remat-opt %s | remat-opt | FileCheck %s
// Every op prints and parses back unchanged, with inferred types checked.

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %c: tensor<2x1xi1>) -> tensor<2x3xf32> {
  // CHECK: remat.add %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %0 = remat.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = remat.gelu %0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: remat.gelu %{{.*}} {approximate = "tanh"}
  %2 = remat.gelu %1 {approximate = "tanh"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = remat.less %2, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %4 = remat.where %c, %2, %1 : (tensor<2x1xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %e = remat.constant dense<2> : tensor<i64>
  // CHECK: remat.pow %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
  %5 = remat.pow %4, %e : (tensor<2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
  // CHECK: remat.dropout %{{.*}} {ratio = 1.000000e-01 : f64, seed = 0 : i64, stream = 3 : i64}
  %6, %mask = remat.dropout %5 {ratio = 0.1 : f64, seed = 0 : i64, stream = 3 : i64} : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xi1>)
  return %6 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @transformer_pieces
func.func @transformer_pieces(%x: tensor<2x8x16xf32>, %w: tensor<16x48xf32>, %g: tensor<16xf32>, %ids: tensor<2x8xi64>, %emb: tensor<100x16xf32>) -> tensor<f32> {
  // CHECK: remat.gather {{.*}} {axis = 0 : i64} : (tensor<100x16xf32>, tensor<2x8xi64>) -> tensor<2x8x16xf32>
  %e = remat.gather %emb, %ids {axis = 0 : i64} : (tensor<100x16xf32>, tensor<2x8xi64>) -> tensor<2x8x16xf32>
  %y, %mean, %rstd = remat.layer_norm %e, %g {axis = 2 : i64, epsilon = 1.0e-5 : f64} : (tensor<2x8x16xf32>, tensor<16xf32>) -> (tensor<2x8x16xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>)
  %qkv = remat.matmul %y, %w : (tensor<2x8x16xf32>, tensor<16x48xf32>) -> tensor<2x8x48xf32>
  %q, %k, %v = remat.split %qkv {axis = 2 : i64} : (tensor<2x8x48xf32>) -> (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>)
  %q4 = remat.reshape %q : (tensor<2x8x16xf32>) -> tensor<2x8x4x4xf32>
  %qt = remat.transpose %q4 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x8x4x4xf32>) -> tensor<2x4x8x4xf32>
  // CHECK: remat.matmul {{.*}} {transpose_rhs = true} : (tensor<2x4x8x4xf32>, tensor<2x4x8x4xf32>) -> tensor<2x4x8x8xf32>
  %s = remat.matmul %qt, %qt {transpose_rhs = true} : (tensor<2x4x8x4xf32>, tensor<2x4x8x4xf32>) -> tensor<2x4x8x8xf32>
  %p = remat.softmax %s {axis = 3 : i64} : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %sl = remat.slice %p {starts = array<i64: 0, 0, 7, 0>, limits = array<i64: 2, 4, -1, 8>, steps = array<i64: 1, 1, -2, 1>} : (tensor<2x4x8x8xf32>) -> tensor<2x4x4x8xf32>
  %cat = remat.concat %sl, %sl {axis = 2 : i64} : (tensor<2x4x4x8xf32>, tensor<2x4x4x8xf32>) -> tensor<2x4x8x8xf32>
  %r = remat.reduce_mean %cat {axes = array<i64: 1, 3>, keepdims = false} : (tensor<2x4x8x8xf32>) -> tensor<2x8xf32>
  %ex = remat.expand %r : (tensor<2x8xf32>) -> tensor<3x2x8xf32>
  %scores = remat.reshape %ex : (tensor<3x2x8xf32>) -> tensor<6x8xf32>
  %labels = remat.constant dense<[0, 1, 2, 3, 4, 5]> : tensor<6xi64>
  // CHECK: remat.softmax_cross_entropy_loss {{.*}} {ignore_index = -100 : i64, reduction = "mean"}
  %loss, %logp = remat.softmax_cross_entropy_loss %scores, %labels {reduction = "mean", ignore_index = -100 : i64} : (tensor<6x8xf32>, tensor<6xi64>) -> (tensor<f32>, tensor<6x8xf32>)
  return %loss : tensor<f32>
}

// CHECK-LABEL: func.func @cnn_pieces
func.func @cnn_pieces(%x: tensor<2x3x9x9xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<8xf32>, %s: tensor<8xf32>, %m: tensor<8xf32>, %v: tensor<8xf32>) -> tensor<2x8x1x1xf32> {
  // CHECK: remat.conv {{.*}} -> tensor<2x8x5x5xf32>
  %c = remat.conv %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<2x3x9x9xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<2x8x5x5xf32>
  %y, %rm, %rv, %sm, %si = remat.batch_norm_training %c, %s, %b, %m, %v {epsilon = 1.0e-5 : f64, momentum = 0.9 : f64} : (tensor<2x8x5x5xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x8x5x5xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  %r = remat.relu %y : (tensor<2x8x5x5xf32>) -> tensor<2x8x5x5xf32>
  // CHECK: remat.max_pool {{.*}} -> (tensor<2x8x3x3xf32>, tensor<2x8x3x3xi64>)
  %p, %idx = remat.max_pool %r {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<2x8x5x5xf32>) -> (tensor<2x8x3x3xf32>, tensor<2x8x3x3xi64>)
  %a = remat.average_pool %p {kernel_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = true} : (tensor<2x8x3x3xf32>) -> tensor<2x8x2x2xf32>
  // Dilation 2 spans 3 positions: (5 + 1 - 3) / 1 + 1 = 4 along H.
  // CHECK: remat.average_pool {{.*}}dilations = array<i64: 2, 1>{{.*}} -> tensor<2x8x4x4xf32>
  %ad = remat.average_pool %r {kernel_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 1, 0, 0, 0>, dilations = array<i64: 2, 1>} : (tensor<2x8x5x5xf32>) -> tensor<2x8x4x4xf32>
  %g = remat.global_average_pool %a : (tensor<2x8x2x2xf32>) -> tensor<2x8x1x1xf32>
  return %g : tensor<2x8x1x1xf32>
}

// CHECK-LABEL: func.func @named_arguments
// CHECK-SAME: remat.name = "fc.weight", remat.role = "parameter"
func.func @named_arguments(%x: tensor<4xf32> {remat.name = "x", remat.role = "input"},
                           %w: tensor<4xf32> {remat.name = "fc.weight", remat.role = "parameter"}) -> tensor<4xf32> {
  %0 = remat.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// Parameterised activations: a default-valued parameter is not printed.
// CHECK-LABEL: func.func @activations
func.func @activations(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %dy: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK: remat.leaky_relu %{{.*}} {alpha = 2.000000e-01 : f64}
  %0 = remat.leaky_relu %x {alpha = 0.2} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: remat.leaky_relu %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = remat.leaky_relu %0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = remat.elu %1 {alpha = 0.5} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = remat.selu %2 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = remat.softplus %3 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %5 = remat.softsign %4 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: remat.hard_sigmoid %{{.*}} {alpha = 2.500000e-01 : f64}
  %6 = remat.hard_sigmoid %5 {alpha = 0.25} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: remat.clip %{{.*}} {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64}
  %7 = remat.clip %6 {min = 0.0, max = 6.0} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %8 = remat.sin %7 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %9 = remat.cos %8 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: remat.prelu %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %10 = remat.prelu %9, %s : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: remat.activation_backward %{{.*}}, %{{.*}} {activation = "clip", max = 6.000000e+00 : f64, min = 0.000000e+00 : f64}
  %11 = remat.activation_backward %10, %dy {activation = "clip", min = 0.0, max = 6.0} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: remat.activation_backward %{{.*}}, %{{.*}} {activation = "sin"}
  %12 = remat.activation_backward %11, %dy {activation = "sin"} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: remat.relu_backward %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %13 = remat.relu_backward %12, %dy : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %13 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @data_movement_pieces
func.func @data_movement_pieces(%x: tensor<2x3xf32>, %i: tensor<2x5xi64>) -> tensor<2x5xf32> {
  // CHECK: remat.pad %{{.*}} {mode = "reflect", pads = array<i64: 0, 2, 0, -1>} : (tensor<2x3xf32>) -> tensor<2x4xf32>
  %p = remat.pad %x {mode = "reflect", pads = array<i64: 0, 2, 0, -1>} : (tensor<2x3xf32>) -> tensor<2x4xf32>
  // CHECK: remat.pad_backward %{{.*}} {mode = "reflect", pads = array<i64: 0, 2, 0, -1>} : (tensor<2x4xf32>) -> tensor<2x3xf32>
  %dp = remat.pad_backward %p {mode = "reflect", pads = array<i64: 0, 2, 0, -1>} : (tensor<2x4xf32>) -> tensor<2x3xf32>
  // CHECK: remat.tile %{{.*}} {repeats = array<i64: 1, 2>} : (tensor<2x3xf32>) -> tensor<2x6xf32>
  %t = remat.tile %dp {repeats = array<i64: 1, 2>} : (tensor<2x3xf32>) -> tensor<2x6xf32>
  // CHECK: remat.cumsum %{{.*}} {axis = 1 : i64, reverse = true} : (tensor<2x6xf32>) -> tensor<2x6xf32>
  %c = remat.cumsum %t {axis = 1 : i64, reverse = true} : (tensor<2x6xf32>) -> tensor<2x6xf32>
  // CHECK: remat.trilu %{{.*}} {k = 1 : i64, upper = false} : (tensor<2x6xf32>) -> tensor<2x6xf32>
  %l = remat.trilu %c {k = 1 : i64, upper = false} : (tensor<2x6xf32>) -> tensor<2x6xf32>
  // CHECK: remat.gather_elements %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<2x6xf32>, tensor<2x5xi64>) -> tensor<2x5xf32>
  %g = remat.gather_elements %l, %i {axis = 1 : i64} : (tensor<2x6xf32>, tensor<2x5xi64>) -> tensor<2x5xf32>
  // CHECK: remat.gather_elements_backward %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<2x5xf32>, tensor<2x5xi64>) -> tensor<2x6xf32>
  %dg = remat.gather_elements_backward %g, %i {axis = 1 : i64} : (tensor<2x5xf32>, tensor<2x5xi64>) -> tensor<2x6xf32>
  %s = remat.slice %dg {starts = array<i64: 0, 0>, limits = array<i64: 2, 5>, steps = array<i64: 1, 1>} : (tensor<2x6xf32>) -> tensor<2x5xf32>
  return %s : tensor<2x5xf32>
}

// Grouped heads (4 query heads read 2 key/value heads), Dv != D, a mask
// broadcast over batch and heads; logsumexp is f32 for f16 inputs.
// CHECK-LABEL: func.func @attention
func.func @attention(%q: tensor<2x4x5x8xf32>, %k: tensor<2x2x7x8xf32>, %v: tensor<2x2x7x3xf32>, %m: tensor<5x7xf32>, %h: tensor<1x2x3x4xf16>) -> (tensor<2x4x5x8xf32>, tensor<1x2x3xf32>) {
  // CHECK: remat.attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {causal = true, dropout_ratio = 1.000000e-01 : f64, scale = 3.535500e-01 : f64, seed = 5 : i64, stream = 2 : i64} : (tensor<2x4x5x8xf32>, tensor<2x2x7x8xf32>, tensor<2x2x7x3xf32>, tensor<5x7xf32>) -> (tensor<2x4x5x3xf32>, tensor<2x4x5xf32>)
  %o, %l = remat.attention %q, %k, %v, %m {scale = 0.35355 : f64, causal = true, dropout_ratio = 0.1 : f64, seed = 5 : i64, stream = 2 : i64} : (tensor<2x4x5x8xf32>, tensor<2x2x7x8xf32>, tensor<2x2x7x3xf32>, tensor<5x7xf32>) -> (tensor<2x4x5x3xf32>, tensor<2x4x5xf32>)
  // CHECK: remat.attention_backward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {causal = true, dropout_ratio = 1.000000e-01 : f64, scale = 3.535500e-01 : f64, seed = 5 : i64, stream = 2 : i64} : {{.*}} -> (tensor<2x4x5x8xf32>, tensor<2x2x7x8xf32>, tensor<2x2x7x3xf32>)
  %dq, %dk, %dv = remat.attention_backward %q, %k, %v, %o, %l, %o, %m {scale = 0.35355 : f64, causal = true, dropout_ratio = 0.1 : f64, seed = 5 : i64, stream = 2 : i64} : (tensor<2x4x5x8xf32>, tensor<2x2x7x8xf32>, tensor<2x2x7x3xf32>, tensor<2x4x5x3xf32>, tensor<2x4x5xf32>, tensor<2x4x5x3xf32>, tensor<5x7xf32>) -> (tensor<2x4x5x8xf32>, tensor<2x2x7x8xf32>, tensor<2x2x7x3xf32>)
  // CHECK: remat.attention %{{.*}}, %{{.*}}, %{{.*}} {scale = 5.000000e-01 : f64} : (tensor<1x2x3x4xf16>, tensor<1x2x3x4xf16>, tensor<1x2x3x4xf16>) -> (tensor<1x2x3x4xf16>, tensor<1x2x3xf32>)
  %ho, %hl = remat.attention %h, %h, %h {scale = 0.5 : f64} : (tensor<1x2x3x4xf16>, tensor<1x2x3x4xf16>, tensor<1x2x3x4xf16>) -> (tensor<1x2x3x4xf16>, tensor<1x2x3xf32>)
  return %dq, %hl : tensor<2x4x5x8xf32>, tensor<1x2x3xf32>
}
