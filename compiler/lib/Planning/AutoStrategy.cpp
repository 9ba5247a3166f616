//===- AutoStrategy.cpp - The default rematerialization strategy -----------===//
//
// A search over checkpoint plans, every candidate built by PlanBuilder and
// scored by simulate() (so a plan's peak is exact, not estimated):
//
//  1. Seeds: no recomputation; every plan `sqrt` considers (all segment
//     counts, with and without the last segment kept), so auto is never
//     worse than sqrt; `all` and its coarser versions (regions grouped g at
//     a time), so auto is never worse than all; two-level (Revolve-like)
//     versions of both for budgets that one level of checkpoints cannot
//     meet; selective plans that keep what is expensive to recompute for
//     its size (seconds per byte above a threshold, every threshold); the
//     values the step-time bound's relaxation recomputes (StepTimeBound.h),
//     solved at the budget and a little below it, dropped.
//  2. Tails: for the best seeds, keep every forward value after a point,
//     found by bisection (the last layers' backward comes first, so keeping
//     them costs memory only while the peak has not been reached).
//  3. Local search over each value's mode: kept, dropped, dropped and
//     recomputed only transiently (kTransient) or for each reader
//     (kEachUse), kept through its first backward use (kKeepFirst) or its
//     first use of any kind (kKeepToUse), or a nested checkpoint (level 1);
//     graph outputs too. Moves: one unit to another mode,
//     every unit of one mode to another, the retention rule; first
//     improvement, then perturbations (iterated local search) until a
//     number of rounds without improvement or the work limit (node steps
//     built and simulated, AutoOptions::workLimit; not wall time, so the
//     result does not depend on machine load). On small
//     graphs each forward value is a unit and the search restarts from the
//     8 best distinct seeds (again with other perturbations when nothing
//     fits or the best plan is far above the step-time bound); on big ones
//     a unit is a group: the same op at
//     the same place in every region (transformer blocks repeat), so one
//     move decides e.g. "keep the QKV matmul outputs of every block".
//  4. On big graphs with regions, when it beats the plan found: a local
//     search from region inputs checkpointed in a hierarchy, none kept
//     from the forward pass (for budgets the loss's backward all but
//     fills).
//  5. On graphs with per-value search, when the plan fits and is far
//     above the step-time bound (near the memory floor): the relaxation
//     with recomputation chains, a bound never lower, and a local search
//     from its solutions (again with other perturbations while far above).
//  6. On small graphs (milpBelowNodes), the MILP warm-started from the best
//     plan, for at most milpSeconds.
//
// A plan beats another if it fits and the other does not, else if it is
// faster (fitting) or lower (not fitting).
//
//===----------------------------------------------------------------------===//

#include "PlanningSupport.h"

#include "remat/Planning/StepTimeBound.h"
#include "remat/Planning/Strategies.h"

#include <algorithm>
#include <map>
#include <optional>
#include <random>

namespace remat::plan {
namespace detail {
namespace {

class AutoSearch {
public:
  AutoSearch(const RematProblem &problem, const ForwardInfo &info,
             const AutoOptions &options)
      : problem(problem), info(info), options(options),
        builder(problem, info), rng(options.seed),
        workLimit(options.workLimit), backwardReaders(info.n, 0) {
    for (int w = 0; w < info.n; ++w)
      if (!info.fwd[w])
        for (int u : problem.nodes[w].inputs)
          ++backwardReaders[u];
  }

  /// Builds c; keeps it if it is the best so far. Returns its plan.
  const RematPlan &consider(const Candidate &c) {
    scratch = RematPlan();
    if (!build(c.level, c.retainAll, scratch))
      return scratch;
    scratch.strategy = c.label;
    if (!have || better(problem, scratch, bestPlan)) {
      bestPlan = scratch;
      best = c;
      have = true;
    }
    return scratch;
  }

