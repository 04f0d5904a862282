#ifndef NNCC_LIB_CONVERSION_NNTOEXEC_LOWPRECISIONCOMPUTE_H
#define NNCC_LIB_CONVERSION_NNTOEXEC_LOWPRECISIONCOMPUTE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace nncc {

/// Rewrites every nn op of `func` that computes on f16/bf16 values as the
/// same op on f32 between casts (constants converted at compile time), so
/// each op computes and accumulates in f32 and rounds to nearest even once
/// per result. Ops that only move or select elements keep the low type, and
/// so do the ops `isLibraryCall` accepts (GEMM library calls take f16/bf16
/// operands and accumulate in f32 themselves); a convolution among them
/// gives up its bias to an add, which is computed in f32.
void computeLowPrecisionInF32(mlir::func::FuncOp func,
                              llvm::function_ref<bool(mlir::Operation *)> isLibraryCall);

} // namespace nncc

#endif // NNCC_LIB_CONVERSION_NNTOEXEC_LOWPRECISIONCOMPUTE_H
