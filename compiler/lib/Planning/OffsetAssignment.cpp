//===- OffsetAssignment.cpp - Greedy arena offset assignment ---------------===//
//
// Buffers are placed one at a time in some order; each goes into a gap of
// the address ranges that are free over its whole lifetime, given the
// buffers placed before it (best fit: the smallest of the first few gaps
// that hold it; first fit: the lowest), or above everything if no gap holds
// it. With the order "largest first" and best fit this is Pisarchyk & Lee's
// greedy by size for offset calculation (and XLA's
// GlobalDecreasingSizeBestFitHeap).
//
// Finding the occupied ranges over a lifetime without looking at every
// placed buffer: time is compressed to the distinct begin steps (two
// lifetimes intersect iff they share the later of their begins), and a
// segment tree over those points keeps, per node, two sets of merged
// occupied address ranges: `own` (buffers whose lifetime covers the node and
// not its parent: the canonical decomposition) and `any` (buffers whose
// lifetime intersects the node). The ranges occupied somewhere in [l, r] are
// the union of `any` of the canonical nodes of [l, r] and `own` of the nodes
// on the root paths of leaves l and r: O(log n) sets, walked together. Each
// set is a treap that also keeps the largest free gap per subtree, so a set
// answers "lowest place >= x that holds s bytes" in O(log n); the union's
// answer is the fixed point of raising x to every set's answer.
//
// planMemory keeps the best of several orders and of stacking
// (OffsetSearch.h); when that is above the lower bound, the offset search
// looks for plans in less.
//
//===----------------------------------------------------------------------===//

#include "remat/Planning/MemoryPlan.h"

#include "OffsetSearch.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <utility>

namespace remat::plan {

namespace {

constexpr int64_t kInf = std::numeric_limits<int64_t>::max();

/// Sets of disjoint, non-touching half-open address ranges [start, end),
/// each a treap keyed by start. Every range also knows the free gap before
/// it (start - end of the previous range, or start for the first), and
/// every subtree the largest such gap, so that gaps too small for a buffer
/// are skipped in O(log n) rather than walked one by one. Ranges are only
/// ever added (merging with those they touch), never removed.
class RangeSets {
public:
  using Set = int32_t; // root node, -1 when empty

  /// Adds [start, end) to `set`, merging overlapping or touching ranges.
  void add(Set &set, int64_t start, int64_t end) {
    if (coverEnd(set, start) >= end)
      return; // already covered (common high in the time tree)
    Set left, right, middle;
    split(set, start, left, right); // left: starts < start
    if (left >= 0) {
      int32_t last = rightmost(left);
      if (nodes[last].end >= start) {
        Set rest;
        split(left, nodes[last].start, left, rest);
        start = nodes[last].start;
        end = std::max(end, nodes[last].end);
        release(rest);
      }
    }
    split(right, end + 1, middle, right); // middle: starts in [start, end]
    if (middle >= 0) {
      end = std::max(end, nodes[rightmost(middle)].end);
      release(middle);
    }
    int64_t prevEnd = left >= 0 ? nodes[rightmost(left)].end : 0;
    int32_t node = make(start, end, start - prevEnd);
    if (right >= 0)
      setFirstGap(right, end);
    set = join(join(left, node), right);
  }

  /// End of the range of `set` that contains x, or x if none does.
  int64_t coverEnd(Set set, int64_t x) const {
    int64_t result = x;
    for (int32_t t = set; t >= 0;) {
      const Node &n = nodes[t];
      if (n.start <= x) {
        if (n.end > x)
          return n.end;
        t = n.right;
      } else {
        t = n.left;
      }
    }
    return result;
  }

  /// Start of the first range of `set` that begins after x, or kInf.
  int64_t nextStart(Set set, int64_t x) const {
    int64_t result = kInf;
    for (int32_t t = set; t >= 0;) {
      const Node &n = nodes[t];
      if (n.start > x) {
        result = n.start;
        t = n.left;
      } else {
        t = n.right;
      }
    }
    return result;
  }

