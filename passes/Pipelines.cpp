#include "passes/Pipelines.h"

#include "passes/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace nncc {

void buildNNSimplifyPipeline(mlir::OpPassManager &pm, bool recompose) {
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(createFoldBatchNormPass());
  if (recompose) {
    pm.addPass(createRecomposePass());
    // Folds the transposes attention leaves behind into their producers.
    pm.addPass(mlir::createCanonicalizerPass());
  }
  pm.addPass(mlir::createCSEPass());
}

void registerNNCCPipelines() {
  registerNNCCPasses();
  mlir::PassPipelineRegistration<>(
      "nncc-simplify-nn", "Canonicalize and constant-fold the nn dialect",
      [](mlir::OpPassManager &pm) { buildNNSimplifyPipeline(pm); });
}

} // namespace nncc
