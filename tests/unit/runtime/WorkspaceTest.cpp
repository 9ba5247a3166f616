//===- WorkspaceTest.cpp - Kernels take scratch from the set workspace ----===//

#include "TestUtil.h"

#include "AllocationCounter.h"

#include "remat/runtime/Kernels.h"
#include "remat/runtime/KernelScratch.h"
#include "remat/runtime/Workspace.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>

using namespace remat::rt;
using namespace remat::rt::test;

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

/// Heap allocations (malloc and friends, as the training executable counts
/// them: runtime/harness/AllocationCounter.h) made while `run` runs.
int64_t allocationsDuring(const std::function<void()> &run) {
  const int64_t before = harness::countedAllocations();
  harness::beginCountingAllocations();
  run();
  harness::endCountingAllocations();
  return harness::countedAllocations() - before;
}

/// Runs `run` in a workspace of exactly `bytes` (after one run in a
/// growable one, which warms up whatever the libraries set up on first
/// use): it must allocate nothing, give the growable run's bytes in
/// `output`, and fail naming `kernel` in a workspace 64 bytes smaller.
void expectRunsInExactly(size_t bytes, const char *kernel,
                         const std::function<void()> &run,
                         const Tensor &output) {
  SCOPED_TRACE(kernel);
  ASSERT_GT(bytes, 0u);
  run();
  std::vector<char> grown(static_cast<const char *>(output.data()),
                          static_cast<const char *>(output.data()) +
                              output.bytes());
  {
    FixedWorkspace workspace(bytes);
    if (harness::allocationCountingAvailable())
      EXPECT_EQ(allocationsDuring(run), 0);
    else
      run();
    EXPECT_EQ(std::memcmp(grown.data(), output.data(), output.bytes()), 0);
  }
  FixedWorkspace workspace(bytes - 64);
  try {
    run();
    ADD_FAILURE() << "ran in a workspace smaller than it declares";
  } catch (const RuntimeError &e) {
    EXPECT_EQ(std::string(e.what()).rfind(std::string(kernel) + ": needs", 0),
              0u)
        << e.what();
  }
}

} // namespace

TEST(Workspace, AllocationCounterSeesThisProcess) {
  if (!harness::allocationCountingAvailable())
    GTEST_SKIP() << "a sanitizer owns the allocator";
  EXPECT_GE(allocationsDuring([] { Tensor t(DType::F32, {4}); }), 1);
}

TEST(Workspace, HalfMatmulScratchIsBoundedPanels) {
  // GPT-2 small's LM head: [8, 1024, 768] x [768, 50257], one tall GEMM.
  auto lmHead = [](DType dt, int64_t batch) {
    return matmulScratchBytes(TensorView(dt, {batch, 1024, 768}, nullptr),
                              TensorView(dt, {768, 50257}, nullptr),
                              TensorView(dt, {batch, 1024, 50257}, nullptr),
                              false, false);
  };
  const size_t bf16 = lmHead(DType::BF16, 8);
  std::printf("bf16 LM head GEMM [8192 x 768] x [768 x 50257]: %zu bytes of "
              "workspace (operands %.0f bytes, result %.0f bytes)\n",
              bf16, 2.0 * (8192.0 * 768 + 768.0 * 50257),
              2.0 * 8192 * 50257);
  // fp32 panels of 512 x 768 (A), 768 x 1024 (B), 512 x 1024 (C).
  EXPECT_EQ(bf16, 4u * (512 * 768 + 768 * 1024 + 512 * 1024));
  EXPECT_EQ(lmHead(DType::F16, 8), bf16);
  EXPECT_EQ(lmHead(DType::BF16, 64), bf16) << "independent of the batch";
  EXPECT_EQ(lmHead(DType::F32, 8), 0u);
  EXPECT_EQ(lmHead(DType::F64, 8), 0u);
}

TEST(Workspace, HalfMatmulRunsInExactlyItsDeclaredScratch) {
  for (DType dt : kHalfTypes) {
    SCOPED_TRACE(dtypeName(dt));
    // Batched with a broadcast b (one GEMM per matrix), and the tall case.
    Tensor a = randomTensor(dt, {3, 40, 24}, 1);
    Tensor b = randomTensor(dt, {1, 24, 36}, 2);
    Tensor shared = randomTensor(dt, {24, 36}, 3);
    Tensor out(dt, {3, 40, 36});
    expectRunsInExactly(
        matmulScratchBytes(a.view(), b.view(), out.view(), false, false),
        "matmul",
        [&] { matmul(a.view(), b.view(), out.view(), false, false); }, out);
    expectRunsInExactly(
        matmulScratchBytes(a.view(), shared.view(), out.view(), false, false),
        "matmul",
        [&] { matmul(a.view(), shared.view(), out.view(), false, false); },
        out);
  }
}

TEST(Workspace, HalfConvRunsInExactlyItsDeclaredScratch) {
  const WindowParams params{{3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}};
  for (DType dt : kHalfTypes) {
    SCOPED_TRACE(dtypeName(dt));
    Tensor x = randomTensor(dt, {2, 4, 6, 6}, 1);
    Tensor w = randomTensor(dt, {6, 2, 3, 3}, 2);
    Tensor bias = randomTensor(dt, {6}, 3);
    Tensor y(dt, {2, 6, 6, 6}), dy = randomTensor(dt, {2, 6, 6, 6}, 4);
    Tensor dx(dt, x.shape()), dw(dt, w.shape());
    expectRunsInExactly(
        convScratchBytes(x.view(), w.view(), y.view(), params, 2), "conv",
        [&] { conv(x.view(), w.view(), bias.view(), y.view(), params, 2); },
        y);
    expectRunsInExactly(
        convBackwardDataScratchBytes(dy.view(), w.view(), dx.view(), params,
                                     2),
        "convBackwardData",
        [&] { convBackwardData(dy.view(), w.view(), dx.view(), params, 2); },
        dx);
    expectRunsInExactly(
        convBackwardFilterScratchBytes(x.view(), dy.view(), dw.view(), params,
                                       2),
        "convBackwardFilter",
        [&] {
          convBackwardFilter(x.view(), dy.view(), dw.view(), params, 2);
        },
        dw);
  }
}

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
