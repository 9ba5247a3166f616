//===- PlannedIrPrinter.cpp - Planned IR laid out for reading and diffing -===//
//
// MLIR's printer writes a function signature on one line and has no hook for
// comments, so the module is printed as usual and then laid out line by
// line. Only whitespace and `//` comments are added, so the result parses
// back to the same IR.
//
//===----------------------------------------------------------------------===//

#include "PlannedIrPrinter.h"

#include "remat/Planning/ByteSize.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Format.h"

#include <string>

using namespace mlir;

namespace remat {

namespace {

/// The plan's headline figures as `//` lines, before @train_step.
void printPlanComment(const PlanReport &r, llvm::StringRef indent,
                      llvm::raw_ostream &os) {
  os << indent << "// remat plan: " << (r.feasible ? "FITS" : "DOES NOT FIT")
     << " a budget of " << formatBytes(r.budgetBytes) << " (" << r.strategy
     << " strategy, " << r.target << " target)\n";
  os << indent << "//   planned peak " << formatBytes(r.peakBytes)
     << " = persistent " << formatBytes(r.persistentBytes) << " + arena "
     << formatBytes(r.arenaBytes) << " + workspace "
     << formatBytes(r.workspaceBytes) << "\n";
  os << indent << "//   baseline peak " << formatBytes(r.baselinePeakBytes)
     << " (no recomputation)";
  if (r.minimumFeasibleBytes)
    os << "; minimum feasible " << formatBytes(*r.minimumFeasibleBytes);
  os << "\n";
  const double overhead =
      r.baselineStepSeconds > 0
          ? r.estimatedStepSeconds / r.baselineStepSeconds - 1
          : 0;
  os << indent << "//   estimated step time +"
     << llvm::format("%.1f", 100 * overhead) << "% over the baseline; "
     << r.recomputedOps
     << " ops recomputed (each marked \"// recomputed\" below)\n";
  if (!r.feasible && !r.infeasibleReason.empty())
    os << indent << "//   why: " << r.infeasibleReason << "\n";
}

/// Splits `line`'s parenthesised lists that follow `func.func @name` and
/// `->` at their top-level commas: one argument or result per line.
void printSignature(llvm::StringRef line, llvm::raw_ostream &os) {
  size_t indentEnd = line.find_first_not_of(' ');
  std::string inner(indentEnd + 4, ' ');
  int depth = 0;      // (), <>, [], {} nesting
  int listDepth = -1; // depth of the argument/result list we split
  bool inString = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (inString) {
      os << c;
      if (c == '\\' && i + 1 < line.size())
        os << line[++i];
      else if (c == '"')
        inString = false;
      continue;
    }
    switch (c) {
    case '"':
      inString = true;
      os << c;
      continue;
    case '(':
      // The argument list, and a parenthesised result list after "->".
      if (listDepth < 0 && depth == 0) {
        listDepth = depth + 1;
        os << c << "\n" << inner;
        ++depth;
        continue;
      }
      ++depth;
      break;
    case '<': case '[': case '{':
      ++depth;
      break;
    case '>':
      // "->" is an arrow, not a closing bracket.
      if (i > 0 && line[i - 1] == '-')
        break;
      --depth;
      break;
    case ']': case '}':
      --depth;
      break;
    case ')':
      if (depth == listDepth) {
        os << "\n" << std::string(indentEnd, ' ') << c;
        listDepth = -1;
        --depth;
        continue;
      }
      --depth;
      break;
    case ',':
      if (depth == listDepth) {
        os << ",\n" << inner;
        // Skip the space MLIR prints after the comma.
        if (i + 1 < line.size() && line[i + 1] == ' ')
          ++i;
        continue;
      }
      break;
    }
    os << c;
  }
  os << "\n";
}

/// A `return` of every new parameter and optimizer state: one operand and
/// one type per line, split at the commas outside brackets.
void printReturn(llvm::StringRef line, llvm::raw_ostream &os) {
  std::string inner(line.find_first_not_of(' ') + 4, ' ');
  int depth = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (c == '<' || c == '(' || c == '[' || c == '{')
      ++depth;
    else if (c == '>' || c == ')' || c == ']' || c == '}')
      --depth;
    if (c == ',' && depth == 0) {
      os << ",\n" << inner;
      if (i + 1 < line.size() && line[i + 1] == ' ')
        ++i;
      continue;
    }
    if (c == ':' && depth == 0 && i > 0 && line[i - 1] == ' ') {
      os << ":\n" << inner;
      if (i + 1 < line.size() && line[i + 1] == ' ')
        ++i;
      continue;
    }
    os << c;
  }
  os << "\n";
}

/// `remat.recompute_of = "NODE"` on the line, or "".
llvm::StringRef recomputedNode(llvm::StringRef line) {
  constexpr llvm::StringLiteral key = "remat.recompute_of = \"";
  size_t at = line.find(key);
  if (at == llvm::StringRef::npos)
    return "";
  llvm::StringRef rest = line.drop_front(at + key.size());
  return rest.take_until([](char c) { return c == '"'; });
}

} // namespace

void printPlannedModule(ModuleOp module, const PlanReport &report,
                        llvm::raw_ostream &os) {
  std::string text;
  llvm::raw_string_ostream printed(text);
  module.print(printed);
  llvm::StringRef rest(text);
  while (!rest.empty()) {
    auto [line, tail] = rest.split('\n');
    rest = tail;
    llvm::StringRef code = line.ltrim();
    if (code.starts_with("func.func @")) {
      llvm::StringRef indent = line.take_front(line.size() - code.size());
      if (code.starts_with("func.func @train_step("))
        printPlanComment(report, indent, os);
      else if (code.starts_with("func.func @forward("))
        os << indent << "// the model's forward function, as imported\n";
      printSignature(line, os);
      continue;
    }
    if (code.starts_with("return ") && line.size() > 120) {
      printReturn(line, os);
      continue;
    }
    os << line;
    if (llvm::StringRef node = recomputedNode(line); !node.empty())
      os << " // recomputed: " << node;
    os << "\n";
  }
}

} // namespace remat
