/// nncc-tensor-parallel: Megatron's tensor parallelism as a sharding of the
/// forward graph over the T ranks of a tensor group.
///
/// A column-parallel layer (a matmul by a weight whose columns split in T)
/// starts a region where values are split along one axis; the split follows
/// the graph through the ops that keep every rank's part independent (bias
/// adds, activations, the reshapes and transposes of attention heads, the
/// batched matmuls and softmax of attention) and ends at a row-parallel
/// layer (a matmul contracting the split axis), whose partial products are
/// summed over the group. A region that meets anything else (a residual add
/// of a whole value, a norm over the split axis, an output) is given up, and
/// its layers stay whole on every rank. So the split is right by
/// construction, and the collectives are Megatron's minimum: one sum per
/// region forward, one per region input backward.
///
/// An embedding (a Gather of a weight table's rows by token ids) whose rows
/// divide by T is split over the vocabulary (Megatron's
/// VocabParallelEmbedding): rank t holds rows [t V/T, (t+1) V/T), looks up
/// the ids in its range, zeroes the others, and one sum over the group
/// makes the embedding whole.
#include "passes/Passes.h"

#include "dialects/NN/Gradients/GradientBuilder.h"
#include "dialects/NN/NNOps.h"
#include "nncc/module_abi.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"

namespace nncc {
#define GEN_PASS_DEF_TENSORPARALLELPASS
#include "passes/Passes.h.inc"
} // namespace nncc

using namespace mlir;
using namespace nncc;

namespace {

using Origins = llvm::SmallSetVector<Operation *, 4>;

RankedTensorType tensorType(Value v) { return dyn_cast<RankedTensorType>(v.getType()); }

/// A weight the pass may cut: an nn.constant, or the load of a global.
bool isWeight(Value v) {
  Operation *def = v.getDefiningOp();
  return def && (isa<nn::ConstantOp>(def) || isa<ml_program::GlobalLoadOp>(def));
}

/// How a weight is cut: along `axis`, in `blocks` equal blocks each cut in
/// the parts (a fused Q/K/V projection: each rank takes its heads of Q, of
/// K and of V).
struct Cut {
  int64_t axis, blocks;
  bool operator==(const Cut &o) const { return axis == o.axis && blocks == o.blocks; }
};

/// The sharding of one function for a given set of column-parallel layers
/// (with the blocks of each whose output is split in equal chunks later):
/// the split axis (and blocks) of every split value, the weights to cut and
/// the layers whose result is a partial sum. `conflict` names the layers
/// whose regions reach an op the split cannot pass, and the op;
/// `wantBlocks`, the layers whose output a Split cuts in chunks (their
/// blocks, for the next try).
class Sharding {
public:
  Sharding(func::FuncOp func, int64_t parts, const llvm::SetVector<Operation *> &columns,
           const llvm::DenseMap<Operation *, int64_t> &columnBlocks)
      : parts(parts), columns(columns), columnBlocks(columnBlocks) {
    for (Operation &op : func.getBody().front()) {
      if (failed(visit(&op)))
        return;
    }
  }

  int64_t parts;
  const llvm::SetVector<Operation *> &columns;
  const llvm::DenseMap<Operation *, int64_t> &columnBlocks;
  llvm::DenseMap<Value, int64_t> splitAxis;
  /// Split values whose axis holds several blocks, each split (absent: one).
  llvm::DenseMap<Value, int64_t> splitBlocks;
  llvm::DenseMap<Value, Origins> origins;
  /// Weight value -> how its users need it cut.
  llvm::MapVector<Value, Cut> cutWeights;
  llvm::DenseMap<Operation *, int64_t> wantBlocks;
  llvm::SetVector<Operation *> partialSums;
  Origins conflict;
  Operation *conflictOp = nullptr;

private:
  int64_t axisOf(Value v) const {
    auto it = splitAxis.find(v);
    return it == splitAxis.end() ? -1 : it->second;
  }
  int64_t blocksOf(Value v) const { return std::max<int64_t>(1, splitBlocks.lookup(v)); }
  /// The blocks a column-parallel layer is cut in (1 until a Split asks).
  int64_t cutBlocks(Operation *column) const { return std::max<int64_t>(1, columnBlocks.lookup(column)); }

