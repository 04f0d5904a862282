/// The dist dialect: verifiers and the folders of its collectives.
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

/// A group of the layout with at least one rank.
static LogicalResult verifyGroup(Operation *op, int64_t groupSize, StringRef group) {
  if (groupSize < 1)
    return op->emitOpError("group_size must be at least 1");
  if (group != "data" && group != "tensor" && group != "pipeline")
    return op->emitOpError("group must be 'data', 'tensor' or 'pipeline', not '") << group << "'";
  return success();
}

static bool knownReduction(StringRef reduction) { return reduction == "sum" || reduction == "mean"; }

/// What both levels require: a bucket of one or more values, results of the
/// operands' types, a known reduction and group, and a group of at least one
/// rank.
static LogicalResult verifyAllReduce(Operation *op, ValueRange inputs, ValueRange outputs, StringRef reduction,
                                     int64_t groupSize, StringRef group) {
  if (inputs.empty())
    return op->emitOpError("needs at least one operand");
  if (inputs.getTypes() != outputs.getTypes())
    return op->emitOpError("results must have the operands' types");
  if (!knownReduction(reduction))
    return op->emitOpError("reduction must be 'sum' or 'mean', not '") << reduction << "'";
  return verifyGroup(op, groupSize, group);
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

bool nncc::dist::isCollectiveStep(Operation *op) {
  return isa<AllReduceStepOp, AllGatherStepOp, ReduceScatterStepOp, BroadcastStepOp, SendOp, RecvOp>(op);
}

bool nncc::dist::partsContiguous(RankedTensorType type, int64_t axis) {
  return llvm::all_of(type.getShape().take_front(axis), [](int64_t d) { return d == 1; });
}

namespace {
/// How a single-value collective's result relates to its operand.
enum class PartShape { Whole, Gathered, Scattered };

/// The checks of every single-value collective, graph op and step alike:
/// a group, an axis of the operand along which the result is the operand
/// times (gathered) or divided by (scattered) the group size, and, for a
/// step, static shapes with contiguous parts (the buffers the runtime
/// exchanges; DistOps.td).
template <typename OpT> LogicalResult verifySingle(OpT op, PartShape shape, int64_t axis, bool step) {
  if (failed(verifyGroup(op, op.getGroupSize(), op.getGroup())))
    return failure();
  auto in = cast<RankedTensorType>(op.getInput().getType());
  auto out = cast<RankedTensorType>(op.getOutput().getType());
  int64_t n = op.getGroupSize();
  if (in.getElementType() != out.getElementType() || in.getRank() != out.getRank())
    return op.emitOpError("result must have the operand's element type and rank, got ") << in << " and " << out;
  if (axis < 0 || (in.getRank() > 0 ? axis >= in.getRank() : shape != PartShape::Whole))
    return op.emitOpError("axis ") << axis << " is not an axis of " << in;
  for (int64_t d = 0; d < in.getRank(); ++d) {
    int64_t want = in.getDimSize(d);
    if (d == axis && shape == PartShape::Gathered && !ShapedType::isDynamic(want))
      want *= n;
    else if (d == axis && shape == PartShape::Scattered && !ShapedType::isDynamic(want)) {
      if (want % n != 0)
        return op.emitOpError("operand dim ") << want << " along axis " << axis << " does not divide by group_size "
                                              << n;
      want /= n;
    }
    if (want != out.getDimSize(d))
      return op.emitOpError("result dim ") << d << " must be " << want << " (operand " << in << ", group_size " << n
                                           << "), got " << out;
  }
  if (!step)
    return success();
  if (!in.hasStaticShape() || !out.hasStaticShape())
    return op.emitOpError("operand and result must be statically shaped, got ") << in << " and " << out;
  if (shape != PartShape::Whole && !partsContiguous(in, axis))
    return op.emitOpError("every dim before axis ") << axis << " must be 1 (contiguous parts), got " << in;
  return success();
}

/// The all-gather and reduce-scatter of a group of one rank: the operand.
template <typename OpT> OpFoldResult foldSingle(OpT op) {
  return op.getGroupSize() == 1 ? op.getInput() : Value();
}

template <typename OpT> LogicalResult verifyBroadcast(OpT op, bool step) {
  if (failed(verifySingle(op, PartShape::Whole, 0, step)))
    return failure();
  if (op.getRoot() < 0 || op.getRoot() >= op.getGroupSize())
    return op.emitOpError("root ") << op.getRoot() << " is not a rank of a group of " << op.getGroupSize();
  return success();
}

template <typename OpT> LogicalResult verifyReduceScatter(OpT op, bool step) {
  if (!knownReduction(op.getReduction()))
    return op.emitOpError("reduction must be 'sum' or 'mean', not '") << op.getReduction() << "'";
  if (step && !op.getInput().getType().getElementType().isF32())
    return op.emitOpError("operand must be f32 (what the runtime's communicators reduce), got ")
           << op.getInput().getType();
  return verifySingle(op, PartShape::Scattered, op.getAxis(), step);
}
} // namespace

LogicalResult AllGatherOp::verify() { return verifySingle(*this, PartShape::Gathered, getAxis(), false); }
LogicalResult AllGatherStepOp::verify() { return verifySingle(*this, PartShape::Gathered, getAxis(), true); }
LogicalResult ReduceScatterOp::verify() { return verifyReduceScatter(*this, false); }
LogicalResult ReduceScatterStepOp::verify() { return verifyReduceScatter(*this, true); }
LogicalResult BroadcastOp::verify() { return verifyBroadcast(*this, false); }
LogicalResult BroadcastStepOp::verify() { return verifyBroadcast(*this, true); }
OpFoldResult AllGatherOp::fold(FoldAdaptor) { return foldSingle(*this); }
OpFoldResult ReduceScatterOp::fold(FoldAdaptor) { return foldSingle(*this); }
OpFoldResult BroadcastOp::fold(FoldAdaptor) { return foldSingle(*this); }

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
