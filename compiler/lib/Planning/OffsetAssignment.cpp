//===- OffsetAssignment.cpp - Greedy arena offset assignment ---------------===//
//
// Buffers are placed one at a time in some order; each goes into a gap of
// the address ranges that are free over its whole lifetime, given the
// buffers placed before it (best fit: the smallest gap that holds it; first
// fit: the lowest), or above everything if no gap holds it. With the order
// "largest first" and best fit this is Pisarchyk & Lee's greedy by size for
// offset calculation (and XLA's GlobalDecreasingSizeBestFitHeap).
//
// Finding the occupied ranges over a lifetime without looking at every
// placed buffer: time is compressed to the distinct begin steps (two
// lifetimes intersect iff they share the later of their begins), and a
// segment tree over those points keeps, per node, two sets of merged
// occupied address ranges: `own` (buffers whose lifetime covers the node and
// not its parent: the canonical decomposition) and `any` (buffers whose
// lifetime intersects the node). The ranges occupied somewhere in [l, r] are
// the union of `any` of the canonical nodes of [l, r] and `own` of the nodes
// on the root paths of leaves l and r: O(log n) sets, walked together.
//
//===----------------------------------------------------------------------===//

#include "remat/Planning/MemoryPlan.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <stdexcept>
#include <utility>

namespace remat::plan {

namespace {

constexpr int64_t kInf = std::numeric_limits<int64_t>::max();

/// Disjoint, non-touching half-open ranges [start, end), keyed by start.
using RangeSet = std::map<int64_t, int64_t>;

void addRange(RangeSet &set, int64_t start, int64_t end) {
  auto it = set.upper_bound(start);
  if (it != set.begin()) {
    auto prev = std::prev(it);
    if (prev->second >= start) {
      if (prev->second >= end)
        return; // already covered
      start = prev->first;
      end = std::max(end, prev->second);
      it = set.erase(prev);
    }
  }
  while (it != set.end() && it->first <= end) {
    end = std::max(end, it->second);
    it = set.erase(it);
  }
  set.emplace_hint(it, start, end);
}

/// End of the range of `set` that contains x, or x if none does.
inline int64_t coverEnd(const RangeSet &set, int64_t x) {
  auto it = set.upper_bound(x);
  if (it == set.begin())
    return x;
  --it;
  return it->second > x ? it->second : x;
}

/// Start of the first range of `set` that begins after x, or kInf.
inline int64_t nextStart(const RangeSet &set, int64_t x) {
  auto it = set.upper_bound(x);
  return it == set.end() ? kInf : it->first;
}

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
        sets.push_back(&pool[any[node]]);
    for (size_t node : paths)
      if (own[node] >= 0)
        sets.push_back(&pool[own[node]]);
    const size_t m = sets.size();
    if (m == 0)
      return 0;
    int64_t x = 0, best = -1, bestGap = kInf;
    while (true) {
      // Skip past the occupied ranges at x, until no set covers x.
      for (size_t quiet = 0, k = 0; quiet < m; k = (k + 1 == m ? 0 : k + 1)) {
        int64_t y = coverEnd(*sets[k], x);
        if (y > x) {
          x = y;
          quiet = 1;
        } else {
          ++quiet;
        }
      }
      int64_t next = kInf;
      for (const RangeSet *set : sets)
        next = std::min(next, nextStart(*set, x));
      if (next == kInf)
        break; // x is the top of everything live over [l, r]
      int64_t gap = next - x;
      if (gap >= size) {
        if (fit == FitPolicy::FirstFit || gap == size)
          return x;
        if (gap < bestGap) {
          bestGap = gap;
          best = x;
        }
      }
      x = next;
    }
    return best >= 0 ? best : x;
  }

  /// Marks [offset, offset + size) occupied over [l, r]; call after find()
  /// with the same l, r.
  void place(int64_t offset, int64_t size) {
    for (size_t node : canonical) {
      addRange(setOf(own, node), offset, offset + size);
      addRange(setOf(any, node), offset, offset + size);
    }
    for (size_t node : paths)
      addRange(setOf(any, node), offset, offset + size);
  }

private:
  RangeSet &setOf(std::vector<int32_t> &index, size_t node) {
    if (index[node] < 0) {
      index[node] = static_cast<int32_t>(pool.size());
      pool.emplace_back();
    }
    return pool[index[node]];
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
  std::vector<int32_t> own, any; // node -> index into pool, or -1
  std::vector<RangeSet> pool;
  std::vector<size_t> canonical, paths;
  std::vector<const RangeSet *> sets;
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
  case PlacementOrder::Lifetime:
    name = "greedy-lifetime";
    break;
  case PlacementOrder::Area:
    name = "greedy-area";
    break;
  }
  return name + (fit == FitPolicy::BestFit ? "/best-fit" : "/first-fit");
}

