#ifndef NNCC_DIALECTS_EXEC_EXECOPS_H
#define NNCC_DIALECTS_EXEC_EXECOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/Exec/ExecDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Exec/ExecAttrs.h.inc"

#define GET_OP_CLASSES
#include "dialects/Exec/ExecOps.h.inc"

#endif // NNCC_DIALECTS_EXEC_EXECOPS_H
