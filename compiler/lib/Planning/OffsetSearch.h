//===- OffsetSearch.h - Search for offsets under a capacity ------*- C++
//-*-===//
//
// Private to lib/Planning. Looks for offsets that fit buffers with fixed
// lifetimes into an arena of a given capacity, by a depth-first search over
// the order in which buffers are stacked, after Moffitt, "MiniMalloc: A
// Lightweight Memory Allocator for Hardware-Accelerated Machine Learning"
// (ASPLOS 2023): each buffer, when its turn comes, rests on the highest
// buffer already placed that it is live with (or at 0). Every plan can be
// pushed down until each buffer rests so, and then stacked in order of
// offset, so some order reaches every plan that fits: the search is
// complete, and cut off by an effort budget.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_LIB_PLANNING_OFFSETSEARCH_H
#define REMAT_LIB_PLANNING_OFFSETSEARCH_H

#include <cstdint>
#include <optional>
#include <vector>

namespace remat::plan::detail {

/// Buffers as the search sees them: sizes (aligned, > 0) and lifetimes as
/// inclusive ranges [lo, hi] of compressed time points, so that two
/// buffers are live together iff their ranges intersect.
struct SearchInstance {
  std::vector<int64_t> size;
  std::vector<int> lo, hi;
  int points = 0; // every lo and hi is in [0, points)
};

/// Which buffer is stacked first among those that would rest at the same
/// offset (the lowest resting offset always goes first).
enum class SearchPriority {
  /// Latest end first, then largest: what is freed last goes lowest, so
  /// that what dies early leaves contiguous space on top.
  End,
  /// Largest size x lifetime first.
  Area,
  /// Earliest start first, then largest.
  Start,
  /// The buffer whose lifetime meets the most bytes live at once first,
  /// then the largest size x lifetime (MiniMalloc's "total" preordering):
  /// the tightest time points are settled before they run out of room.
  Crowded,
};

/// The search's first descent without a capacity: buffers stacked one by
/// one, always the one that would rest lowest (ties by `priority`), each
/// on the highest placed buffer it is live with. O((n + r) log n) with a
/// segment tree over time, r being how often a buffer is found to rest
/// higher than when it was queued (24 n on the Llama-7B shape at its
/// memory floor, 54k buffers: 0.2 s).
std::vector<int64_t> stackOffsets(const SearchInstance &instance,
                                  SearchPriority priority);

/// The backtracking search over one instance. The buffers each buffer is
/// live with are listed once, here, and shared by every find().
class OffsetSearch {
public:
  /// Lists the live-together pairs, giving up past `budget` units of work
  /// (two per pair); find() then finds nothing.
  OffsetSearch(const SearchInstance &instance, uint64_t budget);

  /// Offsets, one per buffer, with every buffer inside [0, capacity) and
  /// no two buffers that are live together overlapping; nullopt when there
  /// are none or the search spent `budget` units of work (about one per
  /// buffer looked at, the listing of pairs included) without finding
  /// them. `work` receives what was spent. Ties in `priority` go by buffer
  /// index when `tieSeed` is 0, else in an order drawn from it: which of
  /// many equal buffers is stacked first decides much, so a few seeds find
  /// plans that index order misses.
  std::optional<std::vector<int64_t>> find(int64_t capacity,
                                           SearchPriority priority,
                                           uint64_t tieSeed, uint64_t budget,
                                           uint64_t &work) const;

private:
  const SearchInstance &instance;
  std::vector<std::vector<size_t>> neighbours;
  uint64_t listingWork = 0;
  bool listed = false; // false: the listing ran out of budget
};

} // namespace remat::plan::detail

#endif // REMAT_LIB_PLANNING_OFFSETSEARCH_H
