//===- MemoryPlanTest.cpp - Arena offset assignment and its verifier -------===//
//
// Hand cases with exact offsets; the verifier against an O(n^2) reference
// and against deliberately corrupted plans; property tests over thousands of
// random lifetime sets (every plan verifies, arena >= lower bound, the
// distribution of arena / lower bound is printed); a synthetic training
// step whose arena must be within 2% of the lower bound; 100k buffers timed.
//
//===----------------------------------------------------------------------===//

#include "remat/Planning/MemoryPlan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

using namespace remat::plan;

namespace {

/// O(n^2) reference: whether any two live-together buffers overlap, or a
/// buffer is misaligned or outside the arena.
bool bruteForceValid(const std::vector<Buffer> &buffers, const MemoryPlan &plan,
                     int64_t alignment) {
  if (plan.offsets.size() != buffers.size())
    return false;
  size_t n = buffers.size();
  for (size_t i = 0; i < n; ++i) {
    int64_t si = alignUp(buffers[i].bytes, alignment);
    if (plan.offsets[i] < 0 || plan.offsets[i] % alignment)
      return false;
    if (si > 0 && plan.offsets[i] + si > plan.arenaBytes)
      return false;
    for (size_t j = i + 1; j < n; ++j) {
      int64_t sj = alignUp(buffers[j].bytes, alignment);
      if (si == 0 || sj == 0)
        continue;
      bool timeOverlap = buffers[i].begin <= buffers[j].end &&
                         buffers[j].begin <= buffers[i].end;
      bool spaceOverlap = plan.offsets[i] < plan.offsets[j] + sj &&
                          plan.offsets[j] < plan.offsets[i] + si;
      if (timeOverlap && spaceOverlap)
        return false;
    }
  }
  return true;
}

/// O(n * steps) reference lower bound.
int64_t bruteForceLowerBound(const std::vector<Buffer> &buffers,
                             int64_t alignment) {
  if (buffers.empty())
    return 0;
  int lo = buffers[0].begin, hi = buffers[0].end;
  for (const Buffer &b : buffers) {
    lo = std::min(lo, b.begin);
    hi = std::max(hi, b.end);
  }
  int64_t peak = 0;
  for (int t = lo; t <= hi; ++t) {
    int64_t live = 0;
    for (const Buffer &b : buffers)
      if (b.begin <= t && t <= b.end)
        live += alignUp(b.bytes, alignment);
    peak = std::max(peak, live);
  }
  return peak;
}

std::vector<std::pair<PlacementOrder, FitPolicy>> allAlgorithms() {
  std::vector<std::pair<PlacementOrder, FitPolicy>> all;
  for (PlacementOrder o :
       {PlacementOrder::Size, PlacementOrder::Breadth,
        PlacementOrder::BreadthLongest, PlacementOrder::BreadthLatestEnd,
        PlacementOrder::Area, PlacementOrder::Lifetime})
    for (FitPolicy f : {FitPolicy::BestFit, FitPolicy::FirstFit})
      all.emplace_back(o, f);
  return all;
}

Buffer buf(int64_t bytes, int begin, int end, std::string name = "") {
  return Buffer{bytes, begin, end, std::move(name)};
}

double seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       since)
      .count();
}

#ifdef REMAT_SANITIZED // the build's REMAT_SANITIZE option
constexpr bool kInstrumented = true;
#else
constexpr bool kInstrumented = false;
#endif

/// The scale tests' wall-clock limits guard against a pathological
/// slowdown (the figures themselves are printed, not asserted). An
/// AddressSanitizer build on two busy cores runs several times slower: the
/// 100k-buffer planMemory took 31.2 s there against its 30 s limit.
double wallClockLimit(double seconds) {
  return kInstrumented ? 4 * seconds : seconds;
}

/// Sizes log-uniform from 1 byte to `maxBytes`.
int64_t randomBytes(std::mt19937_64 &rng, int64_t maxBytes) {
  std::uniform_real_distribution<double> u(0.0, std::log((double)maxBytes));
  return std::max<int64_t>(1, (int64_t)std::exp(u(rng)));
}

