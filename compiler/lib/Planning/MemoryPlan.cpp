//===- MemoryPlan.cpp - Lower bound, verifier and reports ------------------===//
//
// The parts of memory planning that do not depend on how offsets were
// chosen: the live-bytes lower bound, the plan verifier, reports, and the
// persistent region. The assignment algorithms are in OffsetAssignment.cpp.
//
//===----------------------------------------------------------------------===//

#include "remat/Planning/MemoryPlan.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <queue>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace remat::plan {

double MemoryPlan::ratio() const {
  if (lowerBoundBytes <= 0)
    return arenaBytes <= 0 ? 1.0 : static_cast<double>(arenaBytes);
  return static_cast<double>(arenaBytes) / static_cast<double>(lowerBoundBytes);
}

double MemoryPlan::fragmentation() const {
  if (arenaBytes <= 0)
    return 0;
  return static_cast<double>(arenaBytes - lowerBoundBytes) /
         static_cast<double>(arenaBytes);
}

int64_t alignUp(int64_t bytes, int64_t alignment) {
  if (alignment <= 0)
    throw std::invalid_argument("memory plan: alignment must be positive");
  return (bytes + alignment - 1) / alignment * alignment;
}

int64_t lowerBound(const std::vector<Buffer> &buffers, int64_t alignment) {
  // (time, delta): +size at begin, -size at end + 1.
  std::vector<std::pair<int64_t, int64_t>> events;
  events.reserve(2 * buffers.size());
  for (const Buffer &b : buffers) {
    if (b.bytes < 0 || b.end < b.begin)
      throw std::invalid_argument("memory plan: buffer '" + b.name +
                                  "' has negative size or end < begin");
    int64_t size = alignUp(b.bytes, alignment);
    if (size == 0)
      continue;
    events.emplace_back(b.begin, size);
    events.emplace_back(static_cast<int64_t>(b.end) + 1, -size);
  }
  std::sort(events.begin(), events.end());
  int64_t live = 0, peak = 0;
  for (size_t i = 0; i < events.size();) {
    int64_t t = events[i].first;
    for (; i < events.size() && events[i].first == t; ++i)
      live += events[i].second;
    peak = std::max(peak, live);
  }
  return peak;
}

namespace {

std::string describeBuffer(const std::vector<Buffer> &buffers, size_t i,
                           int64_t offset, int64_t size) {
  std::ostringstream os;
  os << "buffer #" << i;
  if (!buffers[i].name.empty())
    os << " '" << buffers[i].name << "'";
  os << " (steps [" << buffers[i].begin << ", " << buffers[i].end
     << "], bytes [" << offset << ", " << offset + size << "))";
  return os.str();
}

} // namespace

std::optional<std::pair<size_t, size_t>>
findOverlap(const std::vector<Buffer> &buffers,
            const std::vector<int64_t> &offsets, int64_t alignment) {
  const size_t n = std::min(buffers.size(), offsets.size());
  std::vector<int64_t> size(n);
  std::vector<size_t> order;
  order.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    size[i] = alignUp(std::max<int64_t>(0, buffers[i].bytes), alignment);
    if (size[i] > 0)
      order.push_back(i);
  }
  // Every pair of intersecting lifetimes has a member that starts while the
  // other is live, so checking each buffer, as it starts, against the live
  // ones suffices; the live ones are pairwise disjoint (checked as they
  // started), so only the neighbours by offset need looking at.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return buffers[a].begin < buffers[b].begin;
  });
  using Ending = std::pair<int, size_t>; // (end, index)
  std::priority_queue<Ending, std::vector<Ending>, std::greater<Ending>> live;
  std::map<int64_t, size_t> byOffset; // offset -> index, live buffers only
  for (size_t i : order) {
    while (!live.empty() && live.top().first < buffers[i].begin) {
      byOffset.erase(offsets[live.top().second]);
      live.pop();
    }
    int64_t off = offsets[i];
    auto next = byOffset.lower_bound(off);
    if (next != byOffset.end() && next->first < off + size[i])
      return std::make_pair(i, next->second);
    if (next != byOffset.begin()) {
      auto prev = std::prev(next);
      if (prev->first + size[prev->second] > off)
        return std::make_pair(i, prev->second);
    }
    byOffset.emplace(off, i);
    live.emplace(buffers[i].end, i);
  }
  return std::nullopt;
}

