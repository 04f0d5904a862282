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

/// The single-value collectives beyond the all-reduce. Each has a
/// graph-level op (Pure, beside `nn` ops) and a plan step `<name>_step` of
/// the same operands and attributes (it communicates: never folded, merged
/// or dropped) that nncc-lower-collectives makes of it, one
/// NNCC_STEP_COLLECTIVE each. A step's parts must be contiguous in its
/// row-major buffers: every dim before `axis` is 1, so that gathering or
/// scattering along `axis` is a plain concatenation or split of bytes
/// (module_abi.h carries no axis); the lowering refuses other axes.
class Dist_SingleCollective<string mnemonic, list<Trait> traits, dag extraArgs, Type elements,
                            string what, string descr> : Dist_Op<mnemonic, traits> {
  let summary = what;
  let description = descr;
  let arguments = !con((ins RankedTensorOf<[elements]>:$input), extraArgs,
                       (ins I64Attr:$group_size, DefaultValuedStrAttr<StrAttr, "data">:$group));
  let results = (outs RankedTensorOf<[elements]>:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type($input, $output)";
  let hasVerifier = 1;
}

defvar kAllGatherSummary = "The operands of the group's ranks concatenated along `axis`, in group-rank order";
defvar kAllGatherDescription = [{
  Every rank gets the same result: rank r's operand is part r of it along
  `axis` (result dim = operand dim × group_size). A group of one rank is the
  identity, and the op folds away.

  Gradient (nncc-differentiate, the tensor group only, like
  `dist.all_reduce`): the result is replicated over the group, so every
  rank holds the same cotangent of it, and the cotangent of rank r's
  operand is part r of that cotangent. The IR is the same program on every
  rank and names no rank, so the part is taken by a `dist.reduce_scatter`
  "mean" of the (replicated) cotangent: the mean of equal values is the
  value, and rank r keeps part r.
}];
defvar kReduceScatterSummary =
    "The operands summed or averaged over the group's ranks; rank r keeps part r along `axis`";
defvar kReduceScatterDescription = [{
  The reduction (`sum`, or `mean`: the sum divided by the group size) is
  split into group_size equal parts along `axis` (the operand's dim must
  divide by group_size; result dim = operand dim ÷ group_size), and group
  rank r's result is part r. A group of one rank is the identity, and the
  op folds away.

  Gradient (a sum over the tensor group): as for `dist.all_reduce`, each
  operand is a partial of a sum, so its cotangent is the cotangent of the
  whole sum; the sum is split over the ranks, whose cotangents are the
  parts of it, so the operand's cotangent is their `dist.all_gather` along
  `axis` (the same on every rank, as the replicated convention wants).
}];
defvar kBroadcastSummary = "The operand of group rank `root`, on every rank of the group";
defvar kBroadcastDescription = [{
  The other ranks' operands are not read. A group of one rank is the
  identity, and the op folds away.

  Gradient (the tensor group): the result is replicated, so every rank
  holds the same cotangent of it; it flows to root's operand alone (the
  others are not read: their cotangent is zero). Without a rank in the IR,
  the cotangent is placed at position `root` of a new leading axis of
  group_size entries (zeros elsewhere) and `dist.reduce_scatter` "mean"
  along it gives rank r entry r: the cotangent on root, zeros elsewhere.
}];

def Dist_AllGatherOp : Dist_SingleCollective<"all_gather", [Pure], (ins I64Attr:$axis), AnyType,
                                             kAllGatherSummary, kAllGatherDescription> {
  let hasFolder = 1;
}
def Dist_AllGatherStepOp : Dist_SingleCollective<"all_gather_step", [], (ins I64Attr:$axis), AnyType,
                                                 "A collective plan step: " # kAllGatherSummary, [{
  The step of `dist.all_gather` (NNCC_COLLECTIVE_ALL_GATHER): its bytes,
  any dtype, with contiguous parts.
}]>;
def Dist_ReduceScatterOp : Dist_SingleCollective<"reduce_scatter", [Pure],
                                                 (ins StrAttr:$reduction, I64Attr:$axis), AnyFloat,
                                                 kReduceScatterSummary, kReduceScatterDescription> {
  let hasFolder = 1;
}
def Dist_ReduceScatterStepOp : Dist_SingleCollective<"reduce_scatter_step", [],
                                                     (ins StrAttr:$reduction, I64Attr:$axis), AnyFloat,
                                                     "A collective plan step: " # kReduceScatterSummary, [{
  The step of `dist.reduce_scatter` (NNCC_COLLECTIVE_REDUCE_SCATTER): f32
  (what the runtime's communicators reduce), with contiguous parts.
}]>;
def Dist_BroadcastOp : Dist_SingleCollective<"broadcast", [Pure], (ins I64Attr:$root), AnyType,
                                             kBroadcastSummary, kBroadcastDescription> {
  let hasFolder = 1;
}
def Dist_BroadcastStepOp : Dist_SingleCollective<"broadcast_step", [], (ins I64Attr:$root), AnyType,
                                                 "A collective plan step: " # kBroadcastSummary, [{
  The step of `dist.broadcast` (NNCC_COLLECTIVE_BROADCAST; the root is the
  step's peer): its bytes, any dtype.
}]>;

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
