#ifndef NNCC_DIST_OPS
#define NNCC_DIST_OPS

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def Dist_Dialect : Dialect {
  let name = "dist";
  let cppNamespace = "::nncc::dist";
  let summary = "Collectives: values combined over the ranks of a parallel group";
  let description = [{
    Every rank runs the same program, so a collective is a point all ranks
    reach in the same order. `dist.all_reduce` is the graph-level op, used
    beside `nn` ops (pure: all ranks fold or merge it alike);
    `dist.all_reduce_step` the plan step it lowers to beside `exec` ops
    (it communicates: never folded, merged or dropped).

    A collective runs over one parallel `group` of the module's layout
    (`nncc.parallel = array<i64: dp, tp, pp>` on the module; world rank
    (d * pp + p) * tp + t): "data", the dp ranks that hold the same stage p
    and tensor-parallel part t; "tensor", the tp consecutive ranks of one
    data shard d and stage p; or "pipeline", the pp stages of one d and t.
    docs/distributed.md.
  }];
}

class Dist_Op<string mnemonic, list<Trait> traits = []> : Op<Dist_Dialect, mnemonic, traits>;

def Dist_AllReduceOp : Dist_Op<"all_reduce", [Pure]> {
  let summary = "Each operand summed or averaged over the `group_size` ranks of the group";
  let description = [{
    Result i is operand i reduced elementwise over the ranks: `sum`, or
    `mean` (the sum divided by the group size). The operands of one op form
    one bucket, communicated as one collective; a group of one rank is the
    identity, and the op folds away. `nncc-add-train-step` puts each weight
    gradient and the loss through one with `group_size = 1`;
    `nncc-data-parallel` gives them the data-parallel group and buckets them.

    Differentiated (nncc-differentiate), a sum over the "tensor" group is
    Megatron's `g`: its operands are the partial products of a row-parallel
    layer and its result is replicated over the group, so every rank holds
    the same cotangent of the result and the cotangent of each operand is
    that cotangent itself (no communication backward).
  }];
  let arguments = (ins Variadic<RankedTensorOf<[AnyFloat]>>:$inputs, StrAttr:$reduction, I64Attr:$group_size,
                   DefaultValuedStrAttr<StrAttr, "data">:$group);
  let results = (outs Variadic<RankedTensorOf<[AnyFloat]>>:$outputs);
  let assemblyFormat = "$inputs attr-dict `:` functional-type($inputs, $outputs)";
  let hasFolder = 1;
  let hasVerifier = 1;
}

def Dist_AllReduceStepOp : Dist_Op<"all_reduce_step"> {
  let summary = "A collective plan step: each operand reduced over the ranks of a group";
  let description = [{
    One NNCC_STEP_COLLECTIVE of the plan (module_abi.h): the operands form
    one bucket the runtime's communicator reduces in one call (`sum`, or
    `mean`: the sum divided by `group_size`), result i in its own buffer the
    planner places like any step's. `group_size` is the world the module was
    compiled for; a session over a communicator of another size is refused.
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs, StrAttr:$reduction, I64Attr:$group_size,
                   DefaultValuedStrAttr<StrAttr, "data">:$group);
  let results = (outs Variadic<AnyRankedTensor>:$outputs);
  let assemblyFormat = "$inputs attr-dict `:` functional-type($inputs, $outputs)";
  let hasVerifier = 1;
}

def Dist_ReplicateOp : Dist_Op<"replicate", [Pure, SameOperandsAndResultType]> {
  let summary = "A value every rank of the group holds whole, entering a tensor-parallel region";
  let description = [{
    The identity: the operand is the same on every rank of `group`, and the
    column-parallel layer that reads the result uses it whole. What the op
    marks is its gradient (Megatron's `f`): each rank's cotangent of the
    result is the part its own column slice contributes, so the cotangent of
    the operand is their sum over the group (a `dist.all_reduce` "sum").
    Lowering drops it (it computes nothing).
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$input, I64Attr:$group_size,
                   DefaultValuedStrAttr<StrAttr, "tensor">:$group);
  let results = (outs RankedTensorOf<[AnyFloat]>:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasFolder = 1;
}

def Dist_SendOp : Dist_Op<"send"> {
  let summary = "Values sent to one rank of a group (a pipeline stage's activations or gradients)";
  let description = [{
    The operands go, as one message, to the rank with index `peer` in
    `group` (usually "pipeline": stage `peer`), which receives them with a
    `dist.recv` of the same types. Between two ranks, sends and receives
    pair up in program order. It communicates, so it is never folded,
    merged, dropped or reordered against another send or receive; the
    same op is the plan step (NNCC_COLLECTIVE_SEND), and its operands are
    free once it has started (the runtime copies them).
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs, I64Attr:$peer, I64Attr:$group_size,
                   DefaultValuedStrAttr<StrAttr, "pipeline">:$group);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs)";
  let hasVerifier = 1;
}

def Dist_RecvOp : Dist_Op<"recv"> {
  let summary = "Values received from one rank of a group";
  let description = [{
    The results are the operands of the `dist.send` of rank `peer` of
    `group` that pairs with this op (module_abi.h: NNCC_COLLECTIVE_RECV).
  }];
  let arguments = (ins I64Attr:$peer, I64Attr:$group_size, DefaultValuedStrAttr<StrAttr, "pipeline">:$group);
  let results = (outs Variadic<AnyRankedTensor>:$outputs);
  let assemblyFormat = "attr-dict `:` type($outputs)";
  let hasVerifier = 1;
}

#endif // NNCC_DIST_OPS
