//===- OpProfile.cu - Per-kernel time of eager steps on the GPU ----------===//
//
// REMAT_CUDA_PROFILE=1 answers "which kernels does the step spend its time
// in" on a GPU machine without a profiler: every kernel API call marks its
// start with an event on the stream (from context(kernel)), and the time to
// the next mark is charged to that kernel's name. The device then runs
// every step eagerly (no CUDA Graph, which would swallow the marks), and
// the report, written to stderr when the runtime shuts down, averages the
// steps after the first (module loading, cuBLAS heuristics).
//
// Host time between calls counts when the GPU waits for it: tiny kernels
// read high, and the share of launch gaps is what a CUDA Graph removes.
//
//===----------------------------------------------------------------------===//

#include "Common.cuh"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace remat::rt::cuda {
namespace detail {

namespace {

struct Mark {
  cudaEvent_t event;
  const char *kernel;
};

struct Totals {
  double ms = 0;
  int64_t calls = 0;
};

struct Profile {
  bool enabled = std::getenv("REMAT_CUDA_PROFILE") != nullptr &&
                 std::string(std::getenv("REMAT_CUDA_PROFILE")) != "0";
  std::vector<cudaEvent_t> pool; // reused across steps
  std::vector<Mark> marks;       // this step's, in stream order
  std::map<std::string, Totals> totals;
  int64_t steps = 0; // steps collected, the first included
  double stepMs = 0; // the counted steps' total
};

Profile &profile() {
  static Profile p;
  return p;
}

} // namespace

void profileMark(const char *kernel, cudaStream_t stream) {
  Profile &p = profile();
  if (!p.marks.empty() && std::strcmp(p.marks.back().kernel, kernel) == 0)
    return; // a nested call of the same kernel: one interval
  if (p.marks.size() == p.pool.size()) {
    cudaEvent_t event = nullptr;
    if (cudaEventCreate(&event) != cudaSuccess)
      return; // profiling is best effort; the step itself is unaffected
    p.pool.push_back(event);
  }
  cudaEvent_t event = p.pool[p.marks.size()];
  if (cudaEventRecord(event, stream) == cudaSuccess)
    p.marks.push_back({event, kernel});
}

} // namespace detail

bool profiling() { return detail::profile().enabled; }

void profileStepDone(cudaStream_t stream) {
  using namespace detail;
  Profile &p = profile();
  if (!p.enabled)
    return;
  profileMark("(step end)", stream);
  cudaStreamSynchronize(stream);
  if (p.steps++ > 0 && p.marks.size() >= 2) { // the first step is warm-up
    for (size_t i = 0; i + 1 < p.marks.size(); ++i) {
      float ms = 0;
      if (cudaEventElapsedTime(&ms, p.marks[i].event, p.marks[i + 1].event) !=
          cudaSuccess)
        continue;
      Totals &t = p.totals[p.marks[i].kernel];
      t.ms += ms;
      t.calls += 1;
    }
    float step = 0;
    if (cudaEventElapsedTime(&step, p.marks.front().event,
                             p.marks.back().event) == cudaSuccess)
      p.stepMs += step;
  }
  p.marks.clear();
}

void profileReport() {
  using namespace detail;
  Profile &p = profile();
  if (!p.enabled || p.steps < 2)
    return;
  const double counted = static_cast<double>(p.steps - 1);
  std::vector<std::pair<std::string, Totals>> rows(p.totals.begin(),
                                                   p.totals.end());
  std::sort(rows.begin(), rows.end(), [](const auto &a, const auto &b) {
    return a.second.ms > b.second.ms;
  });
  std::fprintf(stderr,
               "remat CUDA profile: %.3f ms per step (mean of %lld eager "
               "steps after the first)\n%-28s %10s %12s %7s\n",
               p.stepMs / counted, static_cast<long long>(counted), "kernel",
               "calls/step", "ms/step", "share");
  for (const auto &[name, t] : rows)
    std::fprintf(stderr, "%-28s %10.1f %12.4f %6.1f%%\n", name.c_str(),
                 t.calls / counted, t.ms / counted,
                 p.stepMs > 0 ? 100.0 * t.ms / p.stepMs : 0.0);
  for (cudaEvent_t event : p.pool)
    cudaEventDestroy(event);
  p.pool.clear();
  p.totals.clear();
}

} // namespace remat::rt::cuda
