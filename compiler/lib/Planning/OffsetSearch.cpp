//===- OffsetSearch.cpp - Search for offsets under a capacity -------------===//
//
// A node of the search has some buffers placed; every unplaced buffer's
// resting offset (`rest`) is the top of the highest placed buffer it is
// live with. The node picks which buffer comes next, lowest resting offset
// first (ties by the priority), places it there, and recurses; on failure
// it undoes the placement and tries the next candidate.
//
// Pruning, as in MiniMalloc's solver:
// - Canonical order: a pushed-down plan stacked in order of (offset, rank)
//   is reached by exactly one descent, so a node only takes buffers whose
//   (rest, rank) comes after the last one placed.
// - Dominance: placing a buffer at or above the top of an unplaced buffer's
//   resting place would leave room it could drop into; such plans are
//   reached with that buffer lower, so the placement is skipped.
// - Inference: everything unplaced goes at or above the last offset and
//   above what is placed, so each time point must hold its unplaced bytes
//   there; a placement that lifts an unplaced buffer past the capacity is
//   undone at once.
// - A buffer live with nothing unplaced changes nothing for the others: if
//   they fail above it, the node fails.
//
//===----------------------------------------------------------------------===//

#include "OffsetSearch.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <queue>
#include <random>
#include <tuple>

namespace remat::plan::detail {

namespace {

/// Values per time point, updated over ranges by `apply` (adding a
/// constant, or raising to at least a value: both distribute over max),
/// with the maximum over a range. A segment tree: each node keeps the
/// updates that covered all of it (`tag`) and the maximum below it.
template <int64_t (*apply)(int64_t value, int64_t update)> class RangeMax {
public:
  explicit RangeMax(int points) : leaves(1) {
    while (leaves < points)
      leaves *= 2;
    max.assign(2 * leaves, 0);
    tag.assign(2 * leaves, 0);
  }
  void update(int lo, int hi, int64_t value) {
    update(1, 0, leaves - 1, lo, hi, value);
  }
  int64_t maximum(int lo, int hi) const {
    return maximum(1, 0, leaves - 1, lo, hi);
  }

private:
  void update(int node, int nodeLo, int nodeHi, int lo, int hi, int64_t value) {
    if (hi < nodeLo || nodeHi < lo)
      return;
    if (lo <= nodeLo && nodeHi <= hi) {
      tag[node] = apply(tag[node], value);
      max[node] = apply(max[node], value);
      return;
    }
    int mid = (nodeLo + nodeHi) / 2;
    update(2 * node, nodeLo, mid, lo, hi, value);
    update(2 * node + 1, mid + 1, nodeHi, lo, hi, value);
    max[node] = apply(std::max(max[2 * node], max[2 * node + 1]), tag[node]);
  }

  int64_t maximum(int node, int nodeLo, int nodeHi, int lo, int hi) const {
    if (hi < nodeLo || nodeHi < lo)
      return std::numeric_limits<int64_t>::min() / 2;
    if (lo <= nodeLo && nodeHi <= hi)
      return max[node];
    int mid = (nodeLo + nodeHi) / 2;
    return apply(std::max(maximum(2 * node, nodeLo, mid, lo, hi),
                          maximum(2 * node + 1, mid + 1, nodeHi, lo, hi)),
                 tag[node]);
  }

  int leaves;
  std::vector<int64_t> max, tag;
};

int64_t atLeast(int64_t value, int64_t update) {
  return std::max(value, update);
}

/// The top of the placed buffers at each time point.
using Skyline = RangeMax<atLeast>;

/// The bytes of all buffers live at each time point.
std::vector<int64_t> pointLoads(const SearchInstance &in) {
  std::vector<int64_t> load(in.points, 0);
  for (size_t i = 0; i < in.size.size(); ++i)
    for (int t = in.lo[i]; t <= in.hi[i]; ++t)
      load[t] += in.size[i];
  return load;
}

/// rank[i]: position of buffer i in the priority order; ties by index, or
/// when `tieSeed` is not 0 in an order drawn from it.
std::vector<size_t> priorityRanks(const SearchInstance &in,
                                  SearchPriority priority,
                                  uint64_t tieSeed = 0) {
  const size_t n = in.size.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  if (tieSeed != 0) {
    // Fisher-Yates by hand: std::shuffle's draws differ between libraries.
    std::mt19937_64 rng(tieSeed);
    for (size_t i = n; i > 1; --i)
      std::swap(order[i - 1], order[rng() % i]);
  }
  auto length = [&](size_t i) { return int64_t{in.hi[i]} - in.lo[i] + 1; };
  auto area = [&](size_t i) {
    return static_cast<__int128>(in.size[i]) * length(i);
  };
  // Crowded: the most bytes live at any one of the buffer's time points.
  std::vector<int64_t> crowd;
  if (priority == SearchPriority::Crowded) {
    std::vector<int64_t> load = pointLoads(in);
    crowd.resize(n);
    for (size_t i = 0; i < n; ++i)
      crowd[i] = *std::max_element(load.begin() + in.lo[i],
                                   load.begin() + in.hi[i] + 1);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    switch (priority) {
    case SearchPriority::End:
      if (in.hi[a] != in.hi[b])
        return in.hi[a] > in.hi[b];
      return in.size[a] > in.size[b];
    case SearchPriority::Area:
      return area(a) > area(b);
    case SearchPriority::Crowded:
      if (crowd[a] != crowd[b])
        return crowd[a] > crowd[b];
      if (area(a) != area(b))
        return area(a) > area(b);
      return length(a) > length(b);
    case SearchPriority::Start:
      if (in.lo[a] != in.lo[b])
        return in.lo[a] < in.lo[b];
      return in.size[a] > in.size[b];
    }
    return false;
  });
  std::vector<size_t> ranks(n);
  for (size_t r = 0; r < n; ++r)
    ranks[order[r]] = r;
  return ranks;
}

/// One find(): the state of the descent and its backtracking.
class StackingSearch {
public:
  StackingSearch(const SearchInstance &in,
                 const std::vector<std::vector<size_t>> &neighbours,
                 int64_t capacity, SearchPriority priority, uint64_t tieSeed,
                 uint64_t budget)
      : in(in), neighbours(neighbours), capacity(capacity), budget(budget),
        n(in.size.size()), rest(n, 0), offset(n, 0), placed(n, 0),
        load(pointLoads(in)), top(in.points, 0) {
    rank = priorityRanks(in, priority, tieSeed);
  }

