// RUN: remat-opt %s -split-input-file -verify-diagnostics
// Verifiers and type inference reject malformed ops with a message that
// names the problem.

func.func @no_broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error@+2 {{operand shapes 2x3 and 4 do not broadcast}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = remat.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @wrong_result(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error@+2 {{inferred type(s) 'tensor<2x3xf32>' are incompatible with return type(s) of operation 'tensor<3x2xf32>'}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = remat.add %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @matmul_k(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error@+2 {{matmul contraction sizes differ: 2x3 and 4x5}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = remat.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @reshape_count(%a: tensor<2x3xf32>) -> tensor<7xf32> {
  // expected-error@+1 {{cannot reshape 2x3 (6 elements) to 7 (7 elements)}}
  %0 = remat.reshape %a : (tensor<2x3xf32>) -> tensor<7xf32>
  return %0 : tensor<7xf32>
}

// -----

func.func @split_sizes(%a: tensor<6xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{split sizes add up to 5, but the input's axis has size 6}}
  %0, %1 = remat.split %a {axis = 0 : i64} : (tensor<6xf32>) -> (tensor<2xf32>, tensor<3xf32>)
  return %0 : tensor<2xf32>
}

// -----

func.func @dropout_ratio(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{ratio must be in [0, 1), got 1}}
  %0, %m = remat.dropout %a {ratio = 1.0 : f64, seed = 0 : i64, stream = 0 : i64} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>)
  return %0 : tensor<4xf32>
}

// -----

func.func @conv_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<1x8x6x6xf32> {
  // expected-error@+2 {{conv channels do not match: input 1x4x8x8, weight 8x3x3x3, group 1}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = remat.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x6x6xf32>
  return %0 : tensor<1x8x6x6xf32>
}

// -----

func.func @loss_reduction(%s: tensor<4x3xf32>, %l: tensor<4xi64>) -> tensor<f32> {
  // expected-error@+1 {{attribute 'reduction' failed to satisfy constraint: string attribute one of: none, sum, mean}}
  %0, %1 = remat.softmax_cross_entropy_loss %s, %l {reduction = "avg"} : (tensor<4x3xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4x3xf32>)
  return %0 : tensor<f32>
}

// -----

func.func @slice_unnormalised(%a: tensor<8xf32>) -> tensor<2xf32> {
  // expected-error@+2 {{slice dim 0 (size 8) has start 7, limit 10, step 1, which is not normalised}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = remat.slice %a {starts = array<i64: 7>, limits = array<i64: 10>, steps = array<i64: 1>} : (tensor<8xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expected-error@+1 {{argument 0: 'remat.role' must be one of: input, parameter, buffer, optimizer_state, step}}
func.func @bad_role(%x: tensor<4xf32> {remat.role = "weight"}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// The runtime keeps shapes inline, at most 8 dims.
func.func @rank_nine(%a: tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32> {
  // expected-error@+1 {{operand #0 must be ranked tensor (rank <= 8) of}}
  %0 = remat.relu %a : (tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  return %0 : tensor<1x1x1x1x1x1x1x1x2xf32>
}

// -----

func.func @prelu_slope_broadcasts_one_way(%x: tensor<3xf32>, %s: tensor<2x3xf32>) -> tensor<3xf32> {
  // expected-error@+2 {{slope shape 2x3 does not broadcast to input shape 3}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = remat.prelu %x, %s : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @activation_backward_missing_parameter(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{activation 'elu' requires attribute 'alpha'}}
  %0 = remat.activation_backward %x, %x {activation = "elu"} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @activation_backward_extra_parameter(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{activation 'softplus' takes no attribute 'alpha'}}
  %0 = remat.activation_backward %x, %x {activation = "softplus", alpha = 1.0} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @relu_backward_shape(%y: tensor<3xf32>, %dy: tensor<4xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{failed to verify that all of {output, output_grad, input_grad} have same type}}
  %0 = remat.relu_backward %y, %dy : (tensor<3xf32>, tensor<4xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @activation_backward_unknown(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{attribute 'activation' failed to satisfy constraint}}
  %0 = remat.activation_backward %x, %x {activation = "tanh"} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @clip_is_float_only(%x: tensor<3xi64>) -> tensor<3xi64> {
  // expected-error@+1 {{operand #0 must be ranked tensor (rank <= 8) of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = remat.clip %x {min = 0.0, max = 1.0} : (tensor<3xi64>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

func.func @pad_count(%a: tensor<2x3xf32>) -> tensor<2x5xf32> {
  // expected-error@+2 {{pad needs 2 * rank = 4 pads, got 2}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = remat.pad %a {pads = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @pad_overcrop(%a: tensor<2x3xf32>) -> tensor<2x1xf32> {
  // expected-error@+2 {{pad pads -4 and 2 crop more than the 3 elements of dim 1}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = remat.pad %a {pads = array<i64: 0, -4, 0, 2>} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

func.func @pad_reflect_empty(%a: tensor<2x3xf32>) -> tensor<2x2xf32> {
  // expected-error@+2 {{pad mode 'reflect' pads dim 1, which has no element to read}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = remat.pad %a {mode = "reflect", pads = array<i64: 0, -3, 0, 2>} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @pad_backward_shape(%dy: tensor<2x6xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{input_grad 2x3 padded is 2x5, but output_grad is 2x6}}
  %0 = remat.pad_backward %dy {mode = "edge", pads = array<i64: 0, 1, 0, 1>} : (tensor<2x6xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @tile_repeats(%a: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // expected-error@+2 {{tile needs one repeat per dim (2), got 1}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = remat.tile %a {repeats = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @trilu_rank(%a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{input must have rank >= 2, got 1}}
  %0 = remat.trilu %a : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @cumsum_axis(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{axis 2 is out of range for rank 2}}
  %0 = remat.cumsum %a {axis = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @gather_elements_wide(%a: tensor<2x3xf32>, %i: tensor<3x3xi64>) -> tensor<3x3xf32> {
  // expected-error@+2 {{gather_elements indices 3x3 exceed the input 2x3 along dim 0}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = remat.gather_elements %a, %i {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3x3xi64>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

func.func @attention_rank(%q: tensor<2x4x8xf32>, %k: tensor<2x1x4x8xf32>, %v: tensor<2x1x4x8xf32>) -> tensor<2x4x8xf32> {
  // expected-error@+2 {{attention query, key and value must be [batch, heads, seq, dim] (rank 4), got ranks 3, 4, 4}}
  // expected-error@+1 {{failed to infer returned types}}
  %o, %l = remat.attention %q, %k, %v {scale = 0.5 : f64} : (tensor<2x4x8xf32>, tensor<2x1x4x8xf32>, tensor<2x1x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4xf32>)
  return %o : tensor<2x4x8xf32>
}

// -----

func.func @attention_heads(%q: tensor<1x3x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x3x4x8xf32> {
  // expected-error@+2 {{attention query heads (3) must be a multiple of key/value heads (2)}}
  // expected-error@+1 {{failed to infer returned types}}
  %o, %l = remat.attention %q, %k, %v {scale = 0.5 : f64} : (tensor<1x3x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> (tensor<1x3x4x8xf32>, tensor<1x3x4xf32>)
  return %o : tensor<1x3x4x8xf32>
}

// -----

func.func @attention_mask(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %m: tensor<4x4xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error@+2 {{attention mask 4x4 does not broadcast to the scores 1x2x4x6}}
  // expected-error@+1 {{failed to infer returned types}}
  %o, %l = remat.attention %q, %k, %v, %m {scale = 0.5 : f64} : (tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<4x4xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4xf32>)
  return %o : tensor<1x2x4x8xf32>
}

// -----

func.func @attention_dropout(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error@+1 {{dropout_ratio must be in [0, 1), got 1}}
  %o, %l = remat.attention %q, %k, %v {scale = 0.5 : f64, dropout_ratio = 1.0 : f64} : (tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4xf32>)
  return %o : tensor<1x2x4x8xf32>
}

// -----

func.func @attention_scale(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error@+1 {{scale must be finite and non-zero, got 0}}
  %o, %l = remat.attention %q, %k, %v {scale = 0.0 : f64} : (tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4xf32>)
  return %o : tensor<1x2x4x8xf32>
}

// -----

func.func @attention_backward_lse(%q: tensor<1x2x4x8xf16>, %k: tensor<1x2x6x8xf16>, %v: tensor<1x2x6x8xf16>, %o: tensor<1x2x4x8xf16>, %l: tensor<1x2x4xf16>) -> tensor<1x2x4x8xf16> {
  // expected-error@+2 {{attention_backward logsumexp must be 'tensor<1x2x4xf32>'}}
  // expected-error@+1 {{failed to infer returned types}}
  %dq, %dk, %dv = remat.attention_backward %q, %k, %v, %o, %l, %o {scale = 0.5 : f64} : (tensor<1x2x4x8xf16>, tensor<1x2x6x8xf16>, tensor<1x2x6x8xf16>, tensor<1x2x4x8xf16>, tensor<1x2x4xf16>, tensor<1x2x4x8xf16>) -> (tensor<1x2x4x8xf16>, tensor<1x2x6x8xf16>, tensor<1x2x6x8xf16>)
  return %dq : tensor<1x2x4x8xf16>
}

// -----

func.func @any_nonfinite_flag(%g: tensor<4xf32>, %found: tensor<2xi1>) -> tensor<2xi1> {
  // expected-error@+1 {{found must be a 0-d tensor, got 'tensor<2xi1>'}}
  %r = remat.any_nonfinite %g, %found : (tensor<4xf32>, tensor<2xi1>) -> tensor<2xi1>
  return %r : tensor<2xi1>
}

// -----

func.func @loss_scale_interval(%s: tensor<f32>, %t: tensor<i32>, %f: tensor<i1>) -> tensor<f32> {
  // expected-error@+1 {{growth_interval must be at least 1, got 0}}
  %ns, %nt = remat.loss_scale_update %s, %t, %f {growth_interval = 0 : i64} : (tensor<f32>, tensor<i32>, tensor<i1>) -> (tensor<f32>, tensor<i32>)
  return %ns : tensor<f32>
}

// -----

func.func @adam_scale_shape(%p: tensor<4xf32>, %step: tensor<i64>, %s: tensor<1xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{loss_scale must be a 0-d tensor, got 'tensor<1xf32>'}}
  %np, %nm, %nv = remat.adam %p, %p, %p, %p, %step unscale %s {lr = 1.0e-3 : f64, beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-8 : f64} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>, tensor<1xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %np : tensor<4xf32>
}

// -----

func.func @loss_scale_factor(%s: tensor<f32>, %t: tensor<i32>, %f: tensor<i1>) -> tensor<f32> {
  // expected-error@+1 {{growth and backoff factors must be positive and exact in fp32, got 1.000000e-01}}
  %ns, %nt = remat.loss_scale_update %s, %t, %f {backoff_factor = 0.1 : f64} : (tensor<f32>, tensor<i32>, tensor<i1>) -> (tensor<f32>, tensor<i32>)
  return %ns : tensor<f32>
}

// -----

func.func @gather_padding_idx_axis(%w: tensor<5x4xf32>, %i: tensor<3xi64>) -> tensor<5x3xf32> {
  // expected-error@+1 {{padding_idx needs axis 0 (an embedding lookup), got axis 1}}
  %0 = remat.gather %w, %i {axis = 1 : i64, padding_idx = 0 : i64} : (tensor<5x4xf32>, tensor<3xi64>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// -----

func.func @gather_padding_idx_row(%w: tensor<5x4xf32>, %i: tensor<3xi64>) -> tensor<3x4xf32> {
  // expected-error@+1 {{padding_idx 5 is not a row of the input (5 rows)}}
  %0 = remat.gather %w, %i {axis = 0 : i64, padding_idx = 5 : i64} : (tensor<5x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
