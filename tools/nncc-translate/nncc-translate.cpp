/// nncc-translate: nncc's translations out of MLIR, for lit tests.
#include "lib/Target/PlanTranslation.h"

#include "mlir/Support/LogicalResult.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  nncc::registerPlanTranslation();
  return mlir::failed(mlir::mlirTranslateMain(argc, argv, "nncc translation tool\n")) ? 1 : 0;
}