  /// Builds and simulates one plan, counting its cost towards the work
  /// limit: the nodes the builder walks (the schedule) and the nodes it
  /// emits (the plan's sequence, recomputations included), which is what
  /// its time is proportional to.
  bool build(const std::vector<int> &level, bool retainAll, RematPlan &plan) {
    ++evaluations;
    bool ok = builder.build(level, retainAll, plan);
    work += info.n + static_cast<int64_t>(plan.sequence.size());
    return ok;
  }

  /// Whether the search phases may go on: a deterministic budget of work,
  /// not of wall time, so that the plan does not depend on machine load.
  bool workLeft() const {
    return options.workLimit <= 0 || work < workLimit;
  }

  /// Keeps everything from forward position `from` on in c.
  Candidate withTail(const Candidate &c, int from) const {
    Candidate t = c;
    const int m = static_cast<int>(info.fwdNodes.size());
    for (int q = std::max(0, from); q < m; ++q)
      t.level[info.fwdNodes[q]] = 0;
    t.label = c.label + " + tail from op " + std::to_string(from);
    return t;
  }

  /// Bisection over where the kept tail starts (positions: region starts,
  /// or 64 even points without regions).
  void tailSearch(const Candidate &c) {
    const int m = static_cast<int>(info.fwdNodes.size());
    std::vector<int> starts;
    if (info.numRegions > 1) {
      int prevRegion = -2;
      for (int q = 0; q < m; ++q) {
        int r = info.regionOrd[info.fwdNodes[q]];
        if (r != prevRegion && r >= 0)
          starts.push_back(q);
        prevRegion = r;
      }
    } else {
      int pts = std::min(m, 64);
      for (int i = 0; i < pts; ++i)
        starts.push_back(static_cast<int>(static_cast<int64_t>(i) * m / pts));
    }
    starts.push_back(m);
    std::sort(starts.begin(), starts.end());
    starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
    // Find the smallest index whose tail plan fits (fits is monotone in the
    // start for these plans in practice; bisection is a heuristic).
    int lo = 0, hi = static_cast<int>(starts.size()) - 1;
    while (lo < hi) {
      int mid = (lo + hi) / 2;
      const RematPlan &p = consider(withTail(c, starts[mid]));
      if (fits(problem, p))
        hi = mid;
      else
        lo = mid + 1;
    }
    consider(withTail(c, starts[lo]));
  }

  /// Groups of forward values moved together.
  std::vector<std::vector<int>> makeUnits(bool perValue) const {
    std::vector<std::vector<int>> units;
    if (perValue) {
      for (int v : info.fwdNodes)
        units.push_back({v});
      return units;
    }
    std::map<std::pair<int, std::string>, int> index;
    std::vector<int> localCount(info.numRegions, 0);
    for (int v : info.fwdNodes) {
      int r = info.regionOrd[v];
      if (r < 0) {
        units.push_back({v});
        continue;
      }
      int local = localCount[r]++;
      auto key = std::make_pair(local, problem.nodes[v].opKind);
      auto [it, inserted] =
          index.emplace(key, static_cast<int>(units.size()));
      if (inserted)
        units.push_back({});
      units[it->second].push_back(v);
    }
    // Expensive-to-recompute, small values first.
    auto ratio = [&](const std::vector<int> &u) {
      double s = 0, b = 1;
      for (int v : u) {
        s += problem.nodes[v].seconds;
        b += static_cast<double>(problem.nodes[v].outputBytes);
      }
      return s / b;
    };
    std::stable_sort(units.begin(), units.end(),
                     [&](const auto &a, const auto &b) {
                       return ratio(a) > ratio(b);
                     });
    return units;
  }

