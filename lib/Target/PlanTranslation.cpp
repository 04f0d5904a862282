/// The plan translation as an mlir-translate registration (nncc-translate).
#include "lib/Target/PlanTranslation.h"

#include "lib/Target/Plan.h"

#include "dialects/Dist/DistOps.h"
#include "dialects/Exec/ExecOps.h"
#include "dialects/NN/NNDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/InitAllDialects.h"
#include "mlir/Tools/mlir-translate/Translation.h"

using namespace mlir;

namespace nncc {

void registerPlanTranslation() {
  TranslateFromMLIRRegistration planToC(
      "nncc-plan-to-c", "the plan C source (plan.c) of an exec module annotated by nncc-plan",
      [](ModuleOp module, llvm::raw_ostream &os) -> LogicalResult {
        auto plan = buildPlan(module);
        if (!plan)
          return module.emitError(llvm::toString(plan.takeError()));
        os << emitPlanSource(*plan, /*weightsFile=*/"");
        return success();
      },
      [](DialectRegistry &registry) {
        // Kernels hold linalg, tensor, arith, math, scf and vector ops.
        registerAllDialects(registry);
        registry.insert<nn::NNDialect, exec::ExecDialect, dist::DistDialect>();
      });
}

} // namespace nncc
