#ifndef NNCC_LIB_CONVERSION_NNTOEXEC_LOWPRECISIONCOMPUTE_H
#define NNCC_LIB_CONVERSION_NNTOEXEC_LOWPRECISIONCOMPUTE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace nncc {

/// Rewrites every nn op of `func` that computes on f16/bf16 values as the
/// same op on f32 between casts (constants converted at compile time), so
/// each op computes and accumulates in f32 and rounds to nearest even once
/// per result. Ops that only move or select elements keep the low type.
void computeLowPrecisionInF32(mlir::func::FuncOp func);

} // namespace nncc

#endif // NNCC_LIB_CONVERSION_NNTOEXEC_LOWPRECISIONCOMPUTE_H
