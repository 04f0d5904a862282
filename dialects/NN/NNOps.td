#ifndef NNCC_NN_OPS
#define NNCC_NN_OPS

include "dialects/NN/NNBase.td"

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def NN_ConstantOp : NN_Op<"constant", "Opaque", [ConstantLike, AllTypesMatch<["value", "output"]>]> {
  let summary = "A tensor constant (ONNX Constant, initializers, folded values)";
  let arguments = (ins ElementsAttr:$value);
  let results = (outs NN_Tensor:$output);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise unary ops: one operand, result of the same type.
//===----------------------------------------------------------------------===//

class NN_UnaryOp<string mnemonic, string onnx, Type operandType = NN_Tensor,
                 list<Trait> traits = []>
    : NN_Op<mnemonic, "Elementwise", !listconcat([SameOperandsAndResultType], traits)> {
  let summary = "Elementwise " # onnx # " (ONNX " # onnx # ")";
  let arguments = (ins operandType:$input);
  let results = (outs operandType:$output);
  let assemblyFormat = "$input attr-dict `:` type($output)";
}

def NN_SqrtOp : NN_UnaryOp<"sqrt", "Sqrt", NN_FloatTensor>;
def NN_ExpOp : NN_UnaryOp<"exp", "Exp", NN_FloatTensor>;
def NN_LogOp : NN_UnaryOp<"log", "Log", NN_FloatTensor>;
def NN_NegOp : NN_UnaryOp<"neg", "Neg"> { let hasFolder = 1; }
def NN_AbsOp : NN_UnaryOp<"abs", "Abs">;
def NN_ReciprocalOp : NN_UnaryOp<"reciprocal", "Reciprocal", NN_FloatTensor>;
def NN_ErfOp : NN_UnaryOp<"erf", "Erf", NN_FloatTensor>;
def NN_TanhOp : NN_UnaryOp<"tanh", "Tanh", NN_FloatTensor>;
def NN_SinOp : NN_UnaryOp<"sin", "Sin", NN_FloatTensor>;
def NN_CosOp : NN_UnaryOp<"cos", "Cos", NN_FloatTensor>;
def NN_TanOp : NN_UnaryOp<"tan", "Tan", NN_FloatTensor>;
def NN_AsinOp : NN_UnaryOp<"asin", "Asin", NN_FloatTensor>;
def NN_AcosOp : NN_UnaryOp<"acos", "Acos", NN_FloatTensor>;
def NN_AtanOp : NN_UnaryOp<"atan", "Atan", NN_FloatTensor>;
def NN_SigmoidOp : NN_UnaryOp<"sigmoid", "Sigmoid", NN_FloatTensor>;
def NN_ReluOp : NN_UnaryOp<"relu", "Relu"> { let hasFolder = 1; }
def NN_FloorOp : NN_UnaryOp<"floor", "Floor", NN_FloatTensor> { let hasFolder = 1; }
def NN_CeilOp : NN_UnaryOp<"ceil", "Ceil", NN_FloatTensor> { let hasFolder = 1; }
def NN_RoundOp : NN_UnaryOp<"round", "Round (half to even)", NN_FloatTensor>;
def NN_SignOp : NN_UnaryOp<"sign", "Sign">;
def NN_SoftplusOp : NN_UnaryOp<"softplus", "Softplus", NN_FloatTensor>;
def NN_HardSwishOp : NN_UnaryOp<"hard_swish", "HardSwish", NN_FloatTensor>;
def NN_NotOp : NN_UnaryOp<"not", "Not", NN_BoolTensor>;

def NN_LeakyReluOp : NN_UnaryOp<"leaky_relu", "LeakyRelu", NN_FloatTensor> {
  let arguments = (ins NN_FloatTensor:$input, F64Attr:$alpha);
}
def NN_EluOp : NN_UnaryOp<"elu", "Elu", NN_FloatTensor> {
  let arguments = (ins NN_FloatTensor:$input, F64Attr:$alpha);
}
def NN_SeluOp : NN_UnaryOp<"selu", "Selu", NN_FloatTensor> {
  let arguments = (ins NN_FloatTensor:$input, F64Attr:$alpha, F64Attr:$gamma);
}
def NN_HardSigmoidOp : NN_UnaryOp<"hard_sigmoid", "HardSigmoid", NN_FloatTensor> {
  let arguments = (ins NN_FloatTensor:$input, F64Attr:$alpha, F64Attr:$beta);
}

def NN_IsNaNOp : NN_Op<"is_nan", "Elementwise", [SameOperandsAndResultShape]> {
  let summary = "Elementwise NaN test (ONNX IsNaN)";
  let arguments = (ins NN_FloatTensor:$input);
  let results = (outs NN_BoolTensor:$output);
}

def NN_CastOp : NN_Op<"cast", "Elementwise", [SameOperandsAndResultShape]> {
  let summary = "Elementwise conversion to the result's element type (ONNX Cast, CastLike)";
  let description = [{
    Float to integer truncates toward zero, integer to float rounds to
    nearest even, float to float rounds to nearest even, anything to bool
    tests for non-zero (ONNX semantics).
  }];
  let arguments = (ins NN_Tensor:$input);
  let results = (outs NN_Tensor:$output);
  let hasFolder = 1;
}

def NN_ClipOp : NN_Op<"clip", "Broadcast"> {
  let summary = "Clamp to [min, max], both 0-d tensors (ONNX Clip)";
  let arguments = (ins NN_Tensor:$input, NN_Tensor:$min, NN_Tensor:$max);
  let results = (outs NN_Tensor:$output);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Broadcasting binary and ternary ops (numpy-style multidirectional).
//===----------------------------------------------------------------------===//

class NN_BinaryOp<string mnemonic, string onnx, Type operandType = NN_Tensor,
                  Type resultType = operandType>
    : NN_Op<mnemonic, "Broadcast"> {
  let summary = "Broadcasting " # onnx # " (ONNX " # onnx # ")";
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs resultType:$output);
  let hasVerifier = 1;
}

def NN_AddOp : NN_BinaryOp<"add", "Add"> { let hasFolder = 1; }
def NN_SubOp : NN_BinaryOp<"sub", "Sub"> { let hasFolder = 1; }
def NN_MulOp : NN_BinaryOp<"mul", "Mul"> { let hasFolder = 1; }
def NN_DivOp : NN_BinaryOp<"div", "Div"> { let hasFolder = 1; }
def NN_PowOp : NN_BinaryOp<"pow", "Pow"> { let hasCanonicalizer = 1; }
def NN_MinOp : NN_BinaryOp<"min", "Min">;
def NN_MaxOp : NN_BinaryOp<"max", "Max">;
def NN_PReluOp : NN_BinaryOp<"prelu", "PRelu (slope broadcast to the input)">;
def NN_AndOp : NN_BinaryOp<"and", "And", NN_BoolTensor>;
def NN_OrOp : NN_BinaryOp<"or", "Or", NN_BoolTensor>;
def NN_EqualOp : NN_BinaryOp<"equal", "Equal", NN_Tensor, NN_BoolTensor> { let hasFolder = 1; }
def NN_GreaterOp : NN_BinaryOp<"greater", "Greater", NN_Tensor, NN_BoolTensor>;
def NN_LessOp : NN_BinaryOp<"less", "Less", NN_Tensor, NN_BoolTensor>;
def NN_GreaterEqualOp : NN_BinaryOp<"greater_equal", "GreaterOrEqual", NN_Tensor, NN_BoolTensor>;
def NN_LessEqualOp : NN_BinaryOp<"less_equal", "LessOrEqual", NN_Tensor, NN_BoolTensor>;

def NN_WhereOp : NN_Op<"where", "Broadcast"> {
  let summary = "Broadcasting select (ONNX Where)";
  let arguments = (ins NN_BoolTensor:$condition, NN_Tensor:$lhs, NN_Tensor:$rhs);
  let results = (outs NN_Tensor:$output);
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Contractions: become library calls (GEMM, convolution) with epilogues.
//===----------------------------------------------------------------------===//

def NN_MatMulOp : NN_Op<"matmul", "Contraction"> {
  let summary = "numpy matmul with batch broadcasting (ONNX MatMul)";
  let arguments = (ins NN_Tensor:$lhs, NN_Tensor:$rhs);
  let results = (outs NN_Tensor:$output);
  let hasVerifier = 1;
}

def NN_GemmOp : NN_Op<"gemm", "Contraction"> {
  let summary = "alpha * op(A) * op(B) + beta * C (ONNX Gemm)";
  let arguments = (ins NN_Tensor:$a, NN_Tensor:$b, Optional<NN_Tensor>:$c,
                       F64Attr:$alpha, F64Attr:$beta,
                       BoolAttr:$trans_a, BoolAttr:$trans_b);
  let results = (outs NN_Tensor:$output);
  let hasVerifier = 1;
}

def NN_ConvOp : NN_Op<"conv", "Contraction"> {
  let summary = "N-d grouped convolution, NCHW layout, explicit pads (ONNX Conv)";
  let description = [{
    `pads` holds the begin pads of every spatial axis followed by the end pads,
    as ONNX does; auto_pad is resolved at import. On i32 tensors it is the
    exact integer convolution of ConvInteger and QLinearConv (zero points
    already subtracted).
  }];
  let arguments = (ins NN_ConvTensor:$input, NN_ConvTensor:$weight,
                       Optional<NN_ConvTensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations, I64Attr:$group);
  let results = (outs NN_ConvTensor:$output);
  let hasVerifier = 1;
}

def NN_ConvTransposeOp : NN_Op<"conv_transpose", "Contraction"> {
  let summary = "N-d transposed convolution with explicit pads (ONNX ConvTranspose)";
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$weight,
                       Optional<NN_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations,
                       DenseI64ArrayAttr:$output_padding, I64Attr:$group);
  let results = (outs NN_FloatTensor:$output);
  let hasVerifier = 1;
}

def NN_EinsumOp : NN_Op<"einsum", "Contraction"> {
  let summary = "Einstein summation with an explicit output (ONNX Einsum)";
  let description = [{ The equation is normalized at import to the explicit
    form `ij,jk->ik` with ellipses expanded to letters. }];
  let arguments = (ins Variadic<NN_Tensor>:$inputs, StrAttr:$equation);
  let results = (outs NN_Tensor:$output);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Pooling and normalization.
//===----------------------------------------------------------------------===//

def NN_MaxPoolOp : NN_Op<"max_pool", "Reduction"> {
  let summary = "N-d max pooling with explicit pads (ONNX MaxPool, GlobalMaxPool)";
  let description = [{ `indices` (when present) holds the flat index into the
    input of each maximum (ONNX's Indices output): row-major, or with the
    spatial axes column-major when `column_major_indices` (storage_order 1). }];
  let arguments = (ins NN_Tensor:$input, DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations, BoolAttr:$ceil_mode,
                       DefaultValuedAttr<BoolAttr, "false">:$column_major_indices);
  let results = (outs NN_Tensor:$output, Optional<NN_I64Tensor>:$indices);
  let hasVerifier = 1;
}

def NN_AveragePoolOp : NN_Op<"average_pool", "Reduction"> {
  let summary = "N-d average pooling with explicit pads (ONNX AveragePool)";
  let arguments = (ins NN_FloatTensor:$input, DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations, BoolAttr:$ceil_mode,
                       BoolAttr:$count_include_pad);
  let results = (outs NN_FloatTensor:$output);
  let hasVerifier = 1;
}

def NN_BatchNormOp : NN_Op<"batch_norm", "Broadcast"> {
  let summary = "Inference batch normalization over axis 1 (ONNX BatchNormalization)";
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$scale,
                       NN_FloatTensor:$bias, NN_FloatTensor:$mean,
                       NN_FloatTensor:$variance, F64Attr:$epsilon);
  let results = (outs NN_FloatTensor:$output);
  let hasVerifier = 1;
}

def NN_LayerNormOp : NN_Op<"layer_norm", "Reduction"> {
  let summary = "Normalization over the axes from `axis` on (ONNX LayerNormalization)";
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$scale,
                       Optional<NN_FloatTensor>:$bias, I64Attr:$axis,
                       F64Attr:$epsilon);
  let results = (outs NN_FloatTensor:$output);
  let hasVerifier = 1;
}

def NN_InstanceNormOp : NN_Op<"instance_norm", "Reduction"> {
  let summary = "Per-instance, per-channel normalization (ONNX InstanceNormalization)";
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$scale,
                       NN_FloatTensor:$bias, F64Attr:$epsilon);
  let results = (outs NN_FloatTensor:$output);
  let hasVerifier = 1;
}

