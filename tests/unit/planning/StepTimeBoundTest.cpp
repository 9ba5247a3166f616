//===- StepTimeBoundTest.cpp - The proven lower bound on the step time ----===//
//
// The bound must never exceed the time of a plan that fits: checked against
// random plans of every shape the class allows (recomputations anywhere,
// in any order), against every strategy, and against the MILP's proven
// optimum, which it should also come close to.
//
//===----------------------------------------------------------------------===//

#include "SyntheticGraphs.h"

#include "remat/Planning/StepTimeBound.h"
#include "remat/Planning/Strategies.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

using namespace remat::plan;
using namespace remat::plan::testing;

namespace {

/// A random plan in the bound's class: every node once in schedule order,
/// and before each node some recomputations of already computed recomputable
/// nodes: its own inputs (which shortens the earlier instances' lives) or any
/// earlier node, in random order.
RematPlan randomPlan(const RematProblem &p, std::mt19937 &rng,
                     double recomputeInput, double recomputeAny) {
  std::uniform_real_distribution<double> coin(0, 1);
  RematPlan plan;
  for (int t = 0; t < static_cast<int>(p.nodes.size()); ++t) {
    std::vector<int> extra;
    for (int u : p.nodes[t].inputs)
      if (p.nodes[u].recomputable && coin(rng) < recomputeInput)
        extra.push_back(u);
    if (t > 0 && coin(rng) < recomputeAny) {
      int u = std::uniform_int_distribution<int>(0, t - 1)(rng);
      if (p.nodes[u].recomputable)
        extra.push_back(u);
    }
    std::shuffle(extra.begin(), extra.end(), rng);
    for (int u : extra)
      plan.sequence.push_back(u);
    plan.sequence.push_back(t);
  }
  std::string error;
  EXPECT_TRUE(simulate(p, plan, error)) << error;
  return plan;
}

/// A plan from the checkpoint builder with random modes per value.
RematPlan randomLevelsPlan(const RematProblem &p, std::mt19937 &rng) {
  const int modes[] = {0, 1, kNotKept, kTransient, kKeepFirst, kKeepToUse};
  std::vector<int> level(p.nodes.size());
  for (int &l : level)
    l = modes[std::uniform_int_distribution<int>(0, 5)(rng)];
  return planFromLevels(p, level, std::uniform_int_distribution<int>(0, 1)(rng));
}

std::vector<std::pair<std::string, RematProblem>> graphs(unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::pair<std::string, RematProblem>> out;
  out.push_back({"chain12", makeTraining(chainOps(12, &rng))});
  out.push_back({"diamond4", makeTraining(diamondOps(4, rng))});
  out.push_back({"transformer2", makeTraining(transformerOps(2, 1, 4, 0.5, &rng))});
  out.push_back({"random40", randomDag(40, rng)});
  out.push_back({"random25", randomDag(25, rng, 0.9)});
  out.push_back({"diamond4-results", withResults(makeTraining(diamondOps(4, rng)), rng)});
  out.push_back({"random40-results", withResults(randomDag(40, rng), rng)});
  return out;
}

StepTimeBoundOptions withChains() {
  StepTimeBoundOptions options;
  options.recomputationChains = true;
  return options;
}

/// The bound at the plan's own peak, without and with recomputation
/// chains: the plan fits, so it can be no faster than either.
void expectBoundBelow(const RematProblem &graph, const RematPlan &plan,
                      const std::string &what) {
  RematProblem p = graph;
  p.budgetBytes = plan.peakBytes;
  for (const StepTimeBoundOptions &options :
       {StepTimeBoundOptions{}, withChains()}) {
    StepTimeBound bound = boundStepTime(p, options);
    ASSERT_FALSE(bound.infeasible) << what << ": " << bound.note;
    EXPECT_LE(bound.seconds, plan.seconds * (1 + 1e-9))
        << what << " at budget " << p.budgetBytes
        << (options.recomputationChains ? " (chains)" : "") << ": "
        << bound.note;
  }
}

} // namespace