  LogicalResult fail(Operation *op) {
    conflictOp = op;
    if (columns.contains(op))
      conflict.insert(op);
    for (Value v : op->getOperands())
      if (auto it = origins.find(v); it != origins.end())
        conflict.insert(it->second.begin(), it->second.end());
    return failure();
  }

  void split(Value result, int64_t axis, Operation *op, int64_t blocks = 1) {
    splitAxis[result] = axis;
    if (blocks > 1)
      splitBlocks[result] = blocks;
    Origins &o = origins[result];
    if (columns.contains(op))
      o.insert(op);
    for (Value v : op->getOperands())
      if (auto it = origins.find(v); it != origins.end())
        o.insert(it->second.begin(), it->second.end());
  }

  /// Whether `weight` can be cut along `axis` in parts (one demand per
  /// weight: a weight two layers need cut differently, or one cut and one
  /// whole, is refused at the rewrite).
  bool cut(Value weight, int64_t axis, int64_t blocks = 1) {
    auto type = tensorType(weight);
    if (!isWeight(weight) || !type || !type.hasStaticShape() || type.getDimSize(axis) % (parts * blocks) != 0)
      return false;
    auto [it, inserted] = cutWeights.insert({weight, Cut{axis, blocks}});
    return inserted || it->second == Cut{axis, blocks};
  }

  /// A Split along a split axis in k equal chunks: each chunk's part is a
  /// part of the chunk when the axis holds k blocks; with one block, the
  /// layers before it are asked to cut in k blocks (the next try).
  LogicalResult visitSplit(nn::SplitOp op) {
    Value in = op.getInput();
    // nn ops hold axes in [0, rank) (their verifiers).
    int64_t a = axisOf(in), axis = op.getAxis(), k = op.getNumResults();
    if (op.getSplit() || axis != a) {
      if (op.getSplit() || blocksOf(in) != 1)
        return fail(op);
      for (Value r : op.getResults())
        split(r, a, op);
      return success();
    }
    int64_t size = tensorType(op.getResult(0)).getDimSize(a);
    if (llvm::any_of(op.getResults(), [&](Value r) { return tensorType(r).getDimSize(a) != size; }))
      return fail(op);
    if (blocksOf(in) == k) {
      for (Value r : op.getResults())
        split(r, a, op);
      return success();
    }
    if (blocksOf(in) == 1 && k > 1 && size % parts == 0)
      if (auto it = origins.find(in); it != origins.end()) {
        for (Operation *origin : it->second)
          wantBlocks[origin] = k;
        conflictOp = op;
        return failure();
      }
    return fail(op);
  }

