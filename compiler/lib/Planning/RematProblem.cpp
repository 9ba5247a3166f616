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

std::vector<int> resultsRead(const std::vector<Node> &nodes,
                             const Node &reader, int input) {
  const size_t count = nodes[input].resultBytes.size();
  if (count <= 1)
    return {0};
  std::vector<int> read;
  for (ResultRef ref : reader.reads)
    if (ref.node == input && std::find(read.begin(), read.end(), ref.result) == read.end())
      read.push_back(ref.result);
  if (read.empty())
    for (size_t r = 0; r < count; ++r)
      read.push_back(static_cast<int>(r));
  return read;
}

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
  auto refName = [&](ResultRef ref) {
    return "result " + std::to_string(ref.result) + " of " +
           (ref.node >= 0 && ref.node < n ? nodeName(ref.node)
                                          : "node #" + std::to_string(ref.node));
  };
  // The values of each node: its results where it lists them, else one.
  // This is the planners' inner loop, so the common case stays cheap: the
  // first value of the instance made at position q is slot q; the others
  // (multi-result nodes) are slots of their own, from extra[q] on.
  std::vector<int> values(n);
  std::vector<int64_t> firstBytes(n);
  for (int v = 0; v < n; ++v) {
    const Node &node = nodes[v];
    values[v] = std::max<int>(1, static_cast<int>(node.resultBytes.size()));
    firstBytes[v] =
        node.resultBytes.empty() ? node.outputBytes : node.resultBytes[0];
  }
  std::vector<int> extra(len, -1);
  std::vector<int> multi; // positions of nodes with several values
  int extraSlots = 0;
  for (int p = 0; p < len; ++p) {
    int v = seq[p];
    if (v < 0 || v >= n) {
      error = "step " + std::to_string(p) + ": node index " +
              std::to_string(v) + " out of range";
      return false;
    }
    if (values[v] > 1) {
      extra[p] = len + extraSlots;
      extraSlots += values[v] - 1;
      multi.push_back(p);
    }
  }
  auto slot = [&](int q, int r) { return r == 0 ? q : extra[q] + r - 1; };

  // latest[v]: position of v's latest instance so far, -1 before the first.
  std::vector<int> latest(n, -1);
  // lastRead[slot]: last position that reads that value.
  std::vector<int> lastRead(len + extraSlots, -1);
  // (position, slot of an input it writes over in place if that dies).
  std::vector<std::pair<int, int>> inPlaceReads;
  inPlaceReads.reserve(len);
  double seconds = 0;
  for (int p = 0; p < len; ++p) {
    const int v = seq[p];
    const Node &node = nodes[v];
    for (int u : node.inputs) {
      if (u < 0 || u >= n) {
        error = "node " + nodeName(seq[p]) + " has an input index " +
                std::to_string(u) + " out of range";
        return false;
      }
      const int q = latest[u];
      if (q < 0) {
        error = "step " + std::to_string(p) + ": node " + nodeName(v) +
                " runs before its input " + nodeName(u) + " is computed";
        return false;
      }
      if (values[u] == 1) {
        lastRead[q] = p;
        continue;
      }
      bool listed = false;
      for (ResultRef ref : node.reads)
        if (ref.node == u) {
          if (ref.result < 0 || ref.result >= values[u]) {
            error = "node " + nodeName(v) + " reads " + refName(ref) +
                    ", which has " + std::to_string(values[u]) + " results";
            return false;
          }
          lastRead[slot(q, ref.result)] = p;
          listed = true;
        }
      if (!listed)
        for (int r = 0; r < values[u]; ++r)
          lastRead[slot(q, r)] = p;
    }
    // An in-place input must be one this occurrence has just read.
    if (node.inPlaceBytes > 0)
      for (ResultRef ref : node.inPlaceInputs) {
        if (ref.node < 0 || ref.node >= n || latest[ref.node] < 0 ||
            ref.result < 0 || ref.result >= values[ref.node] ||
            lastRead[slot(latest[ref.node], ref.result)] != p) {
          error = "node " + nodeName(v) + " may write over " + refName(ref) +
                  ", which it does not read";
          return false;
        }
        inPlaceReads.emplace_back(p, slot(latest[ref.node], ref.result));
      }
    latest[v] = p;
    seconds += node.seconds;
  }

  // End of each value's life (inclusive step).
  std::vector<int> end(len + extraSlots);
  for (int p = 0; p < len; ++p)
    end[p] = std::max(p, lastRead[p]);
  for (int p : multi)
    for (int r = 1; r < values[seq[p]]; ++r)
      end[slot(p, r)] = std::max(p, lastRead[slot(p, r)]);
  for (int o : problem.graphOutputs) {
    if (o < 0 || o >= n) {
      error = "graph output index " + std::to_string(o) + " out of range";
      return false;
    }
    if (latest[o] < 0) {
      error = "graph output " + nodeName(o) + " is never computed";
      return false;
    }
    for (int r = 0; r < values[o]; ++r)
      end[slot(latest[o], r)] = len - 1;
  }
  std::vector<int64_t> delta(len + 1, 0);
  for (int p = 0; p < len; ++p) {
    const int64_t b = firstBytes[seq[p]];
    delta[p] += b;
    delta[end[p] + 1] -= b;
  }
  for (int p : multi) {
    const Node &node = nodes[seq[p]];
    for (int r = 1; r < values[seq[p]]; ++r) {
      delta[p] += node.resultBytes[r];
      delta[end[slot(p, r)] + 1] -= node.resultBytes[r];
    }
  }
  // One in-place write per occurrence (inPlaceReads is in position order).
  int sharedAt = -1;
  for (auto [p, s] : inPlaceReads)
    if (p != sharedAt && end[s] == p) {
      sharedAt = p;
      delta[p] -= nodes[seq[p]].inPlaceBytes;
      delta[p + 1] += nodes[seq[p]].inPlaceBytes;
    }
  // A batch input (among the fixed bytes) dies after the last occurrence of
  // a node that reads it, as in the arena; it is live at the first step.
  for (const PartTimeBytes &part : problem.partTimeFixedBytes)
    if (!part.readers.empty() && len > 0)
      delta[lastReadPosition(seq, part.readers) + 1] -= part.bytes;
  int64_t live = 0, peak = 0;
  for (int p = 0; p < len; ++p) {
    live += delta[p];
    peak = std::max(peak, live);
  }
  plan.peakBytes = problem.fixedBytes + peak;
  plan.seconds = seconds;
  return true;
}

int lastReadPosition(const std::vector<int> &sequence,
                     const std::vector<int> &readers) {
  // Searched from the end: an input's last reader is usually a backward op
  // near it, and simulate() is the planners' inner loop.
  int last = static_cast<int>(sequence.size()) - 1;
  while (last > 0 && std::find(readers.begin(), readers.end(),
                               sequence[last]) == readers.end())
    --last;
  return std::max(last, 0);
}

RematProblem withoutSharing(RematProblem problem) {
  for (Node &node : problem.nodes) {
    node.resultBytes.clear();
    node.reads.clear();
    node.inPlaceInputs.clear();
    node.inPlaceBytes = 0;
  }
  return problem;
}

} // namespace remat::plan
