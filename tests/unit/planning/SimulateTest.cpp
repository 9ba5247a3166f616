//===- SimulateTest.cpp - simulate() and the checkpoint builder -----------===//

#include "SyntheticGraphs.h"

#include "remat/Planning/Strategies.h"

#include <gtest/gtest.h>

using namespace remat::plan;
using namespace remat::plan::testing;

namespace {

Node node(const char *name, int64_t bytes, std::vector<int> inputs,
          double seconds = 1, bool recomputable = true) {
  Node n;
  n.name = name;
  n.outputBytes = bytes;
  n.inputs = std::move(inputs);
  n.seconds = seconds;
  n.recomputable = recomputable;
  return n;
}

RematPlan run(const RematProblem &p, std::vector<int> seq) {
  RematPlan plan;
  plan.sequence = std::move(seq);
  std::string error;
  EXPECT_TRUE(simulate(p, plan, error)) << error;
  return plan;
}

// a(10) -> b(50) -> c(5) -> d(5) = f(c, a); fixed 100.
RematProblem skipProblem() {
  RematProblem p;
  p.nodes = {node("a", 10, {}), node("b", 50, {0}), node("c", 5, {1}),
             node("d", 5, {2, 0})};
  p.graphOutputs = {3};
  p.fixedBytes = 100;
  return p;
}

} // namespace

TEST(Simulate, PeakByHand) {
  RematProblem p = skipProblem();
  // a lives to d: step 2 holds a, b, c = 65.
  RematPlan plan = run(p, {0, 1, 2, 3});
  EXPECT_EQ(plan.peakBytes, 165);
  EXPECT_DOUBLE_EQ(plan.seconds, 4);
  // Recomputing a before d: a's first instance dies after b reads it, so
  // step 1 (a, b = 60) is the peak; step 2 holds b, c = 55; step 3 c, a;
  // step 4 c, a, d = 20.
  plan = run(p, {0, 1, 2, 0, 3});
  EXPECT_EQ(plan.peakBytes, 160);
  EXPECT_DOUBLE_EQ(plan.seconds, 5);
}

TEST(Simulate, OutputsStayLiveAndUnreadValuesDieAtOnce) {
  RematProblem p;
  // x(8); y(100) = f(x) read by nobody; z(3) = g(x); outputs x, z.
  p.nodes = {node("x", 8, {}), node("y", 100, {0}), node("z", 3, {0}),
             node("w", 40, {2})};
  p.graphOutputs = {0, 2};
  // step1: x, y = 108; y dies at once; step2: x, z = 11; step3: x, z, w.
  RematPlan plan = run(p, {0, 1, 2, 3});
  EXPECT_EQ(plan.peakBytes, 108);
  // Dropping y: peak x + z + w = 51.
  plan = run(p, {0, 2, 3});
  EXPECT_EQ(plan.peakBytes, 51);
  // Recomputing x later: the first x dies after z reads it, the second is
  // the output that stays live: step 2 = z(3) + w(40) = 43 (x freed),
  // step 3 = z + x = 11.
  plan = run(p, {0, 2, 3, 0});
  EXPECT_EQ(plan.peakBytes, 43);
  EXPECT_DOUBLE_EQ(plan.seconds, 4);
}

TEST(Simulate, EachResultDiesAfterItsOwnLastRead) {
  // a has two results: 10 bytes read by b, 2 bytes read by c.
  RematProblem p;
  p.nodes = {node("a", 12, {}), node("b", 5, {0}), node("c", 1, {0})};
  p.nodes[0].resultBytes = {10, 2};
  p.nodes[1].reads = {{0, 0}};
  p.nodes[2].reads = {{0, 1}};
  p.graphOutputs = {2};
  // Step 1 holds a's results and b (17); at step 2 a's first result is
  // gone: its second, and c (3).
  RematPlan plan = run(p, {0, 1, 2});
  EXPECT_EQ(plan.peakBytes, 17);
  // Read whole, a lives to c: step 2 holds 12 + 1.
  p.nodes[2].reads = {};
  p.nodes[1].outputBytes = 0;
  EXPECT_EQ(run(p, {0, 1, 2}).peakBytes, 13);
  // A result index out of range is an error.
  p.nodes[2].reads = {{0, 2}};
  RematPlan bad;
  bad.sequence = {0, 1, 2};
  std::string error;
  EXPECT_FALSE(simulate(p, bad, error));
  EXPECT_NE(error.find("reads result 2 of 'a', which has 2"), std::string::npos)
      << error;
}