/// A random lifetime set: a mix of one-step temporaries, short and long
/// lifetimes over `steps` steps.
std::vector<Buffer> randomBuffers(std::mt19937_64 &rng, int n, int steps,
                                  int64_t maxBytes) {
  std::vector<Buffer> buffers;
  std::uniform_int_distribution<int> start(0, steps - 1);
  std::uniform_int_distribution<int> kind(0, 9);
  for (int i = 0; i < n; ++i) {
    int b = start(rng), len;
    int k = kind(rng);
    if (k < 3)
      len = 1; // temporary
    else if (k < 7)
      len = 1 + (int)(rng() % 4);
    else
      len = 1 + (int)(rng() % std::max(1, steps - b));
    int e = std::min(steps - 1, b + len - 1);
    buffers.push_back(buf(randomBytes(rng, maxBytes), b, e,
                          "r" + std::to_string(i)));
  }
  return buffers;
}

/// A training step: `layers` blocks of ops run forward, then backward in
/// reverse, then the optimizer. Forward outputs that backward needs stay
/// live until the backward of their op; the others die at the next op.
/// Backward produces input gradients (read by the next backward op),
/// weight gradients (live until the optimizer) and workspace temporaries.
std::vector<Buffer> trainingStep(int layers, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int64_t batch = 8, seq = 512, hidden = 768, heads = 12;
  const int64_t act = batch * seq * hidden * 4;       // 12 MiB
  const int64_t scores = batch * heads * seq * seq * 4; // 96 MiB
  struct Op {
    const char *name;
    int64_t out;    // output bytes
    bool saved;     // read again by backward
    int64_t weight; // weight-gradient bytes (0: none)
    int64_t work;   // workspace temporary bytes (0: none)
  };
  const std::vector<Op> block = {
      {"ln1", act, true, hidden * 8, 0},
      {"qkv", 3 * act, true, 3 * hidden * hidden * 4, 1 << 20},
      {"scores", scores, false, 0, 0},
      {"softmax", scores, true, 0, 0},
      {"dropout", scores, true, 0, 0},
      {"attn", act, true, 0, 4 << 20},
      {"proj", act, true, hidden * hidden * 4, 1 << 20},
      {"resid1", act, false, 0, 0},
      {"ln2", act, true, hidden * 8, 0},
      {"fc1", 4 * act, true, 4 * hidden * hidden * 4, 2 << 20},
      {"gelu", 4 * act, true, 0, 0},
      {"fc2", act, true, 4 * hidden * hidden * 4, 1 << 20},
      {"resid2", act, false, 0, 0},
  };
  std::vector<Buffer> buffers;
  struct Fwd {
    size_t buffer;
    int64_t out;
    const Op *op;
    std::string name;
  };
  std::vector<Fwd> forward;
  int t = 0;
  for (int l = 0; l < layers; ++l) {
    for (const Op &op : block) {
      std::string name = "L" + std::to_string(l) + "." + op.name;
      // Some ops vary a little in size (e.g. padding), to avoid a lattice.
      int64_t out = op.out + (int64_t)(rng() % 4096);
      if (op.work)
        buffers.push_back(buf(op.work, t, t, name + ".work"));
      buffers.push_back(buf(out, t, op.saved ? -1 : t + 1, name));
      forward.push_back({buffers.size() - 1, out, &op, name});
      ++t;
    }
  }
  // Loss.
  buffers.push_back(buf(batch * seq * 50257 * 4, t, t + 1, "logits"));
  ++t;
  buffers.push_back(buf(256, t, t + 1, "loss"));
  ++t;
  std::vector<size_t> weightGrads;
  for (size_t k = forward.size(); k-- > 0;) {
    const Fwd &f = forward[k];
    // The incoming output gradient (made at the previous backward step)
    // is read here; this op's saved output is freed here.
    if (buffers[f.buffer].end < 0)
      buffers[f.buffer].end = t;
    if (f.op->work)
      buffers.push_back(buf(2 * f.op->work, t, t, f.name + ".dwork"));
    if (f.op->weight) {
      buffers.push_back(buf(f.op->weight, t, -1, f.name + ".dW"));
      weightGrads.push_back(buffers.size() - 1);
    }
    int64_t inBytes = k > 0 ? forward[k - 1].out : act;
    buffers.push_back(buf(inBytes, t, t + 1, f.name + ".dX"));
    ++t;
  }
  // Optimizer: one step per weight gradient, with a small temporary.
  for (size_t g : weightGrads) {
    buffers[g].end = t;
    buffers.push_back(buf(buffers[g].bytes, t, t, buffers[g].name + ".upd"));
    ++t;
  }
  return buffers;
}

} // namespace

