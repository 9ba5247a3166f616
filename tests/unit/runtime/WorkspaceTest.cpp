//===- WorkspaceTest.cpp - Kernels take scratch from the set workspace ----===//

#include "TestUtil.h"

#include "remat/runtime/Kernels.h"
#include "remat/runtime/KernelScratch.h"
#include "remat/runtime/Workspace.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>

using namespace remat::rt;

namespace {

/// Sets a fixed workspace of `bytes` for one test, then restores growth.
class FixedWorkspace {
public:
  explicit FixedWorkspace(size_t bytes)
      : data_(static_cast<char *>(std::aligned_alloc(
                  kScratchAlignment, bytes ? (bytes + 63) / 64 * 64 : 64)),
              &std::free) {
    setWorkspace(data_.get(), bytes);
  }
  ~FixedWorkspace() {
    setWorkspace(nullptr, 0);
    useGrowableWorkspace();
  }

private:
  std::unique_ptr<char, decltype(&std::free)> data_;
};

struct ConvCase {
  Tensor x{DType::F32, {2, 3, 6, 6}}, w{DType::F32, {4, 3, 3, 3}};
  Tensor y{DType::F32, {2, 4, 6, 6}};
  WindowParams params{{3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}};
  size_t scratch() const {
    return convScratchBytes(x.view(), w.view(), y.view(), params, 1);
  }
  void run() const {
    conv(x.view(), w.view(), TensorView(), y.view(), params, 1);
  }
};

} // namespace

TEST(Workspace, ConvRunsInExactlyItsDeclaredScratch) {
  ConvCase c;
  // im2col columns of one image: 3 * 9 taps x 36 outputs of float.
  EXPECT_EQ(c.scratch(), scratchPiece<float>(27 * 36));
  FixedWorkspace workspace(c.scratch());
  EXPECT_NO_THROW(c.run());
}

TEST(Workspace, TooSmallWorkspaceNamesKernelAndBytes) {
  ConvCase c;
  const size_t need = c.scratch();
  FixedWorkspace workspace(need - 64);
  try {
    c.run();
    FAIL() << "conv ran in a workspace smaller than it needs";
  } catch (const RuntimeError &e) {
    EXPECT_EQ(std::string(e.what()),
              "conv: needs " + std::to_string(need) +
                  " bytes of workspace scratch, but the workspace has " +
                  std::to_string(need - 64) +
                  " (the plan's workspace is too small)");
  }
}

TEST(Workspace, NoWorkspaceIsAnErrorNotAHeapFallback) {
  Tensor x(DType::F32, {4, 5}), y(DType::F32, {4});
  FixedWorkspace workspace(0);
  EXPECT_THROW(reduce(ReduceOp::Sum, x.view(), y.view(), {1}), RuntimeError);
}

TEST(Workspace, PointwiseConvNeedsNone) {
  Tensor x(DType::F32, {1, 2, 3, 3}), w(DType::F32, {2, 2, 1, 1});
  Tensor y(DType::F32, {1, 2, 3, 3});
  WindowParams params{{1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}};
  EXPECT_EQ(convScratchBytes(x.view(), w.view(), y.view(), params, 1), 0u);
  FixedWorkspace workspace(0);
  EXPECT_NO_THROW(
      conv(x.view(), w.view(), TensorView(), y.view(), params, 1));
}
