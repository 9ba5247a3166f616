//===- MemoryPlan.h - Static arena offsets for a fixed schedule -*- C++ -*-===//
//
// Step 7 of the pipeline: once the schedule is final, every tensor it creates
// gets a constant byte offset in one arena. A tensor is a Buffer live over an
// inclusive range of schedule steps; two buffers whose ranges intersect must
// not overlap in the arena. Persistent state (parameters, optimizer state)
// is not planned here: it lives in its own region (layoutPersistent).
//
// The lower bound on any arena is the maximum over steps of the live bytes;
// offset assignment is NP-hard in general (dynamic storage allocation), so
// several greedy orderings and stackings are run, a bounded search tries to
// close what gap is left, and the smallest arena that verifies is kept
// (planMemory). verifyPlan checks a plan independently of how it was
// made, in O(n log n).
//
// Free of MLIR so that it can be tested on synthetic lifetimes.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_PLANNING_MEMORYPLAN_H
#define REMAT_PLANNING_MEMORYPLAN_H

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace remat::plan {

constexpr int64_t kDefaultAlignment = 256;

/// One tensor of the schedule: `bytes` live over steps [begin, end], both
/// inclusive (defined at step `begin`, last read at step `end`). A buffer
/// with begin == end is a temporary of one step. Zero-byte buffers get
/// offset 0 and conflict with nothing.
struct Buffer {
  int64_t bytes = 0;
  int begin = 0;
  int end = 0;
  std::string name;
};

/// Offsets into one arena, one per buffer (same order as the input).
struct MemoryPlan {
  std::vector<int64_t> offsets;
  /// Size of the arena: max over buffers of offset + aligned size.
  int64_t arenaBytes = 0;
  /// Max over steps of the aligned live bytes; no plan can beat it.
  int64_t lowerBoundBytes = 0;
  /// Which assignment produced the offsets ("greedy-size/best-fit").
  std::string algorithm;

  /// arenaBytes - lowerBoundBytes.
  int64_t gapBytes() const { return arenaBytes - lowerBoundBytes; }
  /// arenaBytes / lowerBoundBytes (1 for an empty plan).
  double ratio() const;
  /// Fraction of the arena that is never needed: gap / arena (0 if empty).
  double fragmentation() const;
};

/// `bytes` rounded up to a multiple of `alignment` (> 0).
int64_t alignUp(int64_t bytes, int64_t alignment);

/// Max over steps of the sum of aligned sizes of the buffers live at it.
int64_t lowerBound(const std::vector<Buffer> &buffers,
                   int64_t alignment = kDefaultAlignment);

/// The first clash of a set of offsets: a pair (later, earlier) of buffers
/// whose lifetimes intersect and whose [offset, offset + aligned size)
/// ranges overlap, `later` being one that begins while `earlier` is live;
/// nullopt when there is none. Zero-byte buffers clash with nothing.
/// Expects one offset per buffer. O(n log n): a sweep over time with the
/// live ranges ordered by offset. verifyPlan and the IR-level verifier pass
/// (remat-verify-memory-plan) share it.
std::optional<std::pair<size_t, size_t>>
findOverlap(const std::vector<Buffer> &buffers,
            const std::vector<int64_t> &offsets,
            int64_t alignment = kDefaultAlignment);

/// Checks `plan` against `buffers`: one offset per buffer, every offset
/// non-negative and a multiple of `alignment`, every buffer inside
/// [0, arenaBytes), and no two buffers with intersecting lifetimes
/// overlapping in [offset, offset + aligned size). On failure returns false
/// and names the offending buffer(s), their lifetimes and byte ranges in
/// `error`. O(n log n): a sweep over time with the live ranges ordered by
/// offset.
bool verifyPlan(const std::vector<Buffer> &buffers, const MemoryPlan &plan,
                int64_t alignment, std::string &error);
inline bool verifyPlan(const std::vector<Buffer> &buffers,
                       const MemoryPlan &plan, std::string &error) {
  return verifyPlan(buffers, plan, kDefaultAlignment, error);
}

/// In which order the greedy assignment places buffers.
enum class PlacementOrder {
  /// Largest first (Pisarchyk & Lee 2020, "greedy by size"; XLA's
  /// GlobalDecreasingSizeBestFitHeap).
  Size,
  /// Buffers live at the most crowded step first: steps by decreasing
  /// breadth (live bytes), the buffers of each by decreasing size
  /// (Pisarchyk & Lee 2020, "greedy by breadth").
  Breadth,
  /// Greedy by breadth, but each step's buffers longest-lived first (at the
  /// bottom), so that what dies soon after the step sits on top and frees
  /// contiguous space.
  BreadthLongest,
  /// Greedy by breadth, each step's buffers latest-ending first.
  BreadthLatestEnd,
  /// Longest lifetime first, then largest.
  Lifetime,
  /// Largest size x lifetime first.
  Area,
};

/// Where a buffer goes among the free gaps (free over its whole lifetime).
enum class FitPolicy {
  /// The smallest gap that holds it; above everything if none does.
  BestFit,
  /// The lowest gap that holds it.
  FirstFit,
};

/// "greedy-size/best-fit" and so on.
std::string algorithmName(PlacementOrder order, FitPolicy fit);

/// One greedy assignment: buffers in `order`, each at the gap chosen by
/// `fit` among the address ranges free over its whole lifetime given the
/// buffers already placed. Best fit compares the first few (4) gaps that
/// hold the buffer, stopping early at an exact fit or at the top. Uses a
/// segment tree over time of merged occupied ranges (treaps that skip gaps
/// too small), so no placed buffer is looked at one by one; effort grows
/// with how fragmented the occupied ranges are (100k buffers: about a
/// second). Throws std::invalid_argument on a buffer with negative bytes or
/// end < begin, or a non-positive alignment.
MemoryPlan assignOffsets(const std::vector<Buffer> &buffers,
                         PlacementOrder order, FitPolicy fit,
                         int64_t alignment = kDefaultAlignment);

/// Runs greedy-size/best-fit, then the other orders x fits (size/first-fit,
/// the breadth variants, area, lifetime) within an effort budget of twice
/// what the first took (at least a few million set operations, so small
/// inputs always get all of them; an algorithm that runs out is dropped),
/// forward in time and then reversed, then stacking (each buffer, lowest
/// resting offset first, on the highest placed buffer it is live with:
/// "stack-latest-end", "stack-earliest-start", "stack-area"), and keeps the
/// smallest arena that verifies (ties: the earlier). Stops early at a plan
/// that meets the lower bound. Otherwise, when one pass of it fits a like
/// budget (up to a couple of thousand buffers), a backtracking search for
/// plans in less (after MiniMalloc, Moffitt 2023) bisects between the bound
/// and the best arena (its plan is named "<algorithm>+search"). If
/// `candidates` is given it receives every completed greedy and stacking
/// plan, in order. Throws std::logic_error if no plan verifies (a bug).
MemoryPlan planMemory(const std::vector<Buffer> &buffers,
                      int64_t alignment = kDefaultAlignment,
                      std::vector<MemoryPlan> *candidates = nullptr);

/// One line: "arena 12.50 MiB, lower bound 12.25 MiB, gap 256.00 KiB
/// (2.04%), fragmentation 2.00%, by greedy-size/best-fit".
std::string describePlan(const MemoryPlan &plan);

/// Persistent state laid out back to back, each aligned: offsets into its
/// own region; `regionBytes` receives the region's size.
std::vector<int64_t> layoutPersistent(const std::vector<int64_t> &bytes,
                                      int64_t &regionBytes,
                                      int64_t alignment = kDefaultAlignment);

} // namespace remat::plan

#endif // REMAT_PLANNING_MEMORYPLAN_H
