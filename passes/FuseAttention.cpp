//===- FuseAttention.cpp - Fuse exported attention into remat.attention ---===//
//
// Each softmax over the last axis is a candidate. From it the matcher walks
// back to the scores matmul (through masks and scalings) and forward to the
// matmul with the values (through an optional dropout), checks that nothing
// else reads the seq x seq intermediates, and replaces the whole block with
// one remat.attention. See Passes.td for what is matched.
//
//===----------------------------------------------------------------------===//

#include "ConstantEval.h"

#include "remat/Dialect/RematOps.h"
#include "remat/Passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <string>

namespace remat {
#define GEN_PASS_DEF_FUSEATTENTION
#include "remat/Passes/Passes.h.inc"
} // namespace remat

using namespace mlir;
using namespace remat;

namespace {

/// One masking step between the scores and the softmax: Add(scores, mask),
/// or Where(cond, fill, scores) / Where(cond, scores, fill).
struct MaskTerm {
  Value additive;
  Value condition, fill;
  bool scoresOnTrue = false;
};

/// A scalar the scores are multiplied (or divided) by that is only known at
/// run time (e.g. a scalar buffer of a dynamo export); it is applied to Q.
struct RuntimeScale {
  Value factor;
  bool divide;
};

/// Everything a match needs to build the fused op.
struct AttentionMatch {
  Value query, key, value;
  double scale = 1.0;
  SmallVector<RuntimeScale> runtimeScales;
  SmallVector<MaskTerm> masks; // in the order the graph applies them
  DropoutOp dropout;
  MatMulOp scoresMatmul, outputMatmul;
  SoftmaxOp softmax;
  /// The ops between the two matmuls, which the fused op replaces.
  SmallVector<Operation *> interior;
};

RankedTensorType rankedType(Value v) {
  return llvm::dyn_cast<RankedTensorType>(v.getType());
}

/// A float tensor with one element ([] or [1, 1, ...]).
bool isScalar(Value v) {
  auto type = rankedType(v);
  return type && llvm::isa<FloatType>(type.getElementType()) &&
         type.hasStaticShape() && type.getNumElements() == 1;
}

std::optional<double> constantScalar(Value v) {
  if (!isScalar(v))
    return std::nullopt;
  auto c = evaluateConstant(v, 1);
  if (!c)
    return std::nullopt;
  return c->values[0];
}

/// Strips multiplications and divisions of `x` by constant scalars (the
/// scale folded into Q or K), multiplying them into `scale`.
Value peelConstantScales(Value x, double &scale) {
  while (Operation *def = x.getDefiningOp()) {
    if (auto mul = llvm::dyn_cast<MulOp>(def)) {
      if (auto c = constantScalar(mul.getRhs());
          c && mul.getLhs().getType() == x.getType()) {
        scale *= *c, x = mul.getLhs();
        continue;
      }
      if (auto c = constantScalar(mul.getLhs());
          c && mul.getRhs().getType() == x.getType()) {
        scale *= *c, x = mul.getRhs();
        continue;
      }
    } else if (auto div = llvm::dyn_cast<DivOp>(def)) {
      if (auto c = constantScalar(div.getRhs());
          c && div.getLhs().getType() == x.getType()) {
        scale /= *c, x = div.getLhs();
        continue;
      }
    }
    break;
  }
  return x;
}

/// Walks from the softmax input back to the scores matmul, recording masks
/// and scalings. `seenScale`: a scaling was found closer to the softmax, so
/// a mask further back would be scaled too (not what the fused op does).
LogicalResult matchScores(Value x, AttentionMatch &m, bool seenScale,
                          std::string &why) {
  while (true) {
    Operation *def = x.getDefiningOp();
    if (!def) {
      why = "the scores are a function argument, not a matmul";
      return failure();
    }
    if (!x.hasOneUse()) {
      why = "the scores ('" + def->getName().getStringRef().str() +
            "' result) have other users";
      return failure();
    }
    if (auto mm = llvm::dyn_cast<MatMulOp>(def)) {
      if (mm.getTransposeLhs()) {
        why = "the scores matmul transposes its lhs";
        return failure();
      }
      m.scoresMatmul = mm;
      m.query = mm.getLhs();
      m.key = mm.getRhs(); // K^T until resolveKey, unless transpose_rhs
      return success();
    }
    m.interior.push_back(def);
    if (auto mul = llvm::dyn_cast<MulOp>(def)) {
      Value factor = isScalar(mul.getRhs()) ? mul.getRhs()
                     : isScalar(mul.getLhs()) ? mul.getLhs()
                                              : Value();
      Value other = factor == mul.getRhs() ? mul.getLhs() : mul.getRhs();
      if (!factor || other.getType() != x.getType()) {
        why = "the scores are multiplied by a non-scalar";
        return failure();
      }
      if (auto c = constantScalar(factor))
        m.scale *= *c;
      else
        m.runtimeScales.push_back({factor, false});
      seenScale = true, x = other;
      continue;
    }
    if (auto div = llvm::dyn_cast<DivOp>(def)) {
      if (!isScalar(div.getRhs()) || div.getLhs().getType() != x.getType()) {
        why = "the scores are divided by a non-scalar";
        return failure();
      }
      if (auto c = constantScalar(div.getRhs()))
        m.scale /= *c;
      else
        m.runtimeScales.push_back({div.getRhs(), true});
      seenScale = true, x = div.getLhs();
      continue;
    }
    if (seenScale && llvm::isa<AddOp, WhereOp>(def)) {
      why = "the mask is applied before the scaling";
      return failure();
    }
    if (auto where = llvm::dyn_cast<WhereOp>(def)) {
      MaskTerm term;
      term.condition = where.getCondition();
      if (where.getOnFalse().getType() == x.getType() &&
          isScalar(where.getOnTrue())) {
        term.fill = where.getOnTrue(), x = where.getOnFalse();
      } else if (where.getOnTrue().getType() == x.getType() &&
                 isScalar(where.getOnFalse())) {
        term.fill = where.getOnFalse(), x = where.getOnTrue();
        term.scoresOnTrue = true;
      } else {
        why = "a where selects between the scores and a non-scalar";
        return failure();
      }
      m.masks.insert(m.masks.begin(), term);
      continue;
    }
    if (auto add = llvm::dyn_cast<AddOp>(def)) {
      // Either operand may be the scores: try the one with the scores' type
      // first, and the other only if both have it.
      std::string firstWhy;
      for (auto [scores, mask] : {std::pair(add.getLhs(), add.getRhs()),
                                  std::pair(add.getRhs(), add.getLhs())}) {
        if (scores.getType() != x.getType())
          continue;
        AttentionMatch attempt = m;
        MaskTerm term;
        term.additive = mask;
        attempt.masks.insert(attempt.masks.begin(), term);
        if (succeeded(matchScores(scores, attempt, seenScale, why))) {
          m = std::move(attempt);
          return success();
        }
        if (firstWhy.empty())
          firstWhy = why;
      }
      why = firstWhy.empty() ? "an add to the scores changes their shape"
                             : firstWhy;
      return failure();
    }
    why = "the scores come from '" + def->getName().getStringRef().str() +
          "', not a matmul";
    return failure();
  }
}

/// Where the key comes from: `input` permuted by `perm` ([..., Sk, D]);
/// an empty `perm` leaves it as it is.
struct KeySource {
  Value input;
  SmallVector<int64_t> perm;
};

/// The key as [..., Sk, D]: undoes the transpose the scores matmul reads
/// (composing it with the exporter's own transpose where there is one) and
/// peels constant scales from either side of that transpose into m.scale.
KeySource resolveKey(AttentionMatch &m) {
  if (m.scoresMatmul.getTransposeRhs())
    return {peelConstantScales(m.key, m.scale), {}};
  Value keyT = peelConstantScales(m.key, m.scale);
  const int64_t rank = rankedType(keyT).getRank();
  KeySource source{keyT, {}};
  if (auto t = keyT.getDefiningOp<TransposeOp>()) {
    source.perm.assign(t.getPermutation().begin(), t.getPermutation().end());
    source.input = peelConstantScales(t.getInput(), m.scale);
  } else {
    for (int64_t d = 0; d < rank; ++d)
      source.perm.push_back(d);
  }
  std::swap(source.perm[rank - 1], source.perm[rank - 2]);
  bool identity = true;
  for (int64_t d = 0; d < rank; ++d)
    identity &= source.perm[d] == d;
  if (identity)
    source.perm.clear();
  return source;
}

/// Llama's repeat_kv: Reshape [B, Hkv, S, D] -> [B, Hkv, 1, S, D], Expand to
/// [B, Hkv, n, S, D], Reshape to [B, Hkv * n, S, D]. Returns the
/// [B, Hkv, S, D] source (query head h then reads kv head h / n, exactly what
/// the expansion did), or `x` itself.
Value stripRepeatKv(Value x) {
  auto merge = x.getDefiningOp<ReshapeOp>();
  auto expand = merge ? merge.getInput().getDefiningOp<ExpandOp>() : ExpandOp();
  auto split =
      expand ? expand.getInput().getDefiningOp<ReshapeOp>() : ReshapeOp();
  if (!split)
    return x;
  auto src = rankedType(split.getInput()), one = rankedType(split.getOutput()),
       many = rankedType(expand.getOutput()), out = rankedType(x);
  if (src.getRank() != 4 || one.getRank() != 5 || many.getRank() != 5)
    return x;
  auto s = src.getShape();
  SmallVector<int64_t> expectOne = {s[0], s[1], 1, s[2], s[3]};
  int64_t n = many.getDimSize(2);
  SmallVector<int64_t> expectMany = {s[0], s[1], n, s[2], s[3]};
  SmallVector<int64_t> expectOut = {s[0], s[1] * n, s[2], s[3]};
  if (one.getShape() != ArrayRef(expectOne) ||
      many.getShape() != ArrayRef(expectMany) ||
      out.getShape() != ArrayRef(expectOut))
    return x;
  return split.getInput();
}

/// The name of the first parameter `v` depends on, if any.
std::optional<std::string> trainedDependency(Value v, func::FuncOp func) {
  SmallVector<Value> work = {v};
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (auto arg = llvm::dyn_cast<BlockArgument>(x)) {
      if (arg.getOwner()->getParentOp() != func)
        continue;
      auto role = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                    RematDialect::kRoleAttr);
      if (role && role.getValue() == "parameter") {
        auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                      RematDialect::kNameAttr);
        return name ? name.str() : "#" + std::to_string(arg.getArgNumber());
      }
      continue;
    }
    Operation *def = x.getDefiningOp();
    if (def && seen.insert(def).second)
      work.append(def->operand_begin(), def->operand_end());
  }
  return std::nullopt;
}

