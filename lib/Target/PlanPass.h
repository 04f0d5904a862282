#ifndef NNCC_LIB_TARGET_PLANPASS_H
#define NNCC_LIB_TARGET_PLANPASS_H

#include "mlir/IR/BuiltinOps.h"

namespace nncc {

/// Runs the plan builder and records its buffer assignment on the IR: each
/// exec.launch/exec.gemm gets `buffers = ["arena+OFFSET", "input0", ...]`
/// (its operands then results) and each entry function `arena_bytes`.
mlir::LogicalResult annotateBufferPlan(mlir::ModuleOp module);

/// Registers `nncc-annotate-buffers` (annotateBufferPlan as a pass) for nncc-opt.
void registerPlanPasses();

} // namespace nncc

#endif // NNCC_LIB_TARGET_PLANPASS_H