//===----------------------------------------------------------------------===//
// Hand cases.
//===----------------------------------------------------------------------===//

TEST(MemoryPlan, AlignUp) {
  EXPECT_EQ(alignUp(0, 256), 0);
  EXPECT_EQ(alignUp(1, 256), 256);
  EXPECT_EQ(alignUp(256, 256), 256);
  EXPECT_EQ(alignUp(257, 256), 512);
  EXPECT_THROW(alignUp(1, 0), std::invalid_argument);
}

TEST(MemoryPlan, Empty) {
  MemoryPlan plan = planMemory({});
  EXPECT_EQ(plan.arenaBytes, 0);
  EXPECT_EQ(plan.lowerBoundBytes, 0);
  EXPECT_TRUE(plan.offsets.empty());
  std::string error;
  EXPECT_TRUE(verifyPlan({}, plan, error)) << error;
}

TEST(MemoryPlan, SingleBufferIsAligned) {
  std::vector<Buffer> b = {buf(100, 3, 3, "t")};
  MemoryPlan plan = planMemory(b);
  EXPECT_EQ(plan.offsets, std::vector<int64_t>({0}));
  EXPECT_EQ(plan.arenaBytes, 256);
  EXPECT_EQ(plan.lowerBoundBytes, 256);
}

TEST(MemoryPlan, ZeroByteBuffersConflictWithNothing) {
  std::vector<Buffer> b = {buf(0, 0, 5, "z"), buf(1000, 0, 5, "a")};
  MemoryPlan plan = planMemory(b);
  EXPECT_EQ(plan.offsets, std::vector<int64_t>({0, 0}));
  EXPECT_EQ(plan.arenaBytes, 1024);
  std::string error;
  EXPECT_TRUE(verifyPlan(b, plan, error)) << error;
}

TEST(MemoryPlan, DisjointLifetimesShareMemory) {
  // [0,1] and [2,3] never coexist; [0,1] and [1,2] do (both live at 1).
  std::vector<Buffer> b = {buf(1000, 0, 1, "a"), buf(1000, 2, 3, "b")};
  MemoryPlan plan = planMemory(b);
  EXPECT_EQ(plan.offsets, std::vector<int64_t>({0, 0}));
  EXPECT_EQ(plan.arenaBytes, 1024);

  std::vector<Buffer> c = {buf(1000, 0, 1, "a"), buf(1000, 1, 2, "b")};
  plan = planMemory(c);
  EXPECT_EQ(plan.arenaBytes, 2048);
  EXPECT_EQ(plan.lowerBoundBytes, 2048);
  EXPECT_NE(plan.offsets[0], plan.offsets[1]);
}

TEST(MemoryPlan, GreedyBySizeExactOffsets) {
  // a (4 units) first at 0; b (2 units, live with a) above it; c (2 units,
  // live with b only) in the gap a leaves below b.
  std::vector<Buffer> b = {buf(1024, 0, 2, "a"), buf(512, 1, 3, "b"),
                           buf(300, 3, 4, "c")};
  MemoryPlan plan =
      assignOffsets(b, PlacementOrder::Size, FitPolicy::BestFit);
  EXPECT_EQ(plan.offsets, std::vector<int64_t>({0, 1024, 0}));
  EXPECT_EQ(plan.arenaBytes, 1536);
  EXPECT_EQ(plan.lowerBoundBytes, 1536);
  EXPECT_EQ(plan.algorithm, "greedy-size/best-fit");
}

TEST(MemoryPlan, BestFitAndFirstFitDiffer) {
  // Alignment 1 so that sizes fix the order exactly. At step 1, `t` sees
  // two gaps: [0, 200) (a is dead) and [300, 350) (e is dead). Best fit takes
  // the tight one, first fit the low one.
  std::vector<Buffer> b = {buf(200, 0, 0, "a"), buf(100, 0, 1, "b"),
                           buf(50, 0, 0, "e"), buf(40, 0, 1, "d"),
                           buf(30, 1, 1, "t")};
  MemoryPlan best =
      assignOffsets(b, PlacementOrder::Size, FitPolicy::BestFit, 1);
  MemoryPlan first =
      assignOffsets(b, PlacementOrder::Size, FitPolicy::FirstFit, 1);
  EXPECT_EQ(best.offsets, std::vector<int64_t>({0, 200, 300, 350, 300}));
  EXPECT_EQ(first.offsets, std::vector<int64_t>({0, 200, 300, 350, 0}));
  EXPECT_EQ(best.arenaBytes, 390);
  EXPECT_EQ(first.arenaBytes, 390);
  EXPECT_EQ(best.lowerBoundBytes, 390);
  std::string error;
  EXPECT_TRUE(verifyPlan(b, best, 1, error)) << error;
  EXPECT_TRUE(verifyPlan(b, first, 1, error)) << error;
}