  /// The lowest p >= x with [p, p + size) free in `set`.
  int64_t nextFit(Set set, int64_t x, int64_t size) const {
    if (set < 0)
      return x;
    x = coverEnd(set, x);
    int64_t next = nextStart(set, x);
    if (next == kInf || next - x >= size)
      return x;
    // The first range after `next` with a gap >= size before it.
    int32_t t = firstGapAfter(set, next, size);
    if (t < 0)
      return nodes[rightmost(set)].end;
    return nodes[t].start - nodes[t].gap;
  }

private:
  struct Node {
    int64_t start, end;
    int64_t gap;    // start - end of the previous range (or - 0)
    int64_t maxGap; // max gap in the subtree
    uint32_t priority;
    int32_t left, right;
  };

  int32_t make(int64_t start, int64_t end, int64_t gap) {
    int32_t t;
    if (!freeList.empty()) {
      t = freeList.back();
      freeList.pop_back();
    } else {
      t = static_cast<int32_t>(nodes.size());
      nodes.emplace_back();
    }
    seed ^= seed << 13;
    seed ^= seed >> 17;
    seed ^= seed << 5;
    nodes[t] = Node{start, end, gap, gap, seed, -1, -1};
    return t;
  }

  void release(int32_t t) {
    if (t < 0)
      return;
    release(nodes[t].left);
    release(nodes[t].right);
    freeList.push_back(t);
  }

  void pull(int32_t t) {
    Node &n = nodes[t];
    n.maxGap = n.gap;
    if (n.left >= 0)
      n.maxGap = std::max(n.maxGap, nodes[n.left].maxGap);
    if (n.right >= 0)
      n.maxGap = std::max(n.maxGap, nodes[n.right].maxGap);
  }

  /// a: starts < key; b: starts >= key.
  void split(int32_t t, int64_t key, int32_t &a, int32_t &b) {
    if (t < 0) {
      a = b = -1;
      return;
    }
    if (nodes[t].start < key) {
      int32_t r = nodes[t].right;
      split(r, key, r, b);
      nodes[t].right = r;
      a = t;
    } else {
      int32_t l = nodes[t].left;
      split(l, key, a, l);
      nodes[t].left = l;
      b = t;
    }
    pull(t);
  }

  /// Every start in a is below every start in b.
  int32_t join(int32_t a, int32_t b) {
    if (a < 0)
      return b;
    if (b < 0)
      return a;
    if (nodes[a].priority > nodes[b].priority) {
      nodes[a].right = join(nodes[a].right, b);
      pull(a);
      return a;
    }
    nodes[b].left = join(a, nodes[b].left);
    pull(b);
    return b;
  }

  int32_t rightmost(int32_t t) const {
    while (nodes[t].right >= 0)
      t = nodes[t].right;
    return t;
  }

  void setFirstGap(int32_t t, int64_t prevEnd) {
    if (nodes[t].left >= 0)
      setFirstGap(nodes[t].left, prevEnd);
    else
      nodes[t].gap = nodes[t].start - prevEnd;
    pull(t);
  }

  /// The first node with start > key and gap >= size, or -1.
  int32_t firstGapAfter(int32_t t, int64_t key, int64_t size) const {
    if (t < 0 || nodes[t].maxGap < size)
      return -1;
    const Node &n = nodes[t];
    if (n.start <= key)
      return firstGapAfter(n.right, key, size);
    int32_t found = firstGapAfter(n.left, key, size);
    if (found >= 0)
      return found;
    if (n.gap >= size)
      return t;
    return firstGapAfter(n.right, key, size);
  }

