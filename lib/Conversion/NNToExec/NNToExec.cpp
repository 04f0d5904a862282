#include "lib/Conversion/NNToExec/NNToExec.h"

#include "lib/Conversion/NNToExec/DirectConv.h"
#include "lib/Conversion/NNToExec/KernelBuilders.h"
#include "lib/Conversion/NNToExec/LinalgUtils.h"
#include "lib/Conversion/NNToExec/RowKernels.h"
#include "lib/Conversion/NNToExec/LowPrecisionCompute.h"

#include "dialects/Exec/ExecOps.h"
#include "dialects/NN/NNOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

namespace nncc {
namespace {

bool isStatic(Operation *op) {
  auto isStaticType = [](Type t) {
    auto r = dyn_cast<RankedTensorType>(t);
    return r && r.hasStaticShape();
  };
  return llvm::all_of(op->getOperandTypes(), isStaticType) &&
         llvm::all_of(op->getResultTypes(), isStaticType);
}

/// The ONNX node names a location carries (NameLoc, possibly fused).
std::string nodeNames(Location loc) {
  std::string names;
  loc->walk([&](Location l) {
    if (auto name = dyn_cast<NameLoc>(l)) {
      if (!names.empty())
        names += ",";
      names += name.getName().str();
    }
    return WalkResult::advance();
  });
  return names;
}

/// Operands a kernel may overwrite with its result: the kernel is one
/// linalg.generic whose result and operand both use the identity map and
/// have the same type, so each element is read before it is written.
DenseI64ArrayAttr inplaceOperands(func::FuncOp kernel, unsigned numOperands, OpBuilder &b) {
  Block &body = kernel.getBody().front();
  if (body.getOperations().size() != 2)
    return {};
  auto generic = dyn_cast<linalg::GenericOp>(body.front());
  if (!generic || generic.getNumDpsInits() != 1)
    return {};
  Value init = generic.getDpsInits()[0];
  AffineMap initMap = generic.getMatchingIndexingMap(generic.getDpsInitOperand(0));
  if (!initMap.isIdentity())
    return {};
  SmallVector<int64_t> candidates;
  for (OpOperand *input : generic.getDpsInputOperands()) {
    auto arg = dyn_cast<BlockArgument>(input->get());
    if (!arg || arg.getOwner() != &body || arg.getArgNumber() >= numOperands ||
        arg.getType() != init.getType() || !generic.getMatchingIndexingMap(input).isIdentity())
      continue;
    candidates.push_back(arg.getArgNumber());
  }
  if (candidates.empty())
    return {};
  return b.getDenseI64ArrayAttr(candidates);
}

using KernelBodyFn = llvm::function_ref<FailureOr<SmallVector<Value>>(
    OpBuilder &, ValueRange args, ValueRange inits)>;

/// Creates kernel `k<N>_<suffix>` taking `operands` plus one init per result
/// type, its body built by `buildBody`, and a launch of it before `at`.
FailureOr<exec::LaunchOp> outlineKernel(Operation *at, ModuleOp module, int &counter,
                                        StringRef suffix, ValueRange operands,
                                        TypeRange resultTypes, KernelBodyFn buildBody) {
  MLIRContext *ctx = at->getContext();
  Location loc = at->getLoc();
  OpBuilder mb(ctx);
  mb.setInsertionPointToEnd(module.getBody());
  SmallVector<Type> argTypes, kernelResults;
  for (Value v : operands)
    argTypes.push_back(toSignless(v.getType()));
  for (Type t : resultTypes) {
    argTypes.push_back(toSignless(t));
    kernelResults.push_back(toSignless(t));
  }
  std::string name = "k" + std::to_string(counter++) + "_" + suffix.str();
  auto kernel = func::FuncOp::create(mb, loc, name, mb.getFunctionType(argTypes, kernelResults));
  kernel.setPrivate();
  // Inits (destinations) may be written in place; inputs are read-only.
  for (unsigned i = operands.size(); i < argTypes.size(); ++i)
    kernel.setArgAttr(i, bufferization::BufferizationDialect::kWritableAttrName, mb.getBoolAttr(true));
  Block *body = kernel.addEntryBlock();
  OpBuilder kb = OpBuilder::atBlockBegin(body);
  auto results = buildBody(kb, body->getArguments().take_front(operands.size()),
                           body->getArguments().drop_front(operands.size()));
  if (failed(results)) {
    kernel.erase();
    return failure();
  }
  func::ReturnOp::create(kb, loc, *results);
  OpBuilder fb(at);
  return exec::LaunchOp::create(fb, loc, resultTypes, name, operands, nodeNames(loc),
                                inplaceOperands(kernel, operands.size(), fb));
}

/// Outlines `op` into a kernel function and replaces it with a launch.
FailureOr<exec::LaunchOp> outline(Operation *op, ModuleOp module, int &counter) {
  auto launch = outlineKernel(op, module, counter, op->getName().stripDialect(), op->getOperands(),
                              op->getResultTypes(),
                              [&](OpBuilder &kb, ValueRange args, ValueRange inits) {
                                return buildKernel(kb, op, args, inits);
                              });
  if (failed(launch))
    return failure();
  op->replaceAllUsesWith(launch->getResults());
  op->erase();
  return launch;
}

bool isF32(Value v) { return cast<RankedTensorType>(v.getType()).getElementType().isF32(); }

/// True when a GEMM library call takes these operand and result types: A and
/// B both f32, f16 or bf16, the result f32 or their type (module ABI
/// dtype_a/b/c; products accumulate in f32, a low-precision result is
/// rounded once).
bool isGemmElementTypes(Value a, Value b, Value result) {
  Type ea = getElementTypeOrSelf(a.getType()), eb = getElementTypeOrSelf(b.getType()),
       er = getElementTypeOrSelf(result.getType());
  return (ea.isF32() || ea.isF16() || ea.isBF16()) && ea == eb && (er == ea || er.isF32());
}

/// True when `operand`'s batch dims (all but the last two) either equal the
/// result's or are all 1: the GEMM library call then walks them with a
/// constant stride (0 for a broadcast operand).
bool gemmBatchCompatible(RankedTensorType operand, RankedTensorType result) {
  auto batch = operand.getShape().drop_back(2), outBatch = result.getShape().drop_back(2);
  if (llvm::all_of(batch, [](int64_t d) { return d == 1; }))
    return true;
  return batch.size() <= outBatch.size() &&
         llvm::equal(batch, outBatch.take_back(batch.size())) &&
         llvm::all_of(outBatch.drop_back(batch.size()), [](int64_t d) { return d == 1; });
}

/// im2col of an N-d convolution input, as col[n, c, k..., o...]: the input
/// element under kernel tap k for output position o, 0 in the padding.
/// Iterating taps outside and output positions inside keeps the innermost
/// loop a unit-stride walk along the input row (stride 1), which vectorizes.
/// With `batchInner` the layout is col[c, k..., n, o...]: the columns of all
/// images side by side, one GEMM operand for the whole batch.
Value im2col(OpBuilder &b, Location loc, nn::ConvOp conv, Value x, Value init, bool batchInner) {
  auto in = cast<RankedTensorType>(x.getType());
  int64_t spatial = in.getRank() - 2;
  ArrayRef<int64_t> strides = conv.getStrides(), pads = conv.getPads(), dilations = conv.getDilations();
  auto idx = [&](OpBuilder &nb, Location l, int64_t v) { return (Value)arith::ConstantIndexOp::create(nb, l, v); };
  auto colType = cast<RankedTensorType>(init.getType());
  int64_t rank = colType.getRank(); // 2 + 2 * spatial
  SmallVector<utils::IteratorType> it(rank, utils::IteratorType::parallel);
  auto op = linalg::GenericOp::create(
      b, loc, colType, ValueRange{}, init, ArrayRef<AffineMap>{b.getMultiDimIdentityMap(rank)}, it,
      [&](OpBuilder &nb, Location l, ValueRange) {
        int64_t nDim = batchInner ? 1 + spatial : 0, cDim = batchInner ? 0 : 1, kDim = batchInner ? 1 : 2;
        SmallVector<Value> src{linalg::IndexOp::create(nb, l, nDim), linalg::IndexOp::create(nb, l, cDim)};
        Value valid = arith::ConstantOp::create(nb, l, nb.getBoolAttr(true));
        for (int64_t d = 0; d < spatial; ++d) {
          Value k = linalg::IndexOp::create(nb, l, kDim + d);
          Value o = linalg::IndexOp::create(nb, l, 2 + spatial + d);
          Value i = arith::AddIOp::create(
              nb, l, arith::SubIOp::create(nb, l, arith::MulIOp::create(nb, l, o, idx(nb, l, strides[d])), idx(nb, l, pads[d])),
              arith::MulIOp::create(nb, l, k, idx(nb, l, dilations[d])));
          int64_t len = in.getShape()[2 + d];
          valid = arith::AndIOp::create(
              nb, l, valid,
              arith::AndIOp::create(nb, l, arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, i, idx(nb, l, 0)),
                                    arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, i, idx(nb, l, len))));
          src.push_back(arith::MinSIOp::create(nb, l, arith::MaxSIOp::create(nb, l, i, idx(nb, l, 0)), idx(nb, l, len - 1)));
        }
        Value v = tensor::ExtractOp::create(nb, l, x, src);
        Value zero = arith::ConstantOp::create(nb, l, nb.getFloatAttr(in.getElementType(), 0));
        linalg::YieldOp::create(nb, l, ValueRange{arith::SelectOp::create(nb, l, valid, v, zero)});
      });
  return op.getResult(0);
}