TEST(Simulate, DuplicateInputsCountOnce) {
  RematProblem p;
  p.nodes = {node("x", 10, {}), node("sq", 10, {0, 0})};
  p.graphOutputs = {1};
  EXPECT_EQ(run(p, {0, 1}).peakBytes, 20);
}

// a(30); b(30) = f(a), which may write over a; c(10) = g(b); d(5) = h(a, c)
// when `aReadLater`. Fixed 0.
RematProblem inPlaceProblem(bool aReadLater) {
  RematProblem p;
  p.nodes = {node("a", 30, {}), node("b", 30, {0}), node("c", 10, {1})};
  p.nodes[1].inPlaceInputs = {{0, 0}};
  p.nodes[1].inPlaceBytes = 30;
  if (aReadLater)
    p.nodes.push_back(node("d", 5, {0, 2}));
  p.graphOutputs = {static_cast<int>(p.nodes.size()) - 1};
  return p;
}

TEST(Simulate, InPlaceOutputTakesOverADyingInput) {
  // Step 1: a dies at b, which takes its bytes: 30 (60 without sharing);
  // step 2: b, c = 40.
  EXPECT_EQ(run(inPlaceProblem(false), {0, 1, 2}).peakBytes, 40);
  // a read after b: no sharing, step 1 holds a and b.
  EXPECT_EQ(run(inPlaceProblem(true), {0, 1, 2, 3}).peakBytes, 70);
  // With a recomputed for d, the instance b reads dies at b: step 1 = 30;
  // step 2: b, c = 40; step 3: c, a = 40; step 4: c, a, d = 45.
  EXPECT_EQ(run(inPlaceProblem(true), {0, 1, 2, 0, 3}).peakBytes, 45);
}

TEST(Simulate, InPlaceNeedsTheInputToDie) {
  // a is a graph output: it lives to the end, so b cannot write over it.
  RematProblem p = inPlaceProblem(false);
  p.graphOutputs = {0, 2};
  EXPECT_EQ(run(p, {0, 1, 2}).peakBytes, 70);
  // Two in-place inputs dying at once: one write, 30 bytes saved once.
  RematProblem q;
  q.nodes = {node("x", 30, {}), node("y", 30, {}), node("s", 30, {0, 1})};
  q.nodes[2].inPlaceInputs = {{0, 0}, {1, 0}};
  q.nodes[2].inPlaceBytes = 30;
  q.graphOutputs = {2};
  EXPECT_EQ(run(q, {0, 1, 2}).peakBytes, 60);
}

// x(50); bn = f(x) with an output (100) and statistics (2); r(100) reads
// bn's output; g(10) reads bn's statistics and r.
RematProblem batchNormProblem() {
  RematProblem p;
  p.nodes = {node("x", 50, {}), node("bn", 102, {0}), node("r", 100, {1}),
             node("g", 10, {1, 2})};
  p.nodes[1].resultBytes = {100, 2};
  p.nodes[2].reads = {{1, 0}};
  p.nodes[3].reads = {{1, 1}};
  p.graphOutputs = {3};
  return p;
}

