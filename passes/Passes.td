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

#endif // NNCC_PASSES