bool verifyPlan(const std::vector<Buffer> &buffers, const MemoryPlan &plan,
                int64_t alignment, std::string &error) {
  error.clear();
  if (alignment <= 0) {
    error = "alignment must be positive";
    return false;
  }
  if (plan.offsets.size() != buffers.size()) {
    error = "plan has " + std::to_string(plan.offsets.size()) +
            " offsets for " + std::to_string(buffers.size()) + " buffers";
    return false;
  }
  const size_t n = buffers.size();
  std::vector<int64_t> size(n);
  for (size_t i = 0; i < n; ++i) {
    const Buffer &b = buffers[i];
    int64_t off = plan.offsets[i];
    if (b.bytes < 0 || b.end < b.begin) {
      error = describeBuffer(buffers, i, off, 0) +
              " has negative size or ends before it begins";
      return false;
    }
    size[i] = alignUp(b.bytes, alignment);
    if (off < 0 || off % alignment != 0) {
      error = describeBuffer(buffers, i, off, size[i]) +
              " is not at a non-negative multiple of " +
              std::to_string(alignment) + " bytes";
      return false;
    }
    if (size[i] > 0 && off + size[i] > plan.arenaBytes) {
      error = describeBuffer(buffers, i, off, size[i]) +
              " lies outside the arena of " +
              std::to_string(plan.arenaBytes) + " bytes";
      return false;
    }
  }

  if (std::optional<std::pair<size_t, size_t>> hit =
          findOverlap(buffers, plan.offsets, alignment)) {
    auto [later, earlier] = *hit;
    int step = std::max(buffers[later].begin, buffers[earlier].begin);
    error = describeBuffer(buffers, earlier, plan.offsets[earlier],
                           size[earlier]) +
            " and " +
            describeBuffer(buffers, later, plan.offsets[later], size[later]) +
            " are both live at step " + std::to_string(step) +
            " and overlap in the arena";
    return false;
  }
  return true;
}

namespace {

std::string formatBytes(int64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while ((v >= 1024 || v <= -1024) && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[64];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  else
    std::snprintf(buf, sizeof buf, "%.2f %s", v, units[u]);
  return buf;
}

} // namespace

std::string describePlan(const MemoryPlan &plan) {
  char pct[64];
  double gapPct = plan.lowerBoundBytes > 0
                      ? 100.0 * static_cast<double>(plan.gapBytes()) /
                            static_cast<double>(plan.lowerBoundBytes)
                      : 0.0;
  std::snprintf(pct, sizeof pct, " (%.2f%%), fragmentation %.2f%%", gapPct,
                100.0 * plan.fragmentation());
  return "arena " + formatBytes(plan.arenaBytes) + ", lower bound " +
         formatBytes(plan.lowerBoundBytes) + ", gap " +
         formatBytes(plan.gapBytes()) + pct + ", by " + plan.algorithm;
}

std::vector<int64_t> layoutPersistent(const std::vector<int64_t> &bytes,
                                      int64_t &regionBytes,
                                      int64_t alignment) {
  std::vector<int64_t> offsets;
  offsets.reserve(bytes.size());
  int64_t top = 0;
  for (int64_t b : bytes) {
    if (b < 0)
      throw std::invalid_argument("memory plan: negative persistent size");
    offsets.push_back(top);
    top += alignUp(b, alignment);
  }
  regionBytes = top;
  return offsets;
}

} // namespace remat::plan
