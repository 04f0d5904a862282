//===- ExecUtils.cpp ------------------------------------------------------===//
#include "dialects/Exec/ExecUtils.h"

#include "dialects/Dist/DistOps.h"
#include "dialects/Exec/ExecOps.h"

#include <algorithm>

using namespace mlir;

Value nncc::exec::viewRoot(Value v) {
  while (auto view = v.getDefiningOp<ViewOp>())
    v = view.getInput();
  return v;
}

int64_t nncc::exec::bufferBytes(Type type) {
  auto shaped = cast<ShapedType>(type);
  return shaped.getNumElements() * std::max<int64_t>(1, shaped.getElementTypeBitWidth() / 8);
}

bool nncc::exec::isPlannedStep(Operation *op) {
  return isa<LaunchOp, GemmOp>(op) || dist::isCollectiveStep(op);
}
