#ifndef NNCC_LIB_CONVERSION_DISTTOEXEC_PASSES_H
#define NNCC_LIB_CONVERSION_DISTTOEXEC_PASSES_H

#include "dialects/Dist/DistOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace nncc {

#define GEN_PASS_DECL
#include "lib/Conversion/DistToExec/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "lib/Conversion/DistToExec/Passes.h.inc"

} // namespace nncc

#endif // NNCC_LIB_CONVERSION_DISTTOEXEC_PASSES_H
