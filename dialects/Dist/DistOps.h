#ifndef NNCC_DIALECTS_DIST_DISTOPS_H
#define NNCC_DIALECTS_DIST_DISTOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/Dist/DistDialect.h.inc"

#define GET_OP_CLASSES
#include "dialects/Dist/DistOps.h.inc"

namespace nncc::dist {
/// On an ml_program.global: `array<i64: axis, parts>`, the global holds one
/// of `parts` equal parts along `axis` (its type), each rank of the tensor
/// group its own; its initial value is the whole tensor (module_abi.h). With
/// a third entry `blocks`, the axis is that many equal blocks (a fused Q/K/V
/// projection) and the part is the rank's part of each block.
constexpr llvm::StringLiteral kShardAttrName = "nncc.shard";
/// On the module: `array<i64: D, T, P>`, the data-parallel, tensor-parallel
/// and pipeline-parallel ranks it was compiled for (world rank
/// (d * P + p) * T + t; a missing P is 1).
constexpr llvm::StringLiteral kParallelAttrName = "nncc.parallel";
/// On an entry function or a global (nncc-pipeline-parallel): `i64` s, the
/// pipeline stage that runs the entry or updates the state; -1 on a global
/// every stage updates alike. An entry's name is then `<name>.stage<s>`.
constexpr llvm::StringLiteral kPipelineStageAttrName = "nncc.pipeline_stage";

/// The entries of `nncc.parallel`, in order.
enum class ParallelGroup : unsigned { Data = 0, Tensor = 1, Pipeline = 2 };

/// Sets one entry of the module's `nncc.parallel`, keeping the others (1
/// without the attribute).
void setParallelLayout(mlir::ModuleOp module, ParallelGroup group, int64_t ranks);

/// Whether `op` is a collective plan step (a `_step` op, dist.send or
/// dist.recv): it communicates, and keeps its order with the others.
bool isCollectiveStep(mlir::Operation *op);

/// Whether `type`'s parts along `axis` are contiguous in its row-major
/// buffer (every dim before `axis` is 1): what a gather or scatter step
/// exchanges as plain bytes.
bool partsContiguous(mlir::RankedTensorType type, int64_t axis);

/// Attaches the gradient rules of the collectives (DistGradients.cpp);
/// called by DistDialect::initialize.
void registerGradientModels(mlir::MLIRContext *context);
} // namespace nncc::dist

#endif // NNCC_DIALECTS_DIST_DISTOPS_H
