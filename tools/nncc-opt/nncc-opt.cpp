/// nncc-opt: runs any nncc or upstream pass on textual IR, for lit tests.
#include "dialects/NN/NNDialect.h"
#include "dialects/Exec/ExecOps.h"
#include "lib/Conversion/NNToExec/Passes.h"
#include "lib/Target/PlanPass.h"
#include "passes/Pipelines.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  nncc::registerNNCCPipelines();
  nncc::registerNNToExecPipelines();
  nncc::registerPlanPasses();
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  registry.insert<nncc::nn::NNDialect, nncc::exec::ExecDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "nncc optimizer driver\n", registry));
}
