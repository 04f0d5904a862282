#ifndef NNCC_TARGET_PASSES
#define NNCC_TARGET_PASSES

include "mlir/Pass/PassBase.td"

// Every pass here works on the kernels of a kernel module: the `func.func`s
// marked `nncc.kernel` (extractKernels marks the functions exec.launch runs).
// Other functions are left alone.

def LowerKernelCopiesPass : Pass<"nncc-lower-kernel-copies", "mlir::ModuleOp"> {
  let summary = "Bufferization's memref.copy in kernels as linalg.copy, or dropped";
  let description = [{
    memref.copy of strided views lowers to a call into MLIR's C runner
    library, which modules do not link; as linalg.copy it becomes loops. A
    value computed in place through a slice (extract_slice, compute,
    insert_slice back) leaves a copy of a subview onto an identical subview:
    it is dropped, so it is no loop nest (GPU launch) of its own.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def HoistScratchPass : Pass<"nncc-hoist-scratch", "mlir::ModuleOp"> {
  let summary = "Kernel temporaries become trailing scratch arguments";
  let description = [{
    Each statically shaped, identity-layout memref.alloc at the top of a
    kernel becomes a new trailing argument, so temporaries live in the arena
    instead of being allocated on every run. The kernel records the bytes of
    each in `nncc.scratch_bytes` (an i64 array, in argument order), which the
    memory planner places.
  }];
}

def StackAllocateInLoopsPass : Pass<"nncc-stack-allocate-in-loops", "mlir::ModuleOp"> {
  let summary = "Small static allocations inside kernel loops on the stack";
  let description = [{
    Static allocations of at most 16 KiB inside a kernel's loops (a row
    kernel's per-row scores) become memref.alloca and lose their deallocs: a
    heap allocation per row would cost more than the row's work.
  }];
}

def CollapseContiguousLoopsPass : Pass<"nncc-collapse-contiguous-loops", "mlir::ModuleOp"> {
  let summary = "Contiguous loops of linalg.generic over whole buffers as one loop";
  let description = [{
    Consecutive loops that every operand reads or writes as one contiguous
    run (same iterator type, dims adjacent and in order in every indexing
    map, or absent from it) are collapsed into one, after dropping unit dims:
    `[n, c, h, w] + bias[c, 1, 1]` becomes `[n, c, h*w]`. A 28x28 plane as two
    loops of 28 leaves LLVM a 28-iteration inner loop, shorter than its vector
    width times its interleave factor on AVX-512, so it runs scalar; as one
    loop of 784 it vectorizes (and a GPU thread computes fewer indices).
    Bodies that read `linalg.index` are left alone: collapsing would
    delinearize the index with a division per element.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::memref::MemRefDialect"];
}

def ExpandHostMathPass : Pass<"nncc-expand-host-math", "mlir::ModuleOp"> {
  let summary = "Vectorizable f32 math approximations and bf16 conversions as integer ops";
  let description = [{
    Polynomial approximations of f32 tanh, erf, exp, expm1, log, log1p and
    log2 vectorize; libm calls (what the rest becomes) do not. bf16
    conversions become integer arithmetic: without AVX512-BF16, LLVM would
    call compiler-rt's __truncsfbf2, which the system's libgcc may lack
    (GCC 12's does), leaving model.so with an undefined symbol. The same
    rounding (to nearest even) on every CPU. Selects of bf16 values become
    selects of their i16 bits, which LLVM would otherwise promote to f32.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::math::MathDialect",
                           "mlir::vector::VectorDialect"];
}

def HoistStackBuffersPass : Pass<"nncc-hoist-stack-buffers", "mlir::ModuleOp"> {
  let summary = "Stack buffers allocated in kernel loops move to the kernel's entry";
  let description = [{
    An alloca in a loop body takes new stack space on every iteration
    (megabytes over the rows of one thread). A loop iteration never reads
    what an earlier one left in such a buffer, and every thread runs its own
    call of the kernel, so one buffer per call serves all iterations.
  }];
}

def AddParallelRangePass : Pass<"nncc-add-parallel-range", "mlir::ModuleOp"> {
  let summary = "Host kernels take a [begin, end) range of their outer parallel loop";
  let description = [{
    Every kernel gains two trailing `index` arguments (begin, end). When its
    body is one top-level scf.parallel from 0 with step 1 doing at least
    16384 innermost iterations in all, that loop's first dimension becomes
    [begin, end), and the kernel records the split extent in
    `nncc.parallel_extent` (0: not splittable; the runtime then calls it with
    (0, 1)). Splitting smaller kernels costs more than it saves.
  }];
  let dependentDialects = ["mlir::scf::SCFDialect"];
}

def AddPackedEntriesPass : Pass<"nncc-add-packed-entries", "mlir::ModuleOp"> {
  let summary = "noalias kernel pointers and one packed-argument entry per kernel";
  let description = [{
    On the LLVM dialect: every pointer argument of a kernel is noalias, and
    `nncc_<kernel>(ptr args, i64 begin, i64 end)` calls the kernel with the
    pointers args[0..n) and the range (the runtime's calling convention).
    The planner never lets two buffers of a step overlap, except where an
    elementwise kernel writes in place: element i is read and then written at
    index i by the same iteration, which stays correct under noalias.
    Without it LLVM guards every loop with overlap checks that an in-place
    step always fails, falling back to scalar code.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def MapKernelsToGpuPass : Pass<"nncc-map-kernels-to-gpu", "mlir::ModuleOp"> {
  let summary = "Kernel loop nests as GPU launches, one thread per iteration";
  let description = [{
    Each top-level loop nest of a kernel becomes one `gpu.func` of
    `gpu.module @nncc_kernels`, named `<kernel>_<i>`: a parallel nest with
    constant bounds runs one thread per iteration (all parallel dims
    collapsed into one linear index, the innermost dim fastest, so
    neighbouring threads touch neighbouring elements); consecutive nests
    whose threads touch only their own elements of the buffers they share
    run in one launch; anything else runs on one thread. Every function
    takes the kernel's buffers as bare pointers, noalias except those in the
    kernel's `nncc.may_alias` (an in-place launch's operand and result,
    which must not be read through the non-coherent cache while the same
    kernel stores to them). The kernel becomes a declaration recording its
    launches in `nncc.gpu_launches`.

    With `emulate`, each kernel instead becomes a host function that runs
    each launch's threads one after another, in thread order: the GPU
    mapping, testable on a CPU (`nncc --emulate-gpu`).
  }];
  let options = [
    Option<"emulate", "emulate", "bool", /*default=*/"false",
           "build host functions that run the threads in order instead of GPU code">,
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::arith::ArithDialect",
                           "mlir::scf::SCFDialect", "mlir::memref::MemRefDialect"];
}

#endif // NNCC_TARGET_PASSES