TEST(Simulate, ResultsOfOneNodeLiveApart) {
  // Step 1: x, bn (102) = 152; step 2: bn, r = 202; step 3: bn's statistics
  // only (its output died at r), r, g = 112.
  RematProblem p = batchNormProblem();
  EXPECT_EQ(run(p, {0, 1, 2, 3}).peakBytes, 202);
  // Read whole (no entry in reads), bn's output lives to step 3: 212.
  p.nodes[3].reads.clear();
  EXPECT_EQ(run(p, {0, 1, 2, 3}).peakBytes, 212);
  // r written over bn's output, which dies there: step 2 holds 102.
  p = batchNormProblem();
  p.nodes[2].inPlaceInputs = {{1, 0}};
  p.nodes[2].inPlaceBytes = 100;
  EXPECT_EQ(run(p, {0, 1, 2, 3}).peakBytes, 152);
  // Not over the statistics (were r to read them), which g reads later.
  p.nodes[2].reads = {{1, 0}, {1, 1}};
  p.nodes[2].inPlaceInputs = {{1, 1}};
  EXPECT_EQ(run(p, {0, 1, 2, 3}).peakBytes, 202);
  // Nor over a result it does not read.
  p.nodes[2].reads = {{1, 0}};
  RematPlan bad;
  bad.sequence = {0, 1, 2, 3};
  std::string why;
  EXPECT_FALSE(simulate(p, bad, why));
  EXPECT_NE(why.find("node 'r' may write over result 1 of 'bn', which it "
                     "does not read"),
            std::string::npos)
      << why;
  p.nodes[2].inPlaceInputs.clear();
  // A read of a result the input does not have is an error.
  p.nodes[3].reads = {{1, 2}};
  RematPlan plan;
  plan.sequence = {0, 1, 2, 3};
  std::string error;
  EXPECT_FALSE(simulate(p, plan, error));
  EXPECT_NE(error.find("node 'g' reads result 2 of 'bn', which has 2 results"),
            std::string::npos)
      << error;
}

TEST(Simulate, BatchInputsDieAfterTheirLastRead) {
  // A batch input x (5 bytes, among the fixed bytes) read by a (40); a ->
  // b -> c, backward gc(c, b) and ga(gc, a). Live bytes by hand:
  //   no recomputation: x+a 45, a+b 50, a+b+c 60, a+b+c+gc 70, a+gc+ga 60;
  //   a recomputed for ga: 45, x+a+b 55, x+b+c 25, x+b+c+gc 35, x+gc+a 55,
  //   gc+a+ga 60 (x lives until a's second run reads it).
  RematProblem p;
  p.nodes = {node("a", 40, {}), node("b", 10, {0}), node("c", 10, {1}),
             node("gc", 10, {2, 1}, 1, false),
             node("ga", 10, {3, 0}, 1, false)};
  p.graphOutputs = {4};
  p.fixedBytes = 5;
  p.partTimeFixedBytes = {{5, /*lastReader=*/0, /*readers=*/{0}}};
  EXPECT_EQ(run(p, {0, 1, 2, 3, 4}).peakBytes, 70);
  EXPECT_EQ(run(p, {0, 1, 2, 3, 0, 4}).peakBytes, 60);
  // Without readers (an input the step returns): live throughout.
  p.partTimeFixedBytes[0].readers.clear();
  EXPECT_EQ(run(p, {0, 1, 2, 3, 4}).peakBytes, 75);
  EXPECT_EQ(run(p, {0, 1, 2, 3, 0, 4}).peakBytes, 65);
}

TEST(Simulate, RejectsAnInPlaceInputThatIsNotAnInput) {
  RematProblem p = inPlaceProblem(false);
  p.nodes[2].inPlaceInputs = {{0, 0}};
  p.nodes[2].inPlaceBytes = 10;
  RematPlan plan;
  plan.sequence = {0, 1, 2};
  std::string error;
  EXPECT_FALSE(simulate(p, plan, error));
  EXPECT_NE(error.find("node 'c' may write over result 0 of 'a', which it "
                       "does not read"),
            std::string::npos)
      << error;
}

