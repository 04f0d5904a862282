/// nncc-pipeline-parallel: the model cut into stages, each run by its own
/// ranks over micro-batches (GPipe forward, 1F1B training).
#include "passes/Loss.h"
#include "passes/Optimizer.h"
#include "passes/Passes.h"
#include "passes/TrainStep.h"

#include "dialects/Dist/DistOps.h"
#include "dialects/NN/NNOps.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"

namespace nncc {
#define GEN_PASS_DEF_PIPELINEPARALLELPASS
#include "passes/Passes.h.inc"
} // namespace nncc

using namespace mlir;
using namespace nncc;

namespace {

/// The stage of an op while the pass runs (ops built after the cut, the
/// loss's, have none: they belong to the last stage).
constexpr llvm::StringLiteral kOpStageAttr = "nncc.stage";

/// Ops every stage recomputes where it needs them instead of receiving
/// them: constants and loads of module state.
bool isFree(Operation *op) { return isa<nn::ConstantOp, ml_program::GlobalLoadOp>(op); }

int64_t elements(Type t) {
  auto r = dyn_cast<RankedTensorType>(t);
  return r && r.hasStaticShape() ? r.getNumElements() : 1;
}

/// What balancing the stages weighs: multiply-adds of contractions (the
/// contracted size times the result), the result's elements otherwise.
int64_t estimatedCost(Operation *op) {
  int64_t out = 0;
  for (Type t : op->getResultTypes())
    out += elements(t);
  if (isa<nn::MatMulOp, nn::GemmOp>(op)) {
    auto lhs = cast<RankedTensorType>(op->getOperand(0).getType());
    return out * std::max<int64_t>(1, lhs.getShape().back());
  }
  if (isa<nn::ConvOp>(op)) {
    auto w = cast<RankedTensorType>(op->getOperand(1).getType());
    return out * std::max<int64_t>(1, elements(w) / std::max<int64_t>(1, w.getShape().front()));
  }
  return std::max<int64_t>(1, out);
}

/// Marks each op of `forward` but free ones with its stage: contiguous runs
/// of ops in program order whose estimated costs are closest to equal, cut
/// only where no trainable weight has users on both sides (its gradient
/// would then need two stages).
LogicalResult cutIntoStages(func::FuncOp forward, int64_t stages, ArrayRef<ml_program::GlobalOp> trainable) {
  SmallVector<Operation *> ops;
  for (Operation &op : forward.getBody().front().without_terminator())
    if (!isFree(&op))
      ops.push_back(&op);
  int64_t n = static_cast<int64_t>(ops.size());
  if (n < stages)
    return forward.emitError("nncc-pipeline-parallel: 'forward' has ")
           << n << " ops, fewer than the " << stages << " stages";
  llvm::DenseMap<Operation *, int64_t> position;
  SmallVector<int64_t> prefix{0};
  for (auto [i, op] : llvm::enumerate(ops)) {
    position[op] = static_cast<int64_t>(i);
    prefix.push_back(prefix.back() + estimatedCost(op));
  }
  // A cut after position i is allowed unless a trainable weight is used on
  // both sides: first[g] <= i < last[g].
  llvm::DenseSet<StringAttr> trainableNames;
  for (ml_program::GlobalOp g : trainable)
    trainableNames.insert(g.getSymNameAttr());
  std::vector<bool> allowed(static_cast<size_t>(n), true);
  llvm::DenseMap<StringAttr, std::pair<int64_t, int64_t>> span;
  forward.walk([&](ml_program::GlobalLoadOp load) {
    StringAttr name = load.getGlobal().getLeafReference();
    if (!trainableNames.contains(name))
      return;
    for (Operation *user : load->getUsers()) {
      int64_t p = position.lookup(user);
      auto [it, inserted] = span.try_emplace(name, p, p);
      it->second = {std::min(it->second.first, p), std::max(it->second.second, p)};
    }
  });
  for (auto &[name, range] : span)
    for (int64_t i = range.first; i < range.second; ++i)
      allowed[i] = false;
  SmallVector<int64_t> cuts; // the last position of each stage but the last
  for (int64_t k = 1; k < stages; ++k) {
    double target = static_cast<double>(prefix.back()) * k / stages;
    int64_t lo = cuts.empty() ? 0 : cuts.back() + 1, hi = n - (stages - k) - 1, best = -1;
    for (int64_t i = lo; i <= hi; ++i)
      if (allowed[i] && (best < 0 || std::abs(prefix[i + 1] - target) < std::abs(prefix[best + 1] - target)))
        best = i;
    if (best < 0)
      return forward.emitError("nncc-pipeline-parallel: 'forward' has no place for cut ")
             << k << " of " << stages - 1 << " where no trainable weight is used on both sides";
    cuts.push_back(best);
  }
  Builder b(forward.getContext());
  int64_t stage = 0;
  for (auto [i, op] : llvm::enumerate(ops)) {
    op->setAttr(kOpStageAttr, b.getI64IntegerAttr(stage));
    if (stage < stages - 1 && static_cast<int64_t>(i) == cuts[stage])
      ++stage;
  }
  return success();
}

/// A function cut into stages (its ops marked by cutIntoStages; unmarked
/// ones belong to the last stage): what crosses each cut, and each stage as
/// a function of its own.
class StagedFunction {
public:
  StagedFunction(func::FuncOp func, int64_t stages) : func_(func), stages_(stages) {
    crossing_.resize(stages - 1);
    Block &body = func.getBody().front();
    for (Operation &op : body.without_terminator()) {
      if (isFree(&op))
        continue;
      for (Value r : op.getResults())
        for (OpOperand &use : r.getUses())
          for (int64_t c = stageOf(&op); c < stageOf(use.getOwner()); ++c)
            crossing_[c].insert(r);
    }
  }