  std::vector<Node> nodes;
  std::vector<int32_t> freeList;
  uint32_t seed = 2463534242u;
};

/// How many fitting gaps best fit compares before settling for the best of
/// them (it stops earlier at an exact fit or at the top of the arena).
/// Keeps best fit near O(n log^2 n) on heavily fragmented inputs.
constexpr int kBestFitCandidates = 4;

/// The segment tree of occupied ranges over compressed time [0, points).
class Occupancy {
public:
  explicit Occupancy(size_t points) {
    width = 1;
    while (width < points)
      width <<= 1;
    own.assign(2 * width, -1);
    any.assign(2 * width, -1);
  }

  /// The gap chosen for `size` bytes free over [l, r].
  int64_t find(int l, int r, int64_t size, FitPolicy fit) {
    collect(l, r);
    sets.clear();
    for (size_t node : canonical)
      if (any[node] >= 0)
        sets.push_back(any[node]);
    for (size_t node : paths)
      if (own[node] >= 0)
        sets.push_back(own[node]);
    if (sets.empty())
      return 0;
    int64_t x = firstFit(0, size);
    if (fit == FitPolicy::FirstFit)
      return x;
    int64_t best = -1, bestGap = kInf;
    for (int candidates = 0; candidates < kBestFitCandidates; ++candidates) {
      int64_t next = kInf;
      for (RangeSets::Set set : sets)
        next = std::min(next, ranges.nextStart(set, x));
      if (next == kInf)
        return best >= 0 ? best : x; // x is the top over [l, r]
      int64_t gap = next - x;
      if (gap == size)
        return x;
      if (gap < bestGap) {
        bestGap = gap;
        best = x;
      }
      x = firstFit(next, size);
    }
    return best;
  }

  /// Marks [offset, offset + size) occupied over [l, r]; call after find()
  /// with the same l, r.
  void place(int64_t offset, int64_t size) {
    for (size_t node : canonical) {
      ranges.add(own[node], offset, offset + size);
      ranges.add(any[node], offset, offset + size);
    }
    for (size_t node : paths)
      ranges.add(any[node], offset, offset + size);
    work += 2 * canonical.size() + paths.size();
  }

private:
  /// The lowest p >= x with [p, p + size) free in every set: each set's own
  /// lowest fit is a lower bound, so raise x to them until all agree.
  int64_t firstFit(int64_t x, int64_t size) const {
    const size_t m = sets.size();
    for (size_t quiet = 0, k = 0; quiet < m; k = (k + 1 == m ? 0 : k + 1)) {
      int64_t y = ranges.nextFit(sets[k], x, size);
      ++work;
      if (y > x) {
        x = y;
        quiet = 1;
      } else {
        ++quiet;
      }
    }
    return x;
  }

  void collect(int l, int r) {
    canonical.clear();
    paths.clear();
    for (size_t a = l + width, b = r + width + 1; a < b; a >>= 1, b >>= 1) {
      if (a & 1)
        canonical.push_back(a++);
      if (b & 1)
        canonical.push_back(--b);
    }
    size_t a = l + width, b = r + width;
    for (; a != b; a >>= 1, b >>= 1) {
      paths.push_back(a);
      paths.push_back(b);
    }
    for (; a >= 1; a >>= 1)
      paths.push_back(a);
  }