TEST(Simulate, RejectsInvalidSequences) {
  RematProblem p = skipProblem();
  std::string error;
  RematPlan plan;
  plan.sequence = {0, 2, 1, 3};
  EXPECT_FALSE(simulate(p, plan, error));
  EXPECT_NE(error.find("'c' runs before its input 'b'"), std::string::npos)
      << error;
  plan.sequence = {0, 1, 2};
  EXPECT_FALSE(simulate(p, plan, error));
  EXPECT_NE(error.find("graph output 'd' is never computed"),
            std::string::npos)
      << error;
  plan.sequence = {0, 7};
  EXPECT_FALSE(simulate(p, plan, error));
}

TEST(Builder, HandBuiltCheckpointPlan) {
  // Chain input -> f1 -> f2 -> f3 -> loss, backward g3, g2, g1.
  RematProblem p = makeTraining(chainOps(3));
  // Nodes: 0 input, 1..3 f, 4 loss, 5 dloss, 6 g3, 7 g2, 8 g1.
  std::vector<bool> keep(p.nodes.size(), false);
  keep[2] = true; // keep f2 only
  RematPlan plan = planFromCheckpoints(p, keep);
  // f1 dies after f2 reads it, f3 after the loss; dloss needs f3
  // (recomputed from the kept f2); g2 needs f1 (recomputed from the input).
  std::vector<int> expected = {0, 1, 2, 3, 4, 3, 5, 6, 1, 7, 8};
  EXPECT_EQ(plan.sequence, expected);
  EXPECT_DOUBLE_EQ(plan.seconds, baseSeconds(p) + 2);
  // Every value is 1 byte. Step 7 (g3) holds the input (read again by the
  // recomputed f1 and by g1), f2, the loss (an output), the recomputed f3,
  // dloss and g3: 6. Step 9 (g2): input, f2, loss, g3, f1, g2: 6.
  EXPECT_EQ(plan.peakBytes, 6);
}

TEST(Builder, EachUseRecomputesForEveryReader) {
  // Chain input -> f1 -> f2 -> f3 -> loss; backward g3 reads f2 and f3, g2
  // reads f1 and f2, g1 the input and f1.
  RematProblem p = makeTraining(chainOps(3));
  // Nodes: 0 input, 1..3 f, 4 loss, 5 dloss, 6 g3, 7 g2, 8 g1.
  std::vector<int> level(p.nodes.size(), 0);
  level[2] = kNotKept;
  // Dropped after f3 reads it, recomputed for g3 and kept for g2.
  std::vector<int> once = {0, 1, 2, 3, 4, 5, 2, 6, 7, 8};
  EXPECT_EQ(planFromLevels(p, level, true).sequence, once);
  // Recomputed for g3, dropped after it, recomputed again for g2.
  level[2] = kEachUse;
  RematPlan each = planFromLevels(p, level, true);
  std::vector<int> twice = {0, 1, 2, 3, 4, 5, 2, 6, 2, 7, 8};
  EXPECT_EQ(each.sequence, twice);
  EXPECT_DOUBLE_EQ(each.seconds, baseSeconds(p) + 2);
}

TEST(Builder, DroppedOutputIsRecomputedWhileItsInputsLive) {
  RematProblem p = makeTraining(chainOps(3));
  std::vector<int> level(p.nodes.size(), 0);
  // The loss (an output) with plain levels stays kept.
  level[4] = kNotKept;
  EXPECT_EQ(planFromLevels(p, level, true).sequence,
            (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
  // Kept through its first backward use (dloss), then dropped, and
  // recomputed right after g3, the last node that reads its input f3.
  level[4] = kKeepFirst;
  RematPlan plan = planFromLevels(p, level, true);
  EXPECT_EQ(plan.sequence, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 4, 7, 8}));
  // The loss is absent while g3 runs: one byte less there than keeping it.
  level[4] = 0;
  RematPlan kept = planFromLevels(p, level, true);
  RematPlan withoutLoss = plan;
  std::string error;
  ASSERT_TRUE(simulate(p, withoutLoss, error)) << error;
  EXPECT_LE(withoutLoss.peakBytes, kept.peakBytes);
}

