#ifndef NNCC_DIALECTS_NN_NNOPS_H
#define NNCC_DIALECTS_NN_NNOPS_H

#include "dialects/NN/FusionKind.h"
#include "dialects/NN/NNDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/NN/NNInterfaces.h.inc"

#define GET_OP_CLASSES
#include "dialects/NN/NNOps.h.inc"

#endif // NNCC_DIALECTS_NN_NNOPS_H
