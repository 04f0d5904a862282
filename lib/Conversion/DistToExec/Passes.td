#ifndef NNCC_CONVERSION_DISTTOEXEC_PASSES
#define NNCC_CONVERSION_DISTTOEXEC_PASSES

include "mlir/Pass/PassBase.td"

def LowerCollectivesPass : Pass<"nncc-lower-collectives", "mlir::func::FuncOp"> {
  let summary = "Graph-level collectives as collective plan steps";
  let description = [{
    Each `dist.all_reduce` becomes a `dist.all_reduce_step` of the same
    bucket, reduction and group, and each `dist.all_gather`,
    `dist.reduce_scatter` and `dist.broadcast` its `_step` of the same
    operand and attributes (a gather or scatter whose parts are not
    contiguous, some dim before `axis` not 1, is refused: the step exchanges
    plain bytes): one NNCC_STEP_COLLECTIVE of the plan, whose
    results the planner places like any step's; each `dist.replicate` (it
    marks a gradient, and computes nothing) is replaced by its operand. First
    in the nn -> exec pipeline, so no fusion pass meets a collective.
  }];
  let dependentDialects = ["nncc::dist::DistDialect"];
}

#endif // NNCC_CONVERSION_DISTTOEXEC_PASSES
