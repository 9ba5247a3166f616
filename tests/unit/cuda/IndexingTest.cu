//===- IndexingTest.cu - The kernels' index math, checked on the host -----===//
//
// Indexer::offsets (runtime/cuda/Indexing.cuh) is compiled for the host too,
// so its 32-bit and 64-bit paths run here without a GPU: both against
// offsets walked out dim by dim in 64 bits, and chooseIndexWidth at the
// edges of 32 bits.
//
//===----------------------------------------------------------------------===//

#include "Indexing.cuh"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

using namespace remat::rt;
using namespace remat::rt::cuda::detail;

namespace {

/// Offsets of every row-major position of ix's shape for operand k, by an
/// odometer over the multi-index (the reference).
std::vector<int64_t> walkedOffsets(const Indexer<2> &ix, int k) {
  int64_t positions = 1;
  for (int d = 0; d < ix.rank; ++d)
    positions *= ix.shape[d];
  std::vector<int64_t> index(ix.rank, 0), out;
  int64_t offset = 0;
  for (int64_t p = 0; p < positions; ++p) {
    out.push_back(offset);
    for (int d = ix.rank - 1; d >= 0; --d) {
      offset += ix.strides[k][d];
      if (++index[d] < ix.shape[d])
        break;
      offset -= ix.strides[k][d] * ix.shape[d];
      index[d] = 0;
    }
  }
  return out;
}

TEST(Indexer, BothWidthsMatchTheWalkedOffsets) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    Indexer<2> ix;
    ix.rank = 1 + static_cast<int>(rng() % cuda::detail::kMaxRank);
    int64_t positions = 1;
    for (int d = 0; d < ix.rank; ++d) {
      ix.shape[d] = 1 + static_cast<int64_t>(rng() % (positions < 512 ? 5 : 2));
      positions *= ix.shape[d];
      for (int k = 0; k < 2; ++k) {
        // Broadcast (0), contiguous-like, and negative (a reversed slice).
        const int64_t choices[] = {0, 1, 3, 17, -5, 1000};
        ix.strides[k][d] = choices[rng() % 6];
      }
    }
    ix.chooseIndexWidth();
    ASSERT_TRUE(ix.narrow) << "trial " << trial;
    const std::vector<int64_t> want0 = walkedOffsets(ix, 0);
    const std::vector<int64_t> want1 = walkedOffsets(ix, 1);
    for (int64_t p = 0; p < positions; ++p) {
      int64_t narrow[2], wide[2];
      ix.offsets(p, narrow);
      Indexer<2> wideIx = ix;
      wideIx.narrow = false;
      wideIx.offsets(p, wide);
      ASSERT_EQ(narrow[0], want0[p]) << "trial " << trial << " position " << p;
      ASSERT_EQ(narrow[1], want1[p]) << "trial " << trial << " position " << p;
      ASSERT_EQ(wide[0], want0[p]) << "trial " << trial << " position " << p;
      ASSERT_EQ(wide[1], want1[p]) << "trial " << trial << " position " << p;
    }
  }
}

TEST(Indexer, NarrowUpToTheLastPositionAndOffsetThat32BitsHold) {
  constexpr int64_t kMax = INT32_MAX;
  Indexer<1> ix;
  ix.rank = 2;
  // 2^31 - 1 positions (a prime: one dim of it), contiguous.
  ix.shape[0] = 1;
  ix.shape[1] = kMax;
  ix.strides[0][0] = kMax;
  ix.strides[0][1] = 1;
  ix.chooseIndexWidth();
  EXPECT_TRUE(ix.narrow);
  EXPECT_EQ(ix.offset(kMax - 1), kMax - 1);
  // One position more is 2^31.
  ix.shape[0] = 2;
  ix.shape[1] = int64_t(1) << 30;
  ix.strides[0][0] = int64_t(1) << 30;
  ix.chooseIndexWidth();
  EXPECT_FALSE(ix.narrow);
  EXPECT_EQ(ix.offset((int64_t(1) << 31) - 1), (int64_t(1) << 31) - 1);
  // Few positions, but offsets past 32 bits: a 2^31-element stride.
  ix.shape[0] = 2;
  ix.shape[1] = 3;
  ix.strides[0][0] = int64_t(1) << 31;
  ix.strides[0][1] = 1;
  ix.chooseIndexWidth();
  EXPECT_FALSE(ix.narrow);
  EXPECT_EQ(ix.offset(5), (int64_t(1) << 31) + 2);
  // The largest offset exactly 2^31 - 1, reached through both dims, and
  // with negative strides the most negative partial sum too.
  ix.strides[0][0] = kMax - 2;
  ix.chooseIndexWidth();
  EXPECT_TRUE(ix.narrow);
  EXPECT_EQ(ix.offset(5), kMax);
  ix.strides[0][0] = -(kMax - 2);
  ix.strides[0][1] = -1;
  ix.chooseIndexWidth();
  EXPECT_TRUE(ix.narrow);
  EXPECT_EQ(ix.offset(5), -kMax);
  ix.strides[0][0] = -(kMax - 1);
  ix.chooseIndexWidth();
  EXPECT_FALSE(ix.narrow);
  EXPECT_EQ(ix.offset(5), -kMax - 1);
}

TEST(Indexer, MakeIndexerChoosesTheWidth) {
  // A broadcast add's operands: [64, 1, 32] and [1, 128, 32] into
  // [64, 128, 32].
  const Shape out{64, 128, 32};
  Indexer<2> ix = makeIndexer<2>(out,
                                 {broadcastStrides(Shape{64, 1, 32}, out, "t"),
                                  broadcastStrides(Shape{1, 128, 32}, out, "t")},
                                 "t");
  EXPECT_TRUE(ix.narrow);
  int64_t off[2];
  ix.offsets(((5 * 128) + 7) * 32 + 9, off);
  EXPECT_EQ(off[0], 5 * 32 + 9);
  EXPECT_EQ(off[1], 7 * 32 + 9);
  // 2^32 positions (a fill-like broadcast of one element): 64-bit.
  const Shape big{1 << 16, 1 << 16};
  Indexer<1> wide = makeIndexer1(big, broadcastStrides(Shape{1, 1}, big, "t"),
                                 "t");
  EXPECT_FALSE(wide.narrow);
}

} // namespace
