/// nncc-fuse-gemm-epilogues: bias vectors and activations after f32
/// MatMul/Gemm ride on the GEMM call (the library epilogue: module ABI
/// args[3] and the activation iparam).
#include "lib/Conversion/NNToExec/Contractions.h"
#include "lib/Conversion/NNToExec/Outline.h"
#include "lib/Conversion/NNToExec/PassDetail.h"

using namespace mlir;

namespace nncc {
#define GEN_PASS_DEF_FUSEGEMMEPILOGUESPASS
#include "lib/Conversion/NNToExec/Passes.h.inc"

namespace {

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
  auto missed = [&](Operation *op, llvm::StringRef why) {
    remark::missed(op->getLoc(), fusionRemark("gemm-epilogue", func)) << remark::reason("{0}", why.str());
  };
  for (Operation *op : products) {
    auto out = cast<RankedTensorType>(op->getResult(0).getType());
    Value a, b, bias;
    bool transA = false, transB = false;
    double alpha = 1;
    SmallVector<Operation *> chain{op};
    if (auto mm = dyn_cast<nn::MatMulOp>(op)) {
      if (!isLibraryMatMul(mm)) {
        missed(op, "not an f32 MatMul the GEMM library runs");
        continue;
      }
      auto add = mm->hasOneUse() ? dyn_cast<nn::AddOp>(*mm->getUsers().begin()) : nn::AddOp();
      if (!add || add.getType() != out) {
        missed(op, "its only reader is not an add of its shape");
        continue;
      }
      bias = add.getLhs() == mm.getResult() ? add.getRhs() : add.getLhs();
      if (bias == mm.getResult() || !isColumnVector(bias, out)) {
        missed(op, "the add's other operand is not a vector of the GEMM's columns");
        continue;
      }
      a = mm.getLhs();
      b = mm.getRhs();
      chain.push_back(add);
    } else {
      auto g = cast<nn::GemmOp>(op);
      if (!g.getC() || !isF32(g.getA()) || !isF32(g.getB()) || g.getBeta().convertToDouble() != 1.0 ||
          !out.hasStaticShape() || out.getNumElements() == 0 || !isColumnVector(g.getC(), out)) {
        missed(op, "not an f32 Gemm whose C is a vector of its columns with beta 1");
        continue;
      }
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
    remark::passed(loc, fusionRemark("gemm-epilogue", func))
        << remark::reason("bias{0} on the GEMM call", activation == "none" ? "" : " and " + activation.str());
    chain.back()->getResult(0).replaceAllUsesWith(gemm.getResult());
    for (Operation *c : llvm::reverse(chain))
      c->erase();
  }
}

struct FuseGemmEpiloguesPass : impl::FuseGemmEpiloguesPassBase<FuseGemmEpiloguesPass> {
  void runOnOperation() override {
    if (!getOperation().isPrivate())
      fuseGemmEpilogues(getOperation());
  }
};

} // namespace
} // namespace nncc
