#ifndef NNCC_CONVERSION_NNTOEXEC_PASSES
#define NNCC_CONVERSION_NNTOEXEC_PASSES

include "mlir/Pass/PassBase.td"

/// The dialects of the kernels the outlining passes build.
defvar kernelDialects = ["nncc::exec::ExecDialect", "mlir::func::FuncDialect",
                         "mlir::arith::ArithDialect", "mlir::linalg::LinalgDialect",
                         "mlir::math::MathDialect", "mlir::scf::SCFDialect",
                         "mlir::tensor::TensorDialect", "mlir::vector::VectorDialect",
                         "mlir::bufferization::BufferizationDialect"];

// The steps of nn -> exec, in pipeline order (buildNNToExecPipeline). The
// function passes touch public functions only: private functions are the
// kernels the module passes outline.

def ComputeLowPrecisionInF32Pass
    : Pass<"nncc-compute-low-precision-in-f32", "mlir::func::FuncOp"> {
  let summary = "f16/bf16 nn ops compute in f32 between casts; GEMMs keep low operands";
  let description = [{
    Every nn op that computes on f16/bf16 values becomes the same op on f32
    between casts (constants converted at compile time), so a kernel reads
    the low type, computes and accumulates in f32 and rounds to nearest even
    once per result, as the GPU plan does. Ops that only move or select
    elements keep the low type; GEMM library contractions take the low
    operands themselves, and a convolution among them gives up its bias to
    an add computed in f32. Fusion then merges the casts with their
    neighbours.
  }];
  let dependentDialects = ["nncc::nn::NNDialect"];
}

def FormConvKernelsPass : Pass<"nncc-form-conv-kernels", "mlir::ModuleOp"> {
  let summary = "Convolutions with their epilogues as the plan's conv kernels or GEMM calls";
  let description = [{
    `plan=cpu`: each 2-D f32 convolution a register-blocked direct kernel
    can run (DirectConv.cpp) becomes a launch of that kernel (after a
    padded-copy kernel when it reads one), with the residual add and
    ReLU/Clip after it folded in when `fuse-epilogues` is set. The kernels
    are blocked for the target's vector unit (`vector-bits`,
    `vector-registers`: lanes per vector, accumulators per tile). 2-D f32
    max pools without indices become the same in-place vector code (the
    depthwise tiling, -inf for padding, max for the FMA). Ungrouped f32
    convolutions with constant weights whose output rows are too narrow for
    a direct kernel's column lanes, with output channels in whole vectors,
    become implicit-GEMM kernels (ImplicitGemmConv.cpp: output channels in
    the lanes, the input read through a zero-padded copy, bias and, without
    a residual, ReLU/Clip in registers) writing [N, positions, M], then a
    transpose kernel to NCHW. With
    `fuse-epilogues`, the other ungrouped f32 convolutions become their GEMM
    form (as nncc-lower-contractions builds it, `packed-weights` choosing
    it) with their bias, ReLU/Clip and, where the GEMM writes the output's
    layout, residual add on the GEMM step (exec.gemm `bias_per_row`,
    "clip"): applied by the CPU runtime before the GEMM stores C.
    `plan=gpu` (only with `fuse-epilogues`): a convolution whose bias,
    residual add or ReLU can ride on its GEMM call becomes im2col (with a
    row of ones against a bias column appended to the constant weights) and
    one exec.gemm with the residual as C and ReLU as the library's
    activation. Other convolutions are left to nncc-lower-contractions.
  }];
  let options = [
    Option<"plan", "plan", "ConvPlan", /*default=*/"ConvPlan::Cpu",
           "the plan the kernels are for", [{::llvm::cl::values(
             clEnumValN(ConvPlan::Cpu, "cpu", "direct convolution kernels"),
             clEnumValN(ConvPlan::Gpu, "gpu", "GEMM calls with library epilogues"))}]>,
    Option<"fuseEpilogues", "fuse-epilogues", "bool", /*default=*/"true",
           "fold the residual add and activation after a convolution">,
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"256",
           "the target CPU's vector width in bits (128, 256 or 512)">,
    Option<"vectorRegisters", "vector-registers", "int64_t", /*default=*/"16",
           "the target CPU's vector registers">,
    Option<"packedWeights", "packed-weights", "bool", /*default=*/"false",
           "the target CPU has the runtime's own SGEMM (the GEMM form of convolutions, as in nncc-lower-contractions)">,
  ];
  let dependentDialects = kernelDialects;
}

def DecomposeAttentionPass : Pass<"nncc-decompose-attention", "mlir::func::FuncOp"> {
  let summary = "Short f32 attentions as MatMul / scale / mask / Softmax / MatMul again (CPU plan)";
  let description = [{
    The CPU plan's attention kernel works one query row at a time: every
    score is a dot product with a horizontal sum and each key row is read
    once per query, 17 GFLOP/s on the zoo encoders, where the score matrix
    as a batched GEMM runs at the GEMM's rate. The fused kernel exists so
    that the score matrix is never materialized; where it is no larger than
    the head's query and output rows (Sk <= D + Dv), materializing it costs
    no more memory than the attention's own operands, and the attention
    goes back to nn.matmul(q, kT), nn.mul by the scale, nn.add of the mask,
    nn.softmax and nn.matmul with v. Longer key sequences keep the fused
    kernel. The GPU plan keeps every attention fused.
  }];
  let dependentDialects = ["nncc::nn::NNDialect"];
}