  /// `listingWork`: what listing the neighbours cost, charged to this
  /// search once its capacity holds every time point's bytes.
  std::optional<std::vector<int64_t>> run(uint64_t listingWork,
                                          uint64_t &work) {
    std::optional<std::vector<int64_t>> result;
    if (n == 0 || *std::max_element(load.begin(), load.end()) <= capacity) {
      spent = listingWork;
      if (spent <= budget && place(0, 0, -1))
        result = offset;
    }
    work = spent;
    return result;
  }

private:
  /// Places every buffer not yet placed (`depth` of them are); the last one
  /// placed went to `floor` with rank `floorRank` (-1 before the first).
  bool place(size_t depth, int64_t floor, int64_t floorRank) {
    if (depth == n)
      return true;
    // Canonical order: offsets never decrease along a descent (ties by
    // rank), so only buffers resting at or above the last one are
    // candidates. Dominance: a buffer placed at or above the top of some
    // unplaced buffer's resting place would leave room that buffer could
    // drop into, so such placements are skipped (its own turn comes first).
    std::vector<size_t> candidates;
    int64_t lowestTop = std::numeric_limits<int64_t>::max();
    for (size_t i = 0; i < n; ++i) {
      if (placed[i])
        continue;
      lowestTop = std::min(lowestTop, rest[i] + in.size[i]);
      const bool afterLast =
          rest[i] > floor ||
          (rest[i] == floor && static_cast<int64_t>(rank[i]) > floorRank);
      if (afterLast && rest[i] + in.size[i] <= capacity)
        candidates.push_back(i);
    }
    spent += n;
    std::sort(candidates.begin(), candidates.end(), [&](size_t a, size_t b) {
      if (rest[a] != rest[b])
        return rest[a] < rest[b];
      return rank[a] < rank[b];
    });
    for (size_t i : candidates) {
      if (spent > budget)
        return false;
      int64_t at = rest[i];
      if (at >= lowestTop)
        break; // sorted by rest: every later candidate is dominated too
      // Place i; the unplaced buffers live with it now rest on it or higher.
      size_t mark = trail.size(), topMark = topTrail.size();
      int64_t iTop = at + in.size[i];
      bool dead = false, alone = true;
      for (size_t j : neighbours[i]) {
        if (placed[j])
          continue;
        alone = false;
        if (rest[j] >= iTop)
          continue;
        trail.push_back({j, rest[j]});
        rest[j] = iTop;
        dead |= iTop + in.size[j] > capacity;
      }
      placed[i] = 1;
      offset[i] = at;
      for (int t = in.lo[i]; t <= in.hi[i]; ++t) {
        load[t] -= in.size[i];
        if (top[t] < iTop) {
          topTrail.push_back({t, top[t]});
          top[t] = iTop;
        }
      }
      spent += neighbours[i].size() + in.points + 1;
      // Everything still unplaced goes at `at` or higher, above what is
      // placed, so each time point must hold its unplaced bytes there.
      for (int t = 0; t < in.points && !dead; ++t)
        dead = std::max(at, top[t]) + load[t] > capacity;
      if (!dead && place(depth + 1, at, static_cast<int64_t>(rank[i])))
        return true;
      for (int t = in.lo[i]; t <= in.hi[i]; ++t)
        load[t] += in.size[i];
      for (size_t k = topTrail.size(); k > topMark; --k)
        top[topTrail[k - 1].first] = topTrail[k - 1].second;
      topTrail.resize(topMark);
      placed[i] = 0;
      for (size_t k = trail.size(); k > mark; --k)
        rest[trail[k - 1].first] = trail[k - 1].second;
      trail.resize(mark);
      // A buffer live with nothing unplaced changes nothing for the rest:
      // if they fail above it, they fail whichever buffer goes first.
      if (alone)
        return false;
    }
    return false;
  }

