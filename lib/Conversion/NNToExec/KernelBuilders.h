#ifndef NNCC_LIB_CONVERSION_NNTOEXEC_KERNELBUILDERS_H
#define NNCC_LIB_CONVERSION_NNTOEXEC_KERNELBUILDERS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"

namespace nncc {

/// Builds the linalg body of a kernel computing `op` (an nn op) from `args`
/// (the kernel's tensor arguments, in the op's operand order, with signless
/// element types) into `inits` (one destination tensor per result). Returns
/// the results, or fails with a diagnostic on `op` when no lowering exists.
mlir::FailureOr<llvm::SmallVector<mlir::Value>>
buildKernel(mlir::OpBuilder &b, mlir::Operation *op, mlir::ValueRange args,
            mlir::ValueRange inits);

/// The same tensor type with unsigned integers made signless (arith and
/// linalg work on signless integers; signedness is read from the nn op).
mlir::Type toSignless(mlir::Type type);

/// True for nn ops that compute element i of their result from element i of
/// their (numpy-broadcast) operands: they can share one fused kernel.
bool isFusibleElementwise(mlir::Operation *op);

/// The scalar computation of a fusible elementwise op on operand scalars
/// (signless element types; signedness is read from the op).
mlir::FailureOr<mlir::Value> buildElementwiseScalar(mlir::OpBuilder &b, mlir::Location loc,
                                                    mlir::Operation *op, mlir::ValueRange scalars);

namespace kernels {
// One builder per family; each returns failure() (without a diagnostic) when
// `op` is not of its family, and emits a diagnostic when it is but cannot be
// lowered.
mlir::FailureOr<llvm::SmallVector<mlir::Value>>
buildElementwise(mlir::OpBuilder &b, mlir::Operation *op, mlir::ValueRange args,
                 mlir::ValueRange inits, bool &matched);
mlir::FailureOr<llvm::SmallVector<mlir::Value>>
buildReduction(mlir::OpBuilder &b, mlir::Operation *op, mlir::ValueRange args,
               mlir::ValueRange inits, bool &matched);
mlir::FailureOr<llvm::SmallVector<mlir::Value>>
buildDataMovement(mlir::OpBuilder &b, mlir::Operation *op, mlir::ValueRange args,
                  mlir::ValueRange inits, bool &matched);
mlir::FailureOr<llvm::SmallVector<mlir::Value>>
buildWindow(mlir::OpBuilder &b, mlir::Operation *op, mlir::ValueRange args,
            mlir::ValueRange inits, bool &matched);
} // namespace kernels

} // namespace nncc

#endif // NNCC_LIB_CONVERSION_NNTOEXEC_KERNELBUILDERS_H