class NN_SoftmaxLikeOp<string mnemonic, string onnx>
    : NN_Op<mnemonic, "Reduction", [SameOperandsAndResultType]> {
  let summary = onnx # " along one axis (ONNX " # onnx # ", opset-13 semantics)";
  let arguments = (ins NN_FloatTensor:$input, I64Attr:$axis);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($output)";
  let hasVerifier = 1;
}
def NN_SoftmaxOp : NN_SoftmaxLikeOp<"softmax", "Softmax">;
def NN_LogSoftmaxOp : NN_SoftmaxLikeOp<"log_softmax", "LogSoftmax">;

def NN_GeluOp : NN_Op<"gelu", "Elementwise", [SameOperandsAndResultType]> {
  let summary = "GELU, exact (erf) or tanh-approximated (recomposed from its decomposition)";
  let description = [{
    `approximate = "none"`: `0.5 * x * (1 + erf(x / sqrt(2)))`;
    `approximate = "tanh"`: `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))`
    (ONNX Gelu of opset 20). Built by nncc-recompose from the Erf/Tanh graphs exporters write.
  }];
  let arguments = (ins NN_FloatTensor:$input,
                       DefaultValuedAttr<StrAttr, "\"none\"">:$approximate);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($output)";
  let hasVerifier = 1;
}