/// True if every mask term is a compile-time constant and together they
/// hide exactly the keys j > i of each query i (with -inf or the element
/// type's lowest value, which softmax turns into exact zeros) and leave the
/// other scores untouched.
bool isCausal(ArrayRef<MaskTerm> masks, RankedTensorType scores) {
  const int64_t rank = scores.getRank();
  const auto &sem =
      llvm::cast<FloatType>(scores.getElementType()).getFloatSemantics();
  const double lowest = llvm::APFloat::getLargest(sem, true).convertToDouble();
  auto hides = [&](double v) { return v <= lowest; };
  struct Term {
    ConstantTensor value, condition;
    double fill;
    bool where, scoresOnTrue;
  };
  SmallVector<Term> terms;
  SmallVector<int64_t> shape(rank, 1);
  shape[rank - 1] = scores.getDimSize(rank - 1);
  shape[rank - 2] = scores.getDimSize(rank - 2);
  for (const MaskTerm &mask : masks) {
    Term t{};
    t.where = !mask.additive;
    auto tensor = evaluateConstant(t.where ? mask.condition : mask.additive);
    if (!tensor || tensor->shape.size() > (size_t)rank)
      return false;
    (t.where ? t.condition : t.value) = std::move(*tensor);
    if (t.where) {
      auto fill = constantScalar(mask.fill);
      if (!fill)
        return false;
      t.fill = *fill;
      t.scoresOnTrue = mask.scoresOnTrue;
    }
    // The leading dims a term varies over are checked one by one.
    const auto &termShape = (t.where ? t.condition : t.value).shape;
    for (size_t d = 0; d + 2 < termShape.size(); ++d)
      shape[rank - termShape.size() + d] =
          std::max(shape[rank - termShape.size() + d], termShape[d]);
    terms.push_back(std::move(t));
  }
  SmallVector<int64_t> index(rank, 0);
  for (bool done = false; !done;) {
    bool hidden = false, touched = false;
    for (const Term &t : terms) {
      double v = t.where ? ((t.condition.at(index) != 0) == t.scoresOnTrue
                                ? 0.0
                                : t.fill)
                         : t.value.at(index);
      // A where that keeps the scores adds nothing.
      bool keeps = t.where ? (t.condition.at(index) != 0) == t.scoresOnTrue
                           : v == 0.0;
      hidden |= !keeps && hides(v);
      touched |= !keeps;
    }
    const bool future = index[rank - 1] > index[rank - 2];
    if (future ? !hidden : touched)
      return false;
    done = true;
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < shape[d]) {
        done = false;
        break;
      }
      index[d] = 0;
    }
  }
  return true;
}

