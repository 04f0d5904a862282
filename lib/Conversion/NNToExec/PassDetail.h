#ifndef NNCC_LIB_CONVERSION_NNTOEXEC_PASSDETAIL_H
#define NNCC_LIB_CONVERSION_NNTOEXEC_PASSDETAIL_H

/// The dialects the passes of Passes.td load (their kernels' dialects), for
/// the pass definitions (GEN_PASS_DEF_...).
#include "lib/Conversion/NNToExec/Passes.h"

#include "dialects/Exec/ExecOps.h"
#include "dialects/NN/NNDialect.h"
#include "dialects/NN/NNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#endif // NNCC_LIB_CONVERSION_NNTOEXEC_PASSDETAIL_H
