//===- SyntheticGraphs.h - Training graphs for the strategy tests -*- C++ -*-===//
//
// Forward graphs (chains, diamonds, transformer-like stacks, random DAGs)
// turned into training steps: a loss, then one backward op per forward op in
// reverse order that reads the gradients of the op's consumers, the op's
// inputs and its output, as reverse-mode autodiff would.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TESTS_PLANNING_SYNTHETICGRAPHS_H
#define REMAT_TESTS_PLANNING_SYNTHETICGRAPHS_H

#include "remat/Planning/RematProblem.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace remat::plan::testing {

struct FwdOp {
  std::string kind;
  std::vector<int> inputs; // earlier FwdOps
  double seconds = 1;
  int64_t bytes = 1;
  int region = -1;
  bool isInput = false; // a data input: not recomputable, no gradient
};

/// Appends a hand-made node of 1 s (forward: recomputable) to p and returns
/// its index, for steps small enough to work out by hand.
inline int addNode(RematProblem &p, const char *name, int64_t bytes,
                   std::vector<int> inputs, bool forward) {
  Node node;
  node.name = name;
  node.outputBytes = bytes;
  node.seconds = 1;
  node.inputs = std::move(inputs);
  node.recomputable = forward;
  p.nodes.push_back(std::move(node));
  return static_cast<int>(p.nodes.size()) - 1;
}

/// Forward ops, a loss reading the last op, and the backward ops.
inline RematProblem makeTraining(const std::vector<FwdOp> &fwd,
                                 double backwardFactor = 2.0,
                                 int64_t fixedBytes = 0) {
  RematProblem p;
  const int m = static_cast<int>(fwd.size());
  std::vector<std::vector<int>> consumers(m);
  for (int i = 0; i < m; ++i) {
    Node node;
    node.name = fwd[i].kind + "." + std::to_string(i);
    node.opKind = fwd[i].kind;
    node.seconds = fwd[i].seconds;
    node.outputBytes = fwd[i].bytes;
    node.inputs = fwd[i].inputs;
    node.region = fwd[i].region;
    node.recomputable = !fwd[i].isInput;
    for (int u : fwd[i].inputs)
      consumers[u].push_back(i);
    p.nodes.push_back(node);
  }
  Node loss;
  loss.name = "loss";
  loss.opKind = "loss";
  loss.seconds = 0.1;
  loss.outputBytes = 1;
  loss.inputs = {m - 1};
  p.nodes.push_back(loss);
  const int lossIdx = m;
  p.graphOutputs.push_back(lossIdx);
  Node dloss;
  dloss.name = "d.loss";
  dloss.opKind = "loss.grad";
  dloss.seconds = 0.1;
  dloss.outputBytes = fwd[m - 1].bytes;
  dloss.inputs = {lossIdx, m - 1};
  dloss.recomputable = false;
  p.nodes.push_back(dloss);
  std::vector<int> grad(m, -1);
  for (int i = m - 1; i >= 0; --i) {
    if (fwd[i].isInput)
      continue;
    Node g;
    g.name = "d." + p.nodes[i].name;
    g.opKind = fwd[i].kind + ".grad";
    g.seconds = backwardFactor * fwd[i].seconds;
    g.recomputable = false;
    g.region = fwd[i].region;
    if (i == m - 1)
      g.inputs.push_back(lossIdx + 1);
    for (int c : consumers[i])
      if (grad[c] >= 0)
        g.inputs.push_back(grad[c]);
    for (int u : fwd[i].inputs)
      g.inputs.push_back(u);
    g.inputs.push_back(i);
    std::sort(g.inputs.begin(), g.inputs.end());
    g.inputs.erase(std::unique(g.inputs.begin(), g.inputs.end()),
                   g.inputs.end());
    int64_t b = 0;
    for (int u : fwd[i].inputs)
      if (!fwd[u].isInput)
        b += fwd[u].bytes;
    g.outputBytes = std::max<int64_t>(b, 1);
    grad[i] = static_cast<int>(p.nodes.size());
    p.nodes.push_back(g);
  }
  p.fixedBytes = fixedBytes;
  return p;
}

/// A data input and a chain of n ops.
inline std::vector<FwdOp> chainOps(int n, std::mt19937 *rng = nullptr) {
  std::vector<FwdOp> ops;
  ops.push_back({"input", {}, 0, 1, -1, true});
  for (int i = 0; i < n; ++i) {
    FwdOp op{"op", {static_cast<int>(ops.size()) - 1}, 1, 1, -1, false};
    if (rng) {
      op.seconds = std::uniform_real_distribution<double>(0.2, 3.0)(*rng);
      op.bytes = std::uniform_int_distribution<int>(1, 8)(*rng);
    }
    op.region = i / 3;
    ops.push_back(op);
  }
  return ops;
}

/// k diamonds in sequence: x -> (a, b) -> c = f(a, b), each a region.
inline std::vector<FwdOp> diamondOps(int k, std::mt19937 &rng) {
  std::uniform_real_distribution<double> sec(0.2, 3.0);
  std::uniform_int_distribution<int> by(1, 8);
  std::vector<FwdOp> ops;
  ops.push_back({"input", {}, 0, 1, -1, true});
  int x = 0;
  for (int d = 0; d < k; ++d) {
    int a = static_cast<int>(ops.size());
    ops.push_back({"left", {x}, sec(rng), by(rng), d, false});
    int b = static_cast<int>(ops.size());
    ops.push_back({"right", {x}, sec(rng), by(rng), d, false});
    int c = static_cast<int>(ops.size());
    ops.push_back({"join", {a, b}, sec(rng), by(rng), d, false});
    x = c;
  }
  return ops;
}