  /// First-improvement hill climbing from `start`, then iterated local
  /// search around the best plan of this run; anything better than the
  /// overall best is adopted.
  void localSearch(const Candidate &start,
                   const std::vector<std::vector<int>> &units,
                   bool allowLevel1, int maxStale) {
    if (units.empty())
      return;
    std::vector<int> values = {0,          kNotKept,   kTransient,
                               kKeepFirst, kKeepToUse, kEachUse};
    if (allowLevel1)
      values.push_back(1);
    Candidate cur = start;
    RematPlan curPlan;
    if (!build(cur.level, cur.retainAll, curPlan))
      return;
    std::vector<int> order(units.size());
    for (size_t i = 0; i < order.size(); ++i)
      order[i] = static_cast<int>(i);
    // kEachUse differs from kTransient only for a value that two backward
    // ops read; elsewhere the move would only spend work.
    std::vector<char> eachUseMatters(units.size(), 0);
    for (size_t u = 0; u < units.size(); ++u)
      for (int v : units[u])
        eachUseMatters[u] = eachUseMatters[u] || backwardReaders[v] >= 2;

    auto setUnit = [&](Candidate &c, int u, int value) {
      for (int v : units[u])
        c.level[v] = value;
    };
    auto unitValue = [&](const Candidate &c, int u) {
      int first = c.level[units[u][0]];
      for (int v : units[u])
        if (c.level[v] != first)
          return -1; // mixed
      return first;
    };
    auto climb = [&](Candidate &c, RematPlan &plan, bool shuffle) {
      bool improved = true;
      while (improved && workLeft()) {
        improved = false;
        if (shuffle)
          std::shuffle(order.begin(), order.end(), rng);
        for (int u : order) {
          if (!workLeft())
            break;
          int now = unitValue(c, u);
          std::vector<int> saved;
          for (int v : units[u])
            saved.push_back(c.level[v]);
          for (int value : values) {
            if (value == now || (value == kEachUse && !eachUseMatters[u]))
              continue;
            setUnit(c, u, value);
            RematPlan trial;
            if (build(c.level, c.retainAll, trial) &&
                better(problem, trial, plan)) {
              plan = std::move(trial);
              now = value;
              improved = true;
              saved.clear();
              for (int v : units[u])
                saved.push_back(c.level[v]);
              break;
            }
            for (size_t i = 0; i < units[u].size(); ++i)
              c.level[units[u][i]] = saved[i];
          }
        }
        // Switching every unit from one mode to another.
        for (int from : values)
          for (int to : values) {
            if (from == to || !workLeft())
              continue;
            Candidate trialC = c;
            bool any = false;
            for (size_t u = 0; u < units.size(); ++u)
              if (unitValue(c, static_cast<int>(u)) == from) {
                setUnit(trialC, static_cast<int>(u), to);
                any = true;
              }
            if (!any)
              continue;
            RematPlan trial;
            if (build(trialC.level, trialC.retainAll, trial) &&
                better(problem, trial, plan)) {
              plan = std::move(trial);
              c = std::move(trialC);
              improved = true;
            }
          }
        // The retention rule as a move too.
        c.retainAll = !c.retainAll;
        RematPlan trial;
        if (build(c.level, c.retainAll, trial) &&
            better(problem, trial, plan)) {
          plan = std::move(trial);
          improved = true;
        } else {
          c.retainAll = !c.retainAll;
        }
      }
    };
    climb(cur, curPlan, /*shuffle=*/false);
    adopt(cur, curPlan, "local search");
    Candidate runBest = cur;
    RematPlan runBestPlan = curPlan;

    std::uniform_int_distribution<int> pickUnit(
        0, static_cast<int>(units.size()) - 1);
    std::uniform_int_distribution<int> pickValue(
        0, static_cast<int>(values.size()) - 1);
    int stale = 0;
    while (stale < maxStale && workLeft()) {
      Candidate c = runBest;
      RematPlan plan;
      int flips = 1 + static_cast<int>(rng() % 3);
      for (int f = 0; f < flips; ++f) {
        // Two draws in one call's arguments would be made in an unspecified
        // order (gcc and clang differ), and so would the plan. The value is
        // drawn first, as the gcc builds always did.
        const int value = values[pickValue(rng)];
        const int unit = pickUnit(rng);
        setUnit(c, unit, value);
      }
      if (!build(c.level, c.retainAll, plan))
        break;
      climb(c, plan, /*shuffle=*/true);
      if (better(problem, plan, runBestPlan)) {
        adopt(c, plan, "local search");
        runBest = std::move(c);
        runBestPlan = std::move(plan);
        stale = 0;
      } else {
        ++stale;
      }
    }
  }