TEST(MemoryPlan, BestOfBeatsGreedyBySize) {
  // Largest first puts the 768-byte a and c at 0 (they never coexist), then
  // d and b (both live with one of them) stack above: 1792 bytes. Placing
  // by size x lifetime first packs to the lower bound, 1280.
  std::vector<Buffer> b = {buf(768, 1, 1, "a"), buf(512, 2, 4, "b"),
                           buf(768, 3, 4, "c"), buf(512, 0, 2, "d")};
  MemoryPlan size =
      assignOffsets(b, PlacementOrder::Size, FitPolicy::BestFit);
  EXPECT_EQ(size.offsets, std::vector<int64_t>({0, 1280, 0, 768}));
  EXPECT_EQ(size.arenaBytes, 1792);
  MemoryPlan area =
      assignOffsets(b, PlacementOrder::Area, FitPolicy::BestFit);
  EXPECT_EQ(area.offsets, std::vector<int64_t>({512, 768, 0, 0}));
  EXPECT_EQ(area.arenaBytes, 1280);

  std::vector<MemoryPlan> all;
  MemoryPlan plan = planMemory(b, kDefaultAlignment, &all);
  ASSERT_FALSE(all.empty());
  for (const MemoryPlan &p : all)
    EXPECT_GE(p.arenaBytes, plan.arenaBytes) << p.algorithm;
  EXPECT_EQ(plan.lowerBoundBytes, 1280);
  EXPECT_EQ(plan.arenaBytes, 1280) << describePlan(plan);
  // Greedy by breadth, latest-ending first, also packs to the bound and
  // is tried before area.
  EXPECT_EQ(plan.algorithm, "greedy-breadth-latest-end/best-fit");
}

TEST(MemoryPlan, LowerBoundCountsTemporariesAndAlignment) {
  std::vector<Buffer> b = {buf(1, 0, 0, "t0"), buf(257, 0, 2, "x"),
                           buf(10, 2, 2, "t2"), buf(10, 3, 3, "t3")};
  // Step 0: 256 + 512; step 2: 512 + 256; step 3: 256.
  EXPECT_EQ(lowerBound(b), 768);
  EXPECT_EQ(lowerBound(b, 1), 267);
  EXPECT_THROW(lowerBound({buf(1, 3, 2)}), std::invalid_argument);
  EXPECT_THROW(lowerBound({buf(-1, 0, 0)}), std::invalid_argument);
}

TEST(MemoryPlan, DescribeAndPersistent) {
  MemoryPlan plan;
  plan.arenaBytes = 1 << 20;
  plan.lowerBoundBytes = (1 << 20) - (1 << 14);
  plan.algorithm = "greedy-size/best-fit";
  EXPECT_EQ(describePlan(plan),
            "arena 1.00 MiB, lower bound 1008.00 KiB, gap 16.00 KiB "
            "(1.59%), fragmentation 1.56%, by greedy-size/best-fit");
  int64_t region = 0;
  std::vector<int64_t> offsets = layoutPersistent({10, 256, 0, 300}, region);
  EXPECT_EQ(offsets, std::vector<int64_t>({0, 256, 512, 512}));
  EXPECT_EQ(region, 1024);
}

//===----------------------------------------------------------------------===//
// The verifier.
//===----------------------------------------------------------------------===//

TEST(MemoryPlanVerifier, CatchesOverlapAndNamesBoth) {
  std::vector<Buffer> b = {buf(1000, 0, 3, "act"), buf(600, 3, 5, "grad")};
  MemoryPlan plan;
  plan.offsets = {0, 768};
  plan.arenaBytes = 2048;
  std::string error;
  EXPECT_FALSE(verifyPlan(b, plan, error));
  EXPECT_NE(error.find("'act'"), std::string::npos) << error;
  EXPECT_NE(error.find("'grad'"), std::string::npos) << error;
  EXPECT_NE(error.find("steps [0, 3]"), std::string::npos) << error;
  EXPECT_NE(error.find("bytes [768, 1536)"), std::string::npos) << error;
  EXPECT_NE(error.find("step 3"), std::string::npos) << error;
  // Moved up to 1024 it is fine; with disjoint lifetimes 0 is fine too.
  plan.offsets = {0, 1024};
  EXPECT_TRUE(verifyPlan(b, plan, error)) << error;
  b[1].begin = 4;
  plan.offsets = {0, 0};
  EXPECT_TRUE(verifyPlan(b, plan, error)) << error;
}