TEST(StepTimeBound, NeverAboveARandomPlanThatFits) {
  int plans = 0;
  for (unsigned seed = 0; seed < 6; ++seed)
    for (const auto &[name, p] : graphs(seed)) {
      std::mt19937 rng(1000 + seed);
      for (int i = 0; i < 8; ++i) {
        expectBoundBelow(p, randomPlan(p, rng, 0.3, 0.2),
                         name + " random plan " + std::to_string(i));
        expectBoundBelow(p, randomPlan(p, rng, 0.8, 0.0),
                         name + " eager plan " + std::to_string(i));
        expectBoundBelow(p, randomLevelsPlan(p, rng),
                         name + " random levels " + std::to_string(i));
        plans += 3;
      }
    }
  std::printf("%d random plans, none faster than the bound at its peak\n",
              plans);
}

TEST(StepTimeBound, NeverAboveAnyStrategyAndCloseToTheProvenOptimum) {
  int compared = 0, exact = 0;
  double worst = 1;
  for (const auto &[name, graph] : graphs(42)) {
    RematProblem p = graph;
    const int64_t hi = planNone(p).peakBytes;
    RematProblem floorProblem = p;
    floorProblem.budgetBytes = 1;
    const int64_t lo = planSqrt(floorProblem).peakBytes;
    int64_t previous = -1;
    for (double f : {0.0, 0.25, 0.5, 0.75, 1.0}) {
      p.budgetBytes = lo + static_cast<int64_t>(f * (hi - lo));
      if (p.budgetBytes == previous)
        continue;
      previous = p.budgetBytes;
      StepTimeBound bound = boundStepTime(p);
      ASSERT_FALSE(bound.infeasible) << name << ": " << bound.note;
      StepTimeBound chained = boundStepTime(p, withChains());
      ASSERT_FALSE(chained.infeasible) << name << ": " << chained.note;
      MilpOptions milpOptions;
      milpOptions.timeLimitSeconds = 30;
      AutoOptions heuristic;
      heuristic.milpBelowNodes = 0;
      for (const RematPlan &plan :
           {planNone(p), planAll(p), planSqrt(p), planAuto(p, heuristic),
            planMilp(p, milpOptions)}) {
        if (plan.fitsBudget) {
          EXPECT_LE(bound.seconds, plan.seconds * (1 + 1e-9))
              << name << " budget " << p.budgetBytes << " vs "
              << plan.strategy << ": " << bound.note;
          EXPECT_LE(chained.seconds, plan.seconds * (1 + 1e-9))
              << name << " budget " << p.budgetBytes << " vs " << plan.strategy
              << " (chains): " << chained.note;
        }
        if (plan.strategy == "milp" && plan.provedOptimal && plan.fitsBudget) {
          ++compared;
          const double ratio = plan.seconds / bound.seconds;
          exact += ratio <= 1 + 1e-6;
          worst = std::max(worst, ratio);
          std::printf("  %-13s budget %5lld: optimum %.4f s, bound %.4f s "
                      "(optimum / bound %.4f), with chains %.4f s\n",
                      name.c_str(), static_cast<long long>(p.budgetBytes),
                      plan.seconds, bound.seconds, ratio, chained.seconds);
        }
      }
    }
  }
  std::printf("bound vs the proven optimum: %d comparisons, %d exact, worst "
              "optimum / bound %.4f\n",
              compared, exact, worst);
  EXPECT_GT(compared, 10);
}

TEST(StepTimeBound, ProvesInfeasibilityOnlyWhenNothingFits) {
  // Backward values cannot be recomputed: a budget below the bytes the
  // no-recomputation schedule holds of them at some step is infeasible.
  RematProblem p = makeTraining(chainOps(8));
  p.fixedBytes = 10;
  p.budgetBytes = 9;
  EXPECT_TRUE(boundStepTime(p).infeasible);
  // The lowest peak sqrt reaches is feasible, and so is everything above.
  p.budgetBytes = 1;
  const int64_t lowest = planSqrt(p).peakBytes;
  for (int64_t budget = lowest; budget < lowest + 20; ++budget) {
    p.budgetBytes = budget;
    EXPECT_FALSE(boundStepTime(p).infeasible) << budget;
  }
  // No budget, or one the schedule meets: the schedule's own time.
  p.budgetBytes = 0;
  EXPECT_DOUBLE_EQ(boundStepTime(p).seconds, baseSeconds(p));
  p.budgetBytes = planNone(p).peakBytes;
  EXPECT_DOUBLE_EQ(boundStepTime(p).seconds, baseSeconds(p));
}

