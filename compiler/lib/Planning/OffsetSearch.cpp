//===- OffsetSearch.cpp - Search for offsets under a capacity -------------===//
//
// A node of the search has some buffers placed; every unplaced buffer's
// resting offset (`rest`) is the top of the highest placed buffer it is
// live with. The node picks which buffer comes next, lowest resting offset
// first (ties by the priority), places it there, and recurses; on failure
// it undoes the placement and tries the next candidate.
//
// Pruning: a placed buffer is never moved, and an unplaced one only rests
// higher as others are placed, so once buffer i is placed at o, all the
// unplaced buffers live at one of i's time points must fit, stacked, above
// o + size(i). Placing i is only tried when o + (the most unplaced bytes,
// i's own included, at any of its time points) fits; and a placement that
// lifts an unplaced buffer past the capacity is undone at once.
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

int64_t plus(int64_t value, int64_t update) { return value + update; }
int64_t atLeast(int64_t value, int64_t update) {
  return std::max(value, update);
}

/// Unplaced bytes per time point.
using PointLoads = RangeMax<plus>;
/// The top of the placed buffers at each time point.
using Skyline = RangeMax<atLeast>;

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
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    switch (priority) {
    case SearchPriority::End:
      if (in.hi[a] != in.hi[b])
        return in.hi[a] > in.hi[b];
      return in.size[a] > in.size[b];
    case SearchPriority::Area: {
      __int128 areaA = static_cast<__int128>(in.size[a]) * length(a);
      __int128 areaB = static_cast<__int128>(in.size[b]) * length(b);
      return areaA > areaB;
    }
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
        loads(in.points), n(in.size.size()), rest(n, 0), offset(n, 0),
        placed(n, 0) {
    rank = priorityRanks(in, priority, tieSeed);
    for (size_t i = 0; i < n; ++i)
      loads.update(in.lo[i], in.hi[i], in.size[i]);
  }

  /// `listingWork`: what listing the neighbours cost, charged to this
  /// search once its capacity holds every time point's bytes.
  std::optional<std::vector<int64_t>> run(uint64_t listingWork,
                                          uint64_t &work) {
    std::optional<std::vector<int64_t>> result;
    if (loads.maximum(0, in.points - 1) <= capacity) {
      spent = listingWork;
      if (spent <= budget && place(0))
        result = offset;
    }
    work = spent;
    return result;
  }

private:
  /// Places every buffer not yet placed (`depth` of them are).
  bool place(size_t depth) {
    if (depth == n)
      return true;
    // The candidates, lowest resting offset first, then by priority.
    std::vector<size_t> candidates;
    for (size_t i = 0; i < n; ++i)
      if (!placed[i] && rest[i] + in.size[i] <= capacity)
        candidates.push_back(i);
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
      // Each time point of i's lifetime must still hold, above i's top,
      // what is unplaced there besides i.
      if (at + loads.maximum(in.lo[i], in.hi[i]) > capacity)
        continue;
      // Place i; the unplaced buffers live with it now rest on it or higher.
      size_t mark = trail.size();
      int64_t top = at + in.size[i];
      bool dead = false;
      for (size_t j : neighbours[i]) {
        if (placed[j] || rest[j] >= top)
          continue;
        trail.push_back({j, rest[j]});
        rest[j] = top;
        dead |= top + in.size[j] > capacity;
      }
      spent += neighbours[i].size() + 1;
      placed[i] = 1;
      offset[i] = at;
      loads.update(in.lo[i], in.hi[i], -in.size[i]);
      if (!dead && place(depth + 1))
        return true;
      loads.update(in.lo[i], in.hi[i], in.size[i]);
      placed[i] = 0;
      for (size_t t = trail.size(); t > mark; --t)
        rest[trail[t - 1].first] = trail[t - 1].second;
      trail.resize(mark);
    }
    return false;
  }

  const SearchInstance &in;
  const std::vector<std::vector<size_t>> &neighbours;
  int64_t capacity;
  uint64_t budget;
  uint64_t spent = 0;
  PointLoads loads;
  size_t n;
  std::vector<int64_t> rest, offset;
  std::vector<char> placed;
  std::vector<size_t> rank;
  std::vector<std::pair<size_t, int64_t>> trail;
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
