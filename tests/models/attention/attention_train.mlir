// Two fused attention layers on llama_tiny's weights (read by name from
// its ONNX model): tok_embeddings.weight [256, 64] is the input sequence.
// Layer 0 runs [2, 128] tokens, causal, with dropout and grouped heads (4
// query heads share 2 key/value heads: the key and value projections keep
// their first 32 features), two tiles of queries and keys per head; layer
// 1 runs [8, 32] tokens under the model's additive causal_mask buffer.
// The loss is the sum of squares of layer 1's output. Both layers' inputs
// are scaled up so that the initial weights (std 0.02) give O(1) scores.
func.func @forward(
    %emb: tensor<256x64xf32> {remat.name = "tok_embeddings.weight", remat.role = "parameter"},
    %mask: tensor<32x32xf32> {remat.name = "causal_mask", remat.role = "buffer"},
    %wq0: tensor<64x64xf32> {remat.name = "layers.0.wq.weight", remat.role = "parameter"},
    %wk0: tensor<64x64xf32> {remat.name = "layers.0.wk.weight", remat.role = "parameter"},
    %wv0: tensor<64x64xf32> {remat.name = "layers.0.wv.weight", remat.role = "parameter"},
    %wo0: tensor<64x64xf32> {remat.name = "layers.0.wo.weight", remat.role = "parameter"},
    %wq1: tensor<64x64xf32> {remat.name = "layers.1.wq.weight", remat.role = "parameter"},
    %wk1: tensor<64x64xf32> {remat.name = "layers.1.wk.weight", remat.role = "parameter"},
    %wv1: tensor<64x64xf32> {remat.name = "layers.1.wv.weight", remat.role = "parameter"},
    %wo1: tensor<64x64xf32> {remat.name = "layers.1.wo.weight", remat.role = "parameter"})
    -> (tensor<f32> {remat.name = "loss", remat.role = "loss"})
    attributes {remat.model_path = "../pytorch/llama_tiny/loss/model.onnx"} {
  // Layer 0: causal, dropout 0.1, grouped heads.
  %gain = remat.constant dense<40.0> : tensor<f32>
  %e = remat.mul %emb, %gain : (tensor<256x64xf32>, tensor<f32>) -> tensor<256x64xf32>
  %x0 = remat.reshape %e : (tensor<256x64xf32>) -> tensor<2x128x64xf32>
  %q0 = remat.matmul %x0, %wq0 {transpose_rhs = true} : (tensor<2x128x64xf32>, tensor<64x64xf32>) -> tensor<2x128x64xf32>
  %k0w = remat.matmul %x0, %wk0 {transpose_rhs = true} : (tensor<2x128x64xf32>, tensor<64x64xf32>) -> tensor<2x128x64xf32>
  %v0w = remat.matmul %x0, %wv0 {transpose_rhs = true} : (tensor<2x128x64xf32>, tensor<64x64xf32>) -> tensor<2x128x64xf32>
  %k0 = remat.slice %k0w {starts = array<i64: 0, 0, 0>, limits = array<i64: 2, 128, 32>, steps = array<i64: 1, 1, 1>} : (tensor<2x128x64xf32>) -> tensor<2x128x32xf32>
  %v0 = remat.slice %v0w {starts = array<i64: 0, 0, 0>, limits = array<i64: 2, 128, 32>, steps = array<i64: 1, 1, 1>} : (tensor<2x128x64xf32>) -> tensor<2x128x32xf32>
  %q0r = remat.reshape %q0 : (tensor<2x128x64xf32>) -> tensor<2x128x4x16xf32>
  %k0r = remat.reshape %k0 : (tensor<2x128x32xf32>) -> tensor<2x128x2x16xf32>
  %v0r = remat.reshape %v0 : (tensor<2x128x32xf32>) -> tensor<2x128x2x16xf32>
  %q0h = remat.transpose %q0r {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x128x4x16xf32>) -> tensor<2x4x128x16xf32>
  %k0h = remat.transpose %k0r {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x128x2x16xf32>) -> tensor<2x2x128x16xf32>
  %v0h = remat.transpose %v0r {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x128x2x16xf32>) -> tensor<2x2x128x16xf32>
  %a0, %lse0 = remat.attention %q0h, %k0h, %v0h {scale = 0.25 : f64, causal = true, dropout_ratio = 0.1 : f64, seed = 3 : i64, stream = 1 : i64} : (tensor<2x4x128x16xf32>, tensor<2x2x128x16xf32>, tensor<2x2x128x16xf32>) -> (tensor<2x4x128x16xf32>, tensor<2x4x128xf32>)
  %a0t = remat.transpose %a0 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x4x128x16xf32>) -> tensor<2x128x4x16xf32>
  %a0r = remat.reshape %a0t : (tensor<2x128x4x16xf32>) -> tensor<2x128x64xf32>
  %h0 = remat.matmul %a0r, %wo0 {transpose_rhs = true} : (tensor<2x128x64xf32>, tensor<64x64xf32>) -> tensor<2x128x64xf32>
  // Layer 1: the additive mask, no dropout.
  %h0s = remat.mul %h0, %gain : (tensor<2x128x64xf32>, tensor<f32>) -> tensor<2x128x64xf32>
  %x1 = remat.reshape %h0s : (tensor<2x128x64xf32>) -> tensor<8x32x64xf32>
  %q1 = remat.matmul %x1, %wq1 {transpose_rhs = true} : (tensor<8x32x64xf32>, tensor<64x64xf32>) -> tensor<8x32x64xf32>
  %k1 = remat.matmul %x1, %wk1 {transpose_rhs = true} : (tensor<8x32x64xf32>, tensor<64x64xf32>) -> tensor<8x32x64xf32>
  %v1 = remat.matmul %x1, %wv1 {transpose_rhs = true} : (tensor<8x32x64xf32>, tensor<64x64xf32>) -> tensor<8x32x64xf32>
  %q1r = remat.reshape %q1 : (tensor<8x32x64xf32>) -> tensor<8x32x4x16xf32>
  %k1r = remat.reshape %k1 : (tensor<8x32x64xf32>) -> tensor<8x32x4x16xf32>
  %v1r = remat.reshape %v1 : (tensor<8x32x64xf32>) -> tensor<8x32x4x16xf32>
  %q1h = remat.transpose %q1r {permutation = array<i64: 0, 2, 1, 3>} : (tensor<8x32x4x16xf32>) -> tensor<8x4x32x16xf32>
  %k1h = remat.transpose %k1r {permutation = array<i64: 0, 2, 1, 3>} : (tensor<8x32x4x16xf32>) -> tensor<8x4x32x16xf32>
  %v1h = remat.transpose %v1r {permutation = array<i64: 0, 2, 1, 3>} : (tensor<8x32x4x16xf32>) -> tensor<8x4x32x16xf32>
  %a1, %lse1 = remat.attention %q1h, %k1h, %v1h, %mask {scale = 0.25 : f64} : (tensor<8x4x32x16xf32>, tensor<8x4x32x16xf32>, tensor<8x4x32x16xf32>, tensor<32x32xf32>) -> (tensor<8x4x32x16xf32>, tensor<8x4x32xf32>)
  %a1t = remat.transpose %a1 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<8x4x32x16xf32>) -> tensor<8x32x4x16xf32>
  %a1r = remat.reshape %a1t : (tensor<8x32x4x16xf32>) -> tensor<8x32x64xf32>
  %h1 = remat.matmul %a1r, %wo1 {transpose_rhs = true} : (tensor<8x32x64xf32>, tensor<64x64xf32>) -> tensor<8x32x64xf32>
  %sq = remat.mul %h1, %h1 : (tensor<8x32x64xf32>, tensor<8x32x64xf32>) -> tensor<8x32x64xf32>
  %loss = remat.reduce_sum %sq {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<8x32x64xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}