def SplitConvBiasPass : Pass<"nncc-split-conv-bias", "mlir::func::FuncOp"> {
  let summary = "The bias of f32 convolutions as an nn.add after them";
  let description = [{
    conv(x, w, b) becomes add(conv(x, w), b viewed as [M, 1, ...]) so that
    elementwise fusion merges the bias with the activation and residual add
    after it into one epilogue kernel behind the GEMM.
  }];
  let dependentDialects = ["nncc::nn::NNDialect"];
}

def FuseGemmEpiloguesPass : Pass<"nncc-fuse-gemm-epilogues", "mlir::func::FuncOp"> {
  let summary = "Bias vectors and ReLU after MatMul/Gemm ride on the GEMM call";
  let description = [{
    matmul -> add(column vector) [-> relu], and a Gemm with a column-vector
    C (beta 1) [-> relu], become one exec.gemm carrying the bias and the
    activation (module ABI args[3] and the activation iparam), so neither a
    bias kernel nor the broadcast of C remains. Erf GELU stays a kernel:
    cuBLASLt's GELU epilogue is the tanh approximation.
  }];
  let dependentDialects = ["nncc::exec::ExecDialect"];
}

def SplitGemmBiasPass : Pass<"nncc-split-gemm-bias", "mlir::func::FuncOp"> {
  let summary = "A Gemm's column-vector C as an nn.add after a C-less Gemm";
  let description = [{
    Without library epilogues (the CPU plan), the add joins its consumers'
    fused kernel instead of a broadcast kernel and a copy feeding the GEMM.
  }];
  let dependentDialects = ["nncc::nn::NNDialect"];
}

def FormRowKernelsPass : Pass<"nncc-form-row-kernels", "mlir::ModuleOp"> {
  let summary = "layer_norm, softmax, row reductions and attention as one kernel each";
  let description = [{
    Each row root becomes one kernel (a parallel loop over rows) together
    with the elementwise, transpose and reshape producers only it reads (a
    residual add before a layer norm, the bias add and head split before
    attention), its output cast to f16/bf16 and attention's head-merge
    transpose. Runs before elementwise fusion, which groups the rest.
  }];
  let dependentDialects = kernelDialects;
}

def FormElementwiseGroupsPass : Pass<"nncc-form-elementwise-groups", "mlir::ModuleOp"> {
  let summary = "Chains and DAGs of elementwise ops of one shape as one kernel each";
  let description = [{
    Fusible elementwise and broadcasting ops of one result shape, in block
    order, join the group of an operand's producer when every value of the
    group read outside it is read after the new op (where the kernel runs).
    Each group of two or more becomes one linalg.generic kernel that reads
    the group's outside operands through broadcast maps and writes every
    value read outside the group; intermediates stay in registers.
  }];
  let dependentDialects = kernelDialects;
}

def LowerContractionsPass : Pass<"nncc-lower-contractions", "mlir::ModuleOp"> {
  let summary = "MatMul, Gemm, ungrouped Conv and ConvTranspose as GEMM library calls";
  let description = [{
    f32/f16/bf16 matrix products become exec.gemm. A convolution becomes an
    im2col kernel (from a zero-padded copy with `cpu-only`; none for 1x1,
    stride 1, no padding) and one batched GEMM (for a batch of small images
    one GEMM over all columns and a transpose kernel), then a bias kernel.
    A Gemm's C is broadcast to the result by an expand kernel and
    accumulated with beta. An f32 transposed convolution without groups is
    one GEMM (the weights transposed by its flag) and a col2im kernel that
    gathers each output element's taps and adds the bias.

    With `packed-weights` (the CPU plan for a target CPU that has one of the
    CPU runtime's own SGEMM kernels, AVX2+FMA or AVX-512) a convolution whose
    weights are a constant runs as the transposed product: im2col's columns
    of the whole batch (or the 1x1 input as it lies) are the GEMM's A through
    its trans flag, the weights its B, and a transpose kernel turns the
    [n, P, M] product into [n, M, P]. As B the weights are packed once per
    session; as A the BLAS repacked them on every call.
  }];
  let options = [
    Option<"cpuOnly", "cpu-only", "bool", /*default=*/"false",
           "im2col reads a zero-padded copy of the input (faster on the CPU, more memory)">,
    Option<"packedWeights", "packed-weights", "bool", /*default=*/"false",
           "convolutions with constant f32 weights as [n*P, M] = col^T W^T, the weights as B "
           "(the CPU runtime's own SGEMM packs B once per session), then a transpose kernel">,
  ];
  let dependentDialects = kernelDialects;
}

def OutlineKernelsPass : Pass<"nncc-outline-kernels", "mlir::ModuleOp"> {
  let summary = "Every remaining nn op as a view, an empty constant or a one-op kernel";
  let description = [{
    Static reshapes, squeezes and unsqueezes become exec.view; results
    without elements become empty constants; every other nn op (but
    nn.constant: weights) becomes a launch of a kernel built by its
    family's builder. Ops with dynamic shapes are an error naming --shape.
  }];
  let dependentDialects = kernelDialects;
}

def OrderKernelsPass : Pass<"nncc-order-kernels", "mlir::ModuleOp"> {
  let summary = "Kernels at the end of the module in the order of their first launch";
  let description = [{
    Whichever pass outlined a kernel, the module then reads in schedule
    order: public functions first, then kernels as the entries launch them.
  }];
}

#endif // NNCC_CONVERSION_NNTOEXEC_PASSES
