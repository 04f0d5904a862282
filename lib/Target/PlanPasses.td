#ifndef NNCC_TARGET_PLANPASSES
#define NNCC_TARGET_PLANPASSES

include "mlir/Pass/PassBase.td"

// The plan's decisions as IR on the entry functions of an exec module (the
// public functions; private ones are kernels). The plan translation
// (buildPlan, `nncc-translate --nncc-plan-to-c`) reads them back.

def ScheduleForMemoryPass : Pass<"nncc-schedule-for-memory", "mlir::func::FuncOp"> {
  let summary = "Reorder an entry's steps when that lowers its peak of live bytes";
  let description = [{
    A list schedule over the launches and GEMM calls of an entry that
    prefers the ready step freeing the most bytes (ties: program order); the
    new order is kept only when its peak of live arena bytes is lower. The
    op order is the plan's step order.
  }];
  let dependentDialects = ["nncc::exec::ExecDialect"];
}

def PlanBuffersPass : Pass<"nncc-plan-buffers", "mlir::ModuleOp"> {
  let summary = "Give every value of an entry its buffer: arena offsets or the caller's output";
  let description = [{
    Each result of an exec.launch/exec.gemm gets `#exec.output<i>` (written
    straight into the caller's result buffer i) or `#exec.arena<offset>`,
    in `nncc.buffers`: a greedy best-fit packing over the schedule's live
    ranges, an elementwise launch writing over an operand listed in
    `inplace_operands` that dies there, a GEMM accumulating into the
    buffer of a C that dies there. A launch's kernel scratch (the kernel's
    `nncc.scratch_bytes`) gets arena offsets in `nncc.scratch`. The entry
    records `nncc.arena_bytes`, `nncc.no_reuse_bytes` (every value its own
    bytes) and `nncc.live_lower_bound_bytes` (the most bytes live at one
    step: no packing beats it). `reuse=0` gives every buffer its own bytes.
  }];
  let options = [
    Option<"reuse", "reuse", "bool", /*default=*/"true",
           "share arena bytes between buffers whose lifetimes do not overlap">,
  ];
  let dependentDialects = ["nncc::exec::ExecDialect"];
}

#endif // NNCC_TARGET_PLANPASSES
