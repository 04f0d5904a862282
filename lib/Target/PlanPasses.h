//===- PlanPasses.h - the memory plan as passes on exec IR -----*- C++ -*-===//
//
// Scheduling and buffer assignment write their decisions into the exec
// module (lib/Target/PlanPasses.td); buildPlan (Plan.h) translates the
// annotated module into the module's plan tables.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_LIB_TARGET_PLANPASSES_H
#define NNCC_LIB_TARGET_PLANPASSES_H

#include "dialects/Exec/ExecOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace nncc {

/// Array on an exec.launch/exec.gemm: the buffer of each result
/// (#exec.arena<offset> or #exec.output<index>).
constexpr llvm::StringLiteral kBuffersAttrName = "nncc.buffers";
/// i64 array on an exec.launch: the arena offset of each scratch buffer of
/// its kernel (sizes in the kernel's nncc.scratch_bytes).
constexpr llvm::StringLiteral kScratchOffsetsAttrName = "nncc.scratch";
/// i64 on an entry: the bytes of its arena.
constexpr llvm::StringLiteral kArenaBytesAttrName = "nncc.arena_bytes";
/// i64 on an entry: the arena without reuse (every value its own bytes).
constexpr llvm::StringLiteral kNoReuseBytesAttrName = "nncc.no_reuse_bytes";
/// i64 on an entry: the most arena bytes live at one step.
constexpr llvm::StringLiteral kLiveLowerBoundAttrName = "nncc.live_lower_bound_bytes";

#define GEN_PASS_DECL
#include "lib/Target/PlanPasses.h.inc"

/// Step order (with `reuse`) and buffers of every entry:
/// nncc-schedule-for-memory on each entry, then nncc-plan-buffers.
void buildPlanPipeline(mlir::OpPassManager &pm, bool reuse);

/// Registers the passes above and the pipeline `nncc-plan` (for nncc-opt).
void registerPlanPasses();

#define GEN_PASS_REGISTRATION
#include "lib/Target/PlanPasses.h.inc"

} // namespace nncc

#endif // NNCC_LIB_TARGET_PLANPASSES_H
