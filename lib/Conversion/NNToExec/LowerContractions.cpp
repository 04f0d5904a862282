/// nncc-lower-contractions: matrix products and ungrouped convolutions as
/// GEMM library calls, with the kernels that feed and finish them.
#include "lib/Conversion/NNToExec/Contractions.h"
#include "lib/Conversion/NNToExec/ConvEpilogue.h"
#include "lib/Conversion/NNToExec/Im2col.h"
#include "lib/Conversion/NNToExec/Outline.h"
#include "lib/Conversion/NNToExec/PassDetail.h"

using namespace mlir;

namespace nncc {
#define GEN_PASS_DEF_LOWERCONTRACTIONSPASS
#include "lib/Conversion/NNToExec/Passes.h.inc"

namespace {

LogicalResult finishConv(nn::ConvOp conv, SymbolTable &symbols, Value result);

} // namespace

FailureOr<exec::LaunchOp> transposeKernel(nn::ConvOp conv, SymbolTable &symbols, Value x, ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape;
  for (int64_t axis : perm)
    shape.push_back(type.getShape()[axis]);
  Location loc = conv.getLoc();
  return outlineKernel(conv, symbols, "transpose", ValueRange{x}, RankedTensorType::get(shape, type.getElementType()),
                       [&](OpBuilder &kb, ValueRange args, ValueRange inits) -> FailureOr<SmallVector<Value>> {
                         MLIRContext *ctx = kb.getContext();
                         // Input axis perm[i] is walked by result dim i.
                         SmallVector<AffineExpr> read(3);
                         for (int64_t i = 0; i < 3; ++i)
                           read[perm[i]] = getAffineDimExpr(i, ctx);
                         SmallVector<utils::IteratorType> it(3, utils::IteratorType::parallel);
                         auto copy = linalg::GenericOp::create(
                             kb, loc, inits[0].getType(), args, inits[0],
                             ArrayRef<AffineMap>{AffineMap::get(3, 0, read, ctx), kb.getMultiDimIdentityMap(3)}, it,
                             [](OpBuilder &nb, Location l, ValueRange s) {
                               linalg::YieldOp::create(nb, l, ValueRange{s[0]});
                             });
                         return SmallVector<Value>{copy.getResult(0)};
                       });
}

/// A convolution without groups as im2col (a kernel, in the input's type) +
/// one batched GEMM (weights [M, C*K] times col[n]; for a batch of images one
/// GEMM over all columns and a transpose kernel) + a bias kernel: the GEMM
/// runs in the BLAS. With `packedWeights` (the target CPU has the runtime's
/// own SGEMM) and constant f32 weights, the transposed product instead:
/// [n·P, M] = colᵀ Wᵀ, then a transpose kernel to [n, M, P]. The runtime
/// packs a weight B once per session, while a weight A was repacked by the
/// BLAS on every call (2.4 MB for 256 -> 256 channels 3x3); the transpose is
/// one pass over the output.
///
/// With an `epilogue` (the CPU plan, f32), the bias and the ReLU/Clip ride on
/// the GEMM step (a bias per row of [M, P] = W col, per column of the
/// transposed product), and so does a residual add as the accumulator C
/// (beta 1) where the GEMM writes the output's layout (one GEMM per image,
/// weights as A): the runtime applies them to the accumulators before the
/// store, not in a kernel that reads and writes the output again. With a
/// residual the GEMM's layout cannot take, only the bias rides on it.
LogicalResult lowerConvToGemm(nn::ConvOp conv, SymbolTable &symbols, bool cpuOnly, bool packedWeights,
                              const ConvEpilogue *epilogue) {
  auto in = cast<RankedTensorType>(conv.getInput().getType());
  auto w = cast<RankedTensorType>(conv.getWeight().getType());
  auto out = cast<RankedTensorType>(conv.getType());
  int64_t n = in.getShape()[0], m = out.getShape()[1];
  int64_t ckk = w.getNumElements() / m, p = out.getNumElements() / (n * m);
  bool pointwise = readsInputAsColumns(conv);
  bool weightsAsB = packedWeights && weightsAsPackedB(conv);
  // The transposed product takes im2col's columns of the whole batch as its
  // rows: one GEMM, one transpose after it.
  bool wholeBatch = weightsAsB ? !pointwise : gemmOverWholeBatch(conv);
  bool outputLayout = !weightsAsB && !wholeBatch;
  // A residual the GEMM's layout cannot take: only the bias rides on it, the
  // add and the clamp stay ops after it.
  ConvEpilogue folded;
  if (epilogue && out.getElementType().isF32()) {
    if (!epilogue->residual || outputLayout)
      folded = *epilogue;
    epilogue = &folded;
  } else {
    epilogue = nullptr;
  }
  if (epilogue)
    epilogue->moveConvToItsEnd(conv);
  OpBuilder b(conv);
  Location loc = conv.getLoc();
  Type elem = in.getElementType();
  auto flatColType = RankedTensorType::get({n, ckk, p}, elem);
  Value col;
  if (pointwise) {
    // A 1x1 convolution with stride 1 and no padding reads the input as is.
    col = exec::ViewOp::create(b, loc, flatColType, conv.getInput());
  }
  if (!pointwise) {
    SmallVector<int64_t> colShape{in.getShape()[1]};
    for (int64_t k : w.getShape().drop_front(2))
      colShape.push_back(k);
    colShape.insert(wholeBatch ? colShape.end() : colShape.begin(), n);
    for (int64_t o : out.getShape().drop_front(2))
      colShape.push_back(o);
    auto launch = outlineKernel(conv, symbols, "im2col", conv.getInput(),
                                RankedTensorType::get(colShape, elem),
                                [&](OpBuilder &kb, ValueRange args, ValueRange inits) -> FailureOr<SmallVector<Value>> {
                                  return SmallVector<Value>{
                                      cpuOnly ? im2colFromPadded(kb, loc, conv, args[0], inits[0], wholeBatch)
                                              : im2col(kb, loc, conv, args[0], inits[0], wholeBatch)};
                                });
    if (failed(launch))
      return failure();
    col = exec::ViewOp::create(b, loc, wholeBatch ? RankedTensorType::get({ckk, n * p}, elem) : flatColType,
                               launch->getResult(0));
  }
  Value weights = exec::ViewOp::create(b, loc, RankedTensorType::get({m, ckk}, elem), conv.getWeight());
  Type outElem = out.getElementType();
  // The epilogue's GEMM attributes: the bias (one per output channel: a row
  // of the weights-as-A product, a column of the transposed one) and the
  // clamp; the conv's own bias kernel is then not built.
  Value bias = epilogue ? conv.getBias() : Value();
  auto withEpilogue = [&](exec::GemmOp gemm, bool biasPerRow) {
    if (!epilogue)
      return;
    if (bias) {
      gemm.getBiasMutable().assign(bias);
      gemm.setBiasPerRow(biasPerRow);
    }
    if (epilogue->clamp && epilogue->clampIsRelu()) {
      gemm.setActivation("relu");
    } else if (epilogue->clamp) {
      gemm.setActivation("clip");
      gemm.setClipMin(APFloat(epilogue->clamp->first));
      gemm.setClipMax(APFloat(epilogue->clamp->second));
    }
  };
  auto finish = [&](Value result) -> LogicalResult {
    if (!epilogue)
      return finishConv(conv, symbols, result);
    epilogue->replaceConvAndOps(conv, result);
    return success();
  };
  if (weightsAsB) {
    // [n·P, M] = colᵀ Wᵀ (both through the trans flags), then [n, P, M] ->
    // [n, M, P] by a transpose kernel.
    auto gemm = exec::GemmOp::create(b, loc,
                                     pointwise ? RankedTensorType::get({n, p, m}, outElem)
                                               : RankedTensorType::get({n * p, m}, outElem),
                                     col, weights, Value(), Value(), /*trans_a=*/true, /*trans_b=*/true, APFloat(1.0),
                                     APFloat(0.0), nodeNames(loc));
    withEpilogue(gemm, /*biasPerRow=*/false);
    auto byPositionType = RankedTensorType::get({n, p, m}, outElem);
    Value byPosition = gemm.getType() == byPositionType
                           ? gemm.getResult()
                           : exec::ViewOp::create(b, loc, byPositionType, gemm.getResult()).getResult();
    FailureOr<exec::LaunchOp> transposed = transposeKernel(conv, symbols, byPosition, {0, 2, 1});
    if (failed(transposed))
      return failure();
    return finish(exec::ViewOp::create(b, loc, out, transposed->getResult(0)));
  }
  auto gemmType = wholeBatch ? RankedTensorType::get({m, n * p}, outElem) : RankedTensorType::get({n, m, p}, outElem);
  Value residual = epilogue && epilogue->residual
                       ? exec::ViewOp::create(b, loc, gemmType, epilogue->residual).getResult()
                       : Value();
  auto gemm = exec::GemmOp::create(b, loc, gemmType, weights, col, residual, Value(), false, false, APFloat(1.0),
                                   APFloat(residual ? 1.0 : 0.0), nodeNames(loc));
  withEpilogue(gemm, /*biasPerRow=*/true);
  Value result;
  if (wholeBatch) {
    auto byChannel = RankedTensorType::get({m, n, p}, outElem);
    FailureOr<exec::LaunchOp> transposed =
        transposeKernel(conv, symbols, exec::ViewOp::create(b, loc, byChannel, gemm.getResult()), {1, 0, 2});
    if (failed(transposed))
      return failure();
    result = exec::ViewOp::create(b, loc, out, transposed->getResult(0));
  } else {
    result = exec::ViewOp::create(b, loc, out, gemm.getResult());
  }
  return finish(result);
}

namespace {

/// The convolution's bias added to its GEMM's `result` ([N, M, ...]) by a
/// kernel when it has one; `result` replaces the convolution.
LogicalResult finishConv(nn::ConvOp conv, SymbolTable &symbols, Value result) {
  auto out = cast<RankedTensorType>(conv.getType());
  Location loc = conv.getLoc();
  if (Value bias = conv.getBias()) {
    auto biased = outlineKernel(
        conv, symbols, "bias", ValueRange{result, bias}, out,
        [&](OpBuilder &kb, ValueRange args, ValueRange inits) -> FailureOr<SmallVector<Value>> {
          MLIRContext *ctx = kb.getContext();
          int64_t rank = out.getRank();
          AffineMap id = kb.getMultiDimIdentityMap(rank);
          AffineMap channel = AffineMap::get(rank, 0, getAffineDimExpr(1, ctx));
          SmallVector<utils::IteratorType> it(rank, utils::IteratorType::parallel);
          auto add = linalg::GenericOp::create(
              kb, loc, out, args, inits[0], ArrayRef<AffineMap>{id, channel, id}, it,
              [](OpBuilder &nb, Location l, ValueRange s) {
                linalg::YieldOp::create(nb, l, ValueRange{arith::AddFOp::create(nb, l, s[0], s[1])});
              });
          return SmallVector<Value>{add.getResult(0)};
        });
    if (failed(biased))
      return failure();
    result = biased->getResult(0);
  }
  conv.getResult().replaceAllUsesWith(result);
  conv.erase();
  return success();
}

/// A transposed convolution without groups as one batched GEMM and a col2im
/// kernel: col[n] = Wᵀ x[n] ([M*K, C] times [C, P_in], the weights read
/// through the GEMM's trans flag), then each output element gathers its
/// taps from col (and the bias). The direct loop form visits every
/// (channel, tap) pair per output element and keeps only 1/stride^d of
/// them; the GEMM does only the useful products, in the BLAS.
LogicalResult lowerConvTransposeToGemm(nn::ConvTransposeOp conv, SymbolTable &symbols) {
  auto in = cast<RankedTensorType>(conv.getInput().getType());
  auto w = cast<RankedTensorType>(conv.getWeight().getType());
  auto out = cast<RankedTensorType>(conv.getType());
  int64_t n = in.getShape()[0], c = in.getShape()[1], groups = conv.getGroup();
  // Per group: its c/g input channels times its (M/g, k...) columns.
  int64_t columns = w.getNumElements() / c, inPositions = in.getNumElements() / (n * c);
  OpBuilder b(conv);
  Location loc = conv.getLoc();
  Type elem = in.getElementType();
  // Ungrouped: batched over the images, the weights broadcast. Grouped (one
  // image, isLibraryContraction): batched over the groups, group g's weights
  // [c/g, M/g·k...] against its channels [c/g, i...]; the results, group
  // after group, are the output channels in order.
  SmallVector<int64_t> xShape{n, c, inPositions}, wShape{c, columns}, colsShape{n, columns, inPositions};
  if (groups > 1) {
    xShape = {groups, c / groups, inPositions};
    wShape = {groups, c / groups, columns};
    colsShape = {groups, columns, inPositions};
  }
  Value x = exec::ViewOp::create(b, loc, RankedTensorType::get(xShape, elem), conv.getInput());
  Value weights = exec::ViewOp::create(b, loc, RankedTensorType::get(wShape, elem), conv.getWeight());
  // The products accumulate in f32 and stay f32 until col2im has summed the
  // taps: one rounding per output element in a low-precision plan.
  auto gemm = exec::GemmOp::create(b, loc, RankedTensorType::get(colsShape, b.getF32Type()), weights, x, Value(),
                                   Value(), /*trans_a=*/true, /*trans_b=*/false, APFloat(1.0), APFloat(0.0),
                                   nodeNames(loc));
  // col as [n, M, k..., i...]: the GEMM's rows are (m, k...) in weight order.
  SmallVector<int64_t> colShape{n, w.getShape()[1] * groups};
  llvm::append_range(colShape, w.getShape().drop_front(2));
  llvm::append_range(colShape, in.getShape().drop_front(2));
  Value col = exec::ViewOp::create(b, loc, RankedTensorType::get(colShape, b.getF32Type()), gemm.getResult());
  SmallVector<Value> operands{col};
  if (Value bias = conv.getBias())
    operands.push_back(bias);
  auto launch = outlineKernel(conv, symbols, "col2im", operands, out,
                              [&](OpBuilder &kb, ValueRange args, ValueRange inits) -> FailureOr<SmallVector<Value>> {
                                return SmallVector<Value>{
                                    col2im(kb, loc, conv, args[0], args.size() > 1 ? args[1] : Value(), inits[0])};
                              });
  if (failed(launch))
    return failure();
  conv.getResult().replaceAllUsesWith(launch->getResult(0));
  conv.erase();
  return success();
}

/// The input of `v` when `v` is a transpose swapping its last two axes (a
/// matrix transpose, batch axes in place): the GEMM reads it with its trans
/// flag instead of a transpose kernel materializing it (x^T and W^T in the
/// backward of every MatMul, K^T in attention that was not recomposed).
Value transposedMatrix(Value v) {
  auto t = v.getDefiningOp<nn::TransposeOp>();
  if (!t)
    return Value();
  ArrayRef<int64_t> perm = t.getPerm();
  int64_t rank = perm.size();
  if (rank < 2 || perm[rank - 1] != rank - 2 || perm[rank - 2] != rank - 1)
    return Value();
  for (int64_t i = 0; i + 2 < rank; ++i)
    if (perm[i] != i)
      return Value();
  return t.getInput();
}

/// Matrix products become GEMM library calls; Gemm's C is broadcast to the
/// result first (by an outlined expand kernel) and accumulated with beta.
LogicalResult lowerToGemm(Operation *op, SymbolTable &symbols, bool cpuOnly, bool packedWeights) {
  if (auto conv = dyn_cast<nn::ConvOp>(op))
    return lowerConvToGemm(conv, symbols, cpuOnly, packedWeights, /*epilogue=*/nullptr);
  if (auto conv = dyn_cast<nn::ConvTransposeOp>(op))
    return lowerConvTransposeToGemm(conv, symbols);
  OpBuilder b(op);
  if (auto mm = dyn_cast<nn::MatMulOp>(op)) {
    Value lhs = mm.getLhs(), rhs = mm.getRhs();
    Value lhsT = transposedMatrix(lhs), rhsT = transposedMatrix(rhs);
    auto gemm = exec::GemmOp::create(b, op->getLoc(), mm.getType(), lhsT ? lhsT : lhs, rhsT ? rhsT : rhs, Value(),
                                     Value(), bool(lhsT), bool(rhsT), APFloat(1.0), APFloat(0.0),
                                     nodeNames(op->getLoc()));
    op->replaceAllUsesWith(gemm->getResults());
    op->erase();
    // A transpose read by nothing else now is not computed at all.
    for (Value operand : {lhs, rhs})
      if (Operation *def = operand.getDefiningOp(); def && isa<nn::TransposeOp>(def) && def->use_empty())
        def->erase();
    return success();
  }
  auto g = cast<nn::GemmOp>(op);
  auto out = cast<RankedTensorType>(g.getType());
  Value c = g.getC();
  double beta = g.getBeta().convertToDouble();
  if (c && beta != 0.0 && c.getType() != out) {
    auto expand = nn::ExpandOp::create(b, op->getLoc(), out, c, Value());
    auto launch = outlineOp(expand, symbols);
    if (failed(launch))
      return failure();
    c = launch->getResult(0);
  }
  if (beta == 0.0)
    c = Value();
  auto gemm = exec::GemmOp::create(b, op->getLoc(), out, g.getA(), g.getB(), c, Value(), g.getTransA(),
                                   g.getTransB(), APFloat(g.getAlpha().convertToDouble()),
                                   APFloat(c ? beta : 0.0), nodeNames(op->getLoc()));
  op->replaceAllUsesWith(gemm->getResults());
  op->erase();
  return success();
}

struct LowerContractionsPass : impl::LowerContractionsPassBase<LowerContractionsPass> {
  using Base::Base;
  void runOnOperation() override {
    SymbolTable symbols(getOperation());
    for (func::FuncOp func : entryFunctions(getOperation())) {
      // Dynamic shapes are left to nncc-outline-kernels, which reports them.
      SmallVector<Operation *> contractions;
      for (Operation &op : func.getBody().front())
        if (hasStaticShapes(&op) && isLibraryContraction(&op))
          contractions.push_back(&op);
      for (Operation *op : contractions)
        if (failed(lowerToGemm(op, symbols, cpuOnly, packedWeights)))
          return signalPassFailure();
    }
  }
};

} // namespace
} // namespace nncc
