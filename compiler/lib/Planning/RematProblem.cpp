//===- RematProblem.cpp - Simulating a rematerialization plan -------------===//
//
// The memory semantics of a plan (RematProblem.h): every occurrence of a node
// in the sequence creates an instance of its value; a node reads the latest
// instance of each input; an instance (each of its results, for nodes with
// resultBytes) lives from its creation through its last read (an instance
// nobody reads lives only during its own step); the latest instance of each
// graph output lives to the end. The live bytes during a step are those of
// the instances alive at that step, which includes the node's inputs and its
// own output.
//
//===----------------------------------------------------------------------===//

#include "remat/Planning/RematProblem.h"

#include <algorithm>

namespace remat::plan {

namespace {

/// The results of node `v` (one, unless it has resultBytes).
int resultCount(const Node &v) {
  return v.resultBytes.empty() ? 1 : static_cast<int>(v.resultBytes.size());
}

int64_t resultSize(const Node &v, int r) {
  return v.resultBytes.empty() ? v.outputBytes : v.resultBytes[r];
}

} // namespace

bool simulate(const RematProblem &problem, RematPlan &plan,
              std::string &error) {
  const auto &nodes = problem.nodes;
  const int n = static_cast<int>(nodes.size());
  const auto &seq = plan.sequence;
  const int len = static_cast<int>(seq.size());
  auto nodeName = [&](int v) {
    return nodes[v].name.empty() ? "#" + std::to_string(v)
                                 : "'" + nodes[v].name + "'";
  };

  // Each instance's results are slots firstSlot[p] .. firstSlot[p + 1] - 1.
  std::vector<int> firstSlot(len + 1, 0);
  for (int p = 0; p < len; ++p) {
    int v = seq[p];
    if (v < 0 || v >= n) {
      error = "step " + std::to_string(p) + ": node index " +
              std::to_string(v) + " out of range";
      return false;
    }
    firstSlot[p + 1] = firstSlot[p] + resultCount(nodes[v]);
  }
  // latest[v]: position of v's latest instance so far, -1 before the first.
  std::vector<int> latest(n, -1);
  // lastRead[slot]: last position that reads that result of its instance.
  std::vector<int> lastRead(firstSlot[len], -1);
  double seconds = 0;
  for (int p = 0; p < len; ++p) {
    const Node &node = nodes[seq[p]];
    for (size_t j = 0; j < node.inputs.size(); ++j) {
      int u = node.inputs[j];
      if (u < 0 || u >= n) {
        error = "node " + nodeName(seq[p]) + " has an input index " +
                std::to_string(u) + " out of range";
        return false;
      }
      if (latest[u] < 0) {
        error = "step " + std::to_string(p) + ": node " + nodeName(seq[p]) +
                " runs before its input " + nodeName(u) + " is computed";
        return false;
      }
      const int slot = firstSlot[latest[u]];
      const int count = resultCount(nodes[u]);
      const bool all = j >= node.inputResults.size() ||
                       node.inputResults[j].empty();
      if (all) {
        for (int r = 0; r < count; ++r)
          lastRead[slot + r] = p;
        continue;
      }
      for (int r : node.inputResults[j]) {
        if (r < 0 || r >= count) {
          error = "node " + nodeName(seq[p]) + " reads result " +
                  std::to_string(r) + " of " + nodeName(u) + ", which has " +
                  std::to_string(count);
          return false;
        }
        lastRead[slot + r] = p;
      }
    }
    latest[seq[p]] = p;
    seconds += node.seconds;
  }

  // Live bytes per step by a difference array over each result's life: from
  // its creation through its last read (inclusive; an unread result lives
  // during its own step only); the latest instance of each graph output
  // lives to the end.
  std::vector<char> keptToEnd(len, 0);
  for (int o : problem.graphOutputs) {
    if (o < 0 || o >= n) {
      error = "graph output index " + std::to_string(o) + " out of range";
      return false;
    }
    if (latest[o] < 0) {
      error = "graph output " + nodeName(o) + " is never computed";
      return false;
    }
    keptToEnd[latest[o]] = 1;
  }
  std::vector<int64_t> delta(len + 1, 0);
  for (int p = 0; p < len; ++p) {
    const Node &node = nodes[seq[p]];
    for (int r = 0; r < resultCount(node); ++r) {
      int end = keptToEnd[p] ? len - 1
                             : std::max(p, lastRead[firstSlot[p] + r]);
      int64_t b = resultSize(node, r);
      delta[p] += b;
      delta[end + 1] -= b;
    }
  }
  int64_t live = 0, peak = 0;
  for (int p = 0; p < len; ++p) {
    live += delta[p];
    peak = std::max(peak, live);
  }
  plan.peakBytes = problem.fixedBytes + peak;
  plan.seconds = seconds;
  return true;
}

} // namespace remat::plan
