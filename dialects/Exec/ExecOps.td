#ifndef NNCC_EXEC_OPS
#define NNCC_EXEC_OPS

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Exec_Dialect : Dialect {
  let name = "exec";
  let cppNamespace = "::nncc::exec";
  let summary = "What the runtime executes: kernel launches, library calls, views";
  let description = [{
    The exec level is the schedule of one entry point: a sequence of kernel
    launches (outlined `func.func` kernels holding linalg), library calls
    (GEMM) and views, on value-semantic tensors. Memory planning assigns each
    value a buffer; the plan serializer turns each op into one plan step.
  }];
  let useDefaultAttributePrinterParser = 1;
}

// Where nncc-plan-buffers puts a value: the planner's decisions as IR, which
// the plan translation (lib/Target/Plan.cpp) turns into module tables.

class Exec_Attr<string name, string attrMnemonic> : AttrDef<Exec_Dialect, name> {
  let mnemonic = attrMnemonic;
}

def Exec_ArenaBufferAttr : Exec_Attr<"ArenaBuffer", "arena"> {
  let summary = "A buffer at a byte offset of the entry's arena";
  let parameters = (ins "int64_t":$offset);
  let assemblyFormat = "`<` $offset `>`";
}

def Exec_OutputBufferAttr : Exec_Attr<"OutputBuffer", "output"> {
  let summary = "The caller's buffer of the entry's result `index`, written in place";
  let parameters = (ins "int64_t":$index);
  let assemblyFormat = "`<` $index `>`";
}

class Exec_Op<string mnemonic, list<Trait> traits = []>
    : Op<Exec_Dialect, mnemonic, traits>;

def Exec_LaunchOp : Exec_Op<"launch", [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Runs an outlined kernel on its operands";
  let description = [{
    The kernel is a `func.func` in destination-passing style: it takes the
    operands and one init tensor per result, and returns the results. The
    `nodes` attribute names the ONNX nodes computed (for profiles).
    `inplace_operands` lists operands the kernel may overwrite with its
    result (each element is read once, at the index it writes), which the
    memory planner uses when the operand dies at this launch.
  }];
  let arguments = (ins FlatSymbolRefAttr:$kernel, Variadic<AnyRankedTensor>:$args,
                       StrAttr:$nodes, OptionalAttr<DenseI64ArrayAttr>:$inplace_operands);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $kernel `(` $args `)` attr-dict `:` functional-type($args, $results)
  }];
}

def Exec_GemmOp : Exec_Op<"gemm", [Pure, AttrSizedOperandSegments]> {
  let summary = "Batched GEMM library call: act(alpha * op(A) op(B) + beta * C + bias)";
  let description = [{
    Row-major matrices, batched over the leading dims of the result; A and B
    both f32, f16 or bf16, the result f32 or their type (products accumulate
    in f32, a low-precision result is rounded once); operands with fewer
    batch dims are broadcast. `c` (optional) is the
    accumulator the result starts from (it must have the result's type).
    `bias` (optional) is a vector of N elements added to every row (with
    `bias_per_row`, of M elements, one per row: a convolution's per-channel
    bias when the weights are A, [channels, positions] = W col), and
    `activation` ("none", "relu", "gelu" with erf, "clip":
    min(max(v, `clip_min`), `clip_max`), ONNX Clip's formula, so crossed
    bounds give `clip_max`) is applied last: the epilogue the
    BLAS/cuBLASLt call computes (module ABI GEMM args[3] and activation
    iparam), so bias and activation need no kernel of their own. A per-row
    bias and "clip" exist in the CPU plan only (cuBLASLt has neither).
  }];
  let arguments = (ins AnyRankedTensor:$a, AnyRankedTensor:$b,
                       Optional<AnyRankedTensor>:$c, Optional<AnyRankedTensor>:$bias,
                       BoolAttr:$trans_a, BoolAttr:$trans_b, F64Attr:$alpha, F64Attr:$beta,
                       StrAttr:$nodes, DefaultValuedAttr<StrAttr, "\"none\"">:$activation,
                       DefaultValuedAttr<BoolAttr, "false">:$bias_per_row,
                       DefaultValuedAttr<F64Attr, "0.0">:$clip_min,
                       DefaultValuedAttr<F64Attr, "0.0">:$clip_max);
  let results = (outs AnyRankedTensor:$output);
  let builders = [
    // A bias per column and no clip (the epilogue attributes' defaults).
    OpBuilder<(ins "::mlir::Type":$output, "::mlir::Value":$a, "::mlir::Value":$b, "::mlir::Value":$c,
                   "::mlir::Value":$bias, "bool":$trans_a,
                   "bool":$trans_b, "llvm::APFloat":$alpha, "llvm::APFloat":$beta, "llvm::StringRef":$nodes,
                   CArg<"llvm::StringRef", "\"none\"">:$activation), [{
      build($_builder, $_state, output, a, b, c, bias, trans_a, trans_b, alpha, beta, nodes, activation,
            false, llvm::APFloat(0.0), llvm::APFloat(0.0));
    }]>
  ];
  let assemblyFormat = [{
    $a `,` $b (`acc` $c^)? (`bias` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Exec_ViewOp : Exec_Op<"view", [Pure]> {
  let summary = "The same bytes under another static shape (a reshape, no copy)";
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}

#endif // NNCC_EXEC_OPS
