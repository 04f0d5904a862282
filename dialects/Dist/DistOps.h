#ifndef NNCC_DIALECTS_DIST_DISTOPS_H
#define NNCC_DIALECTS_DIST_DISTOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/Dist/DistDialect.h.inc"

#define GET_OP_CLASSES
#include "dialects/Dist/DistOps.h.inc"

#endif // NNCC_DIALECTS_DIST_DISTOPS_H