/// The additive mask the fused op adds to the scaled scores: each term as
/// the graph applied it (a where-mask as where(cond, fill, 0)), summed.
Value buildAdditiveMask(OpBuilder &b, Location loc, ArrayRef<MaskTerm> masks,
                        Type element) {
  Value total;
  for (const MaskTerm &mask : masks) {
    Value term = mask.additive;
    if (!term) {
      auto zeroType = RankedTensorType::get({}, element);
      Value zero = b.create<ConstantOp>(
          loc, zeroType,
          DenseElementsAttr::get(zeroType, b.getFloatAttr(element, 0.0)));
      Value fill = mask.fill;
      if (rankedType(fill).getRank() != 0)
        fill = b.create<ReshapeOp>(loc, zeroType, fill);
      term = mask.scoresOnTrue
                 ? b.create<WhereOp>(loc, mask.condition, zero, fill).getResult()
                 : b.create<WhereOp>(loc, mask.condition, fill, zero).getResult();
    }
    total = total ? b.create<AddOp>(loc, total, term).getResult() : term;
  }
  return total;
}

/// `x` with a leading 1 dim: [N, S, D] -> [1, N, S, D].
Value addUnitBatch(OpBuilder &b, Location loc, Value x) {
  auto type = rankedType(x);
  SmallVector<int64_t> shape = {1};
  shape.append(type.getShape().begin(), type.getShape().end());
  return b.create<ReshapeOp>(
      loc, RankedTensorType::get(shape, type.getElementType()), x);
}