/// The same im2col from a zero-padded copy of the input: every element is a
/// plain affine read (x[n, c, o*s + k*d]), no bounds check or select, which
/// runs 1.3-2.5x faster on the CPU (ResNet-18-style at batch 32: 19.0 ->
/// 14.8 ms in all its im2col kernels) for one more input-sized scratch buffer
/// (+11% arena for the example CNN), so CPU-only modules use it.
Value im2colFromPadded(OpBuilder &b, Location loc, nn::ConvOp conv, Value x, Value init, bool batchInner) {
  auto in = cast<RankedTensorType>(x.getType());
  int64_t spatial = in.getRank() - 2;
  ArrayRef<int64_t> strides = conv.getStrides(), pads = conv.getPads(), dilations = conv.getDilations();
  auto colShape = cast<RankedTensorType>(init.getType()).getShape();
  SmallVector<int64_t> outSpatial{0, 0}, kernel;
  for (int64_t d = 0; d < spatial; ++d) {
    outSpatial.push_back(colShape[colShape.size() - spatial + d]);
    kernel.push_back(colShape[(batchInner ? 1 : 2) + d]);
  }
  SmallVector<int64_t> covering = coveringPads(pads, in.getShape(), outSpatial, kernel, strides, dilations);
  if (llvm::any_of(covering, [](int64_t p) { return p != 0; }))
    x = padSpatial(b, loc, x, covering, arith::ConstantOp::create(b, loc, b.getFloatAttr(in.getElementType(), 0)));
  MLIRContext *ctx = b.getContext();
  auto colType = cast<RankedTensorType>(init.getType());
  int64_t rank = colType.getRank(); // 2 + 2 * spatial
  int64_t nDim = batchInner ? 1 + spatial : 0, cDim = batchInner ? 0 : 1, kDim = batchInner ? 1 : 2;
  SmallVector<AffineExpr> src{getAffineDimExpr(nDim, ctx), getAffineDimExpr(cDim, ctx)};
  for (int64_t d = 0; d < spatial; ++d)
    src.push_back(getAffineDimExpr(2 + spatial + d, ctx) * strides[d] + getAffineDimExpr(kDim + d, ctx) * dilations[d]);
  SmallVector<utils::IteratorType> it(rank, utils::IteratorType::parallel);
  return generic(b, loc, x, init, {AffineMap::get(rank, 0, src, ctx), b.getMultiDimIdentityMap(rank)}, it,
                 [](OpBuilder &, Location, ValueRange s) -> SmallVector<Value> { return {s[0]}; })[0];
}

bool isLibraryContraction(Operation *op);

/// True when a convolution's GEMM reads its input as it lies (1x1, stride
/// 1, no padding): no im2col.
bool readsInputAsColumns(nn::ConvOp conv) {
  auto w = cast<RankedTensorType>(conv.getWeight().getType());
  return llvm::all_of(w.getShape().drop_front(2), [](int64_t k) { return k == 1; }) &&
         llvm::all_of(conv.getStrides(), [](int64_t s) { return s == 1; }) &&
         llvm::all_of(conv.getPads(), [](int64_t p) { return p == 0; });
}