  /// Rounds of perturbation without improvement that end a local search
  /// over `units`: many on small graphs (a unit per value), two on big ones
  /// (units of grouped values, each round costly).
  static int staleRounds(bool small, size_t units) {
    return small ? std::max(100, 6 * static_cast<int>(units)) : 2;
  }

  void adopt(Candidate c, RematPlan plan, const std::string &how) {
    if (have && !better(problem, plan, bestPlan))
      return;
    if (c.label.find(how) == std::string::npos)
      c.label += " + " + how;
    plan.strategy = c.label;
    best = std::move(c);
    bestPlan = std::move(plan);
    have = true;
  }

  const RematProblem &problem;
  const ForwardInfo &info;
  const AutoOptions &options;
  PlanBuilder builder;
  std::mt19937 rng;
  Candidate best;
  RematPlan bestPlan, scratch;
  bool have = false;
  int evaluations = 0;
  int64_t work = 0; // node steps built and simulated so far
  int64_t workLimit; // options.workLimit, raised for restarts
  std::vector<int> backwardReaders; // per node: non-recomputable readers
};

/// The relaxation's solutions at AutoOptions::lowerHintBudgets, fractions
/// of the budget's memory above the fixed bytes (the LP alone, on half the
/// columns), for seeds: the relaxation leaves out the memory of
/// recomputations, so its solutions at lower budgets fit more often.
std::vector<std::vector<double>>
lowerBudgetSolutions(const RematProblem &problem, const AutoOptions &options,
                     const StepTimeBoundOptions &boundOptions) {
  std::vector<std::vector<double>> solutions;
  if (problem.budgetBytes <= problem.fixedBytes)
    return solutions;
  for (double fraction : options.lowerHintBudgets) {
    RematProblem lower = problem;
    lower.budgetBytes =
        problem.fixedBytes +
        static_cast<int64_t>(fraction * static_cast<double>(
                                            problem.budgetBytes -
                                            problem.fixedBytes));
    StepTimeBoundOptions quick = boundOptions;
    quick.branchNodes = 0;
    quick.maxColumns /= 2;
    solutions.push_back(boundStepTime(lower, quick).absence);
  }
  return solutions;
}

/// The candidates that drop the forward values a relaxed solution recomputes
/// (absence at least 0.5, 0.01 or 0.99: an LP solution can be fractional).
std::vector<Candidate> relaxationCandidates(const ForwardInfo &info,
                                            const std::vector<double> &absence,
                                            const std::string &what) {
  std::vector<Candidate> out;
  if (static_cast<int>(absence.size()) != info.n)
    return out;
  for (double threshold : {0.5, 0.01, 0.99}) {
    Candidate c;
    c.level.assign(info.n, 0);
    for (int v : info.fwdNodes)
      if (absence[v] >= threshold)
        c.level[v] = kNotKept;
    c.label = what + "(absence >= " + std::to_string(threshold) + ")";
    out.push_back(std::move(c));
  }
  return out;
}

/// Whether `plan` is more than `gap` (a fraction of the bound; negative:
/// never) above a step-time bound of `boundSeconds` (0: none known).
bool farAboveBound(const RematPlan &plan, double boundSeconds, double gap) {
  return gap >= 0 && boundSeconds > 0 &&
         plan.seconds > boundSeconds * (1 + gap);
}

/// Phases 1 to 5 (the file comment) on `search`'s problem: its best plan
/// is the result. Sets `bound` when the search computed the step-time bound
/// itself (no AutoOptions::relaxedSolution given).
void searchPlans(AutoSearch &search, std::optional<StepTimeBound> &bound) {
  const RematProblem &problem = search.problem;
  const ForwardInfo &info = search.info;
  const AutoOptions &options = search.options;
  const int n = info.n;
  const int m = static_cast<int>(info.fwdNodes.size());
  const bool small = n <= options.perValueSearchNodes;

  // 1. Seeds.
  Candidate none;
  none.level.assign(n, 0);
  none.label = "none";
  search.consider(none);
  std::vector<std::pair<RematPlan, Candidate>> seeds;
  auto seed = [&](const Candidate &c) {
    const RematPlan &p = search.consider(c);
    seeds.emplace_back(p, c);
  };
  for (int k : segmentCounts(m))
    for (bool tail : {false, true})
      seed(sqrtCandidate(info, k, tail));
  for (int g = 1; g <= info.numRegions; ++g)
    seed(regionCandidate(problem, info, g));

  // Two-level seeds: coarse cuts kept from the forward pass, fine cuts kept
  // only while their coarse segment is being worked through.
  auto twoLevel = [&](const std::vector<int> &coarse,
                      const std::vector<int> &fine, const std::string &label) {
    Candidate c;
    c.level.assign(n, kNotKept);
    c.retainAll = false;
    c.label = label;
    std::vector<bool> k0(n, false), k1(n, false);
    markCrossing(info, coarse, k0);
    markCrossing(info, fine, k1);
    for (int v = 0; v < n; ++v)
      c.level[v] = k0[v] ? 0 : (k1[v] ? 1 : kNotKept);
    seed(c);
  };
  {
    std::vector<int> coarseCounts;
    for (int k : segmentCounts(m))
      if (small || k <= 16 || k % 4 == 0)
        coarseCounts.push_back(k);
    for (int k1 : coarseCounts)
      for (int j : {2, 3, 4, 6, 8}) {
        if (static_cast<int64_t>(k1) * j > m)
          break;
        twoLevel(evenCuts(info, k1), evenCuts(info, k1 * j),
                 "two-level(" + std::to_string(k1) + "x" + std::to_string(j) +
                     " segments)");
      }
    if (info.numRegions > 1) {
      for (int g = 2; g <= info.numRegions; ++g) {
        Candidate c = regionCandidate(problem, info, g);
        std::vector<bool> fine = regionCrossingKeep(problem, info, 1);
        for (int v = 0; v < n; ++v)
          if (c.level[v] != 0 && fine[v])
            c.level[v] = 1;
        c.retainAll = false;
        c.label = "two-level(region inputs, every " + std::to_string(g) +
                  " regions kept)";
        seed(c);
      }
    }
  }

  // Selective seeds: keep the values that are expensive to recompute for
  // their size (seconds per byte at least a threshold), drop the rest, for
  // every threshold; the dropped ones either plainly, or kept through their
  // first backward use.
  {
    std::vector<double> ratio(n, 0);
    std::vector<double> thresholds;
    for (int v : info.fwdNodes) {
      ratio[v] = problem.nodes[v].seconds /
                 (1.0 + static_cast<double>(problem.nodes[v].outputBytes));
      thresholds.push_back(ratio[v]);
    }
    std::sort(thresholds.begin(), thresholds.end());
    thresholds.erase(std::unique(thresholds.begin(), thresholds.end()),
                     thresholds.end());
    if (thresholds.size() > 64) {
      std::vector<double> sampled;
      for (int i = 0; i < 64; ++i)
        sampled.push_back(thresholds[i * thresholds.size() / 64]);
      thresholds = sampled;
    }
    std::vector<std::pair<RematPlan, Candidate>> selective;
    for (double theta : thresholds)
      for (int dropped : {kNotKept, kKeepFirst}) {
        Candidate c;
        c.level.assign(n, 0);
        for (int v : info.fwdNodes)
          if (ratio[v] < theta)
            c.level[v] = dropped;
        c.label = std::string("selective(") +
                  (dropped == kKeepFirst ? "keep-first, " : "") +
                  "seconds/byte >= " + std::to_string(theta) + ")";
        seed(c);
        selective.push_back(seeds.back());
      }
    // Their best few get a kept tail too.
    std::stable_sort(selective.begin(), selective.end(),
                     [&](const auto &a, const auto &b) {
                       return better(problem, a.first, b.first);
                     });
    for (size_t i = 0; i < selective.size() && i < 3; ++i)
      search.tailSearch(selective[i].second);
  }

  std::optional<Candidate> hintStart;
  // Seeds from the step-time bound's relaxation: the values its solution
  // recomputes (absent at some step), dropped after their last forward use;
  // at several thresholds, since an LP solution can be fractional. Its
  // solution often is a plan, or close to one a local search reaches. The
  // relaxation leaves out the memory of recomputations, so its solutions at
  // somewhat lower budgets seed too: they fit more often, and they keep
  // auto from finding a slower plan at a bigger budget than at a smaller
  // one (their plans fit both).
  std::vector<std::vector<double>> relaxed;
  if (options.boundHint) {
    if (!options.relaxedSolution.empty()) {
      relaxed.push_back(options.relaxedSolution);
    } else {
      bound = boundStepTime(problem, options.bound);
      relaxed.push_back(bound->absence);
    }
    for (std::vector<double> &absence :
         lowerBudgetSolutions(problem, options, options.bound))
      relaxed.push_back(std::move(absence));
  }
  std::vector<std::pair<RematPlan, Candidate>> hinted;
  for (const std::vector<double> &absence : relaxed)
    for (const Candidate &c :
         relaxationCandidates(info, absence, "relaxation")) {
      seed(c);
      hinted.push_back(seeds.back());
    }
  if (!hinted.empty()) {
    std::stable_sort(hinted.begin(), hinted.end(),
                     [&](const auto &a, const auto &b) {
                       return better(problem, a.first, b.first);
                     });
    search.tailSearch(hinted.front().second);
    hintStart = hinted.front().second;
  }

  // 2. Tails on the best few distinct seeds.
  std::stable_sort(seeds.begin(), seeds.end(), [&](const auto &a,
                                                   const auto &b) {
    return better(problem, a.first, b.first);
  });
  {
    int tried = 0;
    for (size_t i = 0; i < seeds.size() && tried < (small ? 6 : 3); ++i) {
      search.tailSearch(seeds[i].second);
      ++tried;
    }
  }

  // The step-time bound so far: auto's own, or the driver's.
  const double boundSeconds =
      bound ? bound->seconds : options.relaxedBoundSeconds;

  // 3. Local search.
  auto units = search.makeUnits(small);
  // The relaxation's plan rarely fits as it is (it ignores the memory of
  // recomputations): climb from it first.
  if (hintStart)
    search.localSearch(*hintStart, units, /*allowLevel1=*/true, 0);
  // Small graphs: several starts (the best distinct seeds), each with many
  // perturbations; big graphs: the best plan so far, within the time limit.
  if (small) {
    std::vector<Candidate> starts = {search.best};
    std::stable_sort(seeds.begin(), seeds.end(), [&](const auto &a,
                                                     const auto &b) {
      return better(problem, a.first, b.first);
    });
    for (const auto &[plan, cand] : seeds) {
      if (starts.size() >= 8)
        break;
      bool dup = false;
      for (const auto &c : starts)
        dup = dup || (c.level == cand.level && c.retainAll == cand.retainAll);
      if (!dup)
        starts.push_back(cand);
    }
    const int maxStale = AutoSearch::staleRounds(small, units.size());
    for (const Candidate &start : starts)
      search.localSearch(start, units, /*allowLevel1=*/true, maxStale);
    // Near the memory floor the search's perturbations decide how low it
    // gets (gpt2_tiny's floor: 12.44 to 12.90 MB over seeds 1 to 4), and
    // how fast a plan it finds that fits (gpt2_tiny at its floor: 10.70 ms
    // from one search, 10.45 ms with the restarts). When nothing fits, or
    // the best plan is far above the bound (AutoOptions::restartAboveGap),
    // restart from the same seeds with other perturbations, each with a
    // work limit of its own.
    auto restartsLeft = [&](unsigned restart) {
      if (!fits(problem, search.bestPlan))
        return restart <= options.restartsWhenNothingFits;
      return restart <= options.restartsAboveGap &&
             farAboveBound(search.bestPlan, boundSeconds,
                           options.restartAboveGap);
    };
    for (unsigned restart = 1; restartsLeft(restart); ++restart) {
      search.rng.seed(options.seed + restart);
      search.workLimit = search.work + options.workLimit;
      starts[0] = search.best;
      for (const Candidate &start : starts)
        search.localSearch(start, units, /*allowLevel1=*/true, maxStale);
    }
  } else {
    search.localSearch(search.best, units, /*allowLevel1=*/true,
                       AutoSearch::staleRounds(small, units.size()));
  }
  if (!small && search.workLeft())
    search.tailSearch(search.best);

  // 4. Hierarchical region checkpoints with nothing kept from the forward
  // pass, for budgets that the loss's backward (the logits and the output
  // layer's gradients) all but fills. There the search above ended at plans
  // that recompute each layer from the start: the Llama-7B shape at
  // 81.93 GB, 0.16% above its floor, 16.16 s; from here 2.82 s (baseline
  // 1.47 s). They are not seeds of the search above, whose plans elsewhere
  // they would change; a search of its own starts from the best of them
  // only when it beats the plan found, so auto is never worse for them.
  // A quarter of the work limit: on the Llama-7B shape 0.1-0.3% above its
  // floor it ends at the plans the whole limit gives (a tenth does not).
  if (!small && info.numRegions > 2) {
    std::optional<std::pair<RematPlan, Candidate>> top;
    for (int base : {2, 3, 4})
      for (int inner : {kNotKept, kTransient}) {
        Candidate c = hierarchicalRegionCandidate(problem, info, base, inner);
        RematPlan plan;
        if (search.build(c.level, c.retainAll, plan) &&
            (!top || better(problem, plan, top->first)))
          top.emplace(std::move(plan), std::move(c));
      }
    if (top && better(problem, top->first, search.bestPlan)) {
      search.consider(top->second);
      search.workLimit = search.work + options.workLimit / 4;
      search.localSearch(top->second, units, /*allowLevel1=*/true,
                         AutoSearch::staleRounds(small, units.size()));
    }
  }

  // 5. Far above the bound on a small graph (near the memory floor): the
  // relaxation with recomputation chains, for a bound never lower and a
  // second opinion on what to recompute; a search of its own from its best
  // seeds (gpt2_tiny 20% above its floor: 7.490 to 7.379 ms). Only when the
  // plan fits: otherwise the search minimises the peak, and more search
  // found lower-peak, slower plans (llama_tiny at its floor, when the
  // simulation still counted the batch inputs throughout and no plan fit
  // it there: 1.916 to 3.787 ms). Not seeds of the searches above: there
  // its solutions changed plans elsewhere, for better and for worse.
  if (small && options.boundHint && fits(problem, search.bestPlan) &&
      farAboveBound(search.bestPlan, boundSeconds,
                    options.chainSearchAboveGap)) {
    StepTimeBoundOptions chained = options.bound;
    chained.recomputationChains = true;
    StepTimeBound second = boundStepTime(problem, chained);
    double highest = boundSeconds;
    if (!second.infeasible && second.seconds > boundSeconds) {
      bound = second;
      highest = second.seconds;
    }
    // Its solutions at the budget and a little below it (as phase 1's).
    std::vector<std::vector<double>> solutions =
        lowerBudgetSolutions(problem, options, chained);
    solutions.insert(solutions.begin(), second.absence);
    std::vector<std::pair<RematPlan, Candidate>> starts;
    for (const std::vector<double> &absence : solutions)
      for (Candidate &c :
           relaxationCandidates(info, absence, "chained relaxation")) {
        bool dup = false;
        for (const auto &start : starts)
          dup = dup || start.second.level == c.level;
        RematPlan plan;
        if (!dup && search.build(c.level, c.retainAll, plan))
          starts.emplace_back(std::move(plan), std::move(c));
      }
    std::stable_sort(starts.begin(), starts.end(),
                     [&](const auto &a, const auto &b) {
                       return better(problem, a.first, b.first);
                     });
    if (starts.size() > 3)
      starts.resize(3);
    const auto units = search.makeUnits(small);
    // Still far above the bound: again with other perturbations (as phase
    // 3's restarts), each round with a work limit of its own.
    for (unsigned round = 0;
         round == 0 ||
         (round <= options.restartsAboveGap &&
          farAboveBound(search.bestPlan, highest, options.restartAboveGap));
         ++round) {
      if (round > 0)
        search.rng.seed(options.seed + 100 + round);
      search.workLimit = search.work + options.workLimit;
      for (const auto &[plan, start] : starts) {
        search.consider(start);
        search.tailSearch(start);
        search.localSearch(start, units, /*allowLevel1=*/true,
                           AutoSearch::staleRounds(small, units.size()));
      }
    }
  }
}

} // namespace
} // namespace detail

using namespace detail;

RematPlan planAuto(const RematProblem &problem, const AutoOptions &options) {
  Stopwatch watch;
  ForwardInfo info = analyzeForward(problem);
  AutoSearch search(problem, info, options);
  std::optional<StepTimeBound> bound;
  searchPlans(search, bound);
  const bool small = info.n <= options.perValueSearchNodes;

  // Near the memory floor the search on the problem's own estimates (with
  // in-place writes and results that die apart) can end above a budget
  // that its search on the coarse ones (withoutSharing) meets: their
  // peaks' landscape differs. llama_tiny at 2.036 MB: this search ended at
  // 2.054 MB; the coarse search's plan fits (1.452 ms), and climbing from
  // it here gives 1.424 ms. When nothing fits, search the coarse problem
  // too and climb from its best plan on this one, with a work limit of its
  // own. (The driver's floor search relies on it: it no longer runs auto
  // on coarse estimates itself.)
  auto hasFinerEstimates = [&] {
    return std::any_of(
        problem.nodes.begin(), problem.nodes.end(), [](const Node &node) {
          return !node.resultBytes.empty() || node.inPlaceBytes > 0;
        });
  };
  if (options.coarseSearchWhenNothingFits && !fits(problem, search.bestPlan) &&
      hasFinerEstimates()) {
    const RematProblem coarse = withoutSharing(problem);
    const ForwardInfo coarseInfo = analyzeForward(coarse);
    AutoOptions coarseOptions = options;
    coarseOptions.coarseSearchWhenNothingFits = false;
    coarseOptions.chainSearchAboveGap = -1; // no bound of the real problem
    coarseOptions.relaxedSolution =
        bound ? bound->absence : options.relaxedSolution;
    AutoSearch coarseSearch(coarse, coarseInfo, coarseOptions);
    std::optional<StepTimeBound> unused;
    searchPlans(coarseSearch, unused);
    search.work += coarseSearch.work;
    search.evaluations += coarseSearch.evaluations;
    search.workLimit = search.work + options.workLimit;
    Candidate start = coarseSearch.best;
    start.label += " on coarse estimates";
    search.consider(start);
    const auto units = search.makeUnits(small);
    search.localSearch(start, units, /*allowLevel1=*/true,
                       AutoSearch::staleRounds(small, units.size()));
  }

  RematPlan result = search.bestPlan;

  // 6. Optional exact polish on small graphs.
  if (options.milpBelowNodes > 0 && info.n <= options.milpBelowNodes) {
    MilpOptions milp;
    milp.timeLimitSeconds = options.milpSeconds;
    milp.maxNodes = options.milpBelowNodes;
    RematPlan exact = solveMilp(problem, milp, &result);
    if (better(problem, exact, result)) {
      exact.strategy = "milp polish of " + result.strategy;
      result = std::move(exact);
    }
  }

  result.provedOptimal = result.provedOptimal && result.strategy.rfind(
                                                     "milp", 0) == 0;
  std::string label = "auto: " + result.strategy;
  std::string note = std::to_string(search.evaluations) + " plans simulated (" +
                     std::to_string(search.work) + " node steps" +
                     (search.workLeft() ? "" : ", work limit reached") + ")";
  result.note = result.note.empty() ? note : note + "; " + result.note;
  result.searchWork = search.work;
  result.bound = bound;
  finish(problem, result, label, watch.seconds());
  return result;
}

} // namespace remat::plan
