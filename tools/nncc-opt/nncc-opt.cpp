/// nncc-opt: runs any nncc or upstream pass on textual IR, for lit tests.
#include "dialects/NN/NNDialect.h"
#include "dialects/Dist/DistOps.h"
#include "dialects/Exec/ExecOps.h"
#include "lib/Conversion/DistToExec/Passes.h"
#include "lib/Conversion/NNToExec/Passes.h"
#include "lib/Target/Passes.h"
#include "lib/Target/PlanPasses.h"
#include "passes/Pipelines.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  nncc::registerNNCCPipelines();
  nncc::registerNNToExecPipelines();
  nncc::registerDistToExecPasses();
  nncc::registerPlanPasses();
  nncc::registerTargetPasses();
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  // Conversion interfaces, the NVVM target and LLVM IR translation, as the
  // compiler has them (nncc-gpu-codegen serializes PTX).
  mlir::registerAllExtensions(registry);
  mlir::NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  registry.insert<nncc::nn::NNDialect, nncc::exec::ExecDialect, nncc::dist::DistDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "nncc optimizer driver\n", registry));
}