/// Small images (P <= 64 output positions: one GEMM per image would have a
/// narrow N that the BLAS's tiles fill poorly, 77 GFLOP/s for 256x16x2304
/// here) with a materialized im2col run as one GEMM over the columns of the
/// whole batch (100 GFLOP/s for 256x512x2304), its [M, n, P] result
/// transposed back to [n, M, P]. Larger images gain nothing from it and pay
/// for the transpose.
bool gemmOverWholeBatch(nn::ConvOp conv) {
  auto out = cast<RankedTensorType>(conv.getType());
  int64_t n = out.getShape()[0], p = out.getNumElements() / std::max<int64_t>(n * out.getShape()[1], 1);
  return !readsInputAsColumns(conv) && n > 1 && p <= 64;
}

/// im2col as col[n, row, o...] (row: channel and kernel taps; o: output
/// position) with one more row of ones at the end: a GEMM of the weights
/// with the bias as their last column against it adds the bias. The rows
/// before it are im2col's own loops (taps outside, unit-stride walks along
/// input rows inside) over a view of them; decoding each row into channel
/// and taps inside one loop nest instead ran 3.5x slower on the CPU.
Value im2colWithOnesRow(OpBuilder &b, Location loc, nn::ConvOp conv, Value x, Value init) {
  auto colType = cast<RankedTensorType>(init.getType());
  auto w = cast<RankedTensorType>(conv.getWeight().getType());
  int64_t rank = colType.getRank(), ckk = colType.getShape()[1] - 1;
  SmallVector<OpFoldResult> zeros(rank, b.getIndexAttr(0)), unit(rank, b.getIndexAttr(1)), sizes;
  for (int64_t d : colType.getShape())
    sizes.push_back(b.getIndexAttr(d));
  sizes[1] = b.getIndexAttr(ckk);
  Value rows = tensor::ExtractSliceOp::create(b, loc, init, zeros, sizes, unit);
  // [n, C*K..., o...] -> [n, C, K..., o...]
  SmallVector<int64_t> expanded{colType.getShape()[0], w.getShape()[1]};
  llvm::append_range(expanded, w.getShape().drop_front(2));
  llvm::append_range(expanded, colType.getShape().drop_front(2));
  SmallVector<ReassociationIndices> groups{{0}, {}};
  for (int64_t d = 1; d < (int64_t)w.getRank(); ++d)
    groups[1].push_back(d);
  for (int64_t d = w.getRank(); d < (int64_t)expanded.size(); ++d)
    groups.push_back({d});
  Type elem = colType.getElementType();
  Value unfolded = tensor::ExpandShapeOp::create(b, loc, RankedTensorType::get(expanded, elem), rows, groups);
  Value col = im2col(b, loc, conv, x, unfolded, false);
  col = tensor::CollapseShapeOp::create(b, loc, cast<RankedTensorType>(rows.getType()), col, groups);
  Value result = tensor::InsertSliceOp::create(b, loc, col, init, zeros, sizes, unit);
  SmallVector<OpFoldResult> onesAt(zeros), onesSizes(sizes);
  onesAt[1] = b.getIndexAttr(ckk);
  onesSizes[1] = b.getIndexAttr(1);
  Value ones = tensor::ExtractSliceOp::create(b, loc, result, onesAt, onesSizes, unit);
  ones = fill(b, loc, ones, arith::ConstantOp::create(b, loc, b.getFloatAttr(elem, 1)));
  return tensor::InsertSliceOp::create(b, loc, ones, result, onesAt, onesSizes, unit);
}

/// The values of a constant f32 tensor, or nullopt.
std::optional<SmallVector<float>> constantFloats(Value v) {
  auto constant = v.getDefiningOp<nn::ConstantOp>();
  auto values = constant ? dyn_cast<DenseElementsAttr>(constant.getValue()) : DenseElementsAttr();
  if (!values || !values.getElementType().isF32())
    return std::nullopt;
  return SmallVector<float>(values.getValues<float>());
}

/// With a CUDA target, a convolution's epilogue rides on its GEMM call
/// instead of a kernel after it: the bias as one more weight column against
/// a row of ones that im2col appends, a residual Add as the accumulator C
/// (beta 1; the plan lets the output take over C's buffer when C dies
/// there), a ReLU as the library's activation (a Clip keeps the generated
/// epilogue kernel). Not cuBLASLt's bias epilogue:
/// it adds one value per row of its column-major D, which for an NCHW output
/// is one per output position, not per channel. The bias column needs the
/// weights and bias as compile-time constants (inference), an f32
/// convolution, and one GEMM per image; false when `conv` does not qualify
/// or has nothing to fold (lowerConvToGemm then takes it).
FailureOr<bool> lowerConvWithGemmEpilogue(nn::ConvOp conv, ModuleOp module, int &counter) {
  auto out = cast<RankedTensorType>(conv.getType());
  if (!isLibraryContraction(conv) || !isF32(conv.getInput()) || !isF32(conv.getWeight()) ||
      !out.getElementType().isF32() || !out.hasStaticShape() || gemmOverWholeBatch(conv))
    return false;
  bool pointwise = readsInputAsColumns(conv);
  std::optional<SmallVector<float>> weights = constantFloats(conv.getWeight()), bias;
  if (conv.getBias() && (pointwise || !weights || !(bias = constantFloats(conv.getBias()))))
    return false;
  ConvEpilogue epilogue = matchConvEpilogue(conv);
  // A Clip has no library epilogue: its kernel would read and write the
  // output once more, as the generated epilogue kernel taking bias, residual
  // and Clip together does.
  if ((epilogue.clamp && !epilogue.clampIsRelu()) || (!bias && epilogue.ops.empty()))
    return false;

  epilogue.moveConvToItsEnd(conv);
  Location loc = conv.getLoc();
  OpBuilder b(conv);
  int64_t n = out.getShape()[0], m = out.getShape()[1];
  int64_t ckk = cast<RankedTensorType>(conv.getWeight().getType()).getNumElements() / m;
  int64_t p = out.getNumElements() / (n * m), rows = ckk + (bias ? 1 : 0);
  Type f32 = b.getF32Type();
  Value col;
  if (pointwise) {
    col = exec::ViewOp::create(b, loc, RankedTensorType::get({n, ckk, p}, f32), conv.getInput());
  } else {
    // [n, C*K... (+ the ones row), o...], or without a bias im2col's own
    // [n, C, K..., o...].
    SmallVector<int64_t> colShape{n};
    if (bias)
      colShape.push_back(rows);
    else
      llvm::append_range(colShape, cast<RankedTensorType>(conv.getWeight().getType()).getShape().drop_front(1));
    llvm::append_range(colShape, out.getShape().drop_front(2));
    auto launch = outlineKernel(conv, module, counter, "im2col", conv.getInput(), RankedTensorType::get(colShape, f32),
                                [&](OpBuilder &kb, ValueRange args, ValueRange inits) -> FailureOr<SmallVector<Value>> {
                                  return SmallVector<Value>{bias ? im2colWithOnesRow(kb, loc, conv, args[0], inits[0])
                                                                 : im2col(kb, loc, conv, args[0], inits[0], false)};
                                });
    if (failed(launch))
      return failure();
    col = exec::ViewOp::create(b, loc, RankedTensorType::get({n, rows, p}, f32), launch->getResult(0));
  }
  Value w;
  auto wType = RankedTensorType::get({m, rows}, f32);
  if (bias) {
    SmallVector<float> withBias;
    withBias.reserve(m * rows);
    for (int64_t i = 0; i < m; ++i) {
      withBias.append(weights->begin() + i * ckk, weights->begin() + (i + 1) * ckk);
      withBias.push_back((*bias)[i]);
    }
    w = nn::ConstantOp::create(b, loc, DenseElementsAttr::get(wType, ArrayRef<float>(withBias)));
  } else {
    w = exec::ViewOp::create(b, loc, wType, conv.getWeight());
  }
  auto gemmType = RankedTensorType::get({n, m, p}, f32);
  Value c = epilogue.residual ? exec::ViewOp::create(b, loc, gemmType, epilogue.residual).getResult() : Value();
  auto gemm = exec::GemmOp::create(b, loc, gemmType, w, col, c, Value(), false, false, APFloat(1.0),
                                   APFloat(c ? 1.0 : 0.0), nodeNames(loc), epilogue.clamp ? "relu" : "none");
  SmallVector<Operation *> constants{conv.getWeight().getDefiningOp(),
                                     conv.getBias() ? conv.getBias().getDefiningOp() : nullptr};
  epilogue.replaceConvAndOps(conv, exec::ViewOp::create(b, loc, out, gemm.getResult()));
  // The folded weights replace the originals.
  for (Operation *constant : constants)
    if (constant && bias && constant->use_empty())
      constant->erase();
  return true;
}

