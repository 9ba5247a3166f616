// A training step on 16-bit storage, cast by hand as the mixed-precision
// pass casts (fp32 parameters, 16-bit compute): llama_tiny's weights (read
// by name from its ONNX model) as a feed-forward block in bf16 (matmul,
// bias add, gelu, dropout, matmul; the bias gradient is a reduce_sum of a
// bf16 gradient) followed by causal attention in f16 (F32 logsumexp). The
// loss, the sum of squares of the attention output, is computed in f32, so
// every 16-bit op's gradient runs on 16-bit storage too. tok_embeddings is
// the input sequence, scaled up so that the initial weights (std 0.02) give
// O(1) activations.
func.func @forward(
    %emb: tensor<256x64xf32> {remat.name = "tok_embeddings.weight", remat.role = "parameter"},
    %gate: tensor<172x64xf32> {remat.name = "layers.0.w_gate.weight", remat.role = "parameter"},
    %down: tensor<64x172xf32> {remat.name = "layers.0.w_down.weight", remat.role = "parameter"},
    %bias: tensor<64xf32> {remat.name = "layers.0.ffn_norm.weight", remat.role = "parameter"},
    %wq: tensor<64x64xf32> {remat.name = "layers.1.wq.weight", remat.role = "parameter"},
    %wk: tensor<64x64xf32> {remat.name = "layers.1.wk.weight", remat.role = "parameter"},
    %wv: tensor<64x64xf32> {remat.name = "layers.1.wv.weight", remat.role = "parameter"})
    -> (tensor<f32> {remat.name = "loss", remat.role = "loss"})
    attributes {remat.model_path = "../pytorch/llama_tiny/loss/model.onnx"} {
  // Feed-forward block in bf16.
  %gain = remat.constant dense<40.0> : tensor<f32>
  %x = remat.mul %emb, %gain : (tensor<256x64xf32>, tensor<f32>) -> tensor<256x64xf32>
  %xb = remat.cast %x : (tensor<256x64xf32>) -> tensor<256x64xbf16>
  %gateb = remat.cast %gate : (tensor<172x64xf32>) -> tensor<172x64xbf16>
  %downb = remat.cast %down : (tensor<64x172xf32>) -> tensor<64x172xbf16>
  %biasb = remat.cast %bias : (tensor<64xf32>) -> tensor<64xbf16>
  %h = remat.matmul %xb, %gateb {transpose_rhs = true} : (tensor<256x64xbf16>, tensor<172x64xbf16>) -> tensor<256x172xbf16>
  %a = remat.gelu %h : (tensor<256x172xbf16>) -> tensor<256x172xbf16>
  %d, %keep = remat.dropout %a {ratio = 0.1 : f64, seed = 5 : i64, stream = 1 : i64} : (tensor<256x172xbf16>) -> (tensor<256x172xbf16>, tensor<256x172xi1>)
  %o = remat.matmul %d, %downb {transpose_rhs = true} : (tensor<256x172xbf16>, tensor<64x172xbf16>) -> tensor<256x64xbf16>
  %ob = remat.add %o, %biasb : (tensor<256x64xbf16>, tensor<64xbf16>) -> tensor<256x64xbf16>
  // Causal attention in f16: 4 sequences of 64 tokens, 4 heads of 16.
  %y = remat.cast %ob : (tensor<256x64xbf16>) -> tensor<256x64xf16>
  %wqh = remat.cast %wq : (tensor<64x64xf32>) -> tensor<64x64xf16>
  %wkh = remat.cast %wk : (tensor<64x64xf32>) -> tensor<64x64xf16>
  %wvh = remat.cast %wv : (tensor<64x64xf32>) -> tensor<64x64xf16>
  %q = remat.matmul %y, %wqh {transpose_rhs = true} : (tensor<256x64xf16>, tensor<64x64xf16>) -> tensor<256x64xf16>
  %k = remat.matmul %y, %wkh {transpose_rhs = true} : (tensor<256x64xf16>, tensor<64x64xf16>) -> tensor<256x64xf16>
  %v = remat.matmul %y, %wvh {transpose_rhs = true} : (tensor<256x64xf16>, tensor<64x64xf16>) -> tensor<256x64xf16>
  %qr = remat.reshape %q : (tensor<256x64xf16>) -> tensor<4x64x4x16xf16>
  %kr = remat.reshape %k : (tensor<256x64xf16>) -> tensor<4x64x4x16xf16>
  %vr = remat.reshape %v : (tensor<256x64xf16>) -> tensor<4x64x4x16xf16>
  %qh = remat.transpose %qr {permutation = array<i64: 0, 2, 1, 3>} : (tensor<4x64x4x16xf16>) -> tensor<4x4x64x16xf16>
  %kh = remat.transpose %kr {permutation = array<i64: 0, 2, 1, 3>} : (tensor<4x64x4x16xf16>) -> tensor<4x4x64x16xf16>
  %vh = remat.transpose %vr {permutation = array<i64: 0, 2, 1, 3>} : (tensor<4x64x4x16xf16>) -> tensor<4x4x64x16xf16>
  %att, %lse = remat.attention %qh, %kh, %vh {scale = 0.25 : f64, causal = true} : (tensor<4x4x64x16xf16>, tensor<4x4x64x16xf16>, tensor<4x4x64x16xf16>) -> (tensor<4x4x64x16xf16>, tensor<4x4x64xf32>)
  // The loss in f32.
  %af = remat.cast %att : (tensor<4x4x64x16xf16>) -> tensor<4x4x64x16xf32>
  %sq = remat.mul %af, %af : (tensor<4x4x64x16xf32>, tensor<4x4x64x16xf32>) -> tensor<4x4x64x16xf32>
  %loss = remat.reduce_sum %sq {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<4x4x64x16xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}