  int64_t stageOf(Operation *op) const {
    if (isa<func::ReturnOp>(op))
      return stages_ - 1;
    auto attr = op->getAttrOfType<IntegerAttr>(kOpStageAttr);
    return attr ? attr.getInt() : stages_ - 1;
  }

  /// The values stage c sends to stage c + 1, in a fixed order.
  ArrayRef<Value> crossing(int64_t c) const { return crossing_[c].getArrayRef(); }

  /// Stage `s` as a private function `name`(func's arguments..., what
  /// crosses into s) -> (what crosses out of s), or func's results for the
  /// last stage.
  func::FuncOp build(int64_t s, StringRef name) const {
    OpBuilder b(func_);
    SmallVector<Type> inputs(func_.getArgumentTypes());
    ArrayRef<Value> in = s > 0 ? crossing(s - 1) : ArrayRef<Value>();
    for (Value v : in)
      inputs.push_back(v.getType());
    auto ret = cast<func::ReturnOp>(func_.getBody().front().getTerminator());
    SmallVector<Value> out;
    if (s + 1 < stages_)
      llvm::append_range(out, crossing(s));
    else
      llvm::append_range(out, ret.getOperands());
    auto fn = func::FuncOp::create(b, func_.getLoc(), name, b.getFunctionType(inputs, ValueRange(out).getTypes()));
    fn.setPrivate();
    for (unsigned i = 0; i < func_.getNumArguments(); ++i)
      fn.setArgAttrs(i, func_.getArgAttrDict(i));
    if (s + 1 == stages_)
      for (unsigned i = 0; i < func_.getNumResults(); ++i)
        fn.setResultAttrs(i, func_.getResultAttrDict(i));
    Block *body = fn.addEntryBlock();
    OpBuilder fb = OpBuilder::atBlockBegin(body);
    IRMapping map;
    map.map(func_.getArguments(), body->getArguments().take_front(func_.getNumArguments()));
    map.map(in, body->getArguments().drop_front(func_.getNumArguments()));
    // Free ops are cloned before their first user in this stage.
    auto operandsReady = [&](Operation *op) {
      for (Value v : op->getOperands())
        if (!map.contains(v))
          if (Operation *def = v.getDefiningOp(); def && isFree(def))
            map.map(def->getResults(), fb.clone(*def)->getResults());
    };
    for (Operation &op : func_.getBody().front().without_terminator()) {
      if (isFree(&op) || stageOf(&op) != s)
        continue;
      operandsReady(&op);
      fb.clone(op, map);
    }
    operandsReady(ret);
    SmallVector<Value> results;
    for (Value v : out)
      results.push_back(map.lookupOrDefault(v));
    func::ReturnOp::create(fb, func_.getLoc(), results);
    fn.walk([](Operation *op) { op->removeAttr(kOpStageAttr); });
    return fn;
  }

private:
  mutable func::FuncOp func_; // FuncOp's accessors are not const
  int64_t stages_;
  SmallVector<llvm::SetVector<Value>> crossing_;
};

bool isFloatTensor(Type t) { return isa<FloatType>(cast<RankedTensorType>(t).getElementType()); }

SmallVector<Type> floatTypes(ArrayRef<Value> values) {
  SmallVector<Type> types;
  for (Value v : values)
    if (isFloatTensor(v.getType()))
      types.push_back(v.getType());
  return types;
}

/// Builds the ops of one stage's entry: micro-batch slices of its inputs,
/// the stage's function inlined, and its messages to the neighbouring
/// stages.
class EntryBuilder {
public:
  EntryBuilder(OpBuilder &b, Location loc, int64_t stage, int64_t stages, int64_t microBatches)
      : b_(b), loc_(loc), stage_(stage), stages_(stages), microBatches_(microBatches) {}