/// lowerConvWithGemmEpilogue for every convolution that qualifies; runs
/// before splitConvBias and the other fusion steps would take the bias and
/// the ops after it into kernels.
LogicalResult lowerConvolutionsWithGemmEpilogues(func::FuncOp func, ModuleOp module, int &counter) {
  SmallVector<nn::ConvOp> convs;
  func.walk([&](nn::ConvOp conv) { convs.push_back(conv); });
  for (nn::ConvOp conv : convs)
    if (failed(lowerConvWithGemmEpilogue(conv, module, counter)))
      return failure();
  return success();
}

/// A convolution without groups as im2col (a kernel, in the input's type) +
/// one batched GEMM (weights [M, C*K] times col[n]; for a batch of images one
/// GEMM over all columns and a transpose kernel) + a bias kernel: the GEMM
/// runs in the BLAS.
LogicalResult lowerConvToGemm(nn::ConvOp conv, ModuleOp module, int &counter, bool cpuOnly) {
  auto in = cast<RankedTensorType>(conv.getInput().getType());
  auto w = cast<RankedTensorType>(conv.getWeight().getType());
  auto out = cast<RankedTensorType>(conv.getType());
  int64_t n = in.getShape()[0], m = out.getShape()[1];
  int64_t ckk = w.getNumElements() / m, p = out.getNumElements() / (n * m);
  OpBuilder b(conv);
  Location loc = conv.getLoc();
  Type elem = in.getElementType();
  auto flatColType = RankedTensorType::get({n, ckk, p}, elem);
  Value col;
  bool pointwise = readsInputAsColumns(conv);
  if (pointwise) {
    // A 1x1 convolution with stride 1 and no padding reads the input as is.
    col = exec::ViewOp::create(b, loc, flatColType, conv.getInput());
  }
  bool wholeBatch = gemmOverWholeBatch(conv);
  if (!pointwise) {
    SmallVector<int64_t> colShape{in.getShape()[1]};
    for (int64_t k : w.getShape().drop_front(2))
      colShape.push_back(k);
    colShape.insert(wholeBatch ? colShape.end() : colShape.begin(), n);
    for (int64_t o : out.getShape().drop_front(2))
      colShape.push_back(o);
    auto launch = outlineKernel(conv, module, counter, "im2col", conv.getInput(),
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
  auto gemmType = wholeBatch ? RankedTensorType::get({m, n * p}, outElem) : RankedTensorType::get({n, m, p}, outElem);
  auto gemm = exec::GemmOp::create(b, loc, gemmType, weights, col, Value(), Value(), false, false, APFloat(1.0),
                                   APFloat(0.0), nodeNames(loc));
  Value result;
  if (wholeBatch) {
    auto byChannel = RankedTensorType::get({m, n, p}, outElem);
    auto transposed = outlineKernel(
        conv, module, counter, "transpose", ValueRange{exec::ViewOp::create(b, loc, byChannel, gemm.getResult())},
        RankedTensorType::get({n, m, p}, outElem),
        [&](OpBuilder &kb, ValueRange args, ValueRange inits) -> FailureOr<SmallVector<Value>> {
          MLIRContext *ctx = kb.getContext();
          AffineExpr d0 = getAffineDimExpr(0, ctx), d1 = getAffineDimExpr(1, ctx), d2 = getAffineDimExpr(2, ctx);
          SmallVector<utils::IteratorType> it(3, utils::IteratorType::parallel);
          auto copy = linalg::GenericOp::create(
              kb, loc, inits[0].getType(), args, inits[0],
              ArrayRef<AffineMap>{AffineMap::get(3, 0, {d1, d0, d2}, ctx), kb.getMultiDimIdentityMap(3)}, it,
              [](OpBuilder &nb, Location l, ValueRange s) { linalg::YieldOp::create(nb, l, ValueRange{s[0]}); });
          return SmallVector<Value>{copy.getResult(0)};
        });
    if (failed(transposed))
      return failure();
    result = exec::ViewOp::create(b, loc, out, transposed->getResult(0));
  } else {
    result = exec::ViewOp::create(b, loc, out, gemm.getResult());
  }
  if (Value bias = conv.getBias()) {
    auto biased = outlineKernel(
        conv, module, counter, "bias", ValueRange{result, bias}, out,
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

/// `conv` as its direct kernel (after a kernel making the padded copy it
/// reads, when it reads one), with `epilogue` folded in: the launch takes the
/// place of the epilogue's last op.
LogicalResult lowerDirectConvolution(nn::ConvOp conv, const ConvEpilogue &epilogue, ModuleOp module,
                                     int &counter) {
  epilogue.moveConvToItsEnd(conv);
  Location loc = conv.getLoc();
  Value input = conv.getInput();
  if (readsInputCopy(conv)) {
    auto copy = outlineKernel(conv, module, counter, "pad", input, TypeRange{inputCopyType(conv)},
                              [&](OpBuilder &kb, ValueRange args, ValueRange inits) -> FailureOr<SmallVector<Value>> {
                                return SmallVector<Value>{buildInputCopy(kb, loc, conv, args[0], inits[0])};
                              });
    if (failed(copy))
      return failure();
    input = copy->getResult(0);
  }
  SmallVector<Value> operands{input, conv.getWeight()};
  if (conv.getBias())
    operands.push_back(conv.getBias());
  if (epilogue.residual)
    operands.push_back(epilogue.residual);
  auto launch = outlineKernel(
      conv, module, counter, "conv", operands, TypeRange{conv.getType()},
      [&](OpBuilder &kb, ValueRange args, ValueRange inits) -> FailureOr<SmallVector<Value>> {
        Value bias = conv.getBias() ? args[2] : Value();
        Value residual = epilogue.residual ? args.back() : Value();
        return SmallVector<Value>{
            buildDirectConvolution(kb, loc, conv, args[0], args[1], bias, residual, epilogue, inits[0])};
      });
  if (failed(launch))
    return failure();
  epilogue.replaceConvAndOps(conv, launch->getResult(0));
  return success();
}

/// CPU-only modules: each convolution isDirectConvolution accepts becomes
/// its direct kernel, with the residual add and ReLU/Clip after it folded in
/// when fusing. This runs before the other fusion steps, which then leave the
/// kernel's result alone like any other launch's.
LogicalResult lowerDirectConvolutions(func::FuncOp func, ModuleOp module, int &counter, bool fuse) {
  SmallVector<nn::ConvOp> convs;
  func.walk([&](nn::ConvOp conv) {
    if (isDirectConvolution(conv))
      convs.push_back(conv);
  });
  for (nn::ConvOp conv : convs)
    if (failed(lowerDirectConvolution(conv, fuse ? matchConvEpilogue(conv) : ConvEpilogue{}, module,
                                      counter)))
      return failure();
  return success();
}

/// True when `mm` runs as a GEMM library call (f32/f16/bf16, batch dims the
/// call can stride through).
bool isLibraryMatMul(nn::MatMulOp mm) {
  auto lhs = cast<RankedTensorType>(mm.getLhs().getType());
  auto rhs = cast<RankedTensorType>(mm.getRhs().getType());
  auto out = cast<RankedTensorType>(mm.getType());
  return isGemmElementTypes(mm.getLhs(), mm.getRhs(), mm.getResult()) && lhs.getRank() >= 2 && rhs.getRank() >= 2 &&
         out.hasStaticShape() && out.getNumElements() > 0 && lhs.getShape().back() != 0 &&
         gemmBatchCompatible(lhs, out) && gemmBatchCompatible(rhs, out);
}

/// True when lowerToGemm makes `op` a GEMM library call: MatMul, Gemm and
/// ungrouped Conv with f32/f16/bf16 operands (the others become loop kernels).
bool isLibraryContraction(Operation *op) {
  if (auto mm = dyn_cast<nn::MatMulOp>(op))
    return isLibraryMatMul(mm);
  auto nonEmpty = [](Value v) { return cast<RankedTensorType>(v.getType()).getNumElements() > 0; };
  if (auto g = dyn_cast<nn::GemmOp>(op)) {
    auto a = cast<RankedTensorType>(g.getA().getType());
    return isGemmElementTypes(g.getA(), g.getB(), g.getResult()) && nonEmpty(g.getResult()) &&
           a.getShape()[g.getTransA() ? 0 : 1] != 0 &&
           (!g.getC() || getElementTypeOrSelf(g.getC().getType()) == getElementTypeOrSelf(g.getType()));
  }
  if (auto conv = dyn_cast<nn::ConvOp>(op))
    return conv.getGroup() == 1 && isGemmElementTypes(conv.getInput(), conv.getWeight(), conv.getResult()) && nonEmpty(conv.getResult()) &&
           nonEmpty(conv.getWeight());
  return false;
}

/// Matrix products become GEMM library calls; Gemm's C is broadcast to the
/// result first (by an outlined expand kernel) and accumulated with beta.
LogicalResult lowerToGemm(Operation *op, ModuleOp module, int &counter, bool &lowered, bool cpuOnly) {
  lowered = isLibraryContraction(op);
  if (!lowered)
    return success();
  if (auto conv = dyn_cast<nn::ConvOp>(op))
    return lowerConvToGemm(conv, module, counter, cpuOnly);
  OpBuilder b(op);
  if (auto mm = dyn_cast<nn::MatMulOp>(op)) {
    auto gemm = exec::GemmOp::create(b, op->getLoc(), mm.getType(), mm.getLhs(), mm.getRhs(), Value(),
                                     Value(), false, false, APFloat(1.0), APFloat(0.0),
                                     nodeNames(op->getLoc()));
    op->replaceAllUsesWith(gemm->getResults());
    op->erase();
    return success();
  }
  auto g = cast<nn::GemmOp>(op);
  auto out = cast<RankedTensorType>(g.getType());
  Value c = g.getC();
  double beta = g.getBeta().convertToDouble();
  if (c && beta != 0.0 && c.getType() != out) {
    auto expand = nn::ExpandOp::create(b, op->getLoc(), out, c, Value());
    auto launch = outline(expand, module, counter);
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

/// True when `x` can join `group` (ops in block order): every value the
/// group and `x` define that an op outside them reads is read after `x`,
/// where the fused kernel will run.
bool canJoin(ArrayRef<Operation *> group, Operation *x) {
  auto inGroup = [&](Operation *op) { return op == x || llvm::is_contained(group, op); };
  for (Operation *op : llvm::concat<Operation *const>(group, ArrayRef<Operation *>(x)))
    for (Value v : op->getResults())
      for (Operation *user : v.getUsers())
        if (!inGroup(user) && user->getBlock() == x->getBlock() && !x->isBeforeInBlock(user))
          return false;
  return true;
}

/// Outlines a group of fusible elementwise ops of one shape into one kernel:
/// a single linalg.generic reading the group's outside operands through
/// broadcast maps and writing every value used outside the group.
LogicalResult outlineGroup(ArrayRef<Operation *> group, ModuleOp module, int &counter) {
  llvm::SmallPtrSet<Operation *, 8> members(group.begin(), group.end());
  SmallVector<Value> inputs, outputs;
  for (Operation *op : group)
    for (Value operand : op->getOperands())
      if ((!operand.getDefiningOp() || !members.count(operand.getDefiningOp())) &&
          !llvm::is_contained(inputs, operand))
        inputs.push_back(operand);
  for (Operation *op : group)
    for (Value r : op->getResults())
      if (llvm::any_of(r.getUsers(), [&](Operation *u) { return !members.count(u); }))
        outputs.push_back(r);
  SmallVector<Type> outputTypes;
  SmallVector<Location> locs;
  for (Value v : outputs)
    outputTypes.push_back(v.getType());
  for (Operation *op : group)
    locs.push_back(op->getLoc());
  Operation *last = group.back();
  auto shape = cast<RankedTensorType>(last->getResult(0).getType()).getShape();
  // The launch carries every fused node's name.
  Location fusedLoc = FusedLoc::get(last->getContext(), locs);
  last->setLoc(fusedLoc);
  std::string suffix = "fused_" + group.front()->getName().stripDialect().str() + "_" +
                       std::to_string(group.size());
  auto launch = outlineKernel(
      last, module, counter, suffix, inputs, outputTypes,
      [&](OpBuilder &kb, ValueRange args, ValueRange inits) -> FailureOr<SmallVector<Value>> {
        MLIRContext *ctx = kb.getContext();
        SmallVector<AffineMap> maps;
        for (Value a : args)
          maps.push_back(broadcastMap(ctx, cast<RankedTensorType>(a.getType()).getShape(), shape));
        for (size_t i = 0; i < inits.size(); ++i)
          maps.push_back(kb.getMultiDimIdentityMap(shape.size()));
        SmallVector<utils::IteratorType> it(shape.size(), utils::IteratorType::parallel);
        bool ok = true;
        auto results = generic(kb, fusedLoc, args, inits, maps, it,
                               [&](OpBuilder &nb, Location l, ValueRange s) -> SmallVector<Value> {
                                 IRMapping scalars;
                                 for (auto [v, scalar] : llvm::zip(inputs, s.take_front(inputs.size())))
                                   scalars.map(v, scalar);
                                 for (Operation *op : group) {
                                   SmallVector<Value> operands;
                                   for (Value o : op->getOperands())
                                     operands.push_back(scalars.lookup(o));
                                   auto v = buildElementwiseScalar(nb, op->getLoc(), op, operands);
                                   if (failed(v)) {
                                     ok = false;
                                     v = operands.front();
                                   }
                                   scalars.map(op->getResult(0), *v);
                                 }
                                 SmallVector<Value> yielded;
                                 for (Value out : outputs)
                                   yielded.push_back(scalars.lookup(out));
                                 return yielded;
                               });
        if (!ok)
          return failure();
        return results;
      });
  if (failed(launch))
    return failure();
  for (auto [out, result] : llvm::zip(outputs, launch->getResults()))
    out.replaceUsesWithIf(result, [&](OpOperand &use) { return !members.count(use.getOwner()); });
  for (Operation *op : llvm::reverse(group))
    op->erase();
  return success();
}

/// Splits the bias of f32 convolutions (those lowerDirectConvolutions left)
/// into an nn.add of the bias viewed as [M, 1, ...], so fusion merges it with
/// the activation and residual add that follow into one epilogue kernel
/// after the GEMM.
void splitConvBias(func::FuncOp func) {
  SmallVector<nn::ConvOp> convs;
  func.walk([&](nn::ConvOp conv) {
    auto type = cast<RankedTensorType>(conv.getType());
    if (conv.getBias() && type.getElementType().isF32() &&
        type.hasStaticShape() && type.getNumElements() > 0)
      convs.push_back(conv);
  });
  for (nn::ConvOp conv : convs) {
    OpBuilder b(conv);
    auto type = cast<RankedTensorType>(conv.getType());
    auto bare = nn::ConvOp::create(b, conv.getLoc(), type, conv.getInput(), conv.getWeight(),
                                   Value(), conv.getStridesAttr(), conv.getPadsAttr(),
                                   conv.getDilationsAttr(), conv.getGroupAttr());
    SmallVector<int64_t> biasShape(type.getRank() - 1, 1);
    biasShape[0] = type.getShape()[1];
    Value bias = nn::ReshapeOp::create(b, conv.getLoc(),
                                       RankedTensorType::get(biasShape, type.getElementType()),
                                       conv.getBias(), Value());
    Value sum = nn::AddOp::create(b, conv.getLoc(), type, bare.getResult(), bias);
    conv.getResult().replaceAllUsesWith(sum);
    conv.erase();
  }
}

/// True when `v` holds one value per column of `result` (shape [.., 1, N]).
bool isColumnVector(Value v, RankedTensorType result) {
  auto type = cast<RankedTensorType>(v.getType());
  ArrayRef<int64_t> shape = type.getShape();
  return type.hasStaticShape() && type.getElementType() == result.getElementType() && !shape.empty() &&
         shape.back() == result.getShape().back() && type.getNumElements() == shape.back() &&
         shape.size() <= (size_t)result.getRank();
}

/// The activation the GEMM epilogue applies for `op` ("relu"), or "". Erf
/// GELU stays a generated kernel: cuBLASLt's GELU epilogue is the tanh
/// approximation (up to 5e-4 off per element), while the plan promises erf
/// on every device.
StringRef epilogueActivation(Operation *op) {
  if (isa<nn::ReluOp>(op))
    return "relu";
  return "";
}

/// Bias vectors and activations after f32 MatMul/Gemm ride on the GEMM call
/// (the library epilogue: module ABI args[3] and the activation iparam):
/// matmul → add(column vector) [→ relu] becomes one exec.gemm, and
/// a Gemm's column-vector C (beta 1) becomes its bias, so neither a bias
/// kernel nor the broadcast of C and its copy step remain.
void fuseGemmEpilogues(func::FuncOp func) {
  SmallVector<Operation *> products;
  func.walk([&](Operation *op) {
    if (isa<nn::MatMulOp, nn::GemmOp>(op))
      products.push_back(op);
  });
  for (Operation *op : products) {
    auto out = cast<RankedTensorType>(op->getResult(0).getType());
    Value a, b, bias;
    bool transA = false, transB = false;
    double alpha = 1;
    SmallVector<Operation *> chain{op};
    if (auto mm = dyn_cast<nn::MatMulOp>(op)) {
      if (!isLibraryMatMul(mm) || !mm->hasOneUse())
        continue;
      auto add = dyn_cast<nn::AddOp>(*mm->getUsers().begin());
      if (!add || add.getType() != out)
        continue;
      bias = add.getLhs() == mm.getResult() ? add.getRhs() : add.getLhs();
      if (bias == mm.getResult() || !isColumnVector(bias, out))
        continue;
      a = mm.getLhs();
      b = mm.getRhs();
      chain.push_back(add);
    } else {
      auto g = cast<nn::GemmOp>(op);
      if (!g.getC() || !isF32(g.getA()) || !isF32(g.getB()) || g.getBeta().convertToDouble() != 1.0 ||
          !out.hasStaticShape() || out.getNumElements() == 0 || !isColumnVector(g.getC(), out))
        continue;
      a = g.getA();
      b = g.getB();
      bias = g.getC();
      transA = g.getTransA();
      transB = g.getTransB();
      alpha = g.getAlpha().convertToDouble();
    }
    StringRef activation = "none";
    Operation *last = chain.back();
    if (last->hasOneUse()) {
      Operation *user = *last->getUsers().begin();
      if (StringRef act = epilogueActivation(user); !act.empty() && user->getResult(0).getType() == out) {
        activation = act;
        chain.push_back(user);
      }
    }
    SmallVector<Location> locs;
    for (Operation *c : chain)
      locs.push_back(c->getLoc());
    Location loc = FusedLoc::get(op->getContext(), locs);
    OpBuilder builder(chain.back());
    auto gemm = exec::GemmOp::create(builder, loc, out, a, b, Value(), bias, transA, transB, APFloat(alpha),
                                     APFloat(0.0), nodeNames(loc), activation);
    chain.back()->getResult(0).replaceAllUsesWith(gemm.getResult());
    for (Operation *c : llvm::reverse(chain))
      c->erase();
  }
}

/// Without library epilogues, a Gemm's column-vector C (beta 1) becomes an
/// nn.add after a C-less Gemm: the add joins the consumers' fused kernel
/// instead of a broadcast kernel and a copy step feeding the GEMM.
void splitGemmBias(func::FuncOp func) {
  SmallVector<nn::GemmOp> gemms;
  func.walk([&](nn::GemmOp g) {
    auto out = cast<RankedTensorType>(g.getType());
    if (g.getC() && isF32(g.getA()) && isF32(g.getB()) && g.getBeta().convertToDouble() == 1.0 &&
        out.hasStaticShape() && out.getNumElements() > 0 && isColumnVector(g.getC(), out))
      gemms.push_back(g);
  });
  for (nn::GemmOp g : gemms) {
    OpBuilder b(g);
    auto bare = nn::GemmOp::create(b, g.getLoc(), g.getType(), g.getA(), g.getB(), Value(), g.getAlphaAttr(),
                                   b.getF64FloatAttr(0.0), g.getTransAAttr(), g.getTransBAttr());
    Value sum = nn::AddOp::create(b, g.getLoc(), g.getType(), bare.getResult(), g.getC());
    g.getResult().replaceAllUsesWith(sum);
    g.erase();
  }
}

/// A user of a row root's f32 result that casts it to f16/bf16 (the operand
/// of the next GEMM): the kernel writes the low type itself, instead of or
/// next to the f32 result, rounding each element once as the cast would, so
/// no cast kernel re-reads the result.
nn::CastOp absorbableCast(Value result) {
  for (Operation *user : result.getUsers()) {
    auto c = dyn_cast<nn::CastOp>(user);
    Type e = c ? getElementTypeOrSelf(c.getType()) : Type();
    if (c && (e.isF16() || e.isBF16()))
      return c;
  }
  return {};
}

/// The single user of `attention`'s result (or of its output cast) when it
/// is a transpose that keeps the last dim last: the attention kernel then
/// writes its rows there.
nn::TransposeOp absorbableTranspose(Operation *attention, Value result) {
  if (!isa<nn::AttentionOp>(attention) || !result.hasOneUse())
    return {};
  auto transpose = dyn_cast<nn::TransposeOp>(*result.getUsers().begin());
  if (!transpose || transpose.getPerm().back() != (int64_t)transpose.getPerm().size() - 1 ||
      !cast<RankedTensorType>(transpose.getType()).hasStaticShape())
    return {};
  return transpose;
}

/// Builds every row-kernel root (layer_norm, softmax over the last axis,
/// attention) as one kernel together with the elementwise, transpose and
/// reshape producers only it reads (a residual add before a layer norm, the
/// bias add and head split before attention), and attention's output
/// transpose. Runs before elementwise fusion, which then groups the rest.
LogicalResult fuseRowKernels(func::FuncOp func, ModuleOp module, int &counter) {
  SmallVector<Operation *> roots;
  for (Operation &op : func.getBody().front())
    if (isRowKernelRoot(&op))
      roots.push_back(&op);
  for (Operation *root : roots) {
    llvm::SetVector<Operation *> producers = inlinableProducers(root, isa<nn::AttentionOp>(root));
    // Consumers replaced by the kernel's result: the output cast when it is
    // the only user, then attention's head-merge transpose. A cast next to
    // other users becomes a second result.
    nn::CastOp outCast = absorbableCast(root->getResult(0));
    nn::CastOp secondOutput = outCast && !root->hasOneUse() ? outCast : nn::CastOp();
    if (secondOutput)
      outCast = {};
    nn::TransposeOp transpose = absorbableTranspose(root, outCast ? outCast->getResult(0) : root->getResult(0));
    SmallVector<Operation *> consumers;
    if (outCast)
      consumers.push_back(outCast);
    if (transpose)
      consumers.push_back(transpose);
    SmallVector<Value> leaves;
    for (Operation *op : llvm::concat<Operation *const>(producers.getArrayRef(), ArrayRef<Operation *>(root)))
      for (Value operand : op->getOperands())
        if ((!operand.getDefiningOp() || !producers.contains(operand.getDefiningOp())) &&
            !llvm::is_contained(leaves, operand))
          leaves.push_back(operand);
    Operation *last = consumers.empty() ? root : consumers.back();
    SmallVector<Location> locs;
    for (Operation *op : producers)
      locs.push_back(op->getLoc());
    locs.push_back(root->getLoc());
    for (Operation *op : consumers)
      locs.push_back(op->getLoc());
    SmallVector<Type> resultTypes(last->getResultTypes());
    if (secondOutput) {
      locs.push_back(secondOutput.getLoc());
      resultTypes.push_back(secondOutput.getType());
    }
    last->setLoc(FusedLoc::get(root->getContext(), locs));
    std::string suffix = root->getName().stripDialect().str();
    size_t fused = producers.size() + 1 + consumers.size() + (secondOutput ? 1 : 0);
    if (fused > 1)
      suffix = "fused_" + suffix + "_" + std::to_string(fused);
    auto launch = outlineKernel(
        last, module, counter, suffix, leaves, resultTypes,
        [&](OpBuilder &kb, ValueRange args, ValueRange inits) {
          IRMapping arguments;
          arguments.map(leaves, args);
          return buildRowKernel(kb, root, ElementReader(producers, arguments), inits,
                                transpose ? transpose.getPerm() : ArrayRef<int64_t>());
        });
    if (failed(launch))
      return failure();
    last->getResult(0).replaceAllUsesWith(launch->getResult(0));
    if (secondOutput) {
      secondOutput.getResult().replaceAllUsesWith(launch->getResult(1));
      secondOutput->erase();
    }
    for (Operation *op : llvm::reverse(consumers))
      op->erase();
    root->erase();
    for (Operation *op : llvm::reverse(producers))
      op->erase();
  }
  return success();
}

/// Fuses chains and DAGs of elementwise and broadcasting ops of one result
/// shape into single kernels (each intermediate stays in registers).
LogicalResult fuseElementwise(func::FuncOp func, ModuleOp module, int &counter) {
  llvm::DenseMap<Operation *, size_t> groupOf;
  std::vector<SmallVector<Operation *>> groups;
  for (Operation &opRef : func.getBody().front()) {
    Operation *op = &opRef;
    if (!isFusibleElementwise(op) || !isStatic(op) ||
        cast<RankedTensorType>(op->getResult(0).getType()).getNumElements() == 0)
      continue;
    auto shape = cast<RankedTensorType>(op->getResult(0).getType()).getShape();
    std::optional<size_t> chosen;
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def || !groupOf.count(def))
        continue;
      size_t g = groupOf[def];
      auto groupShape = cast<RankedTensorType>(groups[g].front()->getResult(0).getType()).getShape();
      if (groupShape == shape && canJoin(groups[g], op)) {
        chosen = g;
        break;
      }
    }
    if (!chosen) {
      chosen = groups.size();
      groups.emplace_back();
    }
    groups[*chosen].push_back(op);
    groupOf[op] = *chosen;
  }
  for (auto &group : groups)
    if (group.size() > 1 && failed(outlineGroup(group, module, counter)))
      return failure();
  return success();
}

/// Moves the kernels to the end of the module in the order of their first
/// launch, so kernels read in schedule order whichever fusion built them.
void orderKernelsBySchedule(ModuleOp module, ArrayRef<func::FuncOp> entries) {
  llvm::SmallPtrSet<Operation *, 32> moved;
  for (func::FuncOp entry : entries)
    entry.walk([&](exec::LaunchOp launch) {
      auto kernel = module.lookupSymbol<func::FuncOp>(launch.getKernel());
      if (kernel && moved.insert(kernel).second)
        kernel->moveBefore(module.getBody(), module.getBody()->end());
    });
}

LogicalResult lowerFunction(func::FuncOp func, ModuleOp module, int &counter, bool cpuOnly) {
  SmallVector<Operation *> ops;
  for (Operation &op : func.getBody().front())
    if (op.getDialect() && isa<nn::NNDialect>(op.getDialect()) && !isa<nn::ConstantOp>(op))
      ops.push_back(&op);
  for (Operation *op : ops) {
    if (!isStatic(op))
      return op->emitOpError("needs static shapes for code generation (fix dynamic input "
                             "dims with --shape NAME:DIMS)");
    // A reshape of a static tensor is a view of the same bytes.
    if (isa<nn::ReshapeOp, nn::SqueezeOp, nn::UnsqueezeOp>(op) && op->getNumOperands() == 1) {
      OpBuilder b(op);
      auto view = exec::ViewOp::create(b, op->getLoc(), op->getResult(0).getType(), op->getOperand(0));
      op->replaceAllUsesWith(view->getResults());
      op->erase();
      continue;
    }
    // Results without elements need no code: they become empty constants.
    if (llvm::all_of(op->getResultTypes(), [](Type t) {
          return cast<RankedTensorType>(t).getNumElements() == 0;
        })) {
      OpBuilder b(op);
      for (Value r : op->getResults()) {
        auto type = cast<RankedTensorType>(r.getType());
        auto empty = DenseElementsAttr::getFromRawBuffer(type, ArrayRef<char>());
        r.replaceAllUsesWith(nn::ConstantOp::create(b, op->getLoc(), empty));
      }
      op->erase();
      continue;
    }
    bool lowered = false;
    if (failed(lowerToGemm(op, module, counter, lowered, cpuOnly)))
      return failure();
    if (!lowered && failed(outline(op, module, counter)))
      return failure();
  }
  return success();
}

} // namespace

LogicalResult lowerNNToExec(ModuleOp module, const LoweringOptions &options) {
  int counter = 0;
  SmallVector<func::FuncOp> entries;
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isPrivate())
      entries.push_back(func);
  for (auto func : entries) {
    computeLowPrecisionInF32(func, isLibraryContraction);
    if (options.cpuOnly && failed(lowerDirectConvolutions(func, module, counter, options.fuse)))
      return failure();
    if (!options.cpuOnly && options.fuse && options.gemmEpilogues &&
        failed(lowerConvolutionsWithGemmEpilogues(func, module, counter)))
      return failure();
    if (options.fuse) {
      splitConvBias(func);
      if (options.gemmEpilogues)
        fuseGemmEpilogues(func);
      else
        splitGemmBias(func);
    }
    if ((options.fuse && failed(fuseRowKernels(func, module, counter))) ||
        (options.fuse && failed(fuseElementwise(func, module, counter))) ||
        failed(lowerFunction(func, module, counter, options.cpuOnly)))
      return failure();
  }
  orderKernelsBySchedule(module, entries);
  return success();
}

} // namespace nncc
