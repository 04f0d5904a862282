#ifndef NNCC_LIB_CONVERSION_NNTOEXEC_OUTLINE_H
#define NNCC_LIB_CONVERSION_NNTOEXEC_OUTLINE_H

#include "dialects/Exec/ExecOps.h"
#include "dialects/NN/NNUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

#include <string>

namespace nncc {

using nn::nodeNames;

/// True when every operand and result of `op` is a tensor of static shape.
bool hasStaticShapes(mlir::Operation *op);

/// The public functions of `module`, collected before a pass outlines
/// kernels into it (which would disturb a walk of its body).
llvm::SmallVector<mlir::func::FuncOp> entryFunctions(mlir::ModuleOp module);

/// Builds the body of a kernel from its arguments: `args` (the operands)
/// and `inits` (one destination per result); returns the results.
using KernelBodyFn = llvm::function_ref<mlir::FailureOr<llvm::SmallVector<mlir::Value>>(
    mlir::OpBuilder &, mlir::ValueRange args, mlir::ValueRange inits)>;

/// Creates the kernel `func.func private @k<N>_<suffix>` (N the lowest that
/// `symbols`, the module's table, leaves free) taking `operands` plus one writable init
/// per result type, its body built by `buildBody`, and a launch of it before
/// `at`, named after `at`'s nodes. Fails, leaving no kernel, when the body
/// cannot be built.
mlir::FailureOr<exec::LaunchOp> outlineKernel(mlir::Operation *at, mlir::SymbolTable &symbols,
                                              llvm::StringRef suffix, mlir::ValueRange operands,
                                              mlir::TypeRange resultTypes, KernelBodyFn buildBody);

/// Outlines the nn op `op` into a kernel built by its family's builder
/// (buildKernel) and replaces it with a launch.
mlir::FailureOr<exec::LaunchOp> outlineOp(mlir::Operation *op, mlir::SymbolTable &symbols);

} // namespace nncc

#endif // NNCC_LIB_CONVERSION_NNTOEXEC_OUTLINE_H
