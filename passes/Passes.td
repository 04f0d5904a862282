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

#endif // NNCC_PASSES
