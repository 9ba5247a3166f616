//===- StepTimeBound.h - A proven lower bound on the step time -*- C++ -*-===//
//
// How fast can any plan be at a budget? The step-time bound answers with a
// number no plan beats, so that a plan's estimated time can be reported with
// a certified optimality gap (estimated / bound - 1).
//
// The class of plans: every RematPlan sequence in which each node's first
// run comes in schedule order (every strategy's plans, and Checkmate's), whose
// peak as simulate() counts it is within problem.budgetBytes. The bound is
// the optimum of a relaxation of that problem (StepTimeBound.cpp), solved by
// CLP (its LP relaxation) and CBC (branch and bound on it).
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_PLANNING_STEPTIMEBOUND_H
#define REMAT_PLANNING_STEPTIMEBOUND_H

#include <cstdint>
#include <string>
#include <vector>

namespace remat::plan {

struct RematProblem;

struct StepTimeBoundOptions {
  /// Schedule steps whose memory constraint may enter the relaxation: the
  /// ones where the step without recomputation is furthest over the budget,
  /// one per distinct set of values needed there, most loaded first. More
  /// steps give a tighter (never looser) bound and a bigger model. On
  /// large steps maxColumns stops first (GPT-2 small: 10 steps, the
  /// Llama-7B shape: 2); on small ones 32 steps cost little (the CNN: 698
  /// columns) and tightened its bound at 30% above the floor from 6.7% to
  /// 2.6% under auto's plan, where 12 steps left it.
  int maxSteps = 32;
  /// Steps are added while the model has fewer columns than this (at least
  /// one step): the LP's time grows with it (CLP on GPT-2 small: 5,000
  /// columns 0.2 s, 8,000 0.3 s).
  int maxColumns = 5000;
  /// Branch and bound on the relaxation after its LP, in CBC nodes (0: the
  /// LP bound alone), on models of at most branchMaxColumns columns. The
  /// node limit, not the clock, stops it, so that the bound (and the plans
  /// its solution seeds) do not depend on machine load: on the fixtures'
  /// relaxations of up to 1,500 columns it takes at most 0.53 s (BERT tiny,
  /// 1,136 columns) and mostly solves them, while on larger ones (GPT-2
  /// small: 2,910) 50 nodes took 2-3 s, mostly CBC's feasibility pump, and
  /// raised the bound by under 0.05%. branchSeconds is a safety net for a
  /// pathological model only (the bound is valid whenever it stops); a
  /// 0.25 s cap here once made HF BERT's bound at +90% flip between runs.
  int branchNodes = 50;
  int branchMaxColumns = 1500;
  double branchSeconds = 10;
  /// Also count recomputations between the chosen steps, per interval: a
  /// value absent at a step and read before the next one, and the inputs of
  /// a value recomputed in an interval that are absent at its start
  /// (StepTimeBound.cpp). A bound never lower, from a model about 1.4x the
  /// rows; its LP solution differs too, so auto uses it as a second opinion
  /// (AutoOptions::chainSearchAboveGap) rather than for its first seeds.
  bool recomputationChains = false;
};

struct StepTimeBound {
  /// The budget the bound is for (RematProblem::budgetBytes).
  int64_t budgetBytes = 0;
  /// Proven that no plan in the class fits the budget.
  bool infeasible = false;
  /// Every plan in the class that fits the budget takes at least this many
  /// seconds (RematPlan::seconds: the sum of its nodes' seconds).
  double seconds = 0;
  /// Whether branch and bound raised the bound above the LP relaxation's.
  bool fromBranchAndBound = false;
  /// The relaxation's optimal (or LP) solution, per node: the largest
  /// absence (z) of its value at any chosen step, in [0, 1]. A hint of
  /// which values a good plan recomputes; empty when the model was not
  /// solved.
  std::vector<double> absence;
  int steps = 0, columns = 0, rows = 0;
  double solveSeconds = 0;
  /// One line: the model's size, the LP and branch-and-bound figures.
  std::string note;
};

StepTimeBound boundStepTime(const RematProblem &problem,
                            const StepTimeBoundOptions &options = {});

} // namespace remat::plan

#endif // REMAT_PLANNING_STEPTIMEBOUND_H