/// A transformer-like stack: embedding, then `blocks` pre-norm blocks
/// (norm, QKV matmul, attention, projection, residual add, norm, MLP up,
/// GELU, MLP down, residual add) on a residual stream, a mask every
/// attention reads, and a head. `micro` > 1 splits every op into a chain of
/// that many ops (the first one carries the op's cost, the rest are cheap
/// elementwise ops), as decomposed ONNX exports look.
inline std::vector<FwdOp> transformerOps(int blocks, int micro = 1,
                                         int64_t hidden = 4,
                                         double jitter = 0,
                                         std::mt19937 *rng = nullptr) {
  std::vector<FwdOp> ops;
  auto j = [&](double s) {
    if (!rng || jitter == 0)
      return s;
    return s * std::uniform_real_distribution<double>(1 - jitter,
                                                      1 + jitter)(*rng);
  };
  auto add = [&](const std::string &kind, std::vector<int> inputs,
                 double seconds, int64_t bytes, int region) {
    int first = static_cast<int>(ops.size());
    ops.push_back({kind, inputs, j(seconds), bytes, region, false});
    int last = first;
    for (int k = 1; k < micro; ++k) {
      ops.push_back({kind + ".ew" + std::to_string(k), {last},
                     j(0.02 * seconds + 0.01), bytes, region, false});
      last = static_cast<int>(ops.size()) - 1;
    }
    return last;
  };
  const int64_t h = hidden;
  ops.push_back({"tokens", {}, 0, 1, -1, true});
  int x = add("embed", {0}, 0.2, h, -1);
  int mask = add("mask", {0}, 0.05, 1, -1);
  for (int b = 0; b < blocks; ++b) {
    int n1 = add("norm", {x}, 0.1, h, b);
    int qkv = add("matmul.qkv", {n1}, 3.0, 3 * h, b);
    int att = add("attention", {qkv, mask}, 2.0, h, b);
    int proj = add("matmul.proj", {att}, 1.0, h, b);
    int r1 = add("add", {x, proj}, 0.05, h, b);
    int n2 = add("norm", {r1}, 0.1, h, b);
    int up = add("matmul.up", {n2}, 4.0, 4 * h, b);
    int act = add("gelu", {up}, 0.2, 4 * h, b);
    int down = add("matmul.down", {act}, 4.0, h, b);
    x = add("add", {r1, down}, 0.05, h, b);
  }
  int nf = add("norm", {x}, 0.1, h, -1);
  add("head", {nf}, 2.0, 2 * h, -1);
  return ops;
}

/// A random DAG: n nodes, each reading up to 3 earlier nodes (mostly recent
/// ones); about `recomputableShare` of them recomputable, in any order
/// (backward-like nodes interleaved with forward ones).
inline RematProblem randomDag(int n, std::mt19937 &rng,
                              double recomputableShare = 0.7) {
  RematProblem p;
  std::uniform_real_distribution<double> unit(0, 1);
  for (int v = 0; v < n; ++v) {
    Node node;
    node.name = "n" + std::to_string(v);
    node.opKind = "op" + std::to_string(v % 4);
    node.seconds = unit(rng) * 2;
    node.outputBytes = 1 + static_cast<int64_t>(unit(rng) * 100);
    node.recomputable = unit(rng) < recomputableShare;
    node.region = static_cast<int>(unit(rng) * 4) - 1;
    int k = v == 0 ? 0 : static_cast<int>(unit(rng) * 4);
    for (int e = 0; e < k; ++e) {
      int back = 1 + static_cast<int>(unit(rng) * unit(rng) * v);
      node.inputs.push_back(std::max(0, v - back));
    }
    std::sort(node.inputs.begin(), node.inputs.end());
    node.inputs.erase(std::unique(node.inputs.begin(), node.inputs.end()),
                      node.inputs.end());
    p.nodes.push_back(node);
  }
  p.graphOutputs.push_back(n - 1);
  if (n > 3)
    p.graphOutputs.push_back(static_cast<int>(unit(rng) * (n - 1)));
  p.fixedBytes = 7;
  return p;
}

/// `p` with the output of about half its nodes split into two or three
/// results (as a layer norm's output and statistics), each reader reading
/// some of them: every result then dies after its own last read.
inline RematProblem withResults(RematProblem p, std::mt19937 &rng) {
  std::uniform_int_distribution<int> coin(0, 1);
  for (Node &node : p.nodes) {
    if (node.outputBytes < 2 || coin(rng))
      continue;
    int results = std::min<int64_t>(node.outputBytes,
                                    2 + std::uniform_int_distribution<int>(0, 1)(rng));
    int64_t left = node.outputBytes;
    node.resultBytes.clear();
    for (int r = 0; r < results; ++r) {
      int64_t bytes = r + 1 == results
                          ? left
                          : std::uniform_int_distribution<int64_t>(
                                1, left - (results - r - 1))(rng);
      node.resultBytes.push_back(bytes);
      left -= bytes;
    }
  }
  for (Node &reader : p.nodes) {
    reader.reads.clear();
    for (int i : reader.inputs) {
      const Node &input = p.nodes[i];
      for (int r = 0; r < static_cast<int>(input.resultBytes.size()); ++r)
        if (coin(rng))
          reader.reads.push_back({i, r});
    }
  }
  return p;
}

} // namespace remat::plan::testing

#endif // REMAT_TESTS_PLANNING_SYNTHETICGRAPHS_H
