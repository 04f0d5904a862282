/// nn -> exec as one pipeline of the passes in Passes.td.
#include "lib/Conversion/NNToExec/Passes.h"
#include "lib/Conversion/DistToExec/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace nncc {

#define GEN_PASS_REGISTRATION
#include "lib/Conversion/NNToExec/Passes.h.inc"

void buildNNToExecPipeline(OpPassManager &pm, const LoweringOptions &options) {
  // Collectives first: no fusion pass meets one.
  pm.addNestedPass<func::FuncOp>(createLowerCollectivesPass());
  pm.addNestedPass<func::FuncOp>(createComputeLowPrecisionInF32Pass());
  // Convolutions first: their epilogues would otherwise be split off and
  // fused into other kernels.
  if (options.cpuOnly) {
    pm.addNestedPass<func::FuncOp>(createDecomposeAttentionPass());
    FormConvKernelsPassOptions conv;
    conv.plan = ConvPlan::Cpu;
    conv.fuseEpilogues = options.fuse;
    conv.vectorBits = options.vectorBits;
    conv.vectorRegisters = options.vectorRegisters;
    conv.packedWeights = options.packedWeights;
    pm.addPass(createFormConvKernelsPass(conv));
  } else if (options.fuse && options.gemmEpilogues) {
    FormConvKernelsPassOptions conv;
    conv.plan = ConvPlan::Gpu;
    pm.addPass(createFormConvKernelsPass(conv));
  }
  if (options.fuse) {
    pm.addNestedPass<func::FuncOp>(createSplitConvBiasPass());
    if (options.gemmEpilogues)
      pm.addNestedPass<func::FuncOp>(createFuseGemmEpiloguesPass());
    else
      pm.addNestedPass<func::FuncOp>(createSplitGemmBiasPass());
    // Row kernels before elementwise groups, which then group the rest.
    pm.addPass(createFormRowKernelsPass());
    pm.addPass(createFormElementwiseGroupsPass());
  }
  pm.addPass(createLowerContractionsPass(
      LowerContractionsPassOptions{options.cpuOnly, options.cpuOnly && options.packedWeights}));
  pm.addPass(createOutlineKernelsPass());
  pm.addPass(createOrderKernelsPass());
}

namespace {

/// LoweringOptions on the command line of nncc-opt.
struct NNToExecPipelineOptions : PassPipelineOptions<NNToExecPipelineOptions> {
  Option<bool> fuse{*this, "fuse", llvm::cl::desc("fuse elementwise ops, rows and epilogues"),
                    llvm::cl::init(true)};
  Option<bool> gemmEpilogues{*this, "gemm-epilogues",
                             llvm::cl::desc("bias and activation in the GEMM call (the GPU plan)"),
                             llvm::cl::init(true)};
  Option<bool> cpuOnly{*this, "cpu-only",
                       llvm::cl::desc("kernels for the CPU plan alone (direct convolutions)"),
                       llvm::cl::init(false)};
  Option<int64_t> vectorBits{*this, "vector-bits", llvm::cl::desc("the target CPU's vector width in bits"),
                             llvm::cl::init(256)};
  Option<bool> packedWeights{*this, "packed-weights",
                             llvm::cl::desc("the target CPU has the runtime's own SGEMM (AVX2+FMA or AVX-512)"),
                             llvm::cl::init(false)};
  Option<int64_t> vectorRegisters{*this, "vector-registers", llvm::cl::desc("the target CPU's vector registers"),
                                  llvm::cl::init(16)};
};

} // namespace

void registerNNToExecPipelines() {
  registerNNToExecPasses();
  PassPipelineRegistration<NNToExecPipelineOptions>(
      "nncc-lower-nn-to-exec", "Lower nn to exec: GEMM calls, views and outlined kernels",
      [](OpPassManager &pm, const NNToExecPipelineOptions &opts) {
        buildNNToExecPipeline(pm, LoweringOptions{opts.fuse, opts.gemmEpilogues, opts.cpuOnly, opts.vectorBits,
                                                  opts.vectorRegisters, opts.packedWeights});
      });
}

} // namespace nncc
