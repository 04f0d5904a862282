#include "passes/Pipelines.h"

#include "passes/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace nncc {

void buildNNSimplifyPipeline(mlir::OpPassManager &pm) {
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(createFoldBatchNormPass());
  pm.addPass(mlir::createCSEPass());
}

void registerNNCCPipelines() {
  registerNNCCPasses();
  mlir::PassPipelineRegistration<>(
      "nncc-simplify-nn", "Canonicalize and constant-fold the nn dialect",
      [](mlir::OpPassManager &pm) { buildNNSimplifyPipeline(pm); });
}

} // namespace nncc