  size_t width;
  std::vector<RangeSets::Set> own, any; // per node
  RangeSets ranges;
  std::vector<size_t> canonical, paths;
  std::vector<RangeSets::Set> sets;

public:
  /// Set operations so far: a deterministic measure of effort.
  mutable uint64_t work = 0;
};

/// Range max over an array, with the lowest index among equal maxima.
class SparseMax {
public:
  explicit SparseMax(const std::vector<int64_t> &values) : v(values) {
    size_t n = v.size();
    table.push_back(std::vector<int>(n));
    std::iota(table[0].begin(), table[0].end(), 0);
    for (size_t len = 2; len <= n; len <<= 1) {
      const std::vector<int> &prev = table.back();
      std::vector<int> cur(n - len + 1);
      for (size_t i = 0; i + len <= n; ++i)
        cur[i] = pick(prev[i], prev[i + len / 2]);
      table.push_back(std::move(cur));
    }
  }
  /// Index of the max over [l, r].
  int argmax(int l, int r) const {
    int k = 31 - __builtin_clz(static_cast<unsigned>(r - l + 1));
    return pick(table[k][l], table[k][r - (1 << k) + 1]);
  }

private:
  int pick(int a, int b) const {
    if (v[a] != v[b])
      return v[a] > v[b] ? a : b;
    return std::min(a, b);
  }
  const std::vector<int64_t> &v;
  std::vector<std::vector<int>> table;
};

} // namespace

std::string algorithmName(PlacementOrder order, FitPolicy fit) {
  std::string name;
  switch (order) {
  case PlacementOrder::Size:
    name = "greedy-size";
    break;
  case PlacementOrder::Breadth:
    name = "greedy-breadth";
    break;
  case PlacementOrder::BreadthLongest:
    name = "greedy-breadth-longest";
    break;
  case PlacementOrder::BreadthLatestEnd:
    name = "greedy-breadth-latest-end";
    break;
  case PlacementOrder::Lifetime:
    name = "greedy-lifetime";
    break;
  case PlacementOrder::Area:
    name = "greedy-area";
    break;
  }
  return name + (fit == FitPolicy::BestFit ? "/best-fit" : "/first-fit");
}

namespace {

/// The buffers as placement sees them: aligned sizes, the non-empty ones,
/// and lifetimes as ranges [lo, hi] of compressed time (the distinct begin
/// steps: two lifetimes intersect iff they share the later begin).
struct Instance {
  std::vector<int64_t> size;
  std::vector<int> lo, hi;
  std::vector<size_t> nonEmpty;
  size_t points = 0;
  int64_t lowerBound = 0;
};

Instance prepare(const std::vector<Buffer> &buffers, int64_t alignment) {
  if (alignment <= 0)
    throw std::invalid_argument("memory plan: alignment must be positive");
  Instance in;
  in.lowerBound = lowerBound(buffers, alignment); // validates too
  const size_t n = buffers.size();
  in.size.resize(n);
  std::vector<int> starts;
  for (size_t i = 0; i < n; ++i) {
    in.size[i] = alignUp(buffers[i].bytes, alignment);
    if (in.size[i] > 0) {
      in.nonEmpty.push_back(i);
      starts.push_back(buffers[i].begin);
    }
  }
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  in.points = starts.size();
  in.lo.assign(n, 0);
  in.hi.assign(n, 0);
  for (size_t i : in.nonEmpty) {
    in.lo[i] = static_cast<int>(
        std::lower_bound(starts.begin(), starts.end(), buffers[i].begin) -
        starts.begin());
    in.hi[i] = static_cast<int>(
        std::upper_bound(starts.begin(), starts.end(), buffers[i].end) -
        starts.begin() - 1);
  }
  return in;
}

/// The non-empty buffers in the order `order` places them.
std::vector<size_t> placementOrder(const std::vector<Buffer> &buffers,
                                   const Instance &in, PlacementOrder order) {
  std::vector<size_t> placed = in.nonEmpty;
  const std::vector<int64_t> &size = in.size;
  auto length = [&](size_t i) {
    return static_cast<int64_t>(buffers[i].end) - buffers[i].begin + 1;
  };
  switch (order) {
  case PlacementOrder::Size:
    std::sort(placed.begin(), placed.end(), [&](size_t a, size_t b) {
      if (size[a] != size[b])
        return size[a] > size[b];
      if (length(a) != length(b))
        return length(a) > length(b);
      if (buffers[a].begin != buffers[b].begin)
        return buffers[a].begin < buffers[b].begin;
      return a < b;
    });
    break;
  case PlacementOrder::Breadth:
  case PlacementOrder::BreadthLongest:
  case PlacementOrder::BreadthLatestEnd: {
    // Live bytes at each begin point (breadth only grows at begins, so the
    // most crowded step of any lifetime is one of them).
    std::vector<int64_t> breadth(in.points + 1, 0);
    for (size_t i : placed) {
      breadth[in.lo[i]] += size[i];
      breadth[in.hi[i] + 1] -= size[i];
    }
    for (size_t p = 1; p < breadth.size(); ++p)
      breadth[p] += breadth[p - 1];
    breadth.pop_back();
    SparseMax rmq(breadth);
    std::vector<int> peak(buffers.size(), 0);
    for (size_t i : placed)
      peak[i] = rmq.argmax(in.lo[i], in.hi[i]);
    std::sort(placed.begin(), placed.end(), [&](size_t a, size_t b) {
      if (peak[a] != peak[b]) {
        if (breadth[peak[a]] != breadth[peak[b]])
          return breadth[peak[a]] > breadth[peak[b]];
        return peak[a] < peak[b];
      }
      // Within a step's group: the stacking order the variant asks for.
      if (order == PlacementOrder::BreadthLongest && length(a) != length(b))
        return length(a) > length(b);
      if (order == PlacementOrder::BreadthLatestEnd &&
          buffers[a].end != buffers[b].end)
        return buffers[a].end > buffers[b].end;
      if (size[a] != size[b])
        return size[a] > size[b];
      return a < b;
    });
    break;
  }
  case PlacementOrder::Lifetime:
    std::sort(placed.begin(), placed.end(), [&](size_t a, size_t b) {
      if (length(a) != length(b))
        return length(a) > length(b);
      if (size[a] != size[b])
        return size[a] > size[b];
      return a < b;
    });
    break;
  case PlacementOrder::Area:
    std::sort(placed.begin(), placed.end(), [&](size_t a, size_t b) {
      __int128 areaA = static_cast<__int128>(size[a]) * length(a);
      __int128 areaB = static_cast<__int128>(size[b]) * length(b);
      if (areaA != areaB)
        return areaA > areaB;
      if (size[a] != size[b])
        return size[a] > size[b];
      return a < b;
    });
    break;
  }
  return placed;
}

/// Places the buffers of `order` one by one at the gap `fit` picks, into
/// `plan` (whose offsets must be one per buffer, zero); gives up (returns
/// false) once more than `budget` set operations are spent. `work`
/// receives what it spent.
bool placeInOrder(const Instance &in, const std::vector<size_t> &order,
                  FitPolicy fit, uint64_t budget, uint64_t &work,
                  MemoryPlan &plan) {
  Occupancy occupancy(std::max<size_t>(in.points, 1));
  plan.arenaBytes = 0;
  for (size_t i : order) {
    int64_t offset = occupancy.find(in.lo[i], in.hi[i], in.size[i], fit);
    occupancy.place(offset, in.size[i]);
    plan.offsets[i] = offset;
    plan.arenaBytes = std::max(plan.arenaBytes, offset + in.size[i]);
    if (occupancy.work > budget) {
      work = occupancy.work;
      return false;
    }
  }
  work = occupancy.work;
  return true;
}

/// assignOffsets that gives up (returns false) once it has spent more than
/// `budget` set operations; `work` receives what it spent.
bool assignWithBudget(const std::vector<Buffer> &buffers, const Instance &in,
                      PlacementOrder order, FitPolicy fit, uint64_t budget,
                      uint64_t &work, MemoryPlan &plan) {
  plan = MemoryPlan();
  plan.algorithm = algorithmName(order, fit);
  plan.offsets.assign(buffers.size(), 0);
  plan.lowerBoundBytes = in.lowerBound;
  return placeInOrder(in, placementOrder(buffers, in, order), fit, budget,
                      work, plan);
}

/// The lifetimes reversed in time. Two reversed lifetimes intersect iff
/// the originals do, so every plan for them is a plan for the originals,
/// and the greedy orders meet the buffers differently (one that starts
/// after the peak and lives to the end is placed like one that ends before
/// it).
std::vector<Buffer> reversedInTime(const std::vector<Buffer> &buffers) {
  int last = 0;
  for (const Buffer &b : buffers)
    last = std::max(last, b.end);
  std::vector<Buffer> reversed;
  reversed.reserve(buffers.size());
  for (const Buffer &b : buffers)
    reversed.push_back({b.bytes, last - b.end, last - b.begin, ""});
  return reversed;
}

/// The non-empty buffers of `in` as the offset search sees them.
detail::SearchInstance searchInstance(const Instance &in) {
  detail::SearchInstance search;
  for (size_t i : in.nonEmpty) {
    search.size.push_back(in.size[i]);
    search.lo.push_back(in.lo[i]);
    search.hi.push_back(in.hi[i]);
  }
  search.points = static_cast<int>(in.points);
  return search;
}

/// The plan that puts the non-empty buffers of `in` at `offsets` (one per
/// non-empty buffer, in order) and the empty ones at 0.
MemoryPlan planFromOffsets(const Instance &in, size_t buffers,
                           const std::vector<int64_t> &offsets) {
  MemoryPlan plan;
  plan.lowerBoundBytes = in.lowerBound;
  plan.offsets.assign(buffers, 0);
  for (size_t k = 0; k < in.nonEmpty.size(); ++k) {
    size_t i = in.nonEmpty[k];
    plan.offsets[i] = offsets[k];
    plan.arenaBytes = std::max(plan.arenaBytes, offsets[k] + in.size[i]);
  }
  return plan;
}

std::string stackingName(detail::SearchPriority priority) {
  switch (priority) {
  case detail::SearchPriority::End:
    return "stack-latest-end";
  case detail::SearchPriority::Area:
    return "stack-area";
  case detail::SearchPriority::Start:
    return "stack-earliest-start";
  case detail::SearchPriority::Crowded:
    return "stack-crowded";
  }
  return "stack";
}

/// Whether `budget` units of work pay for one descent of the offset search
/// on `in`: n nodes of about n + points work each. Tens of thousands of
/// buffers get no search.
bool searchAffordable(const Instance &in, uint64_t budget) {
  const uint64_t n = in.nonEmpty.size();
  return n * n <= budget;
}

/// Tightens `best` with the offset search (OffsetSearch.h): tries the
/// lower bound, then bisects the capacity between the highest one the
/// search failed at and the best arena so far. Each capacity gets
/// rounds of attempts, as MiniMalloc's solver does: every priority in turn
/// under an effort limit that doubles each round (round 0 breaks ties by
/// index, later rounds by a seeded order), until the capacity has spent
/// half of what is left. Each priority runs on the instance and on its
/// time reversal (`searches`: forward, reversed; the same buffers in the
/// same order, so the offsets of either are a plan): a search stacks from
/// one end of time, and the tight points can be settled from the other
/// (llama_tiny at its floor, 472 buffers: reversed, the latest-end priority
/// reaches the bound in 0.5M units; forward, no priority does in 200M). A
/// plan found may be well under the capacity asked for; the next capacity
/// is then halfway below it. Stops when the two are one alignment apart or
/// `budget` units of work are spent.
void improveBySearch(const std::vector<Buffer> &buffers, const Instance &in,
                     const detail::SearchInstance (&searches)[2],
                     int64_t alignment, uint64_t budget, MemoryPlan &best) {
  // Most bytes live at once first settles the tight time points early and
  // finds most plans (bert_tiny at its floor, 240 buffers: only it finds the
  // plan at the bound, in 1.2M units); the others win on some instances.
  static const detail::SearchPriority kPriorities[] = {
      detail::SearchPriority::Crowded, detail::SearchPriority::End,
      detail::SearchPriority::Area, detail::SearchPriority::Start};
  if (!searchAffordable(in, budget))
    return;
  const uint64_t n = in.nonEmpty.size();
  const uint64_t firstLimit = std::max<uint64_t>(2 * n * n, 50'000);
  const detail::OffsetSearch offsetSearches[2] = {
      detail::OffsetSearch(searches[0], budget),
      detail::OffsetSearch(searches[1], budget)};
  uint64_t spent = 0;
  int64_t failed = best.lowerBoundBytes - 1; // highest capacity not reached
  bool first = true;
  while (best.arenaBytes - failed > alignment && spent < budget) {
    // The bound itself first: plans usually reach it when they can, and a
    // looser capacity prunes less, so its search can fail where the
    // bound's succeeds.
    int64_t capacity =
        first ? alignUp(best.lowerBoundBytes, alignment)
              : alignUp(failed + 1 + (best.arenaBytes - failed - 1) / 2,
                        alignment);
    first = false;
    if (capacity >= best.arenaBytes)
      capacity = best.arenaBytes - alignment;
    const uint64_t capacityBudget =
        std::max(firstLimit, (budget - spent) / 2);
    uint64_t capacitySpent = 0;
    std::optional<std::vector<int64_t>> offsets;
    for (unsigned round = 0; !offsets && capacitySpent < capacityBudget &&
                             spent < budget;
         ++round) {
      const uint64_t limit = firstLimit << std::min(round, 30u);
      for (detail::SearchPriority priority : kPriorities)
        for (const detail::OffsetSearch &offsetSearch : offsetSearches) {
          if (offsets || capacitySpent >= capacityBudget || spent >= budget)
            break;
          uint64_t work = 0;
          offsets = offsetSearch.find(
              capacity, priority, /*tieSeed=*/round,
              std::min({limit, capacityBudget - capacitySpent,
                        budget - spent}),
              work);
          capacitySpent += work;
          spent += work;
        }
    }
    if (!offsets) {
      failed = capacity;
      continue;
    }
    MemoryPlan plan = planFromOffsets(in, buffers.size(), *offsets);
    plan.algorithm = best.algorithm;
    if (plan.algorithm.find("+search") == std::string::npos)
      plan.algorithm += "+search";
    std::string error;
    if (!verifyPlan(buffers, plan, alignment, error))
      throw std::logic_error("memory plan: the offset search made a plan "
                             "that does not verify: " + error);
    best = std::move(plan);
  }
}

} // namespace

MemoryPlan assignOffsets(const std::vector<Buffer> &buffers,
                         PlacementOrder order, FitPolicy fit,
                         int64_t alignment) {
  Instance in = prepare(buffers, alignment);
  MemoryPlan plan;
  uint64_t work = 0;
  assignWithBudget(buffers, in, order, fit,
                   std::numeric_limits<uint64_t>::max(), work, plan);
  return plan;
}

MemoryPlan planMemory(const std::vector<Buffer> &buffers, int64_t alignment,
                      std::vector<MemoryPlan> *candidates) {
  // Greedy by size with best fit first and in full; the others share an
  // effort budget proportional to what it took (orders that place small
  // long-lived buffers first can fragment the occupied ranges and get slow
  // on very large inputs; they are abandoned rather than waited for).
  static const std::pair<PlacementOrder, FitPolicy> kAlgorithms[] = {
      {PlacementOrder::Size, FitPolicy::BestFit},
      {PlacementOrder::Size, FitPolicy::FirstFit},
      {PlacementOrder::Breadth, FitPolicy::BestFit},
      {PlacementOrder::Breadth, FitPolicy::FirstFit},
      {PlacementOrder::BreadthLongest, FitPolicy::BestFit},
      {PlacementOrder::BreadthLatestEnd, FitPolicy::BestFit},
      {PlacementOrder::Area, FitPolicy::BestFit},
      {PlacementOrder::Area, FitPolicy::FirstFit},
      {PlacementOrder::Lifetime, FitPolicy::BestFit},
      {PlacementOrder::Lifetime, FitPolicy::FirstFit},
  };
  constexpr uint64_t kMinExtraWork = 4'000'000;
  constexpr uint64_t kExtraWorkFactor = 2;
  // The offset search afterwards gets about as much (small inputs: a few
  // hundred buffers, up to about 0.15 s, of which bert_tiny's floor plan
  // needs about a fifth to reach its bound; large ones: one or two greedy
  // passes' worth, where it rarely finds anything).
  constexpr uint64_t kMinSearchWork = 64'000'000;
  constexpr uint64_t kSearchWorkFactor = 1;
  if (candidates)
    candidates->clear();

  // Direction 1 is the time-reversed instance, built only when the
  // forward orders miss the bound (most calls return before).
  std::vector<Buffer> reversed;
  Instance instances[2];
  instances[0] = prepare(buffers, alignment);
  const std::vector<Buffer> *inputs[2] = {&buffers, &reversed};

  MemoryPlan best;
  bool found = false;
  std::string firstError;
  // Keeps `plan` if it verifies and beats `best`; true when `best` is at the
  // lower bound (nothing can beat it).
  auto consider = [&](MemoryPlan plan) {
    std::string error;
    bool ok = verifyPlan(buffers, plan, alignment, error);
    if (!ok && firstError.empty())
      firstError = plan.algorithm + ": " + error;
    if (ok && (!found || plan.arenaBytes < best.arenaBytes)) {
      best = plan;
      found = true;
    }
    if (candidates)
      candidates->push_back(std::move(plan));
    return found && best.arenaBytes == best.lowerBoundBytes;
  };
  uint64_t extraBudget = 0, firstWork = 0;
  bool first = true;
  for (size_t direction = 0; direction < 2; ++direction) {
    if (direction == 1) {
      reversed = reversedInTime(buffers);
      instances[1] = prepare(reversed, alignment);
      extraBudget = std::max(kMinExtraWork, kExtraWorkFactor * firstWork);
    }
    for (size_t a = 0; a < std::size(kAlgorithms); ++a) {
      auto [order, fit] = kAlgorithms[a];
      MemoryPlan plan;
      uint64_t work = 0;
      bool completed = assignWithBudget(
          *inputs[direction], instances[direction], order, fit,
          first ? std::numeric_limits<uint64_t>::max() : extraBudget, work,
          plan);
      if (first) {
        firstWork = work;
        extraBudget = std::max(kMinExtraWork, kExtraWorkFactor * work);
      } else {
        extraBudget -= std::min(extraBudget, work);
      }
      first = false;
      if (!completed)
        continue;
      if (direction == 1)
        plan.algorithm += "/reversed";
      if (consider(std::move(plan)))
        return best;
      if (extraBudget == 0)
        break;
    }
  }
  // Stacking, lowest resting offset first: a different family that wins
  // where gaps left by the orders above add up (recompute-heavy schedules
  // with tens of thousands of buffers).
  // Both directions of time (the loop above prepared the reversed one)
  // where the search runs too (a few thousand buffers at most); on larger
  // inputs the second direction would only add to the planning time (three
  // stackings and their checks: seconds on 100k buffers in a sanitizer
  // build).
  const detail::SearchInstance searches[2] = {searchInstance(instances[0]),
                                              searchInstance(instances[1])};
  const uint64_t searchBudget =
      std::max(kMinSearchWork, kSearchWorkFactor * firstWork);
  const size_t directions =
      searchAffordable(instances[0], searchBudget) ? 2 : 1;
  for (size_t direction = 0; direction < directions; ++direction)
    for (detail::SearchPriority priority :
         {detail::SearchPriority::End, detail::SearchPriority::Start,
          detail::SearchPriority::Area}) {
      MemoryPlan plan = planFromOffsets(
          instances[direction], buffers.size(),
          detail::stackOffsets(searches[direction], priority));
      plan.algorithm =
          stackingName(priority) + (direction == 1 ? "/reversed" : "");
      if (consider(std::move(plan)))
        return best;
    }
  if (!found)
    throw std::logic_error("memory plan: no assignment verifies: " +
                           firstError);
  if (best.arenaBytes > best.lowerBoundBytes)
    improveBySearch(buffers, instances[0], searches, alignment, searchBudget,
                    best);
  return best;
}

} // namespace remat::plan