  /// Micro-batch `i` of `whole` (the entry's input of M micro-batches along
  /// the first dimension), of type `type`.
  Value slice(Value whole, Type type, int64_t i) {
    if (microBatches_ == 1)
      return whole;
    auto t = cast<RankedTensorType>(type);
    SmallVector<int64_t> starts(t.getRank(), 0), ends(t.getShape()), steps(t.getRank(), 1);
    starts[0] = i * t.getDimSize(0);
    ends[0] = starts[0] + t.getDimSize(0);
    return nn::SliceOp::create(b_, loc_, t, whole, Value(), Value(), Value(), Value(),
                               b_.getDenseI64ArrayAttr(starts), b_.getDenseI64ArrayAttr(ends),
                               b_.getDenseI64ArrayAttr(steps));
  }

  SmallVector<Value> inlineCall(func::FuncOp callee, ValueRange operands) { return inlineBody(b_, callee, operands); }

  void send(ValueRange values, int64_t peer) {
    if (!values.empty())
      dist::SendOp::create(b_, loc_, values, peer, stages_, "pipeline");
  }

  SmallVector<Value> recv(TypeRange types, int64_t peer) {
    if (types.empty())
      return {};
    auto op = dist::RecvOp::create(b_, loc_, types, peer, stages_, "pipeline");
    return SmallVector<Value>(op.getResults());
  }

  /// The last stage's results, sent to every other stage, which returns
  /// them as well.
  SmallVector<Value> shareResults(ValueRange results, TypeRange types) {
    if (stage_ + 1 == stages_) {
      for (int64_t q = 0; q + 1 < stages_; ++q)
        send(results, q);
      return SmallVector<Value>(results);
    }
    return recv(types, stages_ - 1);
  }

  /// Σ values (the micro-batches' means) times 1/M: the mean over the batch.
  Value meanOf(ArrayRef<Value> values) {
    Value sum = values.front();
    for (Value v : values.drop_front())
      sum = nn::AddOp::create(b_, loc_, sum.getType(), sum, v);
    return scaled(sum, 1.0 / microBatches_);
  }

  Value scaled(Value v, double c) {
    auto t = cast<RankedTensorType>(v.getType());
    if (c == 1.0)
      return v;
    Value k = nn::ConstantOp::create(b_, loc_, t, DenseElementsAttr::get(t, b_.getFloatAttr(t.getElementType(), c)));
    return nn::MulOp::create(b_, loc_, t, v, k);
  }

  /// Elementwise max of check flags: any micro-batch's failure fails the run.
  Value anyOf(ArrayRef<Value> flags) {
    Value any = flags.front();
    for (Value f : flags.drop_front())
      any = nn::MaxOp::create(b_, loc_, any.getType(), any, f);
    return any;
  }