  LogicalResult visit(Operation *op) {
    bool anySplit = llvm::any_of(op->getOperands(), [&](Value v) { return axisOf(v) >= 0; });
    if (auto matmul = dyn_cast<nn::MatMulOp>(op))
      return visitMatMul(matmul);
    if (auto gemm = dyn_cast<nn::GemmOp>(op))
      return visitGemm(gemm);
    if (!anySplit)
      return success();
    if (auto splitOp = dyn_cast<nn::SplitOp>(op))
      return visitSplit(splitOp);
    if (auto kind = dyn_cast<nn::FusionKindOpInterface>(op)) {
      if (kind.getFusionKind() == nn::FusionKind::Elementwise && op->getNumOperands() == 1) {
        split(op->getResult(0), axisOf(op->getOperand(0)), op, blocksOf(op->getOperand(0)));
        return success();
      }
      if (kind.getFusionKind() == nn::FusionKind::Broadcast)
        return visitBroadcast(op);
    }
    // Blocks pass only elementwise ops, bias adds and the Split they meet.
    if (llvm::any_of(op->getOperands(), [&](Value v) { return blocksOf(v) > 1; }))
      return fail(op);
    if (auto transpose = dyn_cast<nn::TransposeOp>(op)) {
      auto perm = transpose.getPerm();
      int64_t a = axisOf(transpose.getInput());
      for (auto [i, p] : llvm::enumerate(perm))
        if (p == a)
          split(transpose.getResult(), i, op);
      return success();
    }
    if (auto reshape = dyn_cast<nn::ReshapeOp>(op))
      return visitReshape(reshape);
    if (isa<nn::SoftmaxOp, nn::LogSoftmaxOp>(op)) {
      int64_t a = axisOf(op->getOperand(0));
      if (op->getAttrOfType<IntegerAttr>("axis").getInt() == a)
        return fail(op);
      split(op->getResult(0), a, op);
      return success();
    }
    if (auto norm = dyn_cast<nn::LayerNormOp>(op)) {
      int64_t a = axisOf(norm.getInput());
      if (a < 0 || a >= int64_t(norm.getAxis()))
        return fail(op);
      split(norm.getResult(), a, op);
      return success();
    }
    return fail(op);
  }

  /// Column-parallel (a whole input by a weight cut in columns), row-parallel
  /// (contracting the split axis: a partial sum), or a batched product whose
  /// operands are split alike (attention's heads).
  LogicalResult visitMatMul(nn::MatMulOp op) {
    Value lhs = op.getLhs(), rhs = op.getRhs();
    if (blocksOf(lhs) > 1 || blocksOf(rhs) > 1)
      return fail(op);
    auto lt = tensorType(lhs), rt = tensorType(rhs), ot = tensorType(op.getResult());
    if (!lt || !rt || !ot || lt.getRank() < 2 || rt.getRank() < 2)
      return axisOf(lhs) < 0 && axisOf(rhs) < 0 ? success() : fail(op);
    int64_t la = axisOf(lhs), ra = axisOf(rhs);
    int64_t lr = lt.getRank(), rr = rt.getRank(), r = ot.getRank();
    if (la < 0 && ra < 0) {
      if (!columns.contains(op))
        return success();
      int64_t blocks = cutBlocks(op);
      if (!cut(rhs, rr - 1, blocks))
        return fail(op);
      split(op.getResult(), r - 1, op, blocks);
      return success();
    }
    // Contracting the split axis: every rank holds a partial product.
    bool lhsK = la == lr - 1, rhsK = ra == rr - 2;
    if (lhsK && (rhsK || (ra < 0 && rr == 2 && cut(rhs, 0)))) {
      partialSums.insert(op);
      return success();
    }
    // A batch axis split in both (or broadcast in the whole one).
    auto batchAxis = [&](int64_t a, int64_t rank) { return a >= 0 && a < rank - 2 ? a + (r - rank) : -1; };
    int64_t lb = batchAxis(la, lr), rb = batchAxis(ra, rr);
    if ((la < 0 || lb >= 0) && (ra < 0 || rb >= 0)) {
      int64_t out = lb >= 0 ? lb : rb;
      if (lb >= 0 && rb >= 0 && lb != rb)
        return fail(op);
      Value whole = la < 0 ? lhs : (ra < 0 ? rhs : Value());
      if (whole) {
        auto wt = tensorType(whole);
        int64_t wa = out - (r - wt.getRank());
        if (wa >= 0 && wt.getDimSize(wa) != 1)
          return fail(op);
      }
      split(op.getResult(), out, op);
      return success();
    }
    // Rows of the left operand, or columns of the right one, by a whole other.
    if (la == lr - 2 && ra < 0) {
      split(op.getResult(), r - 2, op);
      return success();
    }
    if (ra == rr - 1 && la < 0) {
      split(op.getResult(), r - 1, op);
      return success();
    }
    return fail(op);
  }

