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
/// On the module: `array<i64: D, T>`, the data- and tensor-parallel ranks it
/// was compiled for (world rank d * T + t).
constexpr llvm::StringLiteral kParallelAttrName = "nncc.parallel";

/// Sets one entry of the module's `nncc.parallel` (`tensor`: T, else D),
/// keeping the other (1 without the attribute).
void setParallelLayout(mlir::ModuleOp module, bool tensor, int64_t ranks);

/// Attaches the gradient rules of the collectives (DistGradients.cpp);
/// called by DistDialect::initialize.
void registerGradientModels(mlir::MLIRContext *context);
} // namespace nncc::dist

#endif // NNCC_DIALECTS_DIST_DISTOPS_H