  /// The results of micro-batch runs combined: a check flag by max, a loss
  /// (`losses`) by mean, an output by concatenation along the batch axis.
  SmallVector<Value> combine(ArrayRef<SmallVector<Value>> runs, func::FuncOp fn, bool losses) {
    SmallVector<Value> combined;
    for (unsigned r = 0; r < fn.getNumResults(); ++r) {
      SmallVector<Value> parts;
      for (const SmallVector<Value> &run : runs)
        parts.push_back(run[r]);
      if (fn.getResultAttr(r, "nncc.check"))
        combined.push_back(anyOf(parts));
      else if (losses)
        combined.push_back(meanOf(parts));
      else if (parts.size() == 1)
        combined.push_back(parts.front());
      else
        combined.push_back(concat(parts));
    }
    return combined;
  }

  Value concat(ArrayRef<Value> parts) {
    auto t = cast<RankedTensorType>(parts.front().getType());
    SmallVector<int64_t> shape(t.getShape());
    shape[0] *= static_cast<int64_t>(parts.size());
    return nn::ConcatOp::create(b_, loc_, RankedTensorType::get(shape, t.getElementType()), parts, 0);
  }

private:
  OpBuilder &b_;
  Location loc_;
  int64_t stage_, stages_, microBatches_;
};

/// An entry `<name>.stage<s>` with `fn`'s arguments and results, but with
/// `microBatches` micro-batches along the first dimension of its data
/// inputs (the first `numData` arguments) and outputs, and `extra` arguments
/// after them.
func::FuncOp createStageEntry(ModuleOp module, func::FuncOp fn, StringRef name, int64_t stage, unsigned numData,
                              int64_t microBatches, ArrayRef<std::pair<Type, StringRef>> extra,
                              TypeRange resultTypes) {
  OpBuilder b(module.getBodyRegion());
  b.setInsertionPointToEnd(module.getBody());
  auto batched = [&](Type t) {
    auto r = cast<RankedTensorType>(t);
    SmallVector<int64_t> shape(r.getShape());
    if (!shape.empty())
      shape[0] *= microBatches;
    return RankedTensorType::get(shape, r.getElementType());
  };
  SmallVector<Type> inputs;
  for (Type t : fn.getArgumentTypes().take_front(numData))
    inputs.push_back(batched(t));
  for (auto &[t, n] : extra)
    inputs.push_back(t);
  std::string full = (name + ".stage" + Twine(stage)).str();
  auto entry = func::FuncOp::create(b, NameLoc::get(b.getStringAttr(name)), full,
                                    b.getFunctionType(inputs, resultTypes));
  for (unsigned i = 0; i < numData; ++i)
    entry.setArgAttrs(i, fn.getArgAttrDict(i));
  for (auto [i, e] : llvm::enumerate(extra))
    entry.setArgAttr(numData + i, "nn.name", b.getStringAttr(e.second));
  for (unsigned i = 0; i < fn.getNumResults(); ++i)
    entry.setResultAttrs(i, fn.getResultAttrDict(i));
  entry->setAttr(dist::kPipelineStageAttrName, b.getI64IntegerAttr(stage));
  SymbolTable(module).insert(entry);
  entry.addEntryBlock();
  return entry;
}

/// The whole-batch result types of `fn` run over micro-batches: losses and
/// flags as they are, outputs M times longer along the first dimension.
SmallVector<Type> combinedTypes(func::FuncOp fn, bool losses, int64_t microBatches) {
  SmallVector<Type> types;
  for (auto [r, t] : llvm::enumerate(fn.getResultTypes())) {
    auto tensor = cast<RankedTensorType>(t);
    if (losses || fn.getResultAttr(r, "nncc.check") || tensor.getRank() == 0) {
      types.push_back(t);
      continue;
    }
    SmallVector<int64_t> shape(tensor.getShape());
    shape[0] *= microBatches;
    types.push_back(RankedTensorType::get(shape, tensor.getElementType()));
  }
  return types;
}

/// The arguments of micro-batch `i`'s run of a stage function: slices of
/// the entry's data inputs, `rest` (weights), and what the stage receives.
SmallVector<Value> stageArguments(EntryBuilder &e, func::FuncOp entry, func::FuncOp fn, unsigned numData,
                                  ValueRange rest, const StagedFunction &staged, int64_t s, int64_t i) {
  SmallVector<Value> args;
  for (unsigned j = 0; j < numData; ++j)
    args.push_back(e.slice(entry.getArgument(j), fn.getArgumentTypes()[j], i));
  llvm::append_range(args, rest);
  if (s > 0)
    llvm::append_range(args, e.recv(ValueRange(staged.crossing(s - 1)).getTypes(), s - 1));
  return args;
}

/// `<name>.stage<s>` for every stage s: `fn` run over the micro-batches one
/// after the other (GPipe's forward), its results combined on the last
/// stage and sent to the others.
void buildInferenceEntries(ModuleOp module, func::FuncOp fn, StringRef name, bool losses, int64_t stages,
                           int64_t microBatches) {
  StagedFunction staged(fn, stages);
  SmallVector<Type> resultTypes = combinedTypes(fn, losses, microBatches);
  for (int64_t s = 0; s < stages; ++s) {
    func::FuncOp stageFn = staged.build(s, (name + ".stage" + Twine(s) + ".fn").str());
    func::FuncOp entry = createStageEntry(module, fn, name, s, fn.getNumArguments(), microBatches, {}, resultTypes);
    OpBuilder b = OpBuilder::atBlockBegin(&entry.getBody().front());
    EntryBuilder e(b, entry.getLoc(), s, stages, microBatches);
    SmallVector<SmallVector<Value>> runs;
    for (int64_t i = 0; i < microBatches; ++i) {
      SmallVector<Value> args = stageArguments(e, entry, fn, fn.getNumArguments(), {}, staged, s, i);
      SmallVector<Value> results = e.inlineCall(stageFn, args);
      if (s + 1 < stages)
        e.send(results, s + 1);
      else
        runs.push_back(results);
    }
    SmallVector<Value> combined = s + 1 == stages ? e.combine(runs, fn, losses) : SmallVector<Value>();
    func::ReturnOp::create(b, entry.getLoc(), e.shareResults(combined, resultTypes));
    stageFn.erase();
  }
}

/// The order of a stage's forward (true) and backward (false) runs of the
/// micro-batches in 1F1B: as many forwards as stages after this one (the
/// warm-up), then one forward and one backward in turn, then the backwards
/// left. Each stage then holds at most `stages - s` micro-batches'
/// activations, not all M (PipeDream-Flush, Megatron-LM's schedule).
SmallVector<std::pair<bool, int64_t>> oneForwardOneBackward(int64_t s, int64_t stages, int64_t microBatches) {
  int64_t warmup = std::min(stages - s - 1, microBatches);
  SmallVector<std::pair<bool, int64_t>> order;
  int64_t f = 0, bwd = 0;
  for (; f < warmup; ++f)
    order.push_back({true, f});
  for (; f < microBatches; ++f, ++bwd) {
    order.push_back({true, f});
    order.push_back({false, bwd});
  }
  for (; bwd < microBatches; ++bwd)
    order.push_back({false, bwd});
  return order;
}

struct PipelineParallelPass : nncc::impl::PipelineParallelPassBase<PipelineParallelPass> {
  using PipelineParallelPassBase::PipelineParallelPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (stages < 2)
      return;
    auto forward = SymbolTable(module).lookup<func::FuncOp>("forward");
    if (!forward) {
      module.emitError("nncc-pipeline-parallel: the module has no entry 'forward'");
      return signalPassFailure();
    }
    if (microBatches < 1) {
      module.emitError("nncc-pipeline-parallel: micro-batches must be at least 1");
      return signalPassFailure();
    }
    // Micro-batches' outputs are concatenated along their first dimension.
    for (auto [i, t] : llvm::enumerate(forward.getResultTypes()))
      if (microBatches > 1 && cast<RankedTensorType>(t).getRank() == 0) {
        forward.emitError("nncc-pipeline-parallel: output ")
            << i << " is a scalar: the outputs of " << static_cast<int64_t>(microBatches)
            << " micro-batches are concatenated along their first dimension";
        return signalPassFailure();
      }
    OptimizerOptions o{optimizer, momentum, beta1, beta2, eps, weightDecay, gradClip};
    SmallVector<ml_program::GlobalOp> trainable;
    if (train) {
      if (failed(checkOptimizerOptions(module, "nncc-pipeline-parallel", o)))
        return signalPassFailure();
      trainable = trainableGlobals(module);
      if (trainable.empty()) {
        module.emitError("nncc-pipeline-parallel: the model has no trainable weights");
        return signalPassFailure();
      }
    }
    if (failed(cutIntoStages(forward, stages, trainable)))
      return signalPassFailure();
    if (train && failed(buildTraining(module, forward, trainable, o)))
      return signalPassFailure();
    buildInferenceEntries(module, forward, "forward", /*losses=*/false, stages, microBatches);
    forward.erase();
    dist::setParallelLayout(module, dist::ParallelGroup::Pipeline, stages);
  }