  /// ONNX Gemm (PyTorch's Linear on 2-D inputs): column-parallel with its
  /// weight and bias cut along N, or row-parallel with its weight cut along
  /// K (the bias is then added once, after the sum: see the rewrite).
  LogicalResult visitGemm(nn::GemmOp op) {
    Value a = op.getA(), b = op.getB(), c = op.getC();
    int64_t aa = axisOf(a);
    if (blocksOf(a) > 1)
      return fail(op);
    if (axisOf(b) >= 0 || (c && axisOf(c) >= 0) || (aa >= 0 && op.getTransA()))
      return fail(op);
    int64_t nAxis = op.getTransB() ? 0 : 1, kAxis = 1 - nAxis;
    if (aa < 0) {
      if (!columns.contains(op))
        return success();
      int64_t blocks = cutBlocks(op);
      if (!cut(b, nAxis, blocks))
        return fail(op);
      if (auto ct = c ? tensorType(c) : RankedTensorType(); ct && ct.getRank() > 0 && ct.getShape().back() != 1 &&
                                                          !cut(c, ct.getRank() - 1, blocks))
        return fail(op);
      split(op.getResult(), 1, op, blocks);
      return success();
    }
    if (aa != 1 || !cut(b, kAxis))
      return fail(op);
    partialSums.insert(op);
    return success();
  }

  /// Broadcasting ops: every split operand split along the same result axis;
  /// a whole operand broadcast along it, or a weight cut alike (a bias).
  LogicalResult visitBroadcast(Operation *op) {
    auto rt = tensorType(op->getResult(0));
    if (!rt)
      return fail(op);
    int64_t r = rt.getRank(), out = -1, blocks = 0;
    for (Value v : op->getOperands())
      if (int64_t a = axisOf(v); a >= 0) {
        int64_t o = a + (r - tensorType(v).getRank());
        if ((out >= 0 && o != out) || (blocks && blocks != blocksOf(v)))
          return fail(op);
        out = o;
        blocks = blocksOf(v);
      }
    for (Value v : op->getOperands()) {
      if (axisOf(v) >= 0)
        continue;
      auto t = tensorType(v);
      int64_t a = out - (r - t.getRank());
      if (a < 0 || t.getDimSize(a) == 1)
        continue;
      if (!cut(v, a, blocks))
        return fail(op);
    }
    split(op->getResult(0), out, op, blocks);
    return success();
  }

