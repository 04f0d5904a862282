/// nncc-form-conv-kernels: the convolutions whose kernels depend on the plan
/// (direct kernels on the CPU, GEMM calls carrying their epilogue on the
/// GPU), formed before the fusion passes would split their epilogues off.
#include "lib/Conversion/NNToExec/ConvEpilogue.h"
#include "lib/Conversion/NNToExec/Contractions.h"
#include "lib/Conversion/NNToExec/DirectConv.h"
#include "lib/Conversion/NNToExec/Im2col.h"
#include "lib/Conversion/NNToExec/ImplicitGemmConv.h"
#include "lib/Conversion/NNToExec/LinalgUtils.h"
#include "lib/Conversion/NNToExec/Outline.h"
#include "lib/Conversion/NNToExec/PassDetail.h"

#include "dialects/NN/NNUtils.h"

using namespace mlir;

namespace nncc {
#define GEN_PASS_DEF_FORMCONVKERNELSPASS
#include "lib/Conversion/NNToExec/Passes.h.inc"

namespace {

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
/// or has nothing to fold (nncc-lower-contractions then takes it).
FailureOr<bool> lowerConvWithGemmEpilogue(nn::ConvOp conv, SymbolTable &symbols) {
  auto out = cast<RankedTensorType>(conv.getType());
  if (!isLibraryContraction(conv) || !isF32(conv.getInput()) || !isF32(conv.getWeight()) ||
      !out.getElementType().isF32() || !out.hasStaticShape() || gemmOverWholeBatch(conv))
    return false;
  bool pointwise = readsInputAsColumns(conv);
  std::optional<SmallVector<float>> weights = nn::constantFloats(conv.getWeight()), bias;
  if (conv.getBias() && (pointwise || !weights || !(bias = nn::constantFloats(conv.getBias()))))
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
    auto launch = outlineKernel(conv, symbols, "im2col", conv.getInput(), RankedTensorType::get(colShape, f32),
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
/// before nncc-split-conv-bias and the fusion passes would take the bias and
/// the ops after it into kernels.
LogicalResult lowerConvolutionsWithGemmEpilogues(func::FuncOp func, SymbolTable &symbols) {
  SmallVector<nn::ConvOp> convs;
  func.walk([&](nn::ConvOp conv) { convs.push_back(conv); });
  for (nn::ConvOp conv : convs)
    if (failed(lowerConvWithGemmEpilogue(conv, symbols)))
      return failure();
  return success();
}

/// The padded input copies of the CPU plan's convolutions (direct and
/// implicit-GEMM kernels read their input with a zero frame around it), and
/// the ones a kernel writes itself: when a kernel's result (a convolution's
/// after its epilogue, or a direct max pool's) is read by one convolution
/// whose copy is the result in a zero frame, and otherwise only by residual
/// Adds that kernels fold (direct kernels in their tiles, implicit-GEMM ones
/// in their transpose), the kernel (a direct kernel's tiles, an
/// implicit-GEMM kernel's transpose) writes that copy instead, the residual
/// readers read inside its frame, and no copy kernel runs: a pass over memory
/// saved, whose destination is cold at batch 1 (the weights of the
/// convolutions before it streamed through the cache). Until the reader is
/// lowered, its nn.conv reads the result as a slice of the copy.
class InputCopies {
public:
  enum class Form { Direct, ImplicitGemm };

  explicit InputCopies(const VectorUnit &unit) : unit_(unit) {}

  /// `conv` becomes a kernel of `form` that folds `epilogue` (a direct
  /// kernel in its tiles, an implicit-GEMM kernel in its transpose).
  void add(nn::ConvOp conv, Form form, const ConvEpilogue &epilogue) {
    forms_[conv] = form;
    if (epilogue.residual)
      residualAdds_[epilogue.ops.front()] = epilogue.residual;
  }

  /// The copy `conv` reads, and the frame around its input in it (empty when
  /// it is more than a frame, or when `conv` reads no copy).
  std::pair<RankedTensorType, SmallVector<int64_t>> copyOf(nn::ConvOp conv) const {
    auto form = forms_.find(conv);
    if (form == forms_.end())
      return {};
    if (form->second == Form::Direct)
      return {readsInputCopy(conv, unit_) ? inputCopyType(conv, unit_) : RankedTensorType(),
              inputCopyFrame(conv, unit_)};
    RankedTensorType type = implicitGemmInputType(conv);
    return {type == conv.getInput().getType() ? RankedTensorType() : type, implicitGemmInputFrame(conv)};
  }

  /// Where the kernel producing a result writes it: the padded copy of
  /// `next` (its type and frame), or, with `next` null, a plain output.
  struct Target {
    nn::ConvOp next;
    RankedTensorType copy;
    SmallVector<int64_t> frame;
  };

  /// The target of the kernel producing `result` (readerOf).
  Target targetOf(Value result) const {
    nn::ConvOp next = readerOf(result);
    if (!next)
      return {};
    auto [copy, frame] = copyOf(next);
    return {next, copy, frame};
  }

  /// The kernel's result `value` (of `target`'s copy type, or plain without
  /// a copy to write): what the ops after it read, `value` itself or the
  /// slice of the copy that `target.next` reads until it is lowered.
  Value written(OpBuilder &b, Location loc, const Target &target, Value value) {
    nn::ConvOp next = target.next;
    if (!next)
      return value;
    written_[next] = value;
    Value slice =
        extractInterior(b, loc, value, cast<RankedTensorType>(next.getInput().getType()).getShape(), target.frame);
    framedSlices_[slice] = {value, target.frame};
    slices_.push_back(slice.getDefiningOp());
    return slice;
  }

  /// The convolution whose copy the kernel producing `result` writes
  /// instead of `result`, or null: the one reader of `result` that reads a
  /// frame of it, when every other reader is a residual Add that a kernel
  /// folds (it reads the residual through the frame, see residualFrame).
  nn::ConvOp readerOf(Value result) const {
    nn::ConvOp next;
    for (OpOperand &use : result.getUses()) {
      auto conv = dyn_cast<nn::ConvOp>(use.getOwner());
      if (conv && !next && use.getOperandNumber() == 0 && !copyOf(conv).second.empty()) {
        next = conv;
        continue;
      }
      auto folded = residualAdds_.find(use.getOwner());
      if (folded == residualAdds_.end() || folded->second != result)
        return {};
    }
    return next;
  }

  /// `epilogue`'s residual Add is folded into its kernel now (and erased):
  /// no longer a reader to look up.
  void folded(const ConvEpilogue &epilogue) {
    if (epilogue.residual)
      residualAdds_.erase(epilogue.ops.front());
  }

  /// A residual that a kernel wrote inside a frame (a slice of a copy
  /// written for another convolution): that copy and the frame; else
  /// `residual` itself and no frame.
  std::pair<Value, SmallVector<int64_t>> residualFrame(Value residual) const {
    auto framed = framedSlices_.find(residual);
    if (framed == framedSlices_.end())
      return {residual, {}};
    return framed->second;
  }

  /// The input `conv`'s kernel reads: the copy written for it, else a copy
  /// kernel's (made with `buildCopy`) when it reads one, else its input.
  FailureOr<Value> input(nn::ConvOp conv, SymbolTable &symbols, const KernelBodyFn &buildCopy) {
    if (auto found = written_.find(conv); found != written_.end())
      return found->second;
    RankedTensorType type = copyOf(conv).first;
    if (!type)
      return conv.getInput();
    auto copy = outlineKernel(conv, symbols, "pad", conv.getInput(), TypeRange{type}, buildCopy);
    if (failed(copy))
      return failure();
    return copy->getResult(0);
  }

  /// Erases the slices of written copies, which no reader reads once every
  /// kernel is formed.
  void eraseSlices() {
    for (Operation *slice : slices_)
      if (slice->use_empty())
        slice->erase();
    slices_.clear();
  }

private:
  const VectorUnit &unit_;
  DenseMap<Operation *, Form> forms_;
  DenseMap<Operation *, Value> written_;
  DenseMap<Operation *, Value> residualAdds_; // a folded residual Add -> its residual
  DenseMap<Value, std::pair<Value, SmallVector<int64_t>>> framedSlices_;
  SmallVector<Operation *> slices_;
};

/// The value `conv`'s kernel replaces: the last folded op's result, or its own.
Value resultAfter(nn::ConvOp conv, const ConvEpilogue &epilogue) {
  return epilogue.ops.empty() ? Value(conv.getResult()) : epilogue.ops.back()->getResult(0);
}

/// `conv` as its direct kernel (after the copy it reads, see InputCopies),
/// with `epilogue` folded in: the launch takes the place of the epilogue's
/// last op.
LogicalResult lowerDirectConvolution(nn::ConvOp conv, const ConvEpilogue &epilogue, const VectorUnit &unit,
                                     SymbolTable &symbols, InputCopies &copies) {
  epilogue.moveConvToItsEnd(conv);
  Location loc = conv.getLoc();
  FailureOr<Value> input =
      copies.input(conv, symbols, [&](OpBuilder &kb, ValueRange args, ValueRange inits) -> FailureOr<SmallVector<Value>> {
        return SmallVector<Value>{buildInputCopy(kb, loc, conv, args[0], inits[0], unit)};
      });
  if (failed(input))
    return failure();
  InputCopies::Target target = copies.targetOf(resultAfter(conv, epilogue));
  SmallVector<Value> operands{*input, conv.getWeight()};
  if (conv.getBias())
    operands.push_back(conv.getBias());
  auto [residual, residualFrame] = copies.residualFrame(epilogue.residual);
  if (residual)
    operands.push_back(residual);
  auto launch = outlineKernel(
      conv, symbols, "conv", operands, TypeRange{target.next ? Type(target.copy) : conv.getType()},
      [&](OpBuilder &kb, ValueRange args, ValueRange inits) -> FailureOr<SmallVector<Value>> {
        Value bias = conv.getBias() ? args[2] : Value();
        Value residualArg = residual ? args.back() : Value();
        return SmallVector<Value>{buildDirectConvolution(kb, loc, conv, args[0], args[1], bias, residualArg,
                                                         epilogue, inits[0], unit, target.frame, residualFrame)};
      });
  if (failed(launch))
    return failure();
  OpBuilder b(conv);
  Value result = copies.written(b, loc, target, launch->getResult(0));
  copies.folded(epilogue);
  epilogue.replaceConvAndOps(conv, result);
  return success();
}

/// `conv` as its implicit-GEMM kernel (after the copy it reads, see
/// InputCopies) and the transpose of its position-major result (into the
/// next convolution's copy where InputCopies says so): the bias and, without
/// a residual, the clamp of `epilogue` in the kernel; with a residual, its
/// Add and the clamp after it in the transpose (the position-major tile is
/// not the residual's layout; the transpose reads both).
LogicalResult lowerImplicitGemmConvolution(nn::ConvOp conv, const ConvEpilogue &epilogue,
                                           const ImplicitGemmTiling &tiling, SymbolTable &symbols,
                                           InputCopies &copies) {
  epilogue.moveConvToItsEnd(conv);
  Location loc = conv.getLoc();
  OpBuilder b(conv);
  FailureOr<Value> input =
      copies.input(conv, symbols, [&](OpBuilder &kb, ValueRange args, ValueRange inits) -> FailureOr<SmallVector<Value>> {
        return SmallVector<Value>{buildImplicitGemmInputCopy(kb, loc, conv, args[0], inits[0])};
      });
  if (failed(input))
    return failure();
  Operation *oldWeights = conv.getWeight().getDefiningOp();
  Value weights = nn::ConstantOp::create(b, loc, implicitGemmWeights(conv, tiling));
  SmallVector<Value> operands{*input, weights};
  if (conv.getBias())
    operands.push_back(conv.getBias());
  auto out = cast<RankedTensorType>(conv.getType());
  ArrayRef<int64_t> shape = out.getShape();
  auto byPosition = RankedTensorType::get({shape[0], shape[2] * shape[3], shape[1]}, out.getElementType());
  std::optional<std::pair<double, double>> kernelClamp = epilogue.residual ? std::nullopt : epilogue.clamp;
  auto launch = outlineKernel(
      conv, symbols, "conv", operands, TypeRange{byPosition},
      [&](OpBuilder &kb, ValueRange args, ValueRange inits) -> FailureOr<SmallVector<Value>> {
        Value bias = conv.getBias() ? args[2] : Value();
        return SmallVector<Value>{
            buildImplicitGemmConvolution(kb, loc, conv, args[0], args[1], bias, kernelClamp, inits[0], tiling)};
      });
  if (failed(launch))
    return failure();
  InputCopies::Target target = copies.targetOf(resultAfter(conv, epilogue));
  auto [residual, residualFrame] = copies.residualFrame(epilogue.residual);
  SmallVector<Value> transposeOperands{launch->getResult(0)};
  if (residual)
    transposeOperands.push_back(residual);
  std::optional<std::pair<double, double>> transposeClamp = epilogue.residual ? epilogue.clamp : std::nullopt;
  auto transposed = outlineKernel(
      conv, symbols, "transpose", transposeOperands, TypeRange{target.next ? Type(target.copy) : Type(out)},
      [&](OpBuilder &kb, ValueRange args, ValueRange inits) -> FailureOr<SmallVector<Value>> {
        return SmallVector<Value>{buildTransposeEpilogue(kb, loc, conv, args[0], residual ? args[1] : Value(),
                                                         residualFrame, transposeClamp, inits[0], target.frame)};
      });
  if (failed(transposed))
    return failure();
  Value result = copies.written(b, loc, target, transposed->getResult(0));
  copies.folded(epilogue);
  epilogue.replaceConvAndOps(conv, result);
  if (oldWeights && oldWeights->use_empty())
    oldWeights->erase();
  return success();
}

/// `pool` as the direct kernel's max-pool form, writing the padded copy of
/// the convolution after it where InputCopies says so.
LogicalResult lowerDirectMaxPool(nn::MaxPoolOp pool, const VectorUnit &unit, SymbolTable &symbols,
                                 InputCopies &copies) {
  Location loc = pool.getLoc();
  InputCopies::Target target = copies.targetOf(pool.getOutput());
  auto launch = outlineKernel(pool, symbols, "max_pool", pool.getInput(),
                              TypeRange{target.next ? Type(target.copy) : pool.getOutput().getType()},
                              [&](OpBuilder &kb, ValueRange args, ValueRange inits) -> FailureOr<SmallVector<Value>> {
                                return SmallVector<Value>{
                                    buildDirectMaxPool(kb, loc, pool, args[0], inits[0], unit, target.frame)};
                              });
  if (failed(launch))
    return failure();
  OpBuilder b(pool);
  pool.getOutput().replaceAllUsesWith(copies.written(b, loc, target, launch->getResult(0)));
  pool.erase();
  return success();
}

/// Whether `conv` becomes its implicit-GEMM kernel: where implicitGemmTiling
/// has a tile, except a 1x1 convolution reading its input as it lies whose
/// residual Add would be folded (the runtime adds it as the GEMM's transposed
/// product is written: no kernel after the GEMM, where the implicit kernel
/// needs its transpose kernel to add it).
bool takesImplicitGemm(nn::ConvOp conv, const VectorUnit &unit, bool fuse) {
  if (!implicitGemmTiling(conv, unit))
    return false;
  return !(fuse && readsInputAsColumns(conv) && matchConvEpilogue(conv).residual);
}

/// CPU-only modules: each convolution takesImplicitGemm accepts becomes its
/// implicit-GEMM kernel; each other one isDirectConvolution accepts its
/// direct kernel, with the residual add and ReLU/Clip after it folded in
/// when fusing; when fusing, the other ungrouped f32 convolutions with a
/// bias or an epilogue become their GEMM form carrying it (lowerConvToGemm).
/// The kernels go in program order, so that a kernel can write the padded
/// copy of the convolution after it (InputCopies). This runs before the
/// fusion passes, which then leave the results alone like any other
/// launch's or GEMM's.
LogicalResult lowerDirectConvolutions(func::FuncOp func, SymbolTable &symbols, bool fuse, const VectorUnit &unit,
                                      bool packedWeights) {
  // The kernels in program order: convolutions with their implicit-GEMM
  // tiling (none: direct), and 2-D max pools as the direct kernel's in-place
  // vector code (the depthwise tiling, max for the FMA): as a loop kernel
  // LLVM ran them scalar with a select per tap (docs/performance.md).
  struct Kernel {
    Operation *op;
    std::optional<ImplicitGemmTiling> tiling;
  };
  SmallVector<Kernel> kernels;
  SmallVector<nn::ConvOp> gemms;
  InputCopies copies(unit);
  func.walk([&](Operation *op) {
    if (auto pool = dyn_cast<nn::MaxPoolOp>(op)) {
      if (isDirectMaxPool(pool, unit))
        kernels.push_back({pool, std::nullopt});
      return;
    }
    auto conv = dyn_cast<nn::ConvOp>(op);
    if (!conv)
      return;
    ConvEpilogue epilogue = fuse ? matchConvEpilogue(conv) : ConvEpilogue{};
    if (takesImplicitGemm(conv, unit, fuse)) {
      kernels.push_back({conv, implicitGemmTiling(conv, unit)});
      copies.add(conv, InputCopies::Form::ImplicitGemm, epilogue);
    } else if (isDirectConvolution(conv, unit)) {
      kernels.push_back({conv, std::nullopt});
      copies.add(conv, InputCopies::Form::Direct, epilogue);
    } else if (fuse && isLibraryContraction(conv) && isF32(conv.getInput()) && isF32(conv.getWeight()) &&
               isF32(conv.getResult()) && cast<RankedTensorType>(conv.getType()).hasStaticShape()) {
      gemms.push_back(conv);
    }
  });
  for (Kernel &k : kernels) {
    LogicalResult formed = success();
    if (auto pool = dyn_cast<nn::MaxPoolOp>(k.op)) {
      formed = lowerDirectMaxPool(pool, unit, symbols, copies);
    } else {
      auto conv = cast<nn::ConvOp>(k.op);
      ConvEpilogue epilogue = fuse ? matchConvEpilogue(conv) : ConvEpilogue{};
      formed = k.tiling ? lowerImplicitGemmConvolution(conv, epilogue, *k.tiling, symbols, copies)
                        : lowerDirectConvolution(conv, epilogue, unit, symbols, copies);
    }
    if (failed(formed))
      return failure();
  }
  copies.eraseSlices();
  for (nn::ConvOp conv : gemms) {
    ConvEpilogue epilogue = matchConvEpilogue(conv);
    if ((conv.getBias() || !epilogue.ops.empty()) &&
        failed(lowerConvToGemm(conv, symbols, /*cpuOnly=*/true, packedWeights, &epilogue)))
      return failure();
  }
  return success();
}

struct FormConvKernelsPass : impl::FormConvKernelsPassBase<FormConvKernelsPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (func::FuncOp func : entryFunctions(module)) {
      LogicalResult formed = success();
      if (plan == ConvPlan::Cpu)
        formed = lowerDirectConvolutions(func, symbols, fuseEpilogues, VectorUnit::of(vectorBits, vectorRegisters),
                                         packedWeights);
      else if (fuseEpilogues)
        formed = lowerConvolutionsWithGemmEpilogues(func, symbols);
      if (failed(formed))
        return signalPassFailure();
    }
  }
};

} // namespace
} // namespace nncc
