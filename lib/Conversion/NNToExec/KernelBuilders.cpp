#include "lib/Conversion/NNToExec/KernelBuilders.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace nncc {

Type toSignless(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return type;
  auto intType = dyn_cast<IntegerType>(tensor.getElementType());
  if (!intType || intType.isSignless())
    return type;
  return tensor.clone(IntegerType::get(type.getContext(), intType.getWidth()));
}

FailureOr<SmallVector<Value>> buildKernel(OpBuilder &b, Operation *op, ValueRange args,
                                          ValueRange inits) {
  using Builder = FailureOr<SmallVector<Value>> (*)(OpBuilder &, Operation *, ValueRange,
                                                    ValueRange, bool &);
  for (Builder builder : {kernels::buildElementwise, kernels::buildReduction,
                          kernels::buildDataMovement, kernels::buildWindow}) {
    bool matched = false;
    auto results = builder(b, op, args, inits, matched);
    if (matched)
      return results;
  }
  return op->emitOpError("has no CPU code generation yet"), failure();
}

} // namespace nncc