  /// A reshape keeps the split when the split axis's blocks stay contiguous
  /// blocks of one result axis: the same number of elements before both
  /// axes, and that result axis divisible by the parts (a heads axis split
  /// from, or merged back into, the features).
  LogicalResult visitReshape(nn::ReshapeOp op) {
    auto in = tensorType(op.getInput()), out = tensorType(op.getResult());
    int64_t a = axisOf(op.getInput());
    if (!in || !out || !in.hasStaticShape() || !out.hasStaticShape())
      return fail(op);
    int64_t before = 1;
    for (int64_t i = 0; i < a; ++i)
      before *= in.getDimSize(i);
    int64_t prefix = 1;
    for (int64_t j = 0; j < out.getRank(); ++j) {
      if (prefix == before && out.getDimSize(j) > 1 && out.getDimSize(j) % parts == 0) {
        split(op.getResult(), j, op);
        return success();
      }
      prefix *= out.getDimSize(j);
    }
    return fail(op);
  }
};

/// The ops of `module` that name global `symbol` (its loads and stores), or
/// none when an op of unknown kind hides them.
std::optional<SmallVector<Operation *>> globalUsers(ModuleOp module, StringAttr symbol) {
  std::optional<SymbolTable::UseRange> uses = SymbolTable::getSymbolUses(symbol, module);
  if (!uses)
    return std::nullopt;
  SmallVector<Operation *> users;
  for (const SymbolTable::SymbolUse &use : *uses)
    users.push_back(use.getUser());
  return users;
}

/// The part type of `type` cut in `parts` along `axis`.
RankedTensorType partType(RankedTensorType type, int64_t axis, int64_t parts) {
  SmallVector<int64_t> dims(type.getShape());
  dims[axis] /= parts;
  return RankedTensorType::get(dims, type.getElementType());
}

/// The embeddings `func` may split over the vocabulary: Gathers along axis 0
/// of a float weight table whose rows divide by `parts`, by whole (unsplit)
/// ids. A table with any other use (an LM head tied to it, a layer cutting
/// it) or another load of its global stays whole, so every rank still sees
/// it as the unsplit function does.
SmallVector<nn::GatherOp> vocabLookups(ModuleOp module, func::FuncOp func, const Sharding &s, int64_t parts,
                                       bool shardConstants) {
  llvm::SetVector<Value> tables;
  func.walk([&](nn::GatherOp op) { tables.insert(op.getInput()); });
  SmallVector<nn::GatherOp> lookups;
  for (Value table : tables) {
    auto type = tensorType(table);
    if (!isWeight(table) || !type || !type.hasStaticShape() || type.getRank() < 1 ||
        !isa<FloatType>(type.getElementType()) || type.getDimSize(0) % parts != 0 || s.cutWeights.count(table) ||
        (isa<nn::ConstantOp>(table.getDefiningOp()) && !shardConstants))
      continue;
    bool ok = llvm::all_of(table.getUses(), [&](OpOperand &use) {
      auto gather = dyn_cast<nn::GatherOp>(use.getOwner());
      auto ids = gather ? tensorType(gather.getIndices()) : RankedTensorType();
      return gather && use.getOperandNumber() == 0 && gather.getAxis() == 0 && ids && ids.hasStaticShape() &&
             !s.splitAxis.count(gather.getIndices());
    });
    if (auto load = table.getDefiningOp<ml_program::GlobalLoadOp>()) {
      auto users = globalUsers(module, load.getGlobalAttr().getRootReference());
      auto global = SymbolTable::lookupNearestSymbolFrom<ml_program::GlobalOp>(load, load.getGlobalAttr());
      ok &= users && users->size() == 1 && global && global.getIsMutable() &&
            !global->hasAttr(dist::kShardAttrName);
    }
    if (ok)
      for (Operation *user : table.getUsers())
        lookups.push_back(cast<nn::GatherOp>(user));
  }
  return lookups;
}

struct TensorParallelPass : nncc::impl::TensorParallelPassBase<TensorParallelPass> {
  using TensorParallelPassBase::TensorParallelPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (parts < 1) {
      module.emitError("nncc-tensor-parallel: tensor-parallel must be at least 1");
      return signalPassFailure();
    }
    if (parts == 1)
      return;
    auto func = SymbolTable(module).lookup<func::FuncOp>(entry);
    if (!func) {
      module.emitError("nncc-tensor-parallel: the module has no entry '") << entry << "'";
      return signalPassFailure();
    }
    // Every matmul by a weight whose columns split is a candidate; regions
    // that fail give their layers up, until the rest shard cleanly.
    llvm::SetVector<Operation *> columns;
    auto candidate = [&](Operation *op, Value weight, int64_t nAxis) {
      auto wt = tensorType(weight);
      if (wt && wt.getRank() == 2 && isWeight(weight) && wt.getDimSize(nAxis) % parts == 0 &&
          (shardConstants || !isa<nn::ConstantOp>(weight.getDefiningOp())))
        columns.insert(op);
    };
    func.walk([&](Operation *op) {
      if (auto matmul = dyn_cast<nn::MatMulOp>(op))
        candidate(op, matmul.getRhs(), 1);
      else if (auto gemm = dyn_cast<nn::GemmOp>(op); gemm && !gemm.getTransA())
        candidate(op, gemm.getB(), gemm.getTransB() ? 0 : 1);
    });
    llvm::DenseMap<Operation *, int64_t> columnBlocks;
    std::optional<Sharding> sharding;
    while (true) {
      sharding.emplace(func, parts, columns, columnBlocks);
      if (!sharding->conflictOp)
        checkWeights(module, func, *sharding);
      if (!sharding->conflictOp)
        break;
      // Layers asked for blocks try again with them (once: a layer asked
      // again, for other blocks, is given up).
      if (!sharding->wantBlocks.empty()) {
        for (auto [op, blocks] : sharding->wantBlocks)
          if (!columnBlocks.insert({op, blocks}).second)
            columns.remove(op);
        continue;
      }
      if (sharding->conflict.empty()) {
        sharding->conflictOp->emitError("nncc-tensor-parallel: cannot split this op over the tensor group");
        return signalPassFailure();
      }
      for (Operation *op : sharding->conflict)
        columns.remove(op);
    }
    SmallVector<nn::GatherOp> lookups = vocabLookups(module, func, *sharding, parts, shardConstants);
    if (sharding->partialSums.empty() && lookups.empty()) {
      func.emitError("nncc-tensor-parallel: no layer of '")
          << entry << "' splits over " << int64_t(parts)
          << " ranks (Megatron pairs: a matmul by a weight whose columns divide by the ranks, then "
             "one contracting them; embeddings: a Gather of a table whose rows divide by the ranks)";
      return signalPassFailure();
    }
    // Embedding tables are cut in rows, like a column-parallel weight.
    for (nn::GatherOp lookup : lookups)
      sharding->cutWeights.insert({lookup.getInput(), Cut{0, 1}});
    if (failed(rewrite(module, *sharding)) || failed(splitLookups(module, lookups)))
      return signalPassFailure();
    dist::setParallelLayout(module, dist::ParallelGroup::Tensor, parts);
  }

