#ifndef NNCC_LIB_IMPORT_SHARDBATCH_H
#define NNCC_LIB_IMPORT_SHARDBATCH_H

#include "llvm/Support/Error.h"

#include "onnx/onnx_pb.h"

#include <set>
#include <string>

namespace nncc::import {

/// Rewrites `model` (loaded by loadModel: shapes inferred at the global batch
/// `batch`) into the graph one of `ranks` data-parallel ranks runs, where each
/// of the graph inputs named in `batchInputs` holds `batch / ranks` samples
/// along its first dimension.
///
/// A batch-dimension analysis follows, node by node, which dimension of every
/// value holds the batch (as the outermost factor of that dimension, so
/// `[B*S, D]` holds it too). Constant shape operands that carry the global
/// batch where the analysis places it are rewritten for the shard: Reshape's
/// shape, Expand's shape, and the shape of a ConstantOfShape (or Expand of a
/// batch-free value) whose result meets the batch in a broadcast. Each rewrite
/// is checked by evaluating the node at the shard's shapes. A constant shape
/// the analysis cannot prove (its data passed through an op it has no rule
/// for), or a batch-free operand spanning the batch axis, is refused naming
/// the node. Shapes the model records (value_info, the batch dimension of its
/// outputs) are dropped for shape inference to recompute at the shard's batch.
llvm::Error shardBatchConstants(onnx::ModelProto &model, const std::set<std::string> &batchInputs,
                                int64_t batch, int64_t ranks, llvm::StringRef displayName);

} // namespace nncc::import

#endif // NNCC_LIB_IMPORT_SHARDBATCH_H