def NN_AttentionOp : NN_Op<"attention", "Contraction"> {
  let summary = "Scaled dot-product attention: softmax(q kᵀ * scale + mask) v";
  let description = [{
    `q` is [batch..., Sq, D], `k` [batch..., Sk, D] (not transposed), `v`
    [batch..., Sk, Dv], the result [batch..., Sq, Dv], with the same batch dims
    everywhere; the optional additive `mask` broadcasts (numpy) to
    [batch..., Sq, Sk]. Softmax runs over the keys. Built by nncc-recompose
    from MatMul / Div-or-Mul / Add / Softmax / MatMul, so kernels never
    materialize the score matrix.
  }];
  let arguments = (ins NN_FloatTensor:$q, NN_FloatTensor:$k, NN_FloatTensor:$v,
                       Optional<NN_FloatTensor>:$mask, F64Attr:$scale);
  let results = (outs NN_FloatTensor:$output);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions. `axes` is an attribute once it is known; before that it is an
// operand (an ONNX input fed at run time).
//===----------------------------------------------------------------------===//

class NN_ReduceOp<string mnemonic, string onnx>
    : NN_Op<mnemonic, "Reduction"> {
  let summary = onnx # " over `axes` (ONNX " # onnx # ")";
  let description = [{
    `axes` lists the reduced axes, sorted and non-negative; an empty list
    with no `axes_tensor` reduces nothing (the importer turns ONNX's
    "empty means all" into the explicit list). A run-time `axes_tensor`
    keeps ONNX's meaning: empty reduces all axes, or none when
    `noop_with_empty_axes` is set.
  }];
  let arguments = (ins NN_Tensor:$input, Optional<NN_I64Tensor>:$axes_tensor,
                       OptionalAttr<DenseI64ArrayAttr>:$axes, BoolAttr:$keepdims,
                       DefaultValuedAttr<BoolAttr, "false">:$noop_with_empty_axes);
  let results = (outs NN_Tensor:$output);
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}
def NN_ReduceMeanOp : NN_ReduceOp<"reduce_mean", "ReduceMean">;
def NN_ReduceSumOp : NN_ReduceOp<"reduce_sum", "ReduceSum">;
def NN_ReduceMaxOp : NN_ReduceOp<"reduce_max", "ReduceMax">;
def NN_ReduceMinOp : NN_ReduceOp<"reduce_min", "ReduceMin">;
def NN_ReduceProdOp : NN_ReduceOp<"reduce_prod", "ReduceProd">;
def NN_ReduceL2Op : NN_ReduceOp<"reduce_l2", "ReduceL2">;

class NN_ArgReduceOp<string mnemonic, string onnx>
    : NN_Op<mnemonic, "Reduction"> {
  let summary = "Index of the " # onnx # " along one axis (ONNX " # onnx # ")";
  let arguments = (ins NN_Tensor:$input, I64Attr:$axis, BoolAttr:$keepdims,
                       BoolAttr:$select_last_index);
  let results = (outs NN_I64Tensor:$output);
  let hasVerifier = 1;
}
def NN_ArgMaxOp : NN_ArgReduceOp<"arg_max", "ArgMax">;
def NN_ArgMinOp : NN_ArgReduceOp<"arg_min", "ArgMin">;

def NN_CumSumOp : NN_Op<"cumsum", "Opaque"> {
  let summary = "Cumulative sum along one axis (ONNX CumSum)";
  let arguments = (ins NN_Tensor:$input, Optional<NN_IntTensor>:$axis_tensor,
                       OptionalAttr<I64Attr>:$axis, BoolAttr:$exclusive,
                       BoolAttr:$reverse);
  let results = (outs NN_Tensor:$output);
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def NN_TopKOp : NN_Op<"top_k", "Opaque"> {
  let summary = "The k largest or smallest values and their indices (ONNX TopK)";
  let description = [{ k is the size of the results along `axis`; `k_tensor`
    is kept only while the result shapes are not static. }];
  let arguments = (ins NN_Tensor:$input, Optional<NN_I64Tensor>:$k_tensor,
                       I64Attr:$axis, BoolAttr:$largest, BoolAttr:$sorted);
  let results = (outs NN_Tensor:$values, NN_I64Tensor:$indices);
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Data movement (injective) and shape computation.
//===----------------------------------------------------------------------===//

/// Ops whose ONNX shape input is implied by a static result type: the operand
/// is kept only while the result shape is not static.
class NN_ShapedByResultOp<string mnemonic, string kind, string onnx, string operandName>
    : NN_Op<mnemonic, kind> {
  let summary = onnx # " (ONNX " # onnx # "); `" # operandName #
                "` is implied by the result type once that is static";
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def NN_ReshapeOp : NN_ShapedByResultOp<"reshape", "Injective", "Reshape", "shape"> {
  let arguments = (ins NN_Tensor:$input, Optional<NN_I64Tensor>:$shape);
  let results = (outs NN_Tensor:$output);
  let hasFolder = 1;
}
def NN_ExpandOp : NN_ShapedByResultOp<"expand", "Broadcast", "Expand", "shape"> {
  let arguments = (ins NN_Tensor:$input, Optional<NN_I64Tensor>:$shape);
  let results = (outs NN_Tensor:$output);
  let hasFolder = 1;
}
def NN_TileOp : NN_ShapedByResultOp<"tile", "Injective", "Tile", "repeats"> {
  let arguments = (ins NN_Tensor:$input, Optional<NN_I64Tensor>:$repeats);
  let results = (outs NN_Tensor:$output);
}
def NN_SqueezeOp : NN_ShapedByResultOp<"squeeze", "Injective", "Squeeze", "axes"> {
  let arguments = (ins NN_Tensor:$input, Optional<NN_I64Tensor>:$axes);
  let results = (outs NN_Tensor:$output);
}
def NN_UnsqueezeOp : NN_ShapedByResultOp<"unsqueeze", "Injective", "Unsqueeze", "axes"> {
  let arguments = (ins NN_Tensor:$input, Optional<NN_I64Tensor>:$axes);
  let results = (outs NN_Tensor:$output);
}
def NN_SplitOp : NN_ShapedByResultOp<"split", "Injective", "Split", "split"> {
  let arguments = (ins NN_Tensor:$input, Optional<NN_I64Tensor>:$split, I64Attr:$axis);
  let results = (outs Variadic<NN_Tensor>:$outputs);
}
def NN_ConstantOfShapeOp
    : NN_ShapedByResultOp<"constant_of_shape", "Elementwise", "ConstantOfShape", "shape"> {
  let arguments = (ins Optional<NN_I64Tensor>:$shape, ElementsAttr:$value);
  let results = (outs NN_Tensor:$output);
  let hasFolder = 1;
}

def NN_TransposeOp : NN_Op<"transpose", "Injective"> {
  let summary = "Axis permutation (ONNX Transpose)";
  let arguments = (ins NN_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs NN_Tensor:$output);
  let hasVerifier = 1;
  let hasFolder = 1;
}

def NN_ConcatOp : NN_Op<"concat", "Injective"> {
  let summary = "Concatenation along one axis (ONNX Concat)";
  let arguments = (ins Variadic<NN_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs NN_Tensor:$output);
  let hasVerifier = 1;
  let hasFolder = 1;
}

def NN_SliceOp : NN_Op<"slice", "Injective", [AttrSizedOperandSegments]> {
  let summary = "Strided slice (ONNX Slice)";
  let description = [{
    With attributes, `starts`, `ends` and `steps` cover every axis, clamped
    to the input as ONNX specifies (so a step of -1 from the end works);
    before they are known, the ONNX inputs are kept as operands.
  }];
  let arguments = (ins NN_Tensor:$input,
                       Optional<NN_IntTensor>:$starts_tensor,
                       Optional<NN_IntTensor>:$ends_tensor,
                       Optional<NN_IntTensor>:$axes_tensor,
                       Optional<NN_IntTensor>:$steps_tensor,
                       OptionalAttr<DenseI64ArrayAttr>:$starts,
                       OptionalAttr<DenseI64ArrayAttr>:$ends,
                       OptionalAttr<DenseI64ArrayAttr>:$steps);
  let results = (outs NN_Tensor:$output);
  // The optional operands are named: the generic `operands` form cannot tell
  // which of them are present when it is parsed back.
  let assemblyFormat = [{
    $input (`starts` $starts_tensor^)? (`ends` $ends_tensor^)?
    (`axes` $axes_tensor^)? (`steps` $steps_tensor^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
  let hasFolder = 1;
}

def NN_GatherOp : NN_Op<"gather", "Injective"> {
  let summary = "Take along one axis (ONNX Gather; negative indices wrap)";
  let arguments = (ins NN_Tensor:$input, NN_IntTensor:$indices, I64Attr:$axis);
  let results = (outs NN_Tensor:$output);
  let hasVerifier = 1;
  let hasFolder = 1;
}

def NN_GatherElementsOp : NN_Op<"gather_elements", "Injective"> {
  let summary = "Element-wise take along one axis (ONNX GatherElements)";
  let arguments = (ins NN_Tensor:$input, NN_IntTensor:$indices, I64Attr:$axis);
  let results = (outs NN_Tensor:$output);
  let hasVerifier = 1;
}

def NN_PadOp : NN_Op<"pad", "Injective", [AttrSizedOperandSegments]> {
  let summary = "Pad with a constant, reflection, edge or wrap (ONNX Pad)";
  let arguments = (ins NN_Tensor:$input, Optional<NN_I64Tensor>:$pads_tensor,
                       Optional<NN_Tensor>:$value,
                       OptionalAttr<DenseI64ArrayAttr>:$pads, StrAttr:$mode);
  let results = (outs NN_Tensor:$output);
  // Named optional operands, as for nn.slice.
  let assemblyFormat = [{
    $input (`pads` $pads_tensor^)? (`value` $value^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def NN_ResizeOp : NN_Op<"resize", "Injective"> {
  let summary = "Interpolating resize (ONNX Resize, Upsample)";
  let description = [{
    `scales` has one factor per axis (ONNX's `sizes` is turned into factors at
    import); the output size is the result type. `roi` is used by
    tf_crop_and_resize only.
  }];
  let arguments = (ins NN_Tensor:$input, Optional<NN_FloatTensor>:$scales_tensor,
                       OptionalAttr<DenseF64ArrayAttr>:$scales,
                       DenseF64ArrayAttr:$roi, StrAttr:$mode,
                       StrAttr:$coordinate_transformation_mode,
                       StrAttr:$nearest_mode, F64Attr:$cubic_coeff_a,
                       BoolAttr:$exclude_outside, F64Attr:$extrapolation_value);
  let results = (outs NN_Tensor:$output);
  let hasVerifier = 1;
}

def NN_RangeOp : NN_Op<"range", "Opaque"> {
  let summary = "start, start+delta, ... below limit (ONNX Range)";
  let arguments = (ins NN_Tensor:$start, NN_Tensor:$limit, NN_Tensor:$delta);
  let results = (outs NN_Tensor:$output);
  let hasVerifier = 1;
  let hasFolder = 1;
}

def NN_ShapeOp : NN_Op<"shape", "Opaque"> {
  let summary = "The dimensions [start, end) of a tensor as i64 (ONNX Shape)";
  let arguments = (ins NN_Tensor:$input, I64Attr:$start, I64Attr:$end);
  let results = (outs NN_I64Tensor:$output);
  let hasVerifier = 1;
  let hasFolder = 1;
}

def NN_SizeOp : NN_Op<"size", "Opaque"> {
  let summary = "Number of elements as a 0-d i64 (ONNX Size)";
  let arguments = (ins NN_Tensor:$input);
  let results = (outs NN_I64Tensor:$output);
  let hasFolder = 1;
}

#endif // NNCC_NN_OPS