TEST(MemoryPlanVerifier, CatchesMisalignment) {
  std::vector<Buffer> b = {buf(100, 0, 1, "a"), buf(100, 0, 1, "b")};
  MemoryPlan plan;
  plan.offsets = {0, 384};
  plan.arenaBytes = 1024;
  std::string error;
  EXPECT_FALSE(verifyPlan(b, plan, error));
  EXPECT_NE(error.find("'b'"), std::string::npos) << error;
  EXPECT_NE(error.find("multiple of 256"), std::string::npos) << error;
  EXPECT_TRUE(verifyPlan(b, plan, 128, error)) << error;
  plan.offsets = {0, -256};
  EXPECT_FALSE(verifyPlan(b, plan, error));
}

TEST(MemoryPlanVerifier, CatchesOutOfArena) {
  std::vector<Buffer> b = {buf(100, 0, 1, "a"), buf(300, 0, 1, "b")};
  MemoryPlan plan;
  plan.offsets = {0, 256};
  plan.arenaBytes = 512; // b needs [256, 768)
  std::string error;
  EXPECT_FALSE(verifyPlan(b, plan, error));
  EXPECT_NE(error.find("'b'"), std::string::npos) << error;
  EXPECT_NE(error.find("outside the arena of 512"), std::string::npos)
      << error;
  plan.arenaBytes = 768;
  EXPECT_TRUE(verifyPlan(b, plan, error)) << error;
}

TEST(MemoryPlanVerifier, CatchesWrongOffsetCount) {
  std::vector<Buffer> b = {buf(100, 0, 1, "a")};
  MemoryPlan plan;
  plan.arenaBytes = 256;
  std::string error;
  EXPECT_FALSE(verifyPlan(b, plan, error));
  EXPECT_NE(error.find("0 offsets for 1 buffers"), std::string::npos);
}

TEST(MemoryPlanVerifier, AgreesWithBruteForceOnRandomPlans) {
  // Random offsets (mostly invalid, some valid) on random lifetimes.
  std::mt19937_64 rng(7);
  int agreeValid = 0, agreeInvalid = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    int n = 1 + (int)(rng() % 12);
    std::vector<Buffer> b = randomBuffers(rng, n, 10, 2000);
    MemoryPlan plan;
    int slots = 1 + (int)(rng() % 24);
    for (int i = 0; i < n; ++i)
      plan.offsets.push_back((int64_t)(rng() % slots) * 256);
    plan.arenaBytes = (int64_t)(slots + 8) * 256;
    std::string error;
    bool fast = verifyPlan(b, plan, error);
    bool slow = bruteForceValid(b, plan, 256);
    ASSERT_EQ(fast, slow) << "trial " << trial << ": " << error;
    ASSERT_EQ(fast, error.empty());
    (fast ? agreeValid : agreeInvalid)++;
  }
  std::printf("verifier vs brute force: %d valid, %d invalid plans agree\n",
              agreeValid, agreeInvalid);
  EXPECT_GT(agreeValid, 100);
  EXPECT_GT(agreeInvalid, 100);
}

