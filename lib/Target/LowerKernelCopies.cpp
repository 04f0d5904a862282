/// Bufferization's memref.copy in kernels as linalg.copy, or dropped.
#include "lib/Target/Passes.h"

namespace nncc {
#define GEN_PASS_DEF_LOWERKERNELCOPIESPASS
#include "lib/Target/Passes.h.inc"
} // namespace nncc

using namespace mlir;

namespace nncc {
namespace {

/// `v` without collapse_shape(expand_shape(x)) pairs that give back x's
/// type (row-major reshapes both: the pair is the identity).
Value throughReshapePairs(Value v) {
  while (auto collapse = v.getDefiningOp<memref::CollapseShapeOp>()) {
    auto expand = collapse.getSrc().getDefiningOp<memref::ExpandShapeOp>();
    if (!expand || expand.getSrc().getType() != collapse.getType())
      break;
    v = expand.getSrc();
  }
  return v;
}

/// True when `a` and `b` view the same elements the same way: one value, or
/// static subviews of one buffer with equal offsets, sizes and strides.
bool sameView(Value a, Value b) {
  a = throughReshapePairs(a);
  b = throughReshapePairs(b);
  if (a == b)
    return true;
  auto sa = a.getDefiningOp<memref::SubViewOp>(), sb = b.getDefiningOp<memref::SubViewOp>();
  return sa && sb && sa.getSource() == sb.getSource() && sa.getType() == sb.getType() &&
         sa->getNumOperands() == 1 && sb->getNumOperands() == 1 &&
         sa.getStaticOffsets() == sb.getStaticOffsets() && sa.getStaticSizes() == sb.getStaticSizes() &&
         sa.getStaticStrides() == sb.getStaticStrides();
}

struct LowerKernelCopiesPass : impl::LowerKernelCopiesPassBase<LowerKernelCopiesPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!isKernel(func))
        continue;
      func.walk([&](memref::CopyOp copy) {
        if (!sameView(copy.getSource(), copy.getTarget())) {
          OpBuilder b(copy);
          linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(), copy.getTarget());
        }
        copy.erase();
      });
    }
  }
};

} // namespace
} // namespace nncc
