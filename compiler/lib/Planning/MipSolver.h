//===- MipSolver.h - Mixed-integer programs solved with CBC -----*- C++ -*-===//
//
// Private to lib/Planning: a MILP written as columns and row triplets, and
// one way to solve it with CBC (the Checkmate MILP and the step-time lower
// bound both use it), so that solver options and CBC's quirks live in one
// place.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_LIB_PLANNING_MIPSOLVER_H
#define REMAT_LIB_PLANNING_MIPSOLVER_H

#include <string>
#include <utility>
#include <vector>

namespace remat::plan::detail {

/// min objective . x  subject to  rowLower <= A x <= rowUpper,
/// colLower <= x <= colUpper, x integer where `integer` says so.
struct MipModel {
  std::vector<double> colLower, colUpper, objective;
  std::vector<char> integer;
  std::vector<std::string> names;
  // The matrix as triplets (CoinPackedMatrix::appendRow is quadratic when
  // called row by row).
  std::vector<int> tripletRow, tripletCol;
  std::vector<double> tripletValue;
  std::vector<double> rowLower, rowUpper;

  int addColumn(double lo, double hi, double obj, bool isInt,
                std::string name = {});
  /// Terms with a negative column index are left out (variables fixed to 0).
  void addRow(const std::vector<std::pair<int, double>> &terms, double lo,
              double hi);
  int numColumns() const { return static_cast<int>(colLower.size()); }
  int numRows() const { return static_cast<int>(rowLower.size()); }
};

struct MipOptions {
  /// Wall-clock limit of branch and bound.
  double seconds = 10;
  /// Branch-and-bound nodes after the root; negative: no limit. A node limit
  /// (unlike the wall clock) gives the same answer on a loaded machine.
  int maxNodes = -1;
  /// Stop once (incumbent - bound) / incumbent is below this.
  double relativeGap = 1e-6;
  int logLevel = 0;
  /// A first incumbent, by column name (integer columns).
  std::vector<std::pair<std::string, double>> start;
  /// CBC's feasibility pump, a heuristic for incumbents. On the step-time
  /// relaxation with recomputation chains, CBC 2.10's pump after probing
  /// aborted in CLP (the `lowerValue <= upperValue' assertion of
  /// ClpNonLinearCost::checkInfeasibilities); a search that wants a bound
  /// turns it off.
  bool feasibilityPump = true;
};

struct MipResult {
  bool hasSolution = false;
  bool provenOptimal = false;
  bool provenInfeasible = false;
  std::vector<double> solution; // empty without a solution
  double objective = 0;         // of the solution
  /// CBC's proven lower bound on the optimum (minimisation): valid whether or
  /// not the search finished. -infinity when CBC proved nothing.
  double bound = 0;
};

MipResult solveMip(const MipModel &model, const MipOptions &options);

/// The LP relaxation alone (CLP's primal simplex): its optimum is a lower
/// bound on the MILP's. provenInfeasible when the LP has no solution.
MipResult solveLpRelaxation(const MipModel &model);

} // namespace remat::plan::detail

#endif // REMAT_LIB_PLANNING_MIPSOLVER_H
