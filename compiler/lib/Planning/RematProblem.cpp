//===- RematProblem.cpp - Simulating a rematerialization plan -------------===//
//
// The memory semantics of a plan (RematProblem.h): every occurrence of a node
// in the sequence creates an instance of its value; a node reads the latest
// instance of each input; an instance lives from its creation through its
// last read (an instance nobody reads lives only during its own step); the
// latest instance of each graph output lives to the end. The live bytes
// during a step are those of the instances alive at that step, which
// includes the node's inputs and its own output.
//
//===----------------------------------------------------------------------===//

#include "remat/Planning/RematProblem.h"

#include <algorithm>

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

  // latest[v]: position of v's latest instance so far, -1 before the first.
  std::vector<int> latest(n, -1);
  // lastRead[p]: last position that reads the instance created at p.
  std::vector<int> lastRead(len, -1);
  double seconds = 0;
  for (int p = 0; p < len; ++p) {
    int v = seq[p];
    if (v < 0 || v >= n) {
      error = "step " + std::to_string(p) + ": node index " +
              std::to_string(v) + " out of range";
      return false;
    }
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
      lastRead[latest[u]] = p;
    }
    latest[v] = p;
    seconds += nodes[v].seconds;
  }

  // End of each instance's life (inclusive step).
  std::vector<int> end(len);
  for (int p = 0; p < len; ++p)
    end[p] = std::max(p, lastRead[p]);
  for (int o : problem.graphOutputs) {
    if (o < 0 || o >= n) {
      error = "graph output index " + std::to_string(o) + " out of range";
      return false;
    }
    if (latest[o] < 0) {
      error = "graph output " + nodeName(o) + " is never computed";
      return false;
    }
    end[latest[o]] = len - 1;
  }

  // Live bytes per step by a difference array.
  std::vector<int64_t> delta(len + 1, 0);
  for (int p = 0; p < len; ++p) {
    int64_t b = nodes[seq[p]].outputBytes;
    delta[p] += b;
    delta[end[p] + 1] -= b;
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
