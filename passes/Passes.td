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

#endif // NNCC_PASSES
