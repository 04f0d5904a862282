//===- ExecUtils.h - helpers over exec IR and its buffers -----------------===//
#ifndef NNCC_DIALECTS_EXEC_EXECUTILS_H
#define NNCC_DIALECTS_EXEC_EXECUTILS_H

#include "mlir/IR/Value.h"

#include <cstdint>

namespace nncc::exec {

/// The value `v` views through any chain of exec.view ops: the buffer that
/// holds its bytes.
mlir::Value viewRoot(mlir::Value v);

/// The bytes of a statically shaped tensor or memref `type` as the runtime
/// stores it: an i1 takes one byte.
int64_t bufferBytes(mlir::Type type);

/// Whether `op` is a plan step whose results the planner places: a kernel
/// launch, a GEMM call or a collective (dist::isCollectiveStep).
bool isPlannedStep(mlir::Operation *op);

} // namespace nncc::exec

#endif // NNCC_DIALECTS_EXEC_EXECUTILS_H
