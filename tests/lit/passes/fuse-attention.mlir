// RUN: remat-opt %s --split-input-file --remat-fuse-attention | FileCheck %s
// RUN: remat-opt %s --split-input-file --remat-fuse-attention='explain=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN

// The attention blocks below are cut from the imported exports named in each
// comment (smaller shapes, same ops).

// tests/fixtures/gpt2_tiny: Where(causal bool constant, -inf, scores * scale)
// with K transposed [0, 2, 3, 1] from [B, S, H, D]: causal, no mask, and K
// read through one [0, 2, 1, 3] transpose.
// CHECK-LABEL: func.func @gpt2_where_causal
// CHECK-SAME: remat.fused_attention = 1 : i64, remat.fused_attention_bytes = 128 : i64
// CHECK: %[[K:.*]] = remat.transpose %arg1 {permutation = array<i64: 0, 2, 1, 3>}
// CHECK: %[[O:.*]], %{{.*}} = remat.attention %arg0, %[[K]], %arg2 {causal = true, scale = 2.500000e-01 : f64}
// CHECK-NOT: remat.softmax
// CHECK: return %[[O]]
// EXPLAIN: remat-fuse-attention: h.0.softmax: fused (scale 0.250000, causal)
func.func @gpt2_where_causal(%q: tensor<1x2x4x16xf32>, %k: tensor<1x4x2x16xf32>, %v: tensor<1x2x4x16xf32>) -> tensor<1x2x4x16xf32> {
  %kt = remat.transpose %k {permutation = array<i64: 0, 2, 3, 1>} : (tensor<1x4x2x16xf32>) -> tensor<1x2x16x4xf32>
  %s = remat.matmul %q, %kt : (tensor<1x2x4x16xf32>, tensor<1x2x16x4xf32>) -> tensor<1x2x4x4xf32>
  %c = remat.constant dense<2.500000e-01> : tensor<f32>
  %scaled = remat.mul %s, %c : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %hide = remat.constant dense<[[[[false, true, true, true], [false, false, true, true], [false, false, false, true], [false, false, false, false]]]]> : tensor<1x1x4x4xi1>
  %ninf = remat.constant dense<0xFF800000> : tensor<f32>
  %masked = remat.where %hide, %ninf, %scaled : (tensor<1x1x4x4xi1>, tensor<f32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %p = remat.softmax %masked {axis = 3 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("h.0.softmax")
  %o = remat.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x16xf32>) -> tensor<1x2x4x16xf32>
  return %o : tensor<1x2x4x16xf32>
}

// -----

// tests/models/hf/gpt2 (TorchScript): the additive mask is built from
// literals (Less/Equal/Or/And, then Where(keep, 0, finfo.min)) and is the
// causal pattern, so it folds to causal; the dropout (ratio 0 as exported)
// keeps its seed and stream.
// CHECK-LABEL: func.func @gpt2_torchscript_mask
// CHECK-SAME: remat.fused_attention_bytes = 576 : i64
// CHECK: remat.attention %arg0, %{{.*}}, %arg2 {causal = true, dropout_ratio = 1.000000e-01 : f64, scale = 2.500000e-01 : f64, seed = 7 : i64, stream = 3 : i64}
// CHECK-NOT: remat.softmax
// CHECK-NOT: remat.dropout
// EXPLAIN: remat-fuse-attention: gpt2.attn: fused (scale 0.250000, causal, dropout)
func.func @gpt2_torchscript_mask(%q: tensor<2x2x4x8xf32>, %k: tensor<2x4x2x8xf32>, %v: tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32> {
  %cols = remat.constant dense<[[[[0, 1, 2, 3]]]]> : tensor<1x1x1x4xi64>
  %rows = remat.constant dense<[[[[0], [1], [2], [3]]]]> : tensor<1x1x4x1xi64>
  %eq = remat.equal %cols, %rows : (tensor<1x1x1x4xi64>, tensor<1x1x4x1xi64>) -> tensor<1x1x4x4xi1>
  %lt = remat.less %cols, %rows : (tensor<1x1x1x4xi64>, tensor<1x1x4x1xi64>) -> tensor<1x1x4x4xi1>
  %le = remat.or %lt, %eq : (tensor<1x1x4x4xi1>, tensor<1x1x4x4xi1>) -> tensor<1x1x4x4xi1>
  %pad = remat.constant dense<true> : tensor<2x1x1x4xi1>
  %keep = remat.and %le, %pad : (tensor<1x1x4x4xi1>, tensor<2x1x1x4xi1>) -> tensor<2x1x4x4xi1>
  %zero = remat.constant dense<0.000000e+00> : tensor<f32>
  %min = remat.constant dense<-3.40282347E+38> : tensor<f32>
  %mask = remat.where %keep, %zero, %min : (tensor<2x1x4x4xi1>, tensor<f32>, tensor<f32>) -> tensor<2x1x4x4xf32>
  %kt = remat.transpose %k {permutation = array<i64: 0, 2, 3, 1>} : (tensor<2x4x2x8xf32>) -> tensor<2x2x8x4xf32>
  %s = remat.matmul %q, %kt : (tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x4x4xf32>
  %c = remat.constant dense<2.500000e-01> : tensor<f32>
  %scaled = remat.mul %s, %c : (tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4x4xf32>
  %masked = remat.add %scaled, %mask : (tensor<2x2x4x4xf32>, tensor<2x1x4x4xf32>) -> tensor<2x2x4x4xf32>
  %p = remat.softmax %masked {axis = 3 : i64} : (tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32> loc("gpt2.attn")
  %d, %dmask = remat.dropout %p {ratio = 1.000000e-01 : f64, seed = 7 : i64, stream = 3 : i64} : (tensor<2x2x4x4xf32>) -> (tensor<2x2x4x4xf32>, tensor<2x2x4x4xi1>)
  %o = remat.matmul %d, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// tests/models/hf/gpt2 and bert (dynamo): the scale is a scalar buffer and
// the mask a [B, 1, S, S] buffer, both known only at run time: the scale
// multiplies Q (scale attribute 1) and the mask is the additive operand.
// CHECK-LABEL: func.func @dynamo_runtime_scale_and_mask
// CHECK: %[[Q:.*]] = remat.mul %arg0, %arg4 : (tensor<2x2x4x8xf32>, tensor<f32>) -> tensor<2x2x4x8xf32>
// CHECK: remat.attention %[[Q]], %{{.*}}, %arg2, %arg3 {scale = 1.000000e+00 : f64}
// EXPLAIN: remat-fuse-attention: dynamo.attn: fused (scale 1.000000, additive mask, run-time scale on Q)
func.func @dynamo_runtime_scale_and_mask(%q: tensor<2x2x4x8xf32>, %k: tensor<2x4x2x8xf32>, %v: tensor<2x2x4x8xf32>,
    %mask: tensor<2x1x4x4xf32> {remat.name = "where", remat.role = "buffer"},
    %scale: tensor<f32> {remat.name = "val_142", remat.role = "buffer"}) -> tensor<2x2x4x8xf32> {
  %kt = remat.transpose %k {permutation = array<i64: 0, 2, 3, 1>} : (tensor<2x4x2x8xf32>) -> tensor<2x2x8x4xf32>
  %s = remat.matmul %q, %kt : (tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x4x4xf32>
  %scaled = remat.mul %s, %scale : (tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4x4xf32>
  %masked = remat.add %scaled, %mask : (tensor<2x2x4x4xf32>, tensor<2x1x4x4xf32>) -> tensor<2x2x4x4xf32>
  %p = remat.softmax %masked {axis = 3 : i64} : (tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32> loc("dynamo.attn")
  %o = remat.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// tests/models/hf/llama (TorchScript): RoPE'd K, repeat_kv (Reshape ->
// Expand -> Reshape) on K and V, K^T by a [0, 1, 3, 2] transpose, an
// additive [S, S] mask argument. The expansion is stripped: 1 kv head for 2
// query heads, K read directly.
// CHECK-LABEL: func.func @llama_repeat_kv
// CHECK: remat.attention %arg0, %arg1, %arg2, %arg3 {scale = 0.353553{{[0-9]*}} : f64} : (tensor<2x2x4x8xf32>, tensor<2x1x4x8xf32>, tensor<2x1x4x8xf32>, tensor<4x4xf32>)
// CHECK-NOT: remat.expand
// EXPLAIN: remat-fuse-attention: llama.attn: fused (scale 0.353553, additive mask, 1 kv heads)
func.func @llama_repeat_kv(%q: tensor<2x2x4x8xf32>, %k: tensor<2x1x4x8xf32>, %v: tensor<2x1x4x8xf32>,
    %mask: tensor<4x4xf32> {remat.name = "causal_mask", remat.role = "input"}) -> tensor<2x2x4x8xf32> {
  %k1 = remat.reshape %k : (tensor<2x1x4x8xf32>) -> tensor<2x1x1x4x8xf32>
  %k2 = remat.expand %k1 : (tensor<2x1x1x4x8xf32>) -> tensor<2x1x2x4x8xf32>
  %k3 = remat.reshape %k2 : (tensor<2x1x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  %v1 = remat.reshape %v : (tensor<2x1x4x8xf32>) -> tensor<2x1x1x4x8xf32>
  %v2 = remat.expand %v1 : (tensor<2x1x1x4x8xf32>) -> tensor<2x1x2x4x8xf32>
  %v3 = remat.reshape %v2 : (tensor<2x1x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  %kt = remat.transpose %k3 {permutation = array<i64: 0, 1, 3, 2>} : (tensor<2x2x4x8xf32>) -> tensor<2x2x8x4xf32>
  %s = remat.matmul %q, %kt : (tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x4x4xf32>
  %c = remat.constant dense<0.353553385> : tensor<f32>
  %scaled = remat.mul %s, %c : (tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4x4xf32>
  %masked = remat.add %scaled, %mask : (tensor<2x2x4x4xf32>, tensor<4x4xf32>) -> tensor<2x2x4x4xf32>
  %p = remat.softmax %masked {axis = 3 : i64} : (tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32> loc("llama.attn")
  %o = remat.matmul %p, %v3 : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// tests/models/pytorch/bert_tiny (nn.MultiheadAttention, TorchScript): 3-D
// [B * H, S, D] operands, Q divided by sqrt(D) before the matmul: reshaped
// to [1, B * H, S, D] around the op, scale 1/4.
// CHECK-LABEL: func.func @mha_3d_scaled_query
// CHECK: %[[Q:.*]] = remat.reshape %arg0 : (tensor<8x4x16xf32>) -> tensor<1x8x4x16xf32>
// CHECK: %[[K:.*]] = remat.reshape %arg1 : (tensor<8x4x16xf32>) -> tensor<1x8x4x16xf32>
// CHECK: %[[V:.*]] = remat.reshape %arg2 : (tensor<8x4x16xf32>) -> tensor<1x8x4x16xf32>
// CHECK: %[[O:.*]], %{{.*}} = remat.attention %[[Q]], %[[K]], %[[V]] {scale = 2.500000e-01 : f64}
// CHECK: %[[R:.*]] = remat.reshape %[[O]] : (tensor<1x8x4x16xf32>) -> tensor<8x4x16xf32>
// CHECK: return %[[R]]
// EXPLAIN: remat-fuse-attention: mha.softmax: fused (scale 0.250000)
func.func @mha_3d_scaled_query(%q: tensor<8x4x16xf32>, %k: tensor<8x4x16xf32>, %v: tensor<8x4x16xf32>) -> tensor<8x4x16xf32> {
  %c = remat.constant dense<4.000000e+00> : tensor<f32>
  %qs = remat.div %q, %c : (tensor<8x4x16xf32>, tensor<f32>) -> tensor<8x4x16xf32>
  %kt = remat.transpose %k {permutation = array<i64: 0, 2, 1>} : (tensor<8x4x16xf32>) -> tensor<8x16x4xf32>
  %s = remat.matmul %qs, %kt : (tensor<8x4x16xf32>, tensor<8x16x4xf32>) -> tensor<8x4x4xf32>
  %p = remat.softmax %s {axis = 2 : i64} : (tensor<8x4x4xf32>) -> tensor<8x4x4xf32> loc("mha.softmax")
  %o = remat.matmul %p, %v : (tensor<8x4x4xf32>, tensor<8x4x16xf32>) -> tensor<8x4x16xf32>
  return %o : tensor<8x4x16xf32>
}

// -----

// scaled_dot_product_attention as TorchScript exports it: sqrt(scale) on
// both Q and K^T, computed from constants (1 / sqrt(sqrt(16))).
// CHECK-LABEL: func.func @sdpa_split_scale
// CHECK: remat.attention %arg0, %arg1, %arg2 {scale = 2.500000e-01 : f64}
// EXPLAIN: remat-fuse-attention: sdpa.softmax: fused (scale 0.250000)
func.func @sdpa_split_scale(%q: tensor<1x2x4x16xf32>, %k: tensor<1x2x4x16xf32>, %v: tensor<1x2x4x16xf32>) -> tensor<1x2x4x16xf32> {
  %d = remat.constant dense<1.600000e+01> : tensor<f32>
  %sd = remat.sqrt %d : (tensor<f32>) -> tensor<f32>
  %ssd = remat.sqrt %sd : (tensor<f32>) -> tensor<f32>
  %qs = remat.div %q, %ssd : (tensor<1x2x4x16xf32>, tensor<f32>) -> tensor<1x2x4x16xf32>
  %kt = remat.transpose %k {permutation = array<i64: 0, 1, 3, 2>} : (tensor<1x2x4x16xf32>) -> tensor<1x2x16x4xf32>
  %ks = remat.div %kt, %ssd : (tensor<1x2x16x4xf32>, tensor<f32>) -> tensor<1x2x16x4xf32>
  %s = remat.matmul %qs, %ks : (tensor<1x2x4x16xf32>, tensor<1x2x16x4xf32>) -> tensor<1x2x4x4xf32>
  %p = remat.softmax %s {axis = 3 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("sdpa.softmax")
  %o = remat.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x16xf32>) -> tensor<1x2x4x16xf32>
  return %o : tensor<1x2x4x16xf32>
}

// -----

// transformers' eager GPT-2 attention: Where(causal keep-mask, scores,
// finfo.min), the scores on the true side, after Div by sqrt(D).
// CHECK-LABEL: func.func @gpt2_eager_keep_mask
// CHECK: remat.attention %arg0, %arg1, %arg2 {causal = true, scale = 1.250000e-01 : f64}
// EXPLAIN: remat-fuse-attention: eager.softmax: fused (scale 0.125000, causal)
func.func @gpt2_eager_keep_mask(%q: tensor<1x1x3x64xf32>, %k: tensor<1x1x3x64xf32>, %v: tensor<1x1x3x64xf32>) -> tensor<1x1x3x64xf32> {
  %kt = remat.transpose %k {permutation = array<i64: 0, 1, 3, 2>} : (tensor<1x1x3x64xf32>) -> tensor<1x1x64x3xf32>
  %s = remat.matmul %q, %kt : (tensor<1x1x3x64xf32>, tensor<1x1x64x3xf32>) -> tensor<1x1x3x3xf32>
  %d = remat.constant dense<8.000000e+00> : tensor<f32>
  %scaled = remat.div %s, %d : (tensor<1x1x3x3xf32>, tensor<f32>) -> tensor<1x1x3x3xf32>
  %keep = remat.constant dense<[[true, false, false], [true, true, false], [true, true, true]]> : tensor<3x3xi1>
  %min = remat.constant dense<-3.40282347E+38> : tensor<f32>
  %masked = remat.where %keep, %scaled, %min : (tensor<3x3xi1>, tensor<1x1x3x3xf32>, tensor<f32>) -> tensor<1x1x3x3xf32>
  %p = remat.softmax %masked {axis = 3 : i64} : (tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32> loc("eager.softmax")
  %o = remat.matmul %p, %v : (tensor<1x1x3x3xf32>, tensor<1x1x3x64xf32>) -> tensor<1x1x3x64xf32>
  return %o : tensor<1x1x3x64xf32>
}

// -----

// A constant mask that is not causal (here: a sliding window) stays a mask;
// the boolean Where becomes where(cond, fill, 0) with the model's fill.
// CHECK-LABEL: func.func @window_mask
// CHECK: %[[Z:.*]] = remat.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[M:.*]] = remat.where %{{.*}}, %{{.*}}, %[[Z]] : (tensor<4x4xi1>, tensor<f32>, tensor<f32>) -> tensor<4x4xf32>
// CHECK: remat.attention %arg0, %{{.*}}, %arg2, %[[M]] {scale = 1.000000e+00 : f64}
// EXPLAIN: remat-fuse-attention: window.softmax: fused (scale 1.000000, additive mask)
func.func @window_mask(%q: tensor<1x1x4x8xf32>, %kt: tensor<1x1x8x4xf32>, %v: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %s = remat.matmul %q, %kt : (tensor<1x1x4x8xf32>, tensor<1x1x8x4xf32>) -> tensor<1x1x4x4xf32>
  %hide = remat.constant dense<[[false, true, true, true], [true, false, true, true], [true, true, false, true], [true, true, true, false]]> : tensor<4x4xi1>
  %ninf = remat.constant dense<0xFF800000> : tensor<f32>
  %masked = remat.where %hide, %ninf, %s : (tensor<4x4xi1>, tensor<f32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %p = remat.softmax %masked {axis = 3 : i64} : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> loc("window.softmax")
  %o = remat.matmul %p, %v : (tensor<1x1x4x4xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

// Left unfused, with the reason: tests/models/hf/t5's relative position
// bias (a parameter, gathered) is the mask; the probabilities returned as
// well; a softmax that is no attention.
// CHECK-LABEL: func.func @unfused
// CHECK-NOT: remat.attention
// CHECK-COUNT-3: remat.softmax
// EXPLAIN: remat-fuse-attention: t5.softmax: not fused: the mask depends on parameter 'encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight' (its gradient is the seq x seq tensor fusion avoids)
// EXPLAIN: remat-fuse-attention: returned.softmax: not fused: the probabilities have other users
// EXPLAIN: remat-fuse-attention: classifier.softmax: not fused: the scores are rank 2, not [batch, heads, seq, seq] or [batch * heads, seq, seq]
func.func @unfused(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>,
    %bias: tensor<7x2xf32> {remat.name = "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight", remat.role = "parameter"},
    %buckets: tensor<4x4xi64> {remat.name = "buckets", remat.role = "buffer"},
    %logits: tensor<4x10xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>, tensor<4x10xf32>) {
  %g = remat.gather %bias, %buckets {axis = 0 : i64} : (tensor<7x2xf32>, tensor<4x4xi64>) -> tensor<4x4x2xf32>
  %t = remat.transpose %g {permutation = array<i64: 2, 0, 1>} : (tensor<4x4x2xf32>) -> tensor<2x4x4xf32>
  %pos = remat.reshape %t : (tensor<2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = remat.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %b = remat.add %s, %pos : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %p = remat.softmax %b {axis = 3 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("t5.softmax")
  %o = remat.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %s2 = remat.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %p2 = remat.softmax %s2 {axis = 3 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("returned.softmax")
  %o2 = remat.matmul %p2, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %c = remat.softmax %logits {axis = 1 : i64} : (tensor<4x10xf32>) -> tensor<4x10xf32> loc("classifier.softmax")
  return %o, %o2, %p2, %c : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>, tensor<4x10xf32>
}

// -----

// Also left alone: a scale applied after the mask (the fused op adds the
// mask to the scaled scores), and scores that another op reads too.
// CHECK-LABEL: func.func @unfused_order_and_users
// CHECK-NOT: remat.attention
// EXPLAIN: remat-fuse-attention: late_scale.softmax: not fused: the mask is applied before the scaling
// EXPLAIN: remat-fuse-attention: shared.softmax: not fused: the scores ('remat.matmul' result) have other users
func.func @unfused_order_and_users(%q: tensor<1x1x4x8xf32>, %kt: tensor<1x1x8x4xf32>, %v: tensor<1x1x4x8xf32>, %mask: tensor<4x4xf32>) -> (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x4xf32>) {
  %s = remat.matmul %q, %kt : (tensor<1x1x4x8xf32>, tensor<1x1x8x4xf32>) -> tensor<1x1x4x4xf32>
  %m = remat.add %s, %mask : (tensor<1x1x4x4xf32>, tensor<4x4xf32>) -> tensor<1x1x4x4xf32>
  %c = remat.constant dense<2.500000e-01> : tensor<f32>
  %scaled = remat.mul %m, %c : (tensor<1x1x4x4xf32>, tensor<f32>) -> tensor<1x1x4x4xf32>
  %p = remat.softmax %scaled {axis = 3 : i64} : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> loc("late_scale.softmax")
  %o = remat.matmul %p, %v : (tensor<1x1x4x4xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  %s2 = remat.matmul %q, %kt : (tensor<1x1x4x8xf32>, tensor<1x1x8x4xf32>) -> tensor<1x1x4x4xf32>
  %p2 = remat.softmax %s2 {axis = 3 : i64} : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> loc("shared.softmax")
  %o2 = remat.matmul %p2, %v : (tensor<1x1x4x4xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  return %o, %o2, %s2 : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x4xf32>
}
