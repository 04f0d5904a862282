#ifndef NNCC_PASSES
#define NNCC_PASSES

include "mlir/Pass/PassBase.td"

def FoldBatchNormPass : Pass<"nncc-fold-batch-norm"> {
  let summary = "Fold inference BatchNormalization into the preceding Conv";
  let description = [{
    `batch_norm(conv(x, W, b), scale, bias, mean, var)` with constant f32
    parameters becomes `conv(x, W', b')` with
    `W'[m] = W[m] * s[m]`, `b'[m] = (b[m] - mean[m]) * s[m] + bias[m]`,
    `s = scale / sqrt(var + epsilon)`, computed once at compile time. The
    conv must have no other user.
  }];
  let dependentDialects = ["nncc::nn::NNDialect"];
}

def RecomposePass : Pass<"nncc-recompose"> {
  let summary = "Recompose LayerNorm, GELU, Softmax and attention from their decompositions";
  let description = [{
    Exporters write LayerNorm as ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div
    (then Mul/Add by the affine parameters), GELU as Erf or Tanh arithmetic,
    Softmax as Exp/ReduceSum/Div (with or without the max subtracted) and
    attention as MatMul / Div-or-Mul by a scale / Add mask / Softmax /
    MatMul. Each becomes one op (nn.layer_norm, nn.gelu, nn.softmax,
    nn.attention) when every intermediate has no other user, so kernels
    recompute nothing and never materialize the pieces.
  }];
  let dependentDialects = ["nncc::nn::NNDialect"];
}

def AutocastPass : Pass<"nncc-autocast"> {
  let summary = "Compute types for --precision: GEMMs low, accuracy-critical ops in f32";
  let description = [{
    Contractions (MatMul, Gemm, Conv, ConvTranspose, Einsum, Attention)
    take bf16/f16 operands and accumulate in f32; reductions, softmax,
    normalizations, exp, log, pow, softplus and cumsum compute in f32; every
    other op follows its non-constant float inputs (low when all are low,
    else f32). `mixed` gives GEMMs bf16 operands and f32 results and keeps
    everything else in f32. Ops named in `keep-fp32` (ONNX node names or op
    types) compute in f32. One cast per value and type, constants converted
    at compile time (an op whose constant overflows the low type stays f32),
    graph inputs and outputs keep their types, and cast(cast(x)) folds when
    the inner cast is exact. docs/precision.md lists the rules.
  }];
  let options = [
    Option<"precision", "precision", "std::string", /*default=*/"\"bf16\"",
           "the low type: bf16, fp16 or mixed">,
    ListOption<"keepFp32", "keep-fp32", "std::string",
               "ONNX node names or op types computed in f32">,
  ];
  let dependentDialects = ["nncc::nn::NNDialect"];
}

def InsertIndexChecksPass : Pass<"nncc-insert-index-checks", "mlir::ModuleOp"> {
  let summary = "Run-time range checks of the indices of Gather and GatherElements";
  let description = [{
    The kernels clamp indices so that no read leaves its buffer; an index
    outside [-n, n) of the gathered axis is still a wrong answer, which ONNX
    runtimes report as an error. For every gather whose indices are computed
    at run time, each public function gains an i32 result
    `reduce_max(idx < -n or idx >= n)` with the result attribute
    `nncc.check` holding the message naming the ONNX node; the planner keeps
    such results in the arena as nncc_check flags (module_abi.h) and the
    runtime fails the run with the message when one is set. Indices that are
    constant by now (written as constants, or folded from a Range or a shape
    computation) are checked here: one out of range is an error.
  }];
  let dependentDialects = ["nncc::nn::NNDialect", "mlir::func::FuncDialect"];
}

def MakeWeightsMutablePass : Pass<"nncc-make-weights-mutable", "mlir::ModuleOp"> {
  let summary = "Weights whose names match become module state a session may update";
  let description = [{
    Every floating-point `nn.constant` of an entry whose name (the ONNX
    initializer) fully matches the regular expression `names`, and not
    `exclude`, becomes an
    `ml_program.global private mutable` starting from the constant's value,
    read with `ml_program.global_load`: the runtime keeps it per session on
    its device (NNCC_BUFFER_STATE), where the C and C++ APIs read and write
    it and, later, `train_step` updates it. Constants of one name share one
    global. Kernels then read the weight from memory instead of folding it
    (a convolution keeps its bias out of its GEMM call).
  }];
  let options = [
    Option<"names", "names", "std::string", /*default=*/"\".*\"",
           "regular expression over weight (initializer) names">,
    Option<"exclude", "exclude", "std::string", /*default=*/"\"\"",
           "regular expression over names that stay constants (empty: none)">,
  ];
  let dependentDialects = ["mlir::ml_program::MLProgramDialect"];
}