std::string describe(Location loc) {
  if (auto name = llvm::dyn_cast<NameLoc>(loc))
    return name.getName().str();
  std::string s;
  llvm::raw_string_ostream os(s);
  loc.print(os);
  return s;
}

struct FuseAttentionPass
    : remat::impl::FuseAttentionBase<FuseAttentionPass> {
  using FuseAttentionBase::FuseAttentionBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<SoftmaxOp> candidates;
    func.walk([&](SoftmaxOp op) { candidates.push_back(op); });
    int64_t fused = 0, bytes = 0;
    for (SoftmaxOp softmax : candidates) {
      std::string why, how;
      const std::string where = describe(softmax.getLoc()); // before erasure
      if (succeeded(fuse(softmax, func, why, how, bytes)))
        ++fused;
      if (explain)
        llvm::errs() << "remat-fuse-attention: " << where
                     << ": " << (why.empty() ? "fused" + how
                                             : "not fused: " + why)
                     << "\n";
    }
    if (fused == 0)
      return;
    // Counts add up when the pass runs again on an already fused function.
    auto add = [&](StringRef name, int64_t n) {
      if (auto old = func->getAttrOfType<IntegerAttr>(name))
        n += old.getInt();
      func->setAttr(name, IntegerAttr::get(IntegerType::get(&getContext(), 64), n));
    };
    add("remat.fused_attention", fused);
    add("remat.fused_attention_bytes", bytes);
  }

  /// Matches the block around `softmax` and replaces it. On failure `why`
  /// says what did not match and the IR is unchanged.
  LogicalResult fuse(SoftmaxOp softmax, func::FuncOp func, std::string &why,
                     std::string &how, int64_t &bytes) {
    AttentionMatch m;
    m.softmax = softmax;
    auto scoresType = rankedType(softmax.getInput());
    const int64_t rank = scoresType.getRank();
    if (rank != 3 && rank != 4) {
      why = "the scores are rank " + std::to_string(rank) +
            ", not [batch, heads, seq, seq] or [batch * heads, seq, seq]";
      return failure();
    }
    if (softmax.getAxis() != rank - 1 && softmax.getAxis() != -1) {
      why = "the softmax is not over the last axis";
      return failure();
    }
    if (!scoresType.hasStaticShape()) {
      why = "the scores have a dynamic shape";
      return failure();
    }

    // Forward: [Dropout ->] MatMul(probabilities, V).
    Value probs = softmax.getOutput();
    if (!probs.hasOneUse()) {
      why = "the probabilities have other users";
      return failure();
    }
    Operation *user = *probs.getUsers().begin();
    if (auto dropout = llvm::dyn_cast<DropoutOp>(user)) {
      if (!dropout.getMask().use_empty() || !dropout.getOutput().hasOneUse()) {
        why = "the dropped-out probabilities or the dropout mask have other "
              "users";
        return failure();
      }
      m.dropout = dropout;
      probs = dropout.getOutput();
      user = *probs.getUsers().begin();
    }
    m.outputMatmul = llvm::dyn_cast<MatMulOp>(user);
    if (!m.outputMatmul || m.outputMatmul.getLhs() != probs ||
        m.outputMatmul.getTransposeLhs() || m.outputMatmul.getTransposeRhs()) {
      why = "the probabilities are read by '" +
            user->getName().getStringRef().str() +
            "', not as the lhs of a matmul with the values";
      return failure();
    }
    m.value = m.outputMatmul.getRhs();

    // Backward: the masks, the scaling and the scores matmul.
    if (failed(matchScores(softmax.getInput(), m, false, why)))
      return failure();
    auto sameBatch = [&](Value x) {
      auto t = rankedType(x);
      return t.getRank() == rank &&
             t.getShape().take_front(rank - 2) ==
                 scoresType.getShape().take_front(rank - 2);
    };
    if (!sameBatch(m.query) || !sameBatch(m.key) || !sameBatch(m.value)) {
      why = "the matmuls broadcast over batch or heads";
      return failure();
    }
    // (A boolean condition carries no gradient; its float parts might.)
    for (const MaskTerm &mask : m.masks)
      for (Value v : {mask.additive, mask.fill})
        if (v)
          if (auto param = trainedDependency(v, func)) {
            why = "the mask depends on parameter '" + *param +
                  "' (its gradient is the seq x seq tensor fusion avoids)";
            return failure();
          }

    KeySource keySource = resolveKey(m);
    Value query = peelConstantScales(m.query, m.scale);
    if (!std::isfinite(m.scale) || m.scale == 0.0) {
      why = "the scale is " + std::to_string(m.scale);
      return failure();
    }

    // Rewrite: nothing below fails.
    OpBuilder b(m.outputMatmul);
    Location loc = softmax.getLoc();
    Type element = scoresType.getElementType();
    Value key = keySource.input;
    if (!keySource.perm.empty())
      key = b.create<TransposeOp>(m.scoresMatmul.getLoc(), key,
                                  b.getDenseI64ArrayAttr(keySource.perm));
    Value value = m.value;
    const bool causal = !m.masks.empty() && isCausal(m.masks, scoresType);
    Value mask = m.masks.empty() || causal
                     ? Value()
                     : buildAdditiveMask(b, loc, m.masks, element);
    if (rank == 3) {
      query = addUnitBatch(b, loc, query);
      key = addUnitBatch(b, loc, key);
      value = addUnitBatch(b, loc, value);
      if (mask && rankedType(mask).getRank() == 3)
        mask = addUnitBatch(b, loc, mask);
    } else {
      Value k = stripRepeatKv(key), v = stripRepeatKv(value);
      if (rankedType(k).getDimSize(1) == rankedType(v).getDimSize(1))
        key = k, value = v;
    }
    // After the reshape, so that a [1, 1, 1, 1] factor keeps Q 4-D.
    for (const RuntimeScale &s : m.runtimeScales)
      query = s.divide ? b.create<DivOp>(loc, query, s.factor).getResult()
                       : b.create<MulOp>(loc, query, s.factor).getResult();
    auto attention = b.create<AttentionOp>(
        loc, query, key, value, mask, b.getF64FloatAttr(m.scale),
        b.getBoolAttr(causal),
        b.getF64FloatAttr(m.dropout ? m.dropout.getRatio().convertToDouble()
                                    : 0.0),
        b.getI64IntegerAttr(m.dropout ? m.dropout.getSeed() : 0),
        b.getI64IntegerAttr(m.dropout ? m.dropout.getStream() : 0));
    Value output = attention.getOutput();
    if (rank == 3)
      output = b.create<ReshapeOp>(loc, m.outputMatmul.getType(), output);
    m.outputMatmul.getResult().replaceAllUsesWith(output);

    // What the unfused graph kept for backward at seq x seq size.
    const int64_t elements = scoresType.getNumElements();
    const int64_t elementBytes = element.getIntOrFloatBitWidth() / 8;
    bytes += elements * elementBytes;
    if (m.dropout)
      bytes += elements * (elementBytes + 1);

    // Erase the block, then whatever only it read (transposes, scalings).
    SmallVector<Operation *> dead = {m.outputMatmul};
    if (m.dropout)
      dead.push_back(m.dropout);
    dead.push_back(softmax);
    dead.append(m.interior.begin(), m.interior.end());
    dead.push_back(m.scoresMatmul);
    llvm::SmallPtrSet<Operation *, 8> deadSet(dead.begin(), dead.end());
    SmallVector<Value> inputs;
    for (Operation *op : dead)
      for (Value operand : op->getOperands())
        if (!deadSet.contains(operand.getDefiningOp()))
          inputs.push_back(operand);
    for (Operation *op : dead) {
      op->dropAllUses();
      op->erase();
    }
    eraseDeadProducers(inputs);

    auto heads = rankedType(attention.getKey()).getDimSize(1);
    how = " (scale " + std::to_string(m.scale) +
          (causal ? ", causal" : mask ? ", additive mask" : "") +
          (heads != rankedType(attention.getQuery()).getDimSize(1)
               ? ", " + std::to_string(heads) + " kv heads"
               : "") +
          (m.runtimeScales.empty() ? "" : ", run-time scale on Q") +
          (m.dropout ? ", dropout" : "") + ")";
    return success();
  }

  /// Erases the ops defining `values` that are now unused, and so on up.
  static void eraseDeadProducers(ArrayRef<Value> values) {
    SmallVector<Operation *> work;
    for (Value v : values)
      if (Operation *op = v.getDefiningOp())
        work.push_back(op);
    llvm::SmallPtrSet<Operation *, 16> erased;
    while (!work.empty()) {
      Operation *op = work.pop_back_val();
      // Softmaxes are left alone: they are candidates still to visit.
      if (erased.contains(op) || !op->use_empty() ||
          !isMemoryEffectFree(op) || llvm::isa<SoftmaxOp>(op))
        continue;
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp())
          work.push_back(def);
      erased.insert(op);
      op->erase();
    }
  }
};

} // namespace
