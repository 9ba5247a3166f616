//===- Workspace.cpp - The CPU kernels' scratch region --------------------===//

#include "Scratch.h"

#include "remat/runtime/Tensor.h"

#include <cstdlib>
#include <memory>
#include <string>

namespace remat::rt {
namespace {

// One region per process: kernels run on the caller's thread, one at a time.
struct Region {
  char *data = nullptr;
  size_t bytes = 0;
  bool growable = true; // until setWorkspace
  bool reserved = false; // a Scratch holds it
  std::unique_ptr<char, decltype(&std::free)> owned{nullptr, &std::free};
};

Region &region() {
  static Region r;
  return r;
}

void grow(Region &r, size_t bytes) {
  const size_t rounded =
      (bytes + kScratchAlignment - 1) / kScratchAlignment * kScratchAlignment;
  char *data = static_cast<char *>(std::aligned_alloc(kScratchAlignment, rounded));
  if (!data)
    throw RuntimeError("workspace: cannot allocate " + std::to_string(bytes) +
                       " bytes");
  r.owned.reset(data);
  r.data = data;
  r.bytes = rounded;
}

} // namespace

void setWorkspace(void *data, size_t bytes) {
  Region &r = region();
  r.owned.reset();
  r.data = static_cast<char *>(data);
  r.bytes = data ? bytes : 0;
  r.growable = false;
}

void useGrowableWorkspace() { region().growable = true; }

namespace cpu {

Scratch::Scratch(const char *kernel, size_t bytes) : kernel_(kernel), bytes_(bytes) {
  Region &r = region();
  if (r.reserved)
    throw RuntimeError(std::string(kernel) +
                       ": scratch requested while another kernel holds it");
  if (bytes > r.bytes) {
    if (!r.growable)
      throw RuntimeError(std::string(kernel) + ": needs " +
                         std::to_string(bytes) +
                         " bytes of workspace scratch, but the workspace has " +
                         std::to_string(r.bytes) +
                         " (the plan's workspace is too small)");
    grow(r, bytes);
  }
  base_ = r.data;
  r.reserved = true;
}

Scratch::~Scratch() { region().reserved = false; }

void *Scratch::takeBytes(size_t bytes) {
  if (used_ + bytes > bytes_)
    throw RuntimeError(std::string(kernel_) + ": takes more scratch (" +
                       std::to_string(used_ + bytes) +
                       " bytes) than it declared (" + std::to_string(bytes_) +
                       ")");
  void *p = base_ + used_;
  used_ += bytes;
  return p;
}

} // namespace cpu
} // namespace remat::rt
