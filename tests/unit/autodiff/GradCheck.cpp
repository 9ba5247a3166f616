//===- GradCheck.cpp - Finite-difference checks of remat-autodiff ---------===//

#include "GradCheck.h"

#include "remat/Dialect/RematDialect.h"
#include "remat/Dialect/RematOps.h"
#include "remat/Interpreter/Interpreter.h"
#include "remat/Interpreter/TensorConversion.h"
#include "remat/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iomanip>
#include <numeric>
#include <sstream>

using namespace mlir;

namespace remat::gradcheck {

//===----------------------------------------------------------------------===//
// Value generators and text helpers
//===----------------------------------------------------------------------===//

Fill uniform(double lo, double hi) {
  return [lo, hi](double *values, int64_t n, std::mt19937 &rng) {
    std::uniform_real_distribution<double> dist(lo, hi);
    for (int64_t i = 0; i < n; ++i)
      values[i] = dist(rng);
  };
}

Fill awayFromZero(double lo, double hi) {
  return [lo, hi](double *values, int64_t n, std::mt19937 &rng) {
    std::uniform_real_distribution<double> dist(lo, hi);
    std::bernoulli_distribution negative(0.5);
    for (int64_t i = 0; i < n; ++i)
      values[i] = negative(rng) ? -dist(rng) : dist(rng);
  };
}

Fill awayFrom(double lo, double hi, std::vector<double> kinks, double margin) {
  return [=](double *values, int64_t n, std::mt19937 &rng) {
    std::uniform_real_distribution<double> dist(lo, hi);
    for (int64_t i = 0; i < n; ++i) {
      double v;
      do
        v = dist(rng);
      while (std::any_of(kinks.begin(), kinks.end(), [&](double k) {
        return std::abs(v - k) < margin;
      }));
      values[i] = v;
    }
  };
}

Fill distinct(double lo, double hi) {
  return [lo, hi](double *values, int64_t n, std::mt19937 &rng) {
    double spacing = n > 1 ? (hi - lo) / double(n - 1) : 0.0;
    std::vector<int64_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    std::uniform_real_distribution<double> jitter(-0.25 * spacing, 0.25 * spacing);
    for (int64_t i = 0; i < n; ++i)
      values[i] = lo + spacing * double(order[i]) + jitter(rng);
  };
}

std::string tensorType(const rt::Shape &shape, const std::string &element) {
  std::string text = "tensor<";
  for (int64_t d : shape)
    text += std::to_string(d) + "x";
  return text + element + ">";
}

namespace {

void appendNested(std::string &text, const rt::Shape &shape, size_t dim,
                  const std::function<std::string()> &next) {
  if (dim == shape.size()) {
    text += next();
    return;
  }
  text += "[";
  for (int64_t i = 0; i < shape[dim]; ++i) {
    if (i)
      text += ", ";
    appendNested(text, shape, dim + 1, next);
  }
  text += "]";
}

} // namespace

std::string randomDense(const rt::Shape &shape, std::mt19937 &rng) {
  std::uniform_real_distribution<double> magnitude(0.25, 1.5);
  std::bernoulli_distribution negative(0.5);
  std::string text = "dense<";
  appendNested(text, shape, 0, [&] {
    double v = magnitude(rng);
    if (negative(rng))
      v = -v;
    char buffer[40];
    // %e always has a '.', which MLIR's float literals need.
    std::snprintf(buffer, sizeof buffer, "%.17e", v);
    return std::string(buffer);
  });
  return text + "> : " + tensorType(shape);
}

rt::Tensor i64Tensor(const rt::Shape &shape, const std::vector<int64_t> &values) {
  rt::Tensor t(rt::DType::I64, shape);
  EXPECT_EQ(size_t(t.numel()), values.size()) << "i64Tensor: wrong value count";
  std::copy_n(values.begin(), std::min<size_t>(values.size(), t.numel()),
              t.as<int64_t>());
  return t;
}

rt::Tensor boolTensor(const rt::Shape &shape, const std::vector<bool> &values) {
  rt::Tensor t(rt::DType::Bool, shape);
  EXPECT_EQ(size_t(t.numel()), values.size()) << "boolTensor: wrong value count";
  for (size_t i = 0; i < values.size() && int64_t(i) < t.numel(); ++i)
    t.as<uint8_t>()[i] = values[i] ? 1 : 0;
  return t;
}

//===----------------------------------------------------------------------===//
// GradCheck
//===----------------------------------------------------------------------===//

GradCheck::GradCheck(std::string source) : source_(std::move(source)) {}

GradCheck &GradCheck::fill(const std::string &name, Fill fill) {
  fills_[name] = std::move(fill);
  return *this;
}

GradCheck &GradCheck::value(const std::string &name, rt::Tensor tensor) {
  values_[name] = std::move(tensor);
  return *this;
}

namespace {

std::string argName(func::FuncOp func, unsigned index) {
  if (auto name = func.getArgAttrOfType<StringAttr>(index, RematDialect::kNameAttr))
    return name.str();
  return "arg" + std::to_string(index);
}

std::string argRole(func::FuncOp func, unsigned index) {
  if (auto role = func.getArgAttrOfType<StringAttr>(index, RematDialect::kRoleAttr))
    return role.str();
  return "input";
}

std::string resultAttr(func::FuncOp func, unsigned index, StringRef attr) {
  if (auto value = func.getResultAttrOfType<StringAttr>(index, attr))
    return value.str();
  return "";
}

double loadValue(const rt::Tensor &t, int64_t i) {
  switch (t.dtype()) {
  case rt::DType::F64: return t.as<double>()[i];
  case rt::DType::F32: return t.as<float>()[i];
  default: throw rt::RuntimeError("gradcheck: expected a f32 or f64 tensor");
  }
}

void storeValue(const rt::Tensor &t, int64_t i, double value) {
  switch (t.dtype()) {
  case rt::DType::F64: t.as<double>()[i] = value; break;
  case rt::DType::F32: t.as<float>()[i] = static_cast<float>(value); break;
  default: throw rt::RuntimeError("gradcheck: expected a f32 or f64 tensor");
  }
}

std::string multiIndex(const rt::Shape &shape, int64_t flat) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  std::string text = "[";
  for (size_t d = 0; d < index.size(); ++d)
    text += (d ? ", " : "") + std::to_string(index[d]);
  return text + "]";
}

/// A function computing only @train_step's loss (its result 0): used for
/// the differences when the pass appended the loss itself.
func::FuncOp buildLossOnly(ModuleOp module, func::FuncOp step) {
  func::FuncOp lossOnly = step.clone();
  lossOnly.setSymName("gradcheck_loss");
  module.push_back(lossOnly);
  Block &body = lossOnly.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  Value loss = ret.getOperand(0);
  OpBuilder b(ret);
  b.create<func::ReturnOp>(ret.getLoc(), loss);
  ret.erase();
  lossOnly.setFunctionType(FunctionType::get(
      module.getContext(), lossOnly.getArgumentTypes(), {loss.getType()}));
  lossOnly.removeResAttrsAttr();
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
    if (isOpTriviallyDead(&op))
      op.erase();
  return lossOnly;
}

} // namespace

