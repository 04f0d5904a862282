/// The kernel pipelines: bufferization, host code generation, GPU code
/// generation, as typed pass lists.
#include "lib/Target/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace nncc {

bool isKernel(Operation *op) {
  auto func = dyn_cast<FunctionOpInterface>(op);
  return func && !func.isExternal() && op->hasAttr(kKernelAttrName);
}

void buildKernelBufferizationPipeline(OpPassManager &pm) {
  // Kernel arguments are static, identity-layout memrefs (passed as bare
  // pointers on every target). Kernels stay private through bufferization,
  // which lets it drop their results (they equal the destination arguments).
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion = bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(bufferization::createDropEquivalentBufferResultsPass());
  pm.addPass(createLowerKernelCopiesPass());
  pm.addPass(createHoistScratchPass());
  pm.addPass(createStackAllocateInLoopsPass());
  pm.addPass(createCollapseContiguousLoopsPass());
  // Row kernels (layer norm, softmax, attention) are one scf.forall over
  // rows: as scf.parallel it is the nest the CPU splits and the GPU maps to
  // threads.
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  funcPm.addPass(createConvertLinalgToParallelLoopsPass());
  funcPm.addPass(createForallToParallelLoopPass());
}

void buildHostCodegenPipeline(OpPassManager &pm) {
  // bf16 arithmetic in f32, each result rounded back to bf16 (LLVM would
  // promote it the same way, but through compiler-rt calls; see
  // nncc-expand-host-math).
  arith::ArithEmulateUnsupportedFloatsOptions emulate;
  emulate.sourceTypeStrs = {"bf16"};
  emulate.targetTypeStr = "f32";
  pm.addPass(arith::createArithEmulateUnsupportedFloats(emulate));
  pm.addPass(createExpandHostMathPass());
  pm.addPass(createHoistStackBuffersPass());
  pm.addPass(createAddParallelRangePass());
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createConvertBufferizationToMemRefPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  // Direct convolutions' vector code: 1-D transfers become (masked) vector
  // loads and stores.
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // LLVM intrinsics first (fma from the approximations must not become fmaf
  // calls), libm for the rest (erf of f64, pow...).
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  ConvertFuncToLLVMPassOptions funcToLLVM;
  funcToLLVM.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(funcToLLVM));
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createAddPackedEntriesPass());
}

/// The NVPTX backend's PTX ISA version: 8.0 covers sm_90 and is accepted by
/// CUDA 12+ drivers (the default, 6.0, rejects sm_90).
constexpr const char *kPtxFeatures = "+ptx80";

void buildGpuCodegenPipeline(OpPassManager &pm, const GpuCodegenOptions &options) {
  pm.addPass(createMapKernelsToGpuPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // MLIR's gpu-lower-to-nvvm-pipeline (cubin-format=isa, bare-pointer
  // kernel arguments, -O3), spelled out for one NVVM target per
  // architecture and the toolkit that provides libdevice.
  pm.addPass(createConvertNVGPUToNVVMPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  for (const std::string &arch : options.archs) {
    GpuNVVMAttachTargetOptions target;
    target.chip = arch;
    target.features = kPtxFeatures;
    target.optLevel = 3;
    pm.addPass(createGpuNVVMAttachTarget(target));
  }
  pm.addPass(createLowerAffinePass());
  pm.addPass(createArithToLLVMConversionPass());
  ConvertIndexToLLVMPassOptions indexToLLVM;
  indexToLLVM.indexBitwidth = 64;
  pm.addPass(createConvertIndexToLLVMPass(indexToLLVM));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  ConvertGpuOpsToNVVMOpsOptions gpuToNVVM;
  gpuToNVVM.useBarePtrCallConv = true;
  gpuToNVVM.indexBitwidth = 64;
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps(gpuToNVVM));
  pm.addNestedPass<gpu::GPUModuleOp>(createCanonicalizerPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCSEPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions toBinary;
  toBinary.compilationTarget = "isa";
  toBinary.toolkitPath = options.toolkit;
  pm.addPass(createGpuModuleToBinaryPass(toBinary));
}

namespace {

struct GpuCodegenPipelineOptions : PassPipelineOptions<GpuCodegenPipelineOptions> {
  ListOption<std::string> archs{*this, "archs", llvm::cl::desc("GPU architectures (sm_80, sm_90)")};
  Option<std::string> toolkit{*this, "toolkit", llvm::cl::desc("CUDA toolkit folder (for libdevice)"),
                              llvm::cl::init("")};
};

} // namespace

void registerTargetPasses() {
  registerNNCCTargetPasses();
  PassPipelineRegistration<>("nncc-bufferize-kernels",
                             "Kernels from tensors to loops over static buffers (both targets)",
                             buildKernelBufferizationPipeline);
  PassPipelineRegistration<>("nncc-host-codegen", "Bufferized kernels to the LLVM dialect for the host",
                             buildHostCodegenPipeline);
  PassPipelineRegistration<GpuCodegenPipelineOptions>(
      "nncc-gpu-codegen", "Bufferized kernels to PTX: thread mapping, NVVM, one object per architecture",
      [](OpPassManager &pm, const GpuCodegenPipelineOptions &options) {
        buildGpuCodegenPipeline(pm, {std::vector<std::string>(options.archs.begin(), options.archs.end()),
                                     options.toolkit});
      });
}

} // namespace nncc