  /// A weight is cut once for all its users: every user of a cut weight must
  /// take it cut, and a cut global is read only by this function's loads of
  /// the same cut. When a weight fails this, the regions of its users are
  /// given up (`s.conflict`).
  void checkWeights(ModuleOp module, func::FuncOp func, Sharding &s) {
    for (auto [weight, how] : s.cutWeights) {
      bool ok = true;
      if (auto load = weight.getDefiningOp<ml_program::GlobalLoadOp>()) {
        auto users = globalUsers(module, load.getGlobalAttr().getRootReference());
        ok = users.has_value();
        for (Operation *user : users.value_or(SmallVector<Operation *>{})) {
          auto other = dyn_cast<ml_program::GlobalLoadOp>(user);
          if (!other || other->getParentOfType<func::FuncOp>() != func) {
            ok = false;
          } else if (other.getResult() != weight) {
            auto it = s.cutWeights.find(other.getResult());
            ok &= it != s.cutWeights.end() && it->second == how;
          }
        }
      }
      for (Operation *user : weight.getUsers())
        ok &= s.splitAxis.count(user->getResult(0)) || s.partialSums.contains(user);
      if (ok)
        continue;
      s.conflictOp = weight.getDefiningOp();
      for (Operation *user : weight.getUsers())
        for (Value v : llvm::concat<Value>(user->getOperands(), user->getResults()))
          if (auto it = s.origins.find(v); it != s.origins.end())
            s.conflict.insert(it->second.begin(), it->second.end());
      return;
    }
  }

