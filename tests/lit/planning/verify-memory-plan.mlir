// RUN: remat-opt %s -split-input-file --remat-verify-memory-plan -verify-diagnostics | FileCheck %s

// remat-verify-memory-plan checks a planned function from its attributes:
// remat.arena_bytes on the function, remat.arena_offsets on ops (-1 for
// results written in place into persistent state), remat.arena_offset on
// inputs. Ops are named by remat.name here (by their ONNX node name, the
// NameLoc, in imported IR). 64 x f32 = 256 bytes. Steps are body positions: %x is read last at
// step 0, %m (offset 256) at step 4 (through the view %v at step 2), %t
// (offset 0, reusing %x's slot) at step 4 through %tv; %s (512) is returned.

// A valid plan passes and the IR is unchanged. (The in-place pairs the
// verifier accepts, and those it rejects, are at the end.)
// CHECK-LABEL: func.func @valid
// CHECK: remat.arena_offsets = array<i64: 512>
func.func @valid(%x: tensor<64xf32> {remat.name = "x", remat.role = "input", remat.arena_offset = 0 : i64},
                 %w: tensor<64xf32> {remat.name = "w", remat.role = "parameter"})
    -> (tensor<64xf32> {remat.name = "y", remat.role = "output"},
        tensor<64xf32> {remat.name = "w", remat.role = "parameter"})
    attributes {remat.arena_bytes = 768 : i64} {
  %m = remat.mul %x, %w {remat.name = "h0", remat.arena_offsets = array<i64: 256>} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %v = remat.reshape %m {remat.arena_offsets = array<i64: 256>} : (tensor<64xf32>) -> tensor<8x8xf32>
  %t = remat.tanh %v {remat.name = "h1", remat.arena_offsets = array<i64: 0>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %tv = remat.reshape %t {remat.arena_offsets = array<i64: 0>} : (tensor<8x8xf32>) -> tensor<64xf32>
  %s = remat.add %tv, %m {remat.name = "sum", remat.arena_offsets = array<i64: 512>} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %nw = remat.sgd %w, %s {lr = 1.000000e-02 : f64, remat.arena_offsets = array<i64: -1>} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return %s, %nw : tensor<64xf32>, tensor<64xf32>
}

// An unplanned function (no remat.arena_bytes) is left alone.
// CHECK-LABEL: func.func @unplanned
func.func @unplanned(%x: tensor<64xf32>) -> tensor<64xf32> {
  %t = remat.tanh %x : (tensor<64xf32>) -> tensor<64xf32>
  return %t : tensor<64xf32>
}

// -----

// Overlap: %s is put on %m's bytes while %m is still read after it (by %e).
// (Were %s %m's last use, the add could write over it in place: see
// @in_place below.)
func.func @overlap(%x: tensor<64xf32> {remat.name = "x", remat.role = "input", remat.arena_offset = 0 : i64},
                   %w: tensor<64xf32> {remat.name = "w", remat.role = "parameter"})
    -> (tensor<64xf32> {remat.name = "y", remat.role = "output"},
        tensor<64xf32> {remat.name = "z", remat.role = "output"})
    attributes {remat.arena_bytes = 768 : i64} {
  // expected-note@+1 {{the other tensor, 'remat.mul' 'h0' (step 0), is live over steps [0, 5]}}
  %m = remat.mul %x, %w {remat.name = "h0", remat.arena_offsets = array<i64: 256>} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %v = remat.reshape %m {remat.arena_offsets = array<i64: 256>} : (tensor<64xf32>) -> tensor<8x8xf32>
  %t = remat.tanh %v {remat.name = "h1", remat.arena_offsets = array<i64: 0>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %tv = remat.reshape %t {remat.arena_offsets = array<i64: 0>} : (tensor<8x8xf32>) -> tensor<64xf32>
  // expected-error@+1 {{remat-verify-memory-plan: 'remat.add' 'sum' (step 4) at bytes [256, 512) overlaps 'remat.mul' 'h0' (step 0) at bytes [256, 512); both are live at step 4}}
  %s = remat.add %tv, %m {remat.name = "sum", remat.arena_offsets = array<i64: 256>} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %e = remat.exp %m {remat.name = "e", remat.arena_offsets = array<i64: 512>} : (tensor<64xf32>) -> tensor<64xf32>
  return %s, %e : tensor<64xf32>, tensor<64xf32>
}

// -----

// Overlap with an input argument, which is live from the function entry:
// %m is put on %x's bytes while %x is read after it.
// expected-note@+1 {{the other tensor, argument #0 'x', is live over steps [-1, 1]}}
func.func @overlap_input(%x: tensor<64xf32> {remat.name = "x", remat.role = "input", remat.arena_offset = 0 : i64},
                         %w: tensor<64xf32> {remat.name = "w", remat.role = "parameter"})
    -> (tensor<64xf32> {remat.name = "y", remat.role = "output"})
    attributes {remat.arena_bytes = 512 : i64} {
  // expected-error@+1 {{'remat.mul' 'h0' (step 0) at bytes [0, 256) overlaps argument #0 'x' at bytes [0, 256); both are live at step 0}}
  %m = remat.mul %x, %w {remat.name = "h0", remat.arena_offsets = array<i64: 0>} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %s = remat.add %m, %x {remat.name = "sum", remat.arena_offsets = array<i64: 256>} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return %s : tensor<64xf32>
}

// -----

// A misaligned offset.
func.func @misaligned(%x: tensor<64xf32> {remat.name = "x", remat.role = "input", remat.arena_offset = 0 : i64})
    -> (tensor<64xf32> {remat.name = "y", remat.role = "output"})
    attributes {remat.arena_bytes = 1024 : i64} {
  // expected-error@+1 {{remat-verify-memory-plan: 'remat.tanh' 'h1' (step 0) is at arena offset 520, which is not a multiple of 256 bytes}}
  %t = remat.tanh %x {remat.name = "h1", remat.arena_offsets = array<i64: 520>} : (tensor<64xf32>) -> tensor<64xf32>
  return %t : tensor<64xf32>
}

// -----

// An offset past the arena: [512, 768) in an arena of 700 bytes.
func.func @past_arena(%x: tensor<64xf32> {remat.name = "x", remat.role = "input", remat.arena_offset = 0 : i64})
    -> (tensor<64xf32> {remat.name = "y", remat.role = "output"})
    attributes {remat.arena_bytes = 700 : i64} {
  // expected-error@+1 {{remat-verify-memory-plan: 'remat.tanh' 'h1' (step 0) at bytes [512, 768) lies past the end of the arena (remat.arena_bytes = 700)}}
  %t = remat.tanh %x {remat.name = "h1", remat.arena_offsets = array<i64: 512>} : (tensor<64xf32>) -> tensor<64xf32>
  return %t : tensor<64xf32>
}

// -----

// Missing offsets: a used result with -1, an op without remat.arena_offsets,
// and an input argument without remat.arena_offset. An unused result may go
// without one; persistent state must not have one.
// expected-error@+1 {{remat-verify-memory-plan: argument #1 'x2' is used but has no arena offset}}
func.func @missing(%x: tensor<64xf32> {remat.name = "x", remat.role = "input", remat.arena_offset = 0 : i64},
                   %x2: tensor<64xf32> {remat.name = "x2", remat.role = "input"},
                   %w: tensor<64xf32> {remat.name = "w", remat.role = "parameter"})
    -> (tensor<64xf32> {remat.name = "y", remat.role = "output"},
        tensor<64xf32> {remat.name = "w", remat.role = "parameter"})
    attributes {remat.arena_bytes = 1024 : i64} {
  // expected-error@+1 {{remat-verify-memory-plan: 'remat.tanh' 'h1' (step 0) is used but has no arena offset}}
  %t = remat.tanh %x {remat.name = "h1", remat.arena_offsets = array<i64: -1>} : (tensor<64xf32>) -> tensor<64xf32>
  // expected-error@+1 {{remat-verify-memory-plan: 'remat.exp' 'h2' (step 1) has no remat.arena_offsets}}
  %e = remat.exp %t {remat.name = "h2"} : (tensor<64xf32>) -> tensor<64xf32>
  %unused = remat.neg %x {remat.name = "dead", remat.arena_offsets = array<i64: -1>} : (tensor<64xf32>) -> tensor<64xf32>
  %s = remat.add %e, %x2 {remat.name = "sum", remat.arena_offsets = array<i64: 256>} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  // expected-error@+1 {{remat-verify-memory-plan: 'remat.sgd' (step 4) is persistent state (updated in place) but has arena offset 512; expected -1}}
  %nw = remat.sgd %w, %s {lr = 1.000000e-02 : f64, remat.arena_offsets = array<i64: 512>} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return %s, %nw : tensor<64xf32>, tensor<64xf32>
}

// -----

// A reshape is a view of its input: it must have the input's offset.
func.func @view(%x: tensor<64xf32> {remat.name = "x", remat.role = "input", remat.arena_offset = 0 : i64})
    -> (tensor<8x8xf32> {remat.name = "y", remat.role = "output"})
    attributes {remat.arena_bytes = 512 : i64} {
  %t = remat.tanh %x {remat.name = "h1", remat.arena_offsets = array<i64: 256>} : (tensor<64xf32>) -> tensor<64xf32>
  // expected-error@+1 {{remat-verify-memory-plan: 'remat.reshape' 'view' (step 1) is a view of 'remat.tanh' 'h1' (step 0) at arena offset 256 but has arena offset 0}}
  %v = remat.reshape %t {remat.name = "view", remat.arena_offsets = array<i64: 0>} : (tensor<64xf32>) -> tensor<8x8xf32>
  return %v : tensor<8x8xf32>
}

// -----

// In place: an op with the InPlaceElementwise trait writes its first result
// over an operand of its type that it reads for the last time. %t is at %m's
// offset (tanh is %m's last use), %s at %t's (both add operands die there),
// and relu_backward writes dx over dy (%s): the pairs are one buffer each,
// and the plan passes.
// CHECK-LABEL: func.func @in_place
// CHECK: remat.relu_backward {{.*}}remat.arena_offsets = array<i64: 256>
func.func @in_place(%x: tensor<64xf32> {remat.name = "x", remat.role = "input", remat.arena_offset = 0 : i64},
                    %w: tensor<64xf32> {remat.name = "w", remat.role = "parameter"})
    -> (tensor<64xf32> {remat.name = "y", remat.role = "output"})
    attributes {remat.arena_bytes = 768 : i64} {
  %m = remat.mul %x, %w {remat.name = "h0", remat.arena_offsets = array<i64: 256>} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %y = remat.relu %x {remat.name = "r", remat.arena_offsets = array<i64: 512>} : (tensor<64xf32>) -> tensor<64xf32>
  %t = remat.tanh %m {remat.name = "h1", remat.arena_offsets = array<i64: 256>} : (tensor<64xf32>) -> tensor<64xf32>
  %s = remat.add %t, %t {remat.name = "sum", remat.arena_offsets = array<i64: 256>} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %dx = remat.relu_backward %y, %s {remat.name = "dx", remat.arena_offsets = array<i64: 256>} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return %dx : tensor<64xf32>
}

// -----

// Not in place: %m is read again after tanh, so tanh may not write over it.
func.func @in_place_operand_read_later(%x: tensor<64xf32> {remat.name = "x", remat.role = "input", remat.arena_offset = 0 : i64},
                                       %w: tensor<64xf32> {remat.name = "w", remat.role = "parameter"})
    -> (tensor<64xf32> {remat.name = "y", remat.role = "output"})
    attributes {remat.arena_bytes = 768 : i64} {
  // expected-note@+1 {{the other tensor, 'remat.mul' 'h0' (step 0), is live over steps [0, 2]}}
  %m = remat.mul %x, %w {remat.name = "h0", remat.arena_offsets = array<i64: 256>} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  // expected-error@+1 {{remat-verify-memory-plan: 'remat.tanh' 'h1' (step 1) at bytes [256, 512) overlaps 'remat.mul' 'h0' (step 0) at bytes [256, 512); both are live at step 1}}
  %t = remat.tanh %m {remat.name = "h1", remat.arena_offsets = array<i64: 256>} : (tensor<64xf32>) -> tensor<64xf32>
  %s = remat.add %t, %m {remat.name = "sum", remat.arena_offsets = array<i64: 512>} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return %s : tensor<64xf32>
}

// -----

// In place, row-wise: softmax (InPlaceRowwise) reads a whole row before it
// writes it, so its output may take its dying input's bytes; so may
// cross-entropy's log-probabilities (its second result) over the logits.
// CHECK-LABEL: func.func @in_place_rowwise
// CHECK: remat.softmax {{.*}}remat.arena_offsets = array<i64: 256>
// CHECK: remat.softmax_cross_entropy_loss {{.*}}remat.arena_offsets = array<i64: 512, 256>
func.func @in_place_rowwise(%x: tensor<8x8xf32> {remat.name = "x", remat.role = "input", remat.arena_offset = 0 : i64},
                            %w: tensor<8x8xf32> {remat.name = "w", remat.role = "parameter"},
                            %labels: tensor<8xi64> {remat.name = "labels", remat.role = "input", remat.arena_offset = 768 : i64})
    -> (tensor<f32> {remat.name = "loss", remat.role = "output"},
        tensor<8x8xf32> {remat.name = "log_prob", remat.role = "output"})
    attributes {remat.arena_bytes = 1024 : i64} {
  %m = remat.mul %x, %w {remat.name = "h0", remat.arena_offsets = array<i64: 256>} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %p = remat.softmax %m {axis = 1 : i64, remat.name = "sm", remat.arena_offsets = array<i64: 256>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %loss, %lp = remat.softmax_cross_entropy_loss %p, %labels {reduction = "mean", remat.name = "ce", remat.arena_offsets = array<i64: 512, 256>} : (tensor<8x8xf32>, tensor<8xi64>) -> (tensor<f32>, tensor<8x8xf32>)
  return %loss, %lp : tensor<f32>, tensor<8x8xf32>
}

// -----

// Not in place: a transpose has neither in-place trait (its kernel writes
// an element before it has read the one it lands on).
func.func @in_place_without_trait(%x: tensor<8x8xf32> {remat.name = "x", remat.role = "input", remat.arena_offset = 0 : i64},
                                  %w: tensor<8x8xf32> {remat.name = "w", remat.role = "parameter"})
    -> (tensor<8x8xf32> {remat.name = "y", remat.role = "output"})
    attributes {remat.arena_bytes = 512 : i64} {
  // expected-note@+1 {{the other tensor, 'remat.mul' 'h0' (step 0), is live over steps [0, 1]}}
  %m = remat.mul %x, %w {remat.name = "h0", remat.arena_offsets = array<i64: 256>} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  // expected-error@+1 {{remat-verify-memory-plan: 'remat.transpose' 't' (step 1) at bytes [256, 512) overlaps 'remat.mul' 'h0' (step 0) at bytes [256, 512); both are live at step 1}}
  %t = remat.transpose %m {permutation = array<i64: 1, 0>, remat.name = "t", remat.arena_offsets = array<i64: 256>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %t : tensor<8x8xf32>
}

// -----

// Not in place: a cast to f16 has the trait but not its operand's type (its
// elements are 2 bytes, not 4).
func.func @in_place_other_type(%x: tensor<64xf32> {remat.name = "x", remat.role = "input", remat.arena_offset = 0 : i64},
                               %w: tensor<64xf32> {remat.name = "w", remat.role = "parameter"})
    -> (tensor<64xf16> {remat.name = "y", remat.role = "output"})
    attributes {remat.arena_bytes = 512 : i64} {
  // expected-note@+1 {{the other tensor, 'remat.mul' 'h0' (step 0), is live over steps [0, 1]}}
  %m = remat.mul %x, %w {remat.name = "h0", remat.arena_offsets = array<i64: 256>} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  // expected-error@+1 {{remat-verify-memory-plan: 'remat.cast' 'half' (step 1) at bytes [256, 384) overlaps 'remat.mul' 'h0' (step 0) at bytes [256, 512); both are live at step 1}}
  %h = remat.cast %m {remat.name = "half", remat.arena_offsets = array<i64: 256>} : (tensor<64xf32>) -> tensor<64xf16>
  return %h : tensor<64xf16>
}

// -----

// Not in place: only the first result of a multi-result op may be written
// over an operand; layer_norm_backward's scale gradient may not take the
// dying %s's bytes, although it has its type.
func.func @in_place_second_result(%x: tensor<2x32xf32> {remat.name = "x", remat.role = "input", remat.arena_offset = 0 : i64},
                                  %p: tensor<32xf32> {remat.name = "p", remat.role = "parameter"},
                                  %mean: tensor<2x1xf32> {remat.name = "mean", remat.role = "input", remat.arena_offset = 256 : i64},
                                  %inv: tensor<2x1xf32> {remat.name = "inv", remat.role = "input", remat.arena_offset = 512 : i64})
    -> (tensor<2x32xf32> {remat.name = "dx", remat.role = "output"},
        tensor<32xf32> {remat.name = "ds", remat.role = "output"})
    attributes {remat.arena_bytes = 1536 : i64} {
  // expected-note@+1 {{the other tensor, 'remat.exp' 'scale' (step 0), is live over steps [0, 1]}}
  %s = remat.exp %p {remat.name = "scale", remat.arena_offsets = array<i64: 768>} : (tensor<32xf32>) -> tensor<32xf32>
  // expected-error@+1 {{remat-verify-memory-plan: result #1 of 'remat.layer_norm_backward' 'ln' (step 1) at bytes [768, 896) overlaps 'remat.exp' 'scale' (step 0) at bytes [768, 896); both are live at step 1}}
  %dx, %ds, %db = remat.layer_norm_backward %x, %s, %mean, %inv, %x {axis = 1 : i64, remat.name = "ln", remat.arena_offsets = array<i64: 1024, 768, 1280>} : (tensor<2x32xf32>, tensor<32xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x32xf32>) -> (tensor<2x32xf32>, tensor<32xf32>, tensor<32xf32>)
  return %dx, %ds : tensor<2x32xf32>, tensor<32xf32>
}

// -----

// Not in place: the caller's input is never written over, even where it is
// read for the last time.
// expected-note@+1 {{the other tensor, argument #0 'x', is live over steps [-1, 0]}}
func.func @in_place_over_input(%x: tensor<64xf32> {remat.name = "x", remat.role = "input", remat.arena_offset = 0 : i64})
    -> (tensor<64xf32> {remat.name = "y", remat.role = "output"})
    attributes {remat.arena_bytes = 256 : i64} {
  // expected-error@+1 {{remat-verify-memory-plan: 'remat.tanh' 'h1' (step 0) at bytes [0, 256) overlaps argument #0 'x' at bytes [0, 256); both are live at step 0}}
  %t = remat.tanh %x {remat.name = "h1", remat.arena_offsets = array<i64: 0>} : (tensor<64xf32>) -> tensor<64xf32>
  return %t : tensor<64xf32>
}

// -----

// Not in place: the result is at another offset than the dying operand and
// overlaps half of it.
func.func @in_place_shifted(%x: tensor<128xf32> {remat.name = "x", remat.role = "input", remat.arena_offset = 0 : i64},
                            %w: tensor<128xf32> {remat.name = "w", remat.role = "parameter"})
    -> (tensor<128xf32> {remat.name = "y", remat.role = "output"})
    attributes {remat.arena_bytes = 1536 : i64} {
  // expected-note@+1 {{the other tensor, 'remat.mul' 'h0' (step 0), is live over steps [0, 1]}}
  %m = remat.mul %x, %w {remat.name = "h0", remat.arena_offsets = array<i64: 512>} : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
  // expected-error@+1 {{remat-verify-memory-plan: 'remat.tanh' 'h1' (step 1) at bytes [768, 1280) overlaps 'remat.mul' 'h0' (step 0) at bytes [512, 1024); both are live at step 1}}
  %t = remat.tanh %m {remat.name = "h1", remat.arena_offsets = array<i64: 768>} : (tensor<128xf32>) -> tensor<128xf32>
  return %t : tensor<128xf32>
}