TEST(MemoryPlanVerifier, CatchesCorruptedPlans) {
  // Take valid plans and break one buffer: the verifier must notice and
  // name that buffer (every other pair is still fine).
  std::mt19937_64 rng(11);
  int caught = 0;
  for (int trial = 0; trial < 1000; ++trial) {
    std::vector<Buffer> b = randomBuffers(rng, 50, 40, 1 << 20);
    MemoryPlan plan = planMemory(b);
    size_t i = rng() % b.size();
    int mode = trial % 3;
    MemoryPlan bad = plan;
    if (mode == 0) {
      // Overlap: move i onto a buffer live with it.
      std::vector<size_t> partners;
      for (size_t j = 0; j < b.size(); ++j)
        if (j != i && b[j].begin <= b[i].end && b[i].begin <= b[j].end)
          partners.push_back(j);
      if (partners.empty())
        continue;
      size_t j = partners[rng() % partners.size()];
      bad.offsets[i] = plan.offsets[j];
    } else if (mode == 1) {
      bad.offsets[i] += 8 * (1 + (int64_t)(rng() % 31)); // misaligned
    } else {
      bad.arenaBytes = plan.offsets[i] + alignUp(b[i].bytes, 256) - 256;
      // Shrinking the arena may also cut other buffers; name the first.
      for (size_t j = 0; j < b.size(); ++j)
        if (bad.offsets[j] + alignUp(b[j].bytes, 256) > bad.arenaBytes) {
          i = j;
          break;
        }
    }
    std::string error;
    ASSERT_FALSE(verifyPlan(b, bad, error)) << "trial " << trial;
    EXPECT_FALSE(bruteForceValid(b, bad, 256));
    EXPECT_NE(error.find("'" + b[i].name + "'"), std::string::npos)
        << "mode " << mode << ": " << error;
    ++caught;
  }
  std::printf("corrupted plans caught: %d\n", caught);
  EXPECT_GT(caught, 900);
}

//===----------------------------------------------------------------------===//
// Properties over random lifetimes.
//===----------------------------------------------------------------------===//

TEST(MemoryPlanProperty, RandomLifetimesVerifyAndStayNearTheBound) {
  std::mt19937_64 rng(2024);
  const int trials = 3000;
  auto algorithms = allAlgorithms();
  std::vector<double> sumRatio(algorithms.size(), 0),
      maxRatio(algorithms.size(), 0);
  std::vector<int> wins(algorithms.size(), 0);
  std::vector<double> bestRatios;
  for (int trial = 0; trial < trials; ++trial) {
    int n = 1 + (int)(rng() % 200);
    int steps = 1 + (int)(rng() % 300);
    int64_t maxBytes = int64_t(1) << (1 + rng() % 24); // 2 B .. 16 MiB
    std::vector<Buffer> b = randomBuffers(rng, n, steps, maxBytes);
    int64_t lb = lowerBound(b);
    ASSERT_EQ(lb, bruteForceLowerBound(b, 256));

    std::vector<MemoryPlan> plans;
    int64_t bestArena = INT64_MAX;
    std::string error;
    for (size_t a = 0; a < algorithms.size(); ++a) {
      MemoryPlan plan =
          assignOffsets(b, algorithms[a].first, algorithms[a].second);
      ASSERT_TRUE(verifyPlan(b, plan, error))
          << plan.algorithm << ": " << error;
      if (n <= 60) {
        ASSERT_TRUE(bruteForceValid(b, plan, 256)) << plan.algorithm;
      }
      ASSERT_EQ(plan.lowerBoundBytes, lb);
      ASSERT_GE(plan.arenaBytes, lb);
      bestArena = std::min(bestArena, plan.arenaBytes);
      plans.push_back(std::move(plan));
    }
    for (size_t a = 0; a < algorithms.size(); ++a) {
      sumRatio[a] += plans[a].ratio();
      maxRatio[a] = std::max(maxRatio[a], plans[a].ratio());
      if (plans[a].arenaBytes == bestArena)
        ++wins[a];
    }
    // planMemory is at least as good as the best of them (its local
    // search may do better).
    if (trial % 4 == 0) {
      MemoryPlan best = planMemory(b);
      ASSERT_LE(best.arenaBytes, bestArena);
      ASSERT_GE(best.arenaBytes, lb);
      ASSERT_TRUE(verifyPlan(b, best, error)) << error;
    }
    bestRatios.push_back((double)bestArena / (double)std::max<int64_t>(lb, 1));
  }
  std::sort(bestRatios.begin(), bestRatios.end());
  double mean = 0;
  for (double r : bestRatios)
    mean += r;
  mean /= bestRatios.size();
  int optimal = (int)std::count(bestRatios.begin(), bestRatios.end(), 1.0);
  std::printf("random lifetimes, %d sets: best-of arena / lower bound: mean "
              "%.4f, median %.4f, p90 %.4f, p99 %.4f, max %.4f; %d at the "
              "bound\n",
              trials, mean, bestRatios[trials / 2],
              bestRatios[trials * 9 / 10], bestRatios[trials * 99 / 100],
              bestRatios.back(), optimal);
  for (size_t a = 0; a < algorithms.size(); ++a)
    std::printf("  %-26s mean %.4f max %.4f, best in %d\n",
                algorithmName(algorithms[a].first, algorithms[a].second)
                    .c_str(),
                sumRatio[a] / trials, maxRatio[a], wins[a]);
  // Loose guards (random interval graphs can be hard); the numbers above
  // are the real report.
  EXPECT_LT(mean, 1.05);
  EXPECT_LT(bestRatios.back(), 1.5);
}