  const SearchInstance &in;
  const std::vector<std::vector<size_t>> &neighbours;
  int64_t capacity;
  uint64_t budget;
  uint64_t spent = 0;
  size_t n;
  std::vector<int64_t> rest, offset;
  std::vector<char> placed;
  std::vector<size_t> rank;
  /// Unplaced bytes and the top of the placed buffers, per time point.
  std::vector<int64_t> load, top;
  std::vector<std::pair<size_t, int64_t>> trail;
  std::vector<std::pair<int, int64_t>> topTrail;
};

} // namespace

std::vector<int64_t> stackOffsets(const SearchInstance &in,
                                  SearchPriority priority) {
  const size_t n = in.size.size();
  std::vector<size_t> rank = priorityRanks(in, priority);
  Skyline skyline(std::max(in.points, 1));
  // Queued by (resting offset when queued, rank). Resting offsets only
  // rise, so a popped entry whose offset is still current is the lowest.
  using Entry = std::tuple<int64_t, size_t, size_t>; // offset, rank, buffer
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> queue;
  for (size_t i = 0; i < n; ++i)
    queue.push({0, rank[i], i});
  std::vector<int64_t> offset(n, 0);
  while (!queue.empty()) {
    auto [queued, r, i] = queue.top();
    queue.pop();
    int64_t rest = skyline.maximum(in.lo[i], in.hi[i]);
    if (rest != queued) {
      queue.push({rest, r, i});
      continue;
    }
    offset[i] = rest;
    skyline.update(in.lo[i], in.hi[i], rest + in.size[i]);
  }
  return offset;
}

OffsetSearch::OffsetSearch(const SearchInstance &instance, uint64_t budget)
    : instance(instance) {
  const size_t n = instance.size.size();
  std::vector<size_t> byStart(n);
  std::iota(byStart.begin(), byStart.end(), 0);
  std::sort(byStart.begin(), byStart.end(), [&](size_t a, size_t b) {
    return instance.lo[a] < instance.lo[b];
  });
  neighbours.assign(n, {});
  for (size_t p = 0; p < n; ++p) {
    size_t a = byStart[p];
    for (size_t q = p + 1; q < n && instance.lo[byStart[q]] <= instance.hi[a];
         ++q) {
      size_t b = byStart[q];
      neighbours[a].push_back(b);
      neighbours[b].push_back(a);
      listingWork += 2;
    }
    if (listingWork > budget)
      return; // listed stays false
  }
  listed = true;
}

std::optional<std::vector<int64_t>>
OffsetSearch::find(int64_t capacity, SearchPriority priority, uint64_t tieSeed,
                   uint64_t budget, uint64_t &work) const {
  if (!listed) {
    work = 0;
    return std::nullopt;
  }
  StackingSearch search(instance, neighbours, capacity, priority, tieSeed,
                        budget);
  return search.run(listingWork, work);
}

} // namespace remat::plan::detail