  /// Megatron's VocabParallelEmbedding: each rank looks up the ids in its
  /// rows (shifted by its offset t V/T and clamped into them), zeroes the
  /// rows of the others, and a sum over the group makes the lookup whole.
  /// Built of differentiable nn ops, so the backward scatters the cotangent
  /// into the rank's own rows only; the sum's gradient passes it through.
  LogicalResult splitLookups(ModuleOp module, ArrayRef<nn::GatherOp> lookups) {
    if (lookups.empty())
      return success();
    MLIRContext *ctx = module.getContext();
    // The plan is the same on every rank: the rank's index t in the tensor
    // group comes from a state sharded in T parts of one element, whose
    // whole value is [0, 1, ..., T-1] (each rank starts from its part). It
    // is an integer (never trained), and its name marks it as fixed by the
    // layout, so checkpoints leave it out and load at any layout.
    auto i64 = IntegerType::get(ctx, 64);
    SmallVector<int64_t> ranks(parts);
    for (int64_t t = 0; t < parts; ++t)
      ranks[t] = t;
    auto wholeType = RankedTensorType::get({int64_t(parts)}, i64);
    auto partType = RankedTensorType::get({1}, i64);
    OpBuilder top(ctx);
    top.setInsertionPointToStart(module.getBody());
    auto global = ml_program::GlobalOp::create(top, module.getLoc(), NNCC_LAYOUT_STATE_PREFIX "tensor_rank", partType,
                                               /*is_mutable=*/true,
                                               DenseElementsAttr::get(wholeType, ArrayRef<int64_t>(ranks)),
                                               top.getStringAttr("private"));
    global->setAttr(dist::kShardAttrName, DenseI64ArrayAttr::get(ctx, {0, parts}));
    SymbolTable(module).insert(global);
    auto groupSize = IntegerAttr::get(i64, parts);
    for (nn::GatherOp lookup : lookups) {
      OpBuilder b(lookup);
      Location loc = lookup.getLoc();
      nn::grad::GradBuilder g(b, loc);
      Value table = lookup.getInput(), ids = lookup.getIndices();
      auto idsType = tensorType(ids);
      Type e = idsType.getElementType();
      int64_t rows = tensorType(table).getDimSize(0), vocab = rows * parts;
      auto constant = [&](int64_t v) -> Value {
        auto t = RankedTensorType::get({}, e);
        return nn::ConstantOp::create(b, loc, t, DenseElementsAttr::get(t, b.getIntegerAttr(e, v)));
      };
      Value rank = ml_program::GlobalLoadOp::create(b, loc, partType, FlatSymbolRefAttr::get(global.getSymNameAttr()));
      rank = g.reshape(rank, {});
      if (e != i64)
        rank = g.cast(rank, e);
      // Negative ids count from the end of the whole table (ONNX Gather).
      Value wrapped = g.where(g.less(ids, constant(0)), g.add(ids, constant(vocab)), ids);
      Value local = g.sub(wrapped, g.mul(rank, constant(rows)));
      Value clamped = nn::ClipOp::create(b, loc, idsType, local, constant(0), constant(rows - 1));
      Value mine = g.equal(clamped, local);
      Value found = nn::GatherOp::create(b, loc, lookup.getType(), table, clamped, lookup.getAxisAttr());
      SmallVector<int64_t> maskShape(idsType.getShape());
      maskShape.append(tensorType(table).getRank() - 1, 1);
      Value masked = g.where(g.reshape(mine, maskShape), found, g.scalarLike(found, 0));
      auto sum = dist::AllReduceOp::create(b, loc, TypeRange{masked.getType()}, ValueRange{masked},
                                           b.getStringAttr("sum"), groupSize, StringAttr::get(ctx, "tensor"));
      lookup.getResult().replaceAllUsesWith(sum.getResult(0));
      lookup.erase();
    }
    return success();
  }