def AddOptimizerPass : Pass<"nncc-add-optimizer", "mlir::ModuleOp"> {
  let summary = "An `optimizer_step` entry updating the module's weights as torch.optim does";
  let description = [{
    Adds the entry `optimizer_step(lr, grad.<weight>...) -> step`: one step
    of SGD, SGD with momentum, Adam or AdamW (torch.optim's formulas, with
    clip_grad_norm_ first when `grad-clip` > 0) on every trainable weight
    (the module's mutable f32 globals, `nncc-make-weights-mutable`), with the
    learning rate given at run time. The momentum buffers, Adam's moments
    and the step count are module state too (zero at the start, marked
    `nncc.optimizer_state`), so a session carries them from step to step.
  }];
  let options = [
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"sgd\"",
           "sgd, momentum, adam or adamw">,
    Option<"momentum", "momentum", "double", /*default=*/"0.9", "SGD momentum">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "Adam beta1">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999", "Adam beta2">,
    Option<"eps", "eps", "double", /*default=*/"1e-8", "Adam epsilon">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"0",
           "L2 penalty (decoupled for adamw)">,
    Option<"gradClip", "grad-clip", "double", /*default=*/"0",
           "max global L2 norm of the gradients; 0: no clipping">,
  ];
  let dependentDialects = ["nncc::nn::NNDialect", "mlir::ml_program::MLProgramDialect",
                           "mlir::func::FuncDialect"];
}

def AddLossPass : Pass<"nncc-add-loss", "mlir::ModuleOp"> {
  let summary = "An `eval_step` entry: forward and the training loss of one output";
  let description = [{
    Adds `eval_step(inputs..., labels) -> loss`: a copy of `forward`, then
    the loss of its output `output` (default: the only one). `cross-entropy`
    takes int64 class labels [N] and the output as logits [N, C]; a Softmax
    (LogSoftmax) producing it is replaced by one stable log-softmax of its
    input; the mean over N of -log p[n, label n]; a label outside [0, C) fails
    the run (an `nncc.check` result naming the labels input). `mse`: labels
    of the output's type, mean((output - labels)^2). `output`: the output
    (one element) is the loss, no labels.
  }];
  let options = [
    Option<"loss", "loss", "std::string", /*default=*/"\"cross-entropy\"",
           "cross-entropy, mse or output">,
    Option<"output", "output", "std::string", /*default=*/"\"\"",
           "the model output the loss reads (default: the only one)">,
    Option<"labelName", "label-name", "std::string", /*default=*/"\"labels\"",
           "the name of the labels input">,
  ];
  let dependentDialects = ["nncc::nn::NNDialect", "mlir::func::FuncDialect"];
}

def DifferentiatePass : Pass<"nncc-differentiate", "mlir::ModuleOp"> {
  let summary = "Reverse-mode autodiff: add `<entry>_grad` computing the gradients of `entry`";
  let description = [{
    Adds the public function `<entry>_grad` beside `entry` (which stays as
    it is). Its arguments are the entry's arguments, then the `nn.constant`s
    whose name (the ONNX initializer name their location carries) matches
    `wrt-constants` as arguments named after them (the seam where trainable
    parameters become module state), then one cotangent per float result of
    the entry, named `d_<result name>`. Its results are the gradient of
    <cotangent, entry(args)> with respect to each float argument, then each
    such constant, named `d_<name>`.

    The body recomputes the forward, then walks its ops in reverse: each op
    on a path from a differentiated value to a result builds the cotangents
    of its operands with its GradientOpInterface rule (dialects/NN/Gradients/),
    cotangents of values with several users are summed with nn.add, ops that
    reach no result are skipped, and an argument that affects no result gets
    zeros. An op on such a path without a rule is an error naming the ONNX
    node and the op.
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"forward\"",
           "the function to differentiate">,
    Option<"wrtConstants", "wrt-constants", "std::string", /*default=*/"\"\"",
           "regex over constant names (whole name): these become arguments and get gradients; empty: none">,
  ];
  let dependentDialects = ["nncc::nn::NNDialect", "mlir::func::FuncDialect"];
}

def AddTrainStepPass : Pass<"nncc-add-train-step", "mlir::ModuleOp"> {
  let summary = "The `train_step` and `eval_step` entries: forward, loss, backward, update";
  let description = [{
    Adds `train_step(inputs..., labels, lr) -> loss`: `forward`, the loss of
    nncc-add-loss, its gradients with respect to every trainable weight (the
    mutable f32 globals, by nncc-differentiate's rules, the forward
    recomputed once: canonicalization merges the copies), and one optimizer
    step of nncc-add-optimizer with the run-time learning rate `lr`, which
    updates the weights and the optimizer state in place. The loss returned
    is the one before the update. Also adds `eval_step` (the loss alone).
    Weights no path leads from to the loss are not updated (torch.optim
    skips parameters without a gradient).
  }];
  let options = [
    Option<"loss", "loss", "std::string", /*default=*/"\"cross-entropy\"",
           "cross-entropy, mse or output">,
    Option<"output", "output", "std::string", /*default=*/"\"\"",
           "the model output the loss reads (default: the only one)">,
    Option<"labelName", "label-name", "std::string", /*default=*/"\"labels\"",
           "the name of the labels input">,
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"sgd\"",
           "sgd, momentum, adam or adamw">,
    Option<"momentum", "momentum", "double", /*default=*/"0.9", "SGD momentum">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "Adam beta1">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999", "Adam beta2">,
    Option<"eps", "eps", "double", /*default=*/"1e-8", "Adam epsilon">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"0",
           "L2 penalty (decoupled for adamw)">,
    Option<"gradClip", "grad-clip", "double", /*default=*/"0",
           "max global L2 norm of the gradients; 0: no clipping">,
  ];
  let dependentDialects = ["nncc::nn::NNDialect", "mlir::ml_program::MLProgramDialect",
                           "mlir::func::FuncDialect", "nncc::dist::DistDialect"];
}

def DataParallelPass : Pass<"nncc-data-parallel", "mlir::ModuleOp"> {
  let summary = "train_step averages its gradients and loss over the ranks, in buckets";
  let description = [{
    Data parallelism over `world-size` ranks, each running `train_step` on
    its shard of the global batch (the driver imports the model at the
    shard's batch: `nncc --train --parallel=dp:N`). Every dist.all_reduce of a
    group of one in `train_step` (the points nncc-add-train-step
    synchronizes: each weight gradient and the loss) joins a bucket of the
    group of `world-size` ranks that reduces its mean: the buckets take the
    values in the order they are computed, each holds at most
    `bucket-bytes` (a larger value alone), and each bucket's all-reduce is
    placed right after its last value, so a bucket can be communicated while
    the backward computes the next one. With mean losses and equal shards,
    the mean gradient of the shards is the gradient of the global batch, so
    N ranks take exactly the update one process takes on the whole batch.
  }];
  let options = [
    Option<"worldSize", "world-size", "int64_t", /*default=*/"1", "ranks of the data-parallel group">,
    Option<"bucketBytes", "bucket-bytes", "int64_t", /*default=*/"26214400",
           "most bytes of one all-reduce bucket (PyTorch DDP's default, 25 MiB)">,
  ];
  let dependentDialects = ["nncc::dist::DistDialect"];
}

def PipelineParallelPass : Pass<"nncc-pipeline-parallel", "mlir::ModuleOp"> {
  let summary = "Pipeline parallelism: the model cut into stages run over micro-batches, 1F1B for training";
  let description = [{
    Cuts `forward` (imported at the micro-batch's size) into `stages`
    contiguous runs of ops whose estimated costs (multiply-adds of
    contractions, elements otherwise) are closest to equal, never between
    two users of one trainable weight. Every entry becomes one variant per
    stage, `<entry>.stage<s>` with `nncc.pipeline_stage = s`, whose data
    inputs hold `micro-batches` micro-batches along their first dimension:
    stage s runs its ops on each micro-batch, receiving what crosses the cut
    before it from stage s - 1 (`dist.recv`) and sending what crosses the
    next to stage s + 1 (`dist.send`). The last stage combines the
    micro-batches' results (outputs concatenated, losses averaged, check
    flags or-ed) and sends them to every other stage, so every rank returns
    them.

    With `train`, replaces nncc-add-train-step: `train_step.stage<s>` runs
    the micro-batches in the 1F1B order (a warm-up of `stages - s - 1`
    forwards, then one forward and one backward in turn), sends each
    micro-batch's input cotangents back to stage s - 1, sums its weights'
    gradients over the micro-batches (the loss of each is seeded with 1/M,
    so the sum is the gradient of the batch's mean loss), and takes one
    optimizer step of its own weights. Each global is marked with the stage
    that updates it (-1: every stage, the step count). `eval_step` runs as
    the forward does.
  }];
  let options = [
    Option<"stages", "stages", "int64_t", /*default=*/"1", "pipeline stages (1: nothing to do)">,
    Option<"microBatches", "micro-batches", "int64_t", /*default=*/"1",
           "micro-batches in each entry's inputs (the size `forward` has is one)">,
    Option<"train", "train", "bool", /*default=*/"false", "also build eval_step and train_step">,
    Option<"loss", "loss", "std::string", /*default=*/"\"cross-entropy\"",
           "cross-entropy, mse or output">,
    Option<"output", "output", "std::string", /*default=*/"\"\"",
           "the model output the loss reads (default: the only one)">,
    Option<"labelName", "label-name", "std::string", /*default=*/"\"labels\"",
           "the name of the labels input">,
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"sgd\"",
           "sgd, momentum, adam or adamw">,
    Option<"momentum", "momentum", "double", /*default=*/"0.9", "SGD momentum">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "Adam beta1">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999", "Adam beta2">,
    Option<"eps", "eps", "double", /*default=*/"1e-8", "Adam epsilon">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"0",
           "L2 penalty (decoupled for adamw)">,
    Option<"gradClip", "grad-clip", "double", /*default=*/"0",
           "refused with stages: the norm would span them">,
  ];
  let dependentDialects = ["nncc::nn::NNDialect", "mlir::ml_program::MLProgramDialect",
                           "mlir::func::FuncDialect", "nncc::dist::DistDialect"];
}

def TensorParallelPass : Pass<"nncc-tensor-parallel", "mlir::ModuleOp"> {
  let summary = "Megatron tensor parallelism: column- then row-parallel layers split over a tensor group";
  let description = [{
    Splits `entry` (before training entries are built from it, so their
    backward is the split one) over the `tensor-parallel` ranks of a tensor
    group (`nncc --parallel=tp:T`). A matmul by a weight whose columns divide
    by T is column-parallel: its input goes through `dist.replicate`
    (Megatron's f) and each rank computes its columns. The split follows
    the graph through elementwise and broadcasting ops (a bias is cut
    alike), transposes, reshapes that keep the split's blocks contiguous in
    one axis (attention heads), softmax and norms over other axes, a Split
    into equal chunks (the layer before it is then cut in as many blocks: a
    fused Q/K/V projection), and batched matmuls split alike on a batch
    axis; a matmul contracting the
    split axis is row-parallel (its weight cut in rows) and its partial
    products are summed over the group by a `dist.all_reduce` (Megatron's
    g). A region that reaches anything else is given up and its layers stay
    whole, so the result is the unsplit function's on every rank. A Gather
    along axis 0 of a weight table whose rows divide by T, by ids, with no
    other use of the table, is vocab-parallel (Megatron's
    VocabParallelEmbedding): rank t holds rows [t V/T, (t+1) V/T), looks up
    the ids in them (its t from the sharded layout state
    `nncc.layout.tensor_rank`, whole value [0, ..., T-1]), zeroes the rows of
    the others, and a `dist.all_reduce` sum makes the embedding whole. Cut
    weights become globals with `nncc.shard = [axis, T]` holding the rank's
    part (the whole value as their initial value; nn.constant weights too
    when `shard-constants`); the module gets `nncc.parallel = [D, T]`.
    docs/distributed.md.
  }];
  let options = [
    Option<"parts", "tensor-parallel", "int64_t", /*default=*/"1", "ranks of the tensor group">,
    Option<"entry", "entry", "std::string", /*default=*/"\"forward\"", "the function to split">,
    Option<"shardConstants", "shard-constants", "bool", /*default=*/"true",
           "cut nn.constant weights into state too (off for training: state is trained)">,
  ];
  let dependentDialects = ["nncc::dist::DistDialect", "mlir::ml_program::MLProgramDialect"];
}

#endif // NNCC_PASSES