  /// eval_step and train_step for every stage; each global marked with the
  /// stage that updates it.
  LogicalResult buildTraining(ModuleOp module, func::FuncOp forward, ArrayRef<ml_program::GlobalOp> trainable,
                              const OptimizerOptions &o) {
    LossOptions lossOptions{loss, output, labelName};
    FailureOr<func::FuncOp> evalFn = buildLossFunction(module, forward, "eval_step.fn", lossOptions);
    if (failed(evalFn))
      return failure();
    buildInferenceEntries(module, *evalFn, "eval_step", /*losses=*/true, stages, microBatches);
    FailureOr<func::FuncOp> lossFn = buildLossFunction(module, forward, "train_step.loss", lossOptions);
    if (failed(lossFn))
      return failure();
    auto [differentiable, weights] = withWeightsAsArguments(*lossFn, trainable, "train_step.fn");
    unsigned numData = (*lossFn).getNumArguments();
    (*lossFn).erase();
    (*evalFn).erase();
    if (weights.empty()) {
      differentiable.erase();
      return module.emitError("nncc-pipeline-parallel: the loss depends on no trainable weight");
    }
    FailureOr<OptimizerState> state = getOrCreateOptimizerState(module, weights, o);
    if (failed(state))
      return failure();
    // Each weight belongs to the stage of its users (cutIntoStages keeps
    // them in one); its optimizer state with it.
    StagedFunction staged(differentiable, stages);
    Builder attrs(module.getContext());
    for (auto global : module.getOps<ml_program::GlobalOp>())
      global->setAttr(dist::kPipelineStageAttrName, attrs.getI64IntegerAttr(-1));
    SmallVector<int64_t> owner;
    for (auto [w, g] : llvm::enumerate(weights)) {
      BlockArgument arg = differentiable.getArgument(numData + w);
      int64_t stage = arg.use_empty() ? stages - 1 : staged.stageOf(*arg.getUsers().begin());
      owner.push_back(stage);
      g->setAttr(dist::kPipelineStageAttrName, attrs.getI64IntegerAttr(stage));
      for (auto *moments : {&state->first, &state->second})
        if (!moments->empty())
          (*moments)[w]->setAttr(dist::kPipelineStageAttrName, attrs.getI64IntegerAttr(stage));
    }
    for (int64_t s = 0; s < stages; ++s)
      if (failed(buildTrainStep(module, differentiable, staged, numData, weights, owner, *state, o, s)))
        return failure();
    differentiable.erase();
    return success();
  }