  LogicalResult rewrite(ModuleOp module, Sharding &s) {
    MLIRContext *ctx = module.getContext();
    OpBuilder top(module.getBodyRegion());
    top.setInsertionPointToStart(module.getBody());
    SymbolTable symbols(module);
    auto shardAttr = [&](Cut how) {
      return how.blocks > 1 ? DenseI64ArrayAttr::get(ctx, {how.axis, parts, how.blocks})
                            : DenseI64ArrayAttr::get(ctx, {how.axis, parts});
    };
    // Cut weights become (or are) globals holding the rank's part: every
    // rank starts from the whole value and keeps part t (module_abi.h).
    int counter = 0;
    for (auto [weight, how] : s.cutWeights) {
      auto type = tensorType(weight);
      auto part = partType(type, how.axis, parts);
      if (auto load = weight.getDefiningOp<ml_program::GlobalLoadOp>()) {
        auto global = symbols.lookup<ml_program::GlobalOp>(load.getGlobalAttr().getRootReference());
        if (!global || !global.getIsMutable() || global->hasAttr(dist::kShardAttrName))
          return load.emitError("nncc-tensor-parallel: the weight's global cannot be split");
        global.setType(part);
        global->setAttr(dist::kShardAttrName, shardAttr(how));
        // checkWeights found them; held here, as a range-for over `*f()`
        // would outlive the optional that f returns.
        std::optional<SmallVector<Operation *>> users = globalUsers(module, global.getSymNameAttr());
        for (Operation *user : *users)
          user->getResult(0).setType(part);
        continue;
      }
      auto constant = weight.getDefiningOp<nn::ConstantOp>();
      auto name = dyn_cast<NameLoc>(constant.getLoc());
      std::string symbol = name ? name.getName().str() : "tensor_parallel.weight" + std::to_string(counter++);
      auto global = ml_program::GlobalOp::create(top, constant.getLoc(), symbol, part, /*is_mutable=*/true,
                                                 constant.getValue(), top.getStringAttr("private"));
      global->setAttr(dist::kShardAttrName, shardAttr(how));
      symbols.insert(global);
      OpBuilder b(constant);
      auto load = ml_program::GlobalLoadOp::create(b, constant.getLoc(), part,
                                                   FlatSymbolRefAttr::get(global.getSymNameAttr()));
      constant.replaceAllUsesWith(load.getResult());
      constant.erase();
    }
    for (auto [value, axis] : s.splitAxis)
      value.setType(partType(tensorType(value), axis, parts));
    auto groupSize = IntegerAttr::get(IntegerType::get(ctx, 64), parts);
    auto tensorGroup = StringAttr::get(ctx, "tensor");
    // Megatron's f: the whole input of column-parallel layers, once per
    // value (its backward sum then covers all of them).
    llvm::DenseMap<Value, Value> replicated;
    for (Operation *op : s.columns) {
      if (!s.splitAxis.count(op->getResult(0)))
        continue;
      OpOperand &input = op->getOpOperand(0); // matmul's lhs, gemm's a
      Value &r = replicated[input.get()];
      if (!r) {
        OpBuilder b(op);
        if (Operation *def = input.get().getDefiningOp())
          b.setInsertionPointAfter(def);
        else
          b.setInsertionPointToStart(input.get().getParentBlock());
        r = dist::ReplicateOp::create(b, op->getLoc(), input.get(), groupSize, tensorGroup);
      }
      input.set(r);
    }
    // Megatron's g: the partial products summed over the group; a Gemm's
    // bias (beta * C) is added after the sum, once.
    for (Operation *op : s.partialSums) {
      OpBuilder b(op->getContext());
      b.setInsertionPointAfter(op);
      Value partial = op->getResult(0);
      auto sum = dist::AllReduceOp::create(b, op->getLoc(), TypeRange{partial.getType()}, ValueRange{partial},
                                           b.getStringAttr("sum"), groupSize, tensorGroup);
      partial.replaceAllUsesExcept(sum.getResult(0), sum);
      auto gemm = dyn_cast<nn::GemmOp>(op);
      if (!gemm || !gemm.getC())
        continue;
      Value bias = gemm.getC();
      gemm.getCMutable().clear();
      Value result = sum.getResult(0);
      if (gemm.getBeta().convertToDouble() != 1.0) {
        auto bt = tensorType(bias);
        auto scalarType = RankedTensorType::get({}, bt.getElementType());
        Value beta = nn::ConstantOp::create(
            b, op->getLoc(), scalarType,
            DenseElementsAttr::get(scalarType, b.getFloatAttr(bt.getElementType(), gemm.getBeta().convertToDouble())));
        bias = nn::MulOp::create(b, op->getLoc(), bt, bias, beta);
      }
      auto add = nn::AddOp::create(b, op->getLoc(), result.getType(), result, bias);
      result.replaceAllUsesExcept(add.getResult(), add);
    }
    return success();
  }
};

} // namespace
