//===- MemorySnapshot.cpp - The plan as a PyTorch memory snapshot ---------===//
//
// The pickle that torch.cuda.memory._snapshot() writes and
// pytorch.org/memory_viz reads: `segments` (the device memory at the end of
// the step, each with its blocks) and `device_traces` (the step's
// allocations and frees in order). remat's memory is three static segments:
// persistent state and the workspace, allocated before the step, and the
// arena, whose buffers are the trace's allocations at their planned
// offsets. Each block and trace entry carries its category, and a frame
// naming the node that writes it (memory_viz shows frames as stacks).
//
//===----------------------------------------------------------------------===//

#include "remat/Target/PlanViews.h"

#include "PickleWriter.h"

namespace remat {

namespace {

/// Device addresses of the three segments, as a CUDA allocator would hand
/// them out (the base is arbitrary; memory_viz only compares addresses).
struct SegmentLayout {
  static constexpr int64_t kBase = int64_t(0x7f00) << 32;
  int64_t persistent = kBase, workspace = 0, arena = 0;
  explicit SegmentLayout(const PlanTimeline &t) {
    workspace = persistent + t.persistentBytes;
    arena = workspace + t.workspaceBytes;
  }
};

class SnapshotWriter {
public:
  SnapshotWriter(const PlanTimeline &timeline, llvm::raw_ostream &os)
      : timeline(timeline), layout(timeline), pickle(os) {}

  void write() {
    pickle.dict([&] {
      pickle.value("segments");
      pickle.list([&] {
        segment(layout.persistent, timeline.persistentBytes, "persistent",
                "parameters, buffers and optimizer state", true);
        segment(layout.workspace, timeline.workspaceBytes, "workspace",
                "kernel scratch and library workspace", true);
        segment(layout.arena, timeline.arenaBytes, "arena",
                "the planned arena (free between steps)", false);
      });
      pickle.value("device_traces");
      pickle.list([&] { pickle.list([&] { trace(); }); });
      pickle.value("allocator_settings");
      pickle.dict([&] { pickle.entry("generator", "remat-opt --emit=memory-snapshot"); });
    });
    pickle.finish();
  }

private:
  void frames(llvm::StringRef node, int64_t line, llvm::StringRef category) {
    pickle.list([&] {
      pickle.dict([&] {
        pickle.entry("filename", node);
        pickle.entry("line", line);
        pickle.entry("name", category);
      });
    });
  }

  /// One segment holding one block: active (persistent, workspace) or free.
  void segment(int64_t address, int64_t bytes, llvm::StringRef category,
               llvm::StringRef what, bool active) {
    if (bytes <= 0)
      return;
    pickle.dict([&] {
      pickle.entry("device", 0);
      pickle.entry("address", address);
      pickle.entry("total_size", bytes);
      pickle.entry("allocated_size", active ? bytes : int64_t(0));
      pickle.entry("active_size", active ? bytes : int64_t(0));
      pickle.entry("requested_size", active ? bytes : int64_t(0));
      pickle.entry("stream", 0);
      pickle.entry("segment_type", "large");
      pickle.entry("category", category);
      pickle.value("blocks");
      pickle.list([&] {
        pickle.dict([&] {
          pickle.entry("address", address);
          pickle.entry("size", bytes);
          pickle.entry("requested_size", active ? bytes : int64_t(0));
          pickle.entry("state", active ? "active_allocated" : "inactive");
          pickle.entry("category", category);
          pickle.value("frames");
          frames(what, 0, category);
        });
      });
    });
  }

  void event(llvm::StringRef action, const TimelineBuffer &b, double seconds) {
    pickle.dict([&] {
      pickle.entry("action", action);
      pickle.entry("addr", layout.arena + b.offset);
      pickle.entry("size", b.bytes);
      pickle.entry("stream", 0);
      pickle.entry("time_us", static_cast<int64_t>(seconds * 1e6));
      pickle.entry("category", categoryName(b.category));
      pickle.value("frames");
      frames(b.name, b.begin, categoryName(b.category));
    });
  }

  /// Allocations at the step that writes a buffer, frees after its last
  /// read; inputs are allocated first and everything is freed at the end.
  void trace() {
    const int steps = static_cast<int>(timeline.ops.size());
    std::vector<std::vector<const TimelineBuffer *>> allocated(steps + 1),
        freed(steps + 1);
    for (const TimelineBuffer &b : timeline.buffers) {
      if (b.offset < 0)
        continue; // not in the arena (a view or an unused result)
      allocated[std::min(b.begin + 1, steps)].push_back(&b);
      freed[std::min(b.end + 1, steps)].push_back(&b);
    }
    for (int index = 0; index <= steps; ++index) {
      const double at = index == 0 ? 0.0
                        : index - 1 < steps
                            ? timeline.ops[index - 1].startSeconds
                            : timeline.stepSeconds;
      for (const TimelineBuffer *b : allocated[index])
        event("alloc", *b, at);
      for (const TimelineBuffer *b : freed[index]) {
        const double end = index == 0 ? 0.0
                                      : timeline.ops[index - 1].startSeconds +
                                            timeline.ops[index - 1].seconds;
        event("free_requested", *b, end);
        event("free_completed", *b, end);
      }
    }
  }

  const PlanTimeline &timeline;
  SegmentLayout layout;
  PickleWriter pickle;
};

} // namespace

void writeMemorySnapshot(const PlanTimeline &timeline,
                         const PlanReport &report, llvm::raw_ostream &os) {
  SnapshotWriter(timeline, os).write();
}

} // namespace remat