TEST(StepTimeBound, MoreStepsNeverLoosen) {
  for (const auto &[name, graph] : graphs(7)) {
    RematProblem p = graph;
    RematProblem floorProblem = p;
    floorProblem.budgetBytes = 1;
    p.budgetBytes = planSqrt(floorProblem).peakBytes;
    double previous = 0;
    for (int steps : {1, 2, 4, 8, 16, 64}) {
      StepTimeBoundOptions options;
      options.maxSteps = steps;
      options.branchNodes = 0; // the LP alone is monotone in the steps
      StepTimeBound bound = boundStepTime(p, options);
      EXPECT_GE(bound.seconds, previous * (1 - 1e-9)) << name << " " << steps;
      previous = bound.seconds;
    }
  }
}

// Recomputation chains add rows and replace the per-value counts by
// per-interval ones that the old rows imply: the LP bound can only rise.
// They count what a plan recomputes between two chosen steps, so they rise
// where few steps are chosen and a recomputation needs absent inputs.
TEST(StepTimeBound, RecomputationChainsNeverLoosen) {
  int compared = 0, higher = 0;
  for (unsigned seed : {7u, 8u, 9u})
    for (const auto &[name, graph] : graphs(seed)) {
      RematProblem p = graph;
      RematProblem floorProblem = p;
      floorProblem.budgetBytes = 1;
      const int64_t lo = planSqrt(floorProblem).peakBytes;
      const int64_t hi = planNone(p).peakBytes;
      for (double f : {0.0, 0.2, 0.5})
        for (int steps : {1, 2, 4, 32}) {
          p.budgetBytes = lo + static_cast<int64_t>(f * (hi - lo));
          StepTimeBoundOptions plain;
          plain.maxSteps = steps;
          plain.branchNodes = 0;
          StepTimeBoundOptions chains = plain;
          chains.recomputationChains = true;
          const double a = boundStepTime(p, plain).seconds;
          const double b = boundStepTime(p, chains).seconds;
          EXPECT_GE(b, a * (1 - 1e-9)) << name << " " << steps << " steps";
          ++compared;
          higher += b > a * (1 + 1e-6);
        }
    }
  std::printf("recomputation chains: %d LP bounds, %d higher, none lower\n",
              compared, higher);
  EXPECT_GT(higher, 0);
}

// A value of two results that a plan drops apart: v's small result r0 is
// read by b in the forward pass, its big result r1 by the backward op d.
// At a budget of 50 bytes r1 cannot be held across a's and c's steps, so
// the plan drops it at once, keeps r0 for b, and computes v once more for
// d: 7 s, the fastest plan there is (6 nodes, and r1 must come back). At
// b's step v is present (b reads r0) while r1 stays absent; a chain row
// that took that presence as v's would count a recomputation between a's
// and b's steps as well, and bound above this plan (8 s).
TEST(StepTimeBound, ChainsLetOneResultStayAbsentWhileAnotherIsRead) {
  RematProblem p;
  const int v = addNode(p, "v", 45, {}, true);
  p.nodes[v].resultBytes = {5, 40};
  const int a = addNode(p, "a", 30, {}, true);
  const int b = addNode(p, "b", 5, {v, a}, true);
  p.nodes[b].reads = {{v, 0}};
  const int c = addNode(p, "c", 30, {b}, true);
  const int e = addNode(p, "e", 5, {c}, true);
  const int d = addNode(p, "d", 5, {e, v}, false);
  p.nodes[d].reads = {{v, 1}};
  p.graphOutputs = {d};
  p.budgetBytes = 50;

  RematPlan plan;
  plan.sequence = {v, a, b, c, e, v, d};
  std::string error;
  ASSERT_TRUE(simulate(p, plan, error)) << error;
  EXPECT_EQ(plan.peakBytes, 50);
  EXPECT_DOUBLE_EQ(plan.seconds, 7);
  // Without recomputation the steps of a, b, c and e are over the budget.
  EXPECT_GT(planNone(p).peakBytes, 50);

  for (const StepTimeBoundOptions &options :
       {StepTimeBoundOptions{}, withChains()}) {
    StepTimeBound bound = boundStepTime(p, options);
    ASSERT_FALSE(bound.infeasible) << bound.note;
    EXPECT_LE(bound.seconds, plan.seconds * (1 + 1e-9)) << bound.note;
    // r1 cannot stay across a's step (a, r0 and r1 hold 75 bytes): one
    // recomputation at least, which branch and bound finds (less the
    // 1e-6 of it the bound gives away to the solvers' tolerances).
    EXPECT_NEAR(bound.seconds, 7, 1e-5) << bound.note;
  }
}
