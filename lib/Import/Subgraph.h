#ifndef NNCC_LIB_IMPORT_SUBGRAPH_H
#define NNCC_LIB_IMPORT_SUBGRAPH_H

#include "onnx/onnx_pb.h"

#include "mlir/IR/ValueRange.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

namespace nncc::import {

/// A subgraph (an If branch, a Loop or Scan body) made a model of its own for
/// one use of it: its formal inputs, then the outer-scope names it reads, are
/// graph inputs typed as the values bound to them (small integer constants
/// among them become initializers, so an unrolled Loop's iteration number
/// folds). Shape inference, foldShapeComputations and inference again give
/// every value inside the static type of this use. `lookup` resolves
/// outer-scope names; `inputs` are bound to the formal inputs in order.
llvm::Expected<onnx::ModelProto>
specializeSubgraph(const onnx::ModelProto &outer, const onnx::GraphProto &graph,
                   llvm::function_ref<mlir::Value(llvm::StringRef)> lookup,
                   mlir::ValueRange inputs);

} // namespace nncc::import

#endif // NNCC_LIB_IMPORT_SUBGRAPH_H