void GradCheck::run() {
  MLIRContext context;
  context.loadDialect<RematDialect, func::FuncDialect>();
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    llvm::raw_string_ostream os(diagnostics);
    os << diag.getLocation() << ": " << diag << "\n";
    return success();
  });

  OwningOpRef<ModuleOp> original =
      parseSourceString<ModuleOp>(source_, ParserConfig(&context));
  if (!original) {
    ADD_FAILURE() << "failed to parse:\n" << diagnostics << "\n" << source_;
    return;
  }
  auto forward = original->lookupSymbol<func::FuncOp>("forward");
  if (!forward) {
    ADD_FAILURE() << "no @forward in:\n" << source_;
    return;
  }

  OwningOpRef<ModuleOp> trained(original->clone());
  PassManager pm(&context);
  AutodiffOptions options;
  options.loss = loss_;
  options.optimizer = "sgd";
  options.lr = 0.0;
  options.returnGradients = true;
  pm.addPass(createAutodiff(options));
  if (failed(pm.run(*trained))) {
    ADD_FAILURE() << "remat-autodiff failed:\n" << diagnostics << "\n" << source_;
    return;
  }
  auto step = trained->lookupSymbol<func::FuncOp>("train_step");
  if (!step) {
    ADD_FAILURE() << "remat-autodiff built no @train_step";
    return;
  }

  // The function whose loss the differences are taken of, and which of its
  // results is the loss.
  func::FuncOp lossFunc = forward;
  unsigned lossIndex = 0;
  if (loss_ == "auto") {
    bool found = false;
    for (auto [i, type] : llvm::enumerate(forward.getResultTypes())) {
      auto tensor = llvm::dyn_cast<RankedTensorType>(type);
      if (tensor && tensor.getRank() == 0 &&
          llvm::isa<FloatType>(tensor.getElementType())) {
        lossIndex = i;
        found = true;
        break;
      }
    }
    if (!found) {
      ADD_FAILURE() << "@forward has no scalar float result";
      return;
    }
  } else {
    lossFunc = buildLossOnly(*trained, step);
  }

  try {
    // Argument values, by name, in @train_step's argument order (a superset
    // of @forward's: appended labels, optimizer state, step).
    std::map<std::string, rt::Tensor> store;
    std::vector<std::string> parameters;
    for (unsigned i = 0; i < step.getNumArguments(); ++i) {
      std::string name = argName(step, i), role = argRole(step, i);
      auto type = llvm::cast<RankedTensorType>(step.getArgument(i).getType());
      rt::DType dtype = dtypeOf(type);
      rt::Shape shape = shapeOf(type);
      if (role == "parameter")
        parameters.push_back(name);
      if (auto it = values_.find(name); it != values_.end()) {
        rt::Tensor copy(it->second.dtype(), it->second.shape());
        std::memcpy(copy.data(), it->second.data(), copy.bytes());
        store[name] = std::move(copy);
        continue;
      }
      rt::Tensor t(dtype, shape); // zeros: the step counter, optimizer state
      if (role != "step" && role != "optimizer_state") {
        if (!rt::isFloat(dtype)) {
          ADD_FAILURE() << "argument '" << name << "' (" << typeToString(type)
                        << ") needs a value: call value(\"" << name << "\", ...)";
          return;
        }
        std::seed_seq seq{seed_, i};
        std::mt19937 rng(seq);
        std::vector<double> values(t.numel());
        const Fill *fill = &defaultFill_;
        if (auto it = fills_.find(name); it != fills_.end())
          fill = &it->second;
        if (*fill)
          (*fill)(values.data(), t.numel(), rng);
        else
          uniform(-2.0, 2.0)(values.data(), t.numel(), rng);
        for (int64_t k = 0; k < t.numel(); ++k)
          storeValue(t, k, values[k]);
      }
      store[name] = std::move(t);
    }
    auto argsOf = [&](func::FuncOp func) {
      std::vector<const rt::TensorView *> args;
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        args.push_back(&store.at(argName(func, i)).view());
      return args;
    };

    // Analytic gradients.
    Interpreter stepInterp(step);
    std::vector<rt::Tensor> outs = stepInterp.run(argsOf(step));
    std::map<std::string, const rt::Tensor *> gradients;
    double stepLoss = NAN;
    for (unsigned i = 0; i < step.getNumResults(); ++i) {
      std::string role = resultAttr(step, i, RematDialect::kRoleAttr);
      if (role == "gradient")
        gradients[resultAttr(step, i, RematDialect::kNameAttr)] = &outs[i];
      else if (role == "loss")
        stepLoss = loadValue(outs[i], 0);
    }

    Interpreter lossInterp(lossFunc);
    std::vector<const rt::TensorView *> lossArgs = argsOf(lossFunc);
    auto evaluate = [&] { return loadValue(lossInterp.run(lossArgs)[lossIndex], 0); };

    // The training step computes the same loss as the forward.
    double baseLoss = evaluate();
    EXPECT_NEAR(stepLoss, baseLoss, 1e-12 * std::max(1.0, std::fabs(baseLoss)))
        << "@train_step's loss differs from the forward's";

    for (const std::string &name : parameters) {
      auto it = gradients.find(name);
      if (it == gradients.end()) {
        ADD_FAILURE() << "parameter '" << name << "' got no gradient";
        continue;
      }
      const rt::Tensor &param = store.at(name);
      const rt::Tensor &grad = *it->second;
      if (grad.shape() != param.shape() || grad.dtype() != param.dtype()) {
        ADD_FAILURE() << "gradient of '" << name << "' has shape "
                      << rt::shapeToString(grad.shape()) << " ("
                      << rt::dtypeName(grad.dtype()) << "), parameter "
                      << rt::shapeToString(param.shape()) << " ("
                      << rt::dtypeName(param.dtype()) << ")";
        continue;
      }
      std::vector<double> numeric(param.numel());
      double maxNumeric = 0.0;
      for (int64_t k = 0; k < param.numel(); ++k) {
        double x = loadValue(param, k);
        storeValue(param, k, x + h_);
        double xPlus = loadValue(param, k); // as stored (f32 rounds)
        double lossPlus = evaluate();
        storeValue(param, k, x - h_);
        double xMinus = loadValue(param, k);
        double lossMinus = evaluate();
        storeValue(param, k, x);
        numeric[k] = (lossPlus - lossMinus) / (xPlus - xMinus);
        maxNumeric = std::max(maxNumeric, std::fabs(numeric[k]));
      }
      double bound = tol_ * std::max(1.0, maxNumeric);
      int64_t worst = -1, failing = 0;
      double worstError = -1.0;
      for (int64_t k = 0; k < param.numel(); ++k) {
        double error = std::fabs(loadValue(grad, k) - numeric[k]);
        if (std::isnan(error))
          error = INFINITY;
        if (error > bound)
          ++failing;
        if (error > worstError) {
          worstError = error;
          worst = k;
        }
      }
      if (worst >= 0 && worstError > bound) {
        ADD_FAILURE() << std::setprecision(12) << "gradient of '" << name << "' "
                      << rt::shapeToString(param.shape()) << ": " << failing
                      << " of " << param.numel()
                      << " elements off; worst at index " << worst << " "
                      << multiIndex(param.shape(), worst)
                      << ": analytic " << loadValue(grad, worst) << ", numeric "
                      << numeric[worst] << " (|diff| " << worstError
                      << " > bound " << bound << " = " << tol_
                      << " * max(1, max|numeric| = " << maxNumeric << "))";
      }
    }
  } catch (const rt::RuntimeError &e) {
    ADD_FAILURE() << "interpreter error: " << e.what();
  }
}

} // namespace remat::gradcheck