MemoryPlan assignOffsets(const std::vector<Buffer> &buffers,
                         PlacementOrder order, FitPolicy fit,
                         int64_t alignment) {
  if (alignment <= 0)
    throw std::invalid_argument("memory plan: alignment must be positive");
  const size_t n = buffers.size();
  MemoryPlan plan;
  plan.algorithm = algorithmName(order, fit);
  plan.offsets.assign(n, 0);
  plan.lowerBoundBytes = lowerBound(buffers, alignment); // validates too

  std::vector<int64_t> size(n);
  std::vector<int> starts;
  std::vector<size_t> placed; // buffers to place (non-empty)
  for (size_t i = 0; i < n; ++i) {
    size[i] = alignUp(buffers[i].bytes, alignment);
    if (size[i] > 0) {
      placed.push_back(i);
      starts.push_back(buffers[i].begin);
    }
  }
  if (placed.empty())
    return plan;
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  // Lifetimes as ranges of begin points: [lo, hi].
  std::vector<int> lo(n, 0), hi(n, 0);
  for (size_t i : placed) {
    lo[i] = static_cast<int>(
        std::lower_bound(starts.begin(), starts.end(), buffers[i].begin) -
        starts.begin());
    hi[i] = static_cast<int>(
        std::upper_bound(starts.begin(), starts.end(), buffers[i].end) -
        starts.begin() - 1);
  }

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
  case PlacementOrder::Breadth: {
    // Live bytes at each begin point (breadth only grows at begins, so the
    // most crowded step of any lifetime is one of them).
    std::vector<int64_t> breadth(starts.size() + 1, 0);
    for (size_t i : placed) {
      breadth[lo[i]] += size[i];
      breadth[hi[i] + 1] -= size[i];
    }
    for (size_t p = 1; p < breadth.size(); ++p)
      breadth[p] += breadth[p - 1];
    breadth.pop_back();
    SparseMax rmq(breadth);
    std::vector<int> peak(n, 0);
    for (size_t i : placed)
      peak[i] = rmq.argmax(lo[i], hi[i]);
    std::sort(placed.begin(), placed.end(), [&](size_t a, size_t b) {
      if (peak[a] != peak[b]) {
        if (breadth[peak[a]] != breadth[peak[b]])
          return breadth[peak[a]] > breadth[peak[b]];
        return peak[a] < peak[b];
      }
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

  Occupancy occupancy(starts.size());
  for (size_t i : placed) {
    int64_t offset = occupancy.find(lo[i], hi[i], size[i], fit);
    occupancy.place(offset, size[i]);
    plan.offsets[i] = offset;
    plan.arenaBytes = std::max(plan.arenaBytes, offset + size[i]);
  }
  return plan;
}

MemoryPlan planMemory(const std::vector<Buffer> &buffers, int64_t alignment,
                      std::vector<MemoryPlan> *candidates) {
  static const PlacementOrder kOrders[] = {
      PlacementOrder::Size, PlacementOrder::Breadth, PlacementOrder::Area,
      PlacementOrder::Lifetime};
  static const FitPolicy kFits[] = {FitPolicy::BestFit, FitPolicy::FirstFit};
  MemoryPlan best;
  bool found = false;
  std::string firstError;
  if (candidates)
    candidates->clear();
  for (PlacementOrder order : kOrders) {
    for (FitPolicy fit : kFits) {
      MemoryPlan plan = assignOffsets(buffers, order, fit, alignment);
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
      if (found && best.arenaBytes == best.lowerBoundBytes)
        return best; // optimal; nothing can beat it
    }
  }
  if (!found)
    throw std::logic_error("memory plan: no assignment verifies: " +
                           firstError);
  return best;
}

} // namespace remat::plan