  /// train_step.stage<s>(data..., labels, lr) -> (loss[, flag]): the 1F1B
  /// runs of the micro-batches through stage s, its weights' gradients
  /// summed over them, and one optimizer step of its weights.
  LogicalResult buildTrainStep(ModuleOp module, func::FuncOp fn, const StagedFunction &staged, unsigned numData,
                               ArrayRef<ml_program::GlobalOp> weights, ArrayRef<int64_t> owner,
                               const OptimizerState &state, const OptimizerOptions &o, int64_t s) {
    func::FuncOp stageFn = staged.build(s, ("train_step.stage" + Twine(s) + ".fn").str());
    for (Operation &op : stageFn.getBody().front().without_terminator())
      op.setAttr(kForwardOpAttr, UnitAttr::get(&getContext()));
    FailureOr<func::FuncOp> grad = buildGradientFunction(stageFn, "");
    if (failed(grad))
      return failure();
    // The gradient function returns one cotangent per float argument, in
    // argument order.
    SmallVector<int64_t> gradIndex(stageFn.getNumArguments(), -1);
    int64_t next = 0;
    for (auto [i, t] : llvm::enumerate(stageFn.getArgumentTypes()))
      if (isFloatTensor(t))
        gradIndex[i] = next++;
    SmallVector<Type> resultTypes(fn.getResultTypes());
    auto scalar = RankedTensorType::get({}, Float32Type::get(&getContext()));
    std::pair<Type, StringRef> lr{scalar, "lr"};
    func::FuncOp entry = createStageEntry(module, fn, "train_step", s, numData, microBatches, {lr}, resultTypes);
    Location loc = entry.getLoc();
    OpBuilder b = OpBuilder::atBlockBegin(&entry.getBody().front());
    EntryBuilder e(b, loc, s, stages, microBatches);
    SmallVector<Value> weightValues;
    for (ml_program::GlobalOp w : weights)
      weightValues.push_back(
          ml_program::GlobalLoadOp::create(b, loc, w.getType(), FlatSymbolRefAttr::get(w.getSymNameAttr())));
    unsigned numIn = s > 0 ? staged.crossing(s - 1).size() : 0;
    SmallVector<SmallVector<Value>> args(microBatches), runs(microBatches);
    SmallVector<Value> weightGrads(weights.size());
    for (auto [forwardRun, i] : oneForwardOneBackward(s, stages, microBatches)) {
      if (forwardRun) {
        args[i] = stageArguments(e, entry, fn, numData, weightValues, staged, s, i);
        runs[i] = e.inlineCall(stageFn, args[i]);
        if (s + 1 < stages)
          e.send(runs[i], s + 1);
        continue;
      }
      // d loss_i = 1/M: the loss is the mean of the micro-batches' means.
      SmallVector<Value> cotangents;
      if (s + 1 == stages) {
        for (Value r : runs[i])
          if (isFloatTensor(r.getType())) {
            auto t = cast<RankedTensorType>(r.getType());
            cotangents.push_back(nn::ConstantOp::create(
                b, loc, t, DenseElementsAttr::get(t, b.getFloatAttr(t.getElementType(), 1.0 / microBatches))));
          }
      } else {
        cotangents = e.recv(floatTypes(staged.crossing(s)), s + 1);
      }
      SmallVector<Value> operands(args[i]);
      llvm::append_range(operands, cotangents);
      SmallVector<Value> grads = e.inlineCall(*grad, operands);
      if (s > 0) {
        SmallVector<Value> back;
        unsigned first = stageFn.getNumArguments() - numIn;
        for (unsigned a = first; a < stageFn.getNumArguments(); ++a)
          if (gradIndex[a] >= 0)
            back.push_back(grads[gradIndex[a]]);
        e.send(back, s - 1);
      }
      for (unsigned w = 0; w < weights.size(); ++w) {
        if (owner[w] != s)
          continue;
        Value g = grads[gradIndex[numData + w]];
        weightGrads[w] = weightGrads[w] ? nn::AddOp::create(b, loc, g.getType(), weightGrads[w], g) : g;
      }
    }
    SmallVector<ml_program::GlobalOp> params;
    SmallVector<Value> paramGrads;
    OptimizerState mine{{}, {}, state.step};
    for (unsigned w = 0; w < weights.size(); ++w) {
      if (owner[w] != s)
        continue;
      params.push_back(weights[w]);
      paramGrads.push_back(synchronized(b, loc, weightGrads[w]));
      if (!state.first.empty())
        mine.first.push_back(state.first[w]);
      if (!state.second.empty())
        mine.second.push_back(state.second[w]);
    }
    // The loss before the update (nncc-data-parallel's buckets go after
    // their last value, so it must come before the update reads them).
    SmallVector<Value> results;
    if (s + 1 == stages) {
      results = e.combine(runs, fn, /*losses=*/true);
      for (Value &r : results)
        if (isFloatTensor(r.getType()))
          r = synchronized(b, loc, r);
    }
    // The clipping norm's all-reduce is pure: a stage without weights would
    // lose it to canonicalization and leave the others waiting.
    if (o.gradClip > 0 && params.empty())
      return module.emitError("nncc-pipeline-parallel: stage ")
             << s << " updates no weight, but --grad-clip sums the gradient norm over every stage";
    buildOptimizerStep(b, loc, params, mine, paramGrads, entry.getArgument(entry.getNumArguments() - 1), o,
                       stages);
    func::ReturnOp::create(b, loc, e.shareResults(results, resultTypes));
    grad->erase();
    stageFn.erase();
    return success();
  }
};

} // namespace
