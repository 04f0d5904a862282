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
#include "mlir/IR/Remarks.h"

namespace nncc {

/// Fusion decisions are reported as MLIR optimization remarks of this
/// category: `nncc-opt --remarks-filter=nncc-fusion` prints what each
/// fusion pass merged (passed) and why it left an op alone (missed). Remarks
/// work in release builds; `-debug-only` needs an LLVM built with
/// assertions, which Debian's is not.
inline constexpr llvm::StringLiteral kFusionRemarkCategory = "nncc-fusion";

/// The options of a fusion remark named `name` about an op of `func`.
inline mlir::remark::RemarkOpts fusionRemark(llvm::StringRef name, mlir::func::FuncOp func) {
  return mlir::remark::RemarkOpts::name(name).category(kFusionRemarkCategory).function(func.getName());
}

} // namespace nncc

#endif // NNCC_LIB_CONVERSION_NNTOEXEC_PASSDETAIL_H