//===----------------------------------------------------------------------===//
// Realistic profiles and scale.
//===----------------------------------------------------------------------===//

TEST(MemoryPlanRealistic, TrainingStepWithinTwoPercent) {
  for (int layers : {2, 12, 24}) {
    std::vector<Buffer> b = trainingStep(layers, 100 + layers);
    std::vector<MemoryPlan> candidates;
    MemoryPlan plan = planMemory(b, kDefaultAlignment, &candidates);
    std::string error;
    ASSERT_TRUE(verifyPlan(b, plan, error)) << error;
    std::printf("training step, %d layers, %zu buffers: %s\n", layers,
                b.size(), describePlan(plan).c_str());
    for (const MemoryPlan &c : candidates)
      std::printf("    %-26s ratio %.4f\n", c.algorithm.c_str(), c.ratio());
    EXPECT_LE(plan.ratio(), 1.02) << describePlan(plan);
  }
}

TEST(MemoryPlanScale, HundredThousandBuffers) {
  // 100k random lifetimes over 50k steps: most short, some up to 500 steps,
  // sizes from 1 byte to 64 MiB (a few hundred buffers live at a time).
  std::mt19937_64 rng(99);
  std::vector<Buffer> b;
  for (int i = 0; i < 100000; ++i) {
    int begin = (int)(rng() % 50000);
    int len = rng() % 10 == 0 ? 1 + (int)(rng() % 500) : 1 + (int)(rng() % 8);
    b.push_back(buf(randomBytes(rng, 64 << 20), begin,
                    std::min(49999, begin + len - 1), "r" + std::to_string(i)));
  }
  auto start = std::chrono::steady_clock::now();
  std::vector<MemoryPlan> candidates;
  MemoryPlan plan = planMemory(b, kDefaultAlignment, &candidates);
  double all = seconds(start);
  start = std::chrono::steady_clock::now();
  std::string error;
  ASSERT_TRUE(verifyPlan(b, plan, error)) << error;
  double verify = seconds(start);
  start = std::chrono::steady_clock::now();
  MemoryPlan single =
      assignOffsets(b, PlacementOrder::Size, FitPolicy::BestFit);
  double one = seconds(start);
  std::printf("100k random buffers: planMemory (%zu plans + verify) %.3f s, "
              "greedy-size/best-fit alone %.3f s, verify %.3f s; %s\n",
              candidates.size(), all, one, verify,
              describePlan(plan).c_str());
  EXPECT_EQ(single.arenaBytes, candidates.front().arenaBytes);
  EXPECT_GE(plan.arenaBytes, plan.lowerBoundBytes);
  EXPECT_LE(plan.ratio(), 1.10) << describePlan(plan);
  EXPECT_LT(all, wallClockLimit(30.0)); // generous: shared machines
}

TEST(MemoryPlanScale, HundredThousandBufferTrainingStep) {
  // 2100 blocks, ~100k buffers; every saved activation of every layer is
  // live at the turn from forward to backward (~23k at once).
  std::vector<Buffer> b = trainingStep(2100, 5);
  ASSERT_GT(b.size(), 100000u);
  auto start = std::chrono::steady_clock::now();
  std::vector<MemoryPlan> candidates;
  MemoryPlan plan = planMemory(b, kDefaultAlignment, &candidates);
  double all = seconds(start);
  start = std::chrono::steady_clock::now();
  std::string error;
  ASSERT_TRUE(verifyPlan(b, plan, error)) << error;
  double verify = seconds(start);
  std::printf("training step, %zu buffers: planMemory (%zu plans) %.3f s, "
              "verify %.3f s; %s\n",
              b.size(), candidates.size(), all, verify,
              describePlan(plan).c_str());
  EXPECT_LE(plan.ratio(), 1.02) << describePlan(plan);
  EXPECT_LT(all, wallClockLimit(60.0));
}
