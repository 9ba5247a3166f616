//===- MipSolver.cpp - Mixed-integer programs solved with CBC --------------===//

#include "MipSolver.h"

#include "CbcModel.hpp"
#include "CbcSolver.hpp"
#include "CoinPackedMatrix.hpp"
#include "OsiClpSolverInterface.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace remat::plan::detail {

int MipModel::addColumn(double lo, double hi, double obj, bool isInt,
                        std::string name) {
  colLower.push_back(lo);
  colUpper.push_back(hi);
  objective.push_back(obj);
  integer.push_back(isInt);
  if (name.empty())
    name = "x" + std::to_string(colLower.size() - 1);
  names.push_back(std::move(name));
  return static_cast<int>(colLower.size()) - 1;
}

void MipModel::addRow(const std::vector<std::pair<int, double>> &terms,
                      double lo, double hi) {
  int row = static_cast<int>(rowLower.size());
  // One entry per column: a column named twice (a multi-result value's
  // absence, counted once per result) gets the sum of its coefficients.
  // CoinPackedMatrix expects at most one entry per row and column.
  std::vector<std::pair<int, double>> merged;
  merged.reserve(terms.size());
  for (auto [c, v] : terms)
    if (c >= 0)
      merged.push_back({c, v});
  std::sort(merged.begin(), merged.end(),
            [](const auto &a, const auto &b) { return a.first < b.first; });
  size_t out = 0;
  for (size_t i = 0; i < merged.size(); ++i) {
    if (out > 0 && merged[out - 1].first == merged[i].first)
      merged[out - 1].second += merged[i].second;
    else
      merged[out++] = merged[i];
  }
  merged.resize(out);
  for (auto [c, v] : merged) {
    if (v == 0)
      continue;
    tripletRow.push_back(row);
    tripletCol.push_back(c);
    tripletValue.push_back(v);
  }
  rowLower.push_back(lo);
  rowUpper.push_back(hi);
}

namespace {

int noCallback(CbcModel *, int) { return 0; }

void load(const MipModel &model, OsiClpSolverInterface &solver,
          bool withIntegers) {
  CoinPackedMatrix matrix(/*colordered=*/true, model.tripletRow.data(),
                          model.tripletCol.data(), model.tripletValue.data(),
                          static_cast<CoinBigIndex>(model.tripletValue.size()));
  matrix.setDimensions(model.numRows(), model.numColumns());
  solver.loadProblem(matrix, model.colLower.data(), model.colUpper.data(),
                     model.objective.data(), model.rowLower.data(),
                     model.rowUpper.data());
  for (int c = 0; c < model.numColumns(); ++c) {
    if (withIntegers && model.integer[c])
      solver.setInteger(c);
    solver.setColName(c, model.names[c]);
  }
  // Rows are named too: with column names but none for rows, CLP's
  // presolve inside CBC read past the row-name array and crashed
  // (ClpPresolve::gutsOfPresolvedModel, seen on the CNN's MILP at 450 KB).
  for (int r = 0; r < model.numRows(); ++r)
    solver.setRowName(r, "row" + std::to_string(r));
  solver.messageHandler()->setLogLevel(0);
  solver.setHintParam(OsiDoReducePrint, true, OsiHintTry);
}

} // namespace

MipResult solveMip(const MipModel &model, const MipOptions &options) {
  OsiClpSolverInterface solver;
  load(model, solver, /*withIntegers=*/true);
  CbcModel cbc(solver);
  cbc.setLogLevel(options.logLevel);
  cbc.messageHandler()->setLogLevel(options.logLevel);
  if (!options.start.empty())
    cbc.setMIPStart(options.start);
  CbcSolverUsefulData data;
  data.noPrinting_ = options.logLevel == 0;
  data.useSignalHandler_ = false;
  CbcMain0(cbc, data);
  char seconds[32], gap[32];
  std::snprintf(seconds, sizeof seconds, "%.3f", std::max(0.01, options.seconds));
  std::snprintf(gap, sizeof gap, "%g", options.relativeGap);
  std::vector<std::string> args = {"remat-milp", "-log",
                                   std::to_string(options.logLevel),
                                   "-timeMode", "elapsed", "-sec", seconds,
                                   "-ratioGap", gap,
                                   // CBC 2.10's default SOS preprocessing
                                   // crashed in postProcess and once declared
                                   // a model with a feasible MIP start
                                   // infeasible; the models are small and
                                   // tight enough without it.
                                   "-preprocess", "off"};
  if (!options.feasibilityPump) {
    args.push_back("-feasibilityPump");
    args.push_back("off");
  }
  if (options.maxNodes >= 0) {
    args.push_back("-maxNodes");
    args.push_back(std::to_string(options.maxNodes));
  }
  // Extra CBC options for experiments (e.g. REMAT_CBC_ARGS="-cuts off").
  if (const char *extra = std::getenv("REMAT_CBC_ARGS")) {
    std::string tok;
    for (char ch : std::string(extra) + " ") {
      if (ch == ' ') {
        if (!tok.empty())
          args.push_back(tok);
        tok.clear();
      } else {
        tok += ch;
      }
    }
  }
  args.push_back("-solve");
  args.push_back("-quit");
  std::vector<const char *> argv;
  for (const auto &a : args)
    argv.push_back(a.c_str());
  CbcMain1(static_cast<int>(argv.size()), argv.data(), cbc, noCallback, data);

  MipResult result;
  const double *sol = cbc.bestSolution();
  result.provenInfeasible = cbc.isProvenInfeasible() && !sol;
  result.bound = cbc.getBestPossibleObjValue();
  if (!std::isfinite(result.bound) || result.bound <= -1e50)
    result.bound = -std::numeric_limits<double>::infinity();
  if (sol) {
    result.hasSolution = true;
    result.solution.assign(sol, sol + model.numColumns());
    result.objective = cbc.getObjValue();
    result.provenOptimal = cbc.isProvenOptimal();
  }
  return result;
}

MipResult solveLpRelaxation(const MipModel &model) {
  OsiClpSolverInterface solver;
  load(model, solver, /*withIntegers=*/false);
  // Primal simplex after presolve: on the step-time relaxation several times
  // faster than the dual (0.3 s against 0.5 s, and 1.3 s without presolve,
  // on GPT-2 small's).
  solver.setHintParam(OsiDoDualInInitial, false, OsiHintDo);
  solver.setHintParam(OsiDoPresolveInInitial, true, OsiHintDo);
  solver.initialSolve();
  MipResult result;
  result.bound = -std::numeric_limits<double>::infinity();
  if (solver.isProvenPrimalInfeasible()) {
    result.provenInfeasible = true;
    return result;
  }
  if (!solver.isProvenOptimal())
    return result;
  result.hasSolution = true;
  result.provenOptimal = true;
  result.objective = solver.getObjValue();
  result.bound = result.objective;
  const double *x = solver.getColSolution();
  result.solution.assign(x, x + model.numColumns());
  return result;
}

} // namespace remat::plan::detail
