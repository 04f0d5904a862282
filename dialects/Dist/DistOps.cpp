/// The dist dialect: verifiers and the folder of its collectives.
#include "dialects/Dist/DistOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

using namespace mlir;
using namespace nncc::dist;

#include "dialects/Dist/DistDialect.cpp.inc"

void DistDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Dist/DistOps.cpp.inc"
      >();
  registerGradientModels(getContext());
}

/// What both levels require: a bucket of one or more values, results of the
/// operands' types, a known reduction and group, and a group of at least one
/// rank.
static LogicalResult verifyAllReduce(Operation *op, ValueRange inputs, ValueRange outputs, StringRef reduction,
                                     int64_t groupSize, StringRef group) {
  if (inputs.empty())
    return op->emitOpError("needs at least one operand");
  if (inputs.getTypes() != outputs.getTypes())
    return op->emitOpError("results must have the operands' types");
  if (reduction != "sum" && reduction != "mean")
    return op->emitOpError("reduction must be 'sum' or 'mean', not '") << reduction << "'";
  if (groupSize < 1)
    return op->emitOpError("group_size must be at least 1");
  if (group != "data" && group != "tensor" && group != "pipeline")
    return op->emitOpError("group must be 'data', 'tensor' or 'pipeline', not '") << group << "'";
  return success();
}

LogicalResult AllReduceOp::verify() {
  return verifyAllReduce(*this, getInputs(), getOutputs(), getReduction(), getGroupSize(), getGroup());
}

/// A group of one rank: sum and mean are the operand itself.
LogicalResult AllReduceOp::fold(FoldAdaptor, SmallVectorImpl<OpFoldResult> &results) {
  if (getGroupSize() != 1)
    return failure();
  for (Value v : getInputs())
    results.push_back(v);
  return success();
}

LogicalResult AllReduceStepOp::verify() {
  if (failed(verifyAllReduce(*this, getInputs(), getOutputs(), getReduction(), getGroupSize(), getGroup())))
    return failure();
  for (Type t : getInputs().getTypes()) {
    auto type = cast<RankedTensorType>(t);
    // What the runtime's communicators reduce today (module_abi.h).
    if (!type.hasStaticShape() || !type.getElementType().isF32())
      return emitOpError("operands must be statically shaped f32 tensors, got ") << t;
  }
  return success();
}

void nncc::dist::setParallelLayout(ModuleOp module, ParallelGroup group, int64_t ranks) {
  SmallVector<int64_t, 3> layout{1, 1, 1};
  if (auto old = module->getAttrOfType<DenseI64ArrayAttr>(kParallelAttrName); old && old.size() <= 3)
    llvm::copy(old.asArrayRef(), layout.begin());
  layout[static_cast<unsigned>(group)] = ranks;
  module->setAttr(kParallelAttrName, DenseI64ArrayAttr::get(module.getContext(), layout));
}

/// A point-to-point message: a known group, a peer in it, something to send.
static LogicalResult verifyPointToPoint(Operation *op, TypeRange types, int64_t peer, int64_t groupSize,
                                        StringRef group) {
  if (types.empty())
    return op->emitOpError("needs at least one value");
  if (group != "data" && group != "tensor" && group != "pipeline")
    return op->emitOpError("group must be 'data', 'tensor' or 'pipeline', not '") << group << "'";
  if (groupSize < 2 || peer < 0 || peer >= groupSize)
    return op->emitOpError("peer ") << peer << " must be a rank of a group of at least 2 (group_size "
                                    << groupSize << ")";
  for (Type t : types)
    if (!cast<RankedTensorType>(t).hasStaticShape())
      return op->emitOpError("values must be statically shaped, got ") << t;
  return success();
}

LogicalResult SendOp::verify() {
  return verifyPointToPoint(*this, getInputs().getTypes(), getPeer(), getGroupSize(), getGroup());
}

LogicalResult RecvOp::verify() {
  return verifyPointToPoint(*this, getOutputs().getTypes(), getPeer(), getGroupSize(), getGroup());
}

/// Nothing to mark in a group of one rank (the gradient needs no sum).
OpFoldResult ReplicateOp::fold(FoldAdaptor) { return getGroupSize() == 1 ? getInput() : Value(); }

#define GET_OP_CLASSES
#include "dialects/Dist/DistOps.cpp.inc"
