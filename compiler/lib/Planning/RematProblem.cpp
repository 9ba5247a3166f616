//===- RematProblem.cpp - Simulating a rematerialization plan -------------===//
//
// The memory semantics of a plan (RematProblem.h): every occurrence of a node
// in the sequence creates an instance of its value (of each of its values,
// for a node with resultBytes); a node reads the latest instance of each
// input; a value lives from its creation through its last read (one nobody
// reads lives only during its own step); the latest instance of each graph
// output lives to the end. The live bytes during a step are those of the
// values alive at that step, which includes the node's inputs and its own
// output, less the node's inPlaceBytes when it writes over an input value
// that dies there.
//
//===----------------------------------------------------------------------===//

#include "remat/Planning/RematProblem.h"

#include <algorithm>
#include <utility>

namespace remat::plan {

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
  // The values of a node: its results where it lists them, else one.
  auto valueCount = [&](int v) {
    return std::max<int>(1, static_cast<int>(nodes[v].resultBytes.size()));
  };
  auto valueBytes = [&](int v, int r) {
    return nodes[v].resultBytes.empty() ? nodes[v].outputBytes
                                        : nodes[v].resultBytes[r];
  };

  // Each position's values are slots first[p] .. first[p + 1] - 1.
  std::vector<int> first(len + 1, 0);
  for (int p = 0; p < len; ++p) {
    int v = seq[p];
    if (v < 0 || v >= n) {
      error = "step " + std::to_string(p) + ": node index " +
              std::to_string(v) + " out of range";
      return false;
    }
    first[p + 1] = first[p] + valueCount(v);
  }
  // latest[v]: position of v's latest instance so far, -1 before the first.
  std::vector<int> latest(n, -1);
  // lastRead[slot]: last position that reads that value.
  std::vector<int> lastRead(first[len], -1);
  // (position, slot of an input it may write over in place).
  std::vector<std::pair<int, int>> inPlaceReads;
  // The slot of result r of u's latest instance, or -1 with an error.
  auto slotOf = [&](int v, ResultRef ref) {
    if (ref.node < 0 || ref.node >= n ||
        !std::count(nodes[v].inputs.begin(), nodes[v].inputs.end(), ref.node) ||
        ref.result < 0 || ref.result >= valueCount(ref.node)) {
      error = "node " + nodeName(v) + " reads result " +
              std::to_string(ref.result) + " of node " +
              std::to_string(ref.node) + ", which is not one of its inputs' "
              "results";
      return -1;
    }
    return first[latest[ref.node]] + ref.result;
  };
  double seconds = 0;
  for (int p = 0; p < len; ++p) {
    int v = seq[p];
    for (int u : nodes[v].inputs) {
      if (u < 0 || u >= n) {
        error = "node " + nodeName(v) + " has an input index " +
                std::to_string(u) + " out of range";
        return false;
      }
      if (latest[u] < 0) {
        error = "step " + std::to_string(p) + ": node " + nodeName(v) +
                " runs before its input " + nodeName(u) + " is computed";
        return false;
      }
      bool listed = false;
      if (!nodes[u].resultBytes.empty())
        for (ResultRef ref : nodes[v].reads)
          if (ref.node == u) {
            int slot = slotOf(v, ref);
            if (slot < 0)
              return false;
            lastRead[slot] = p;
            listed = true;
          }
      if (!listed)
        for (int r = 0; r < valueCount(u); ++r)
          lastRead[first[latest[u]] + r] = p;
    }
    for (ResultRef ref : nodes[v].inPlaceInputs) {
      int slot = slotOf(v, ref);
      if (slot < 0)
        return false;
      if (nodes[v].inPlaceBytes > 0)
        inPlaceReads.emplace_back(p, slot);
    }
    latest[v] = p;
    seconds += nodes[v].seconds;
  }

  // End of each value's life (inclusive step).
  std::vector<int> end(first[len]);
  for (int p = 0; p < len; ++p)
    for (int slot = first[p]; slot < first[p + 1]; ++slot)
      end[slot] = std::max(p, lastRead[slot]);
  for (int o : problem.graphOutputs) {
    if (o < 0 || o >= n) {
      error = "graph output index " + std::to_string(o) + " out of range";
      return false;
    }
    if (latest[o] < 0) {
      error = "graph output " + nodeName(o) + " is never computed";
      return false;
    }
    for (int slot = first[latest[o]]; slot < first[latest[o] + 1]; ++slot)
      end[slot] = len - 1;
  }

  // Live bytes per step by a difference array.
  std::vector<int64_t> delta(len + 1, 0);
  for (int p = 0; p < len; ++p)
    for (int slot = first[p]; slot < first[p + 1]; ++slot) {
      int64_t b = valueBytes(seq[p], slot - first[p]);
      delta[p] += b;
      delta[end[slot] + 1] -= b;
    }
  // One in-place write per occurrence (inPlaceReads is in position order).
  int sharedAt = -1;
  for (auto [p, slot] : inPlaceReads)
    if (p != sharedAt && end[slot] == p) {
      sharedAt = p;
      delta[p] -= nodes[seq[p]].inPlaceBytes;
      delta[p + 1] += nodes[seq[p]].inPlaceBytes;
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