TEST(Builder, KeepAllIsNone) {
  for (unsigned seed = 0; seed < 200; ++seed) {
    std::mt19937 rng(seed);
    RematProblem p = randomDag(5 + seed % 60, rng);
    std::vector<bool> keep(p.nodes.size(), true);
    RematPlan kept = planFromCheckpoints(p, keep);
    RematPlan none = planNone(p);
    ASSERT_TRUE(kept.note.empty()) << kept.note;
    EXPECT_EQ(kept.sequence, none.sequence) << "seed " << seed;
    EXPECT_EQ(kept.peakBytes, none.peakBytes);
  }
}

TEST(Builder, RandomPlansAreValid) {
  int checked = 0;
  for (unsigned seed = 0; seed < 400; ++seed) {
    std::mt19937 rng(seed);
    RematProblem p = seed % 2 ? randomDag(3 + seed % 80, rng)
                              : makeTraining(diamondOps(1 + seed % 9, rng));
    const int n = static_cast<int>(p.nodes.size());
    std::uniform_int_distribution<int> coin(0, 3);
    for (int trial = 0; trial < 5; ++trial) {
      std::vector<bool> keep(n);
      std::vector<int> level(n);
      for (int v = 0; v < n; ++v) {
        keep[v] = coin(rng) == 0;
        int c = coin(rng);
        level[v] = c == 0 ? 0 : c == 1 ? 1 : c == 2 ? 2 : kNotKept;
      }
      for (const RematPlan &plan :
           {planFromCheckpoints(p, keep), planFromLevels(p, level, false),
            planFromLevels(p, level, true)}) {
        ASSERT_TRUE(plan.note.empty()) << "seed " << seed << ": " << plan.note;
        RematPlan copy;
        copy.sequence = plan.sequence;
        std::string error;
        ASSERT_TRUE(simulate(p, copy, error)) << error;
        EXPECT_EQ(copy.peakBytes, plan.peakBytes);
        // Backward (non-recomputable) nodes run once, everything in order
        // of first occurrence.
        std::vector<int> count(n, 0);
        int nextFirst = 0;
        for (int v : plan.sequence) {
          if (count[v]++ == 0) {
            EXPECT_EQ(v, nextFirst);
            ++nextFirst;
          }
        }
        EXPECT_EQ(nextFirst, n);
        for (int v = 0; v < n; ++v) {
          if (!p.nodes[v].recomputable) {
            EXPECT_EQ(count[v], 1);
          }
        }
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 400 * 5 * 3);
}

TEST(Builder, TwoLevelIsRevolveOnAChain) {
  // Chain of 9 unit ops; x0 = input. Level-0 checkpoint: f3's output is
  // not kept, only the input; level 1: f5. Recomputing for the last
  // backward op keeps f5 and f6..f8; f1..f4 are dropped and recomputed
  // once more when f5's segment is reached.
  RematProblem p = makeTraining(chainOps(9));
  const int n = static_cast<int>(p.nodes.size());
  std::vector<int> level(n, kNotKept);
  level[5] = 1;
  RematPlan twoLevel = planFromLevels(p, level, /*retainAll=*/false);
  RematPlan oneLevel = planFromLevels(p, level, /*retainAll=*/true);
  // One level: everything recomputed once (9 ops). Two levels: f1..f8 for
  // the first backward op (f9 is read by the loss's gradient... the loss
  // reads f9, which is recomputed too), then f1..f4 again.
  EXPECT_DOUBLE_EQ(oneLevel.seconds - baseSeconds(p), 9);
  EXPECT_DOUBLE_EQ(twoLevel.seconds - baseSeconds(p), 13);
  EXPECT_LT(twoLevel.peakBytes, oneLevel.peakBytes);
}
