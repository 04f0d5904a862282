#ifndef NNCC_LIB_CONVERSION_NNTOEXEC_ROWKERNELS_H
#define NNCC_LIB_CONVERSION_NNTOEXEC_ROWKERNELS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace nncc {

/// Reads single elements of the values of a fused region: a kernel argument
/// is read with tensor.extract; an inlined producer (transpose, reshape,
/// elementwise op) is recomputed at the index from its own operands, so its
/// result never exists as a tensor.
class ElementReader {
public:
  ElementReader(llvm::SetVector<mlir::Operation *> inlined, mlir::IRMapping arguments)
      : inlined(std::move(inlined)), arguments(std::move(arguments)) {}

  /// Element `index` of `v` (a value of the region, of static shape).
  mlir::Value read(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                   llvm::ArrayRef<mlir::Value> index) const;

private:
  llvm::SetVector<mlir::Operation *> inlined;
  mlir::IRMapping arguments;
};

/// The producers of `root`'s operands a fused kernel recomputes per element
/// instead of reading: transposes, reshapes, unit-step slices, static splits,
/// f32 <-> f16/bf16 casts and fusible f32 elementwise ops whose every user is
/// `root` or another of them (a value also read elsewhere is computed once,
/// by its own kernel). With `cheapOnly`, only data movement, casts and
/// add/sub/mul join (attention reads each key Sq times). In program order.
llvm::SetVector<mlir::Operation *> inlinableProducers(mlir::Operation *root, bool cheapOnly);

/// True for the ops built as one parallel loop over rows: layer_norm,
/// softmax/log_softmax over the last axis, reduce_mean/reduce_sum over
/// trailing axes, attention (f32, static shapes).
bool isRowKernelRoot(mlir::Operation *op);

/// Builds the kernel of a row root: one scf.forall over the rows (the kept
/// dims; for attention batch x query) whose body does each row's reductions
/// and writes its slice of each of `inits` (one shape: the result and, with
/// a second init, its cast), reading operands through `reader`.
/// `outPerm` (attention only, may be empty) writes the result transposed by
/// that permutation, which must keep the last dim last. An f16/bf16 init
/// gets each f32 result rounded to nearest even as it is written (a fused
/// output cast).
mlir::FailureOr<llvm::SmallVector<mlir::Value>>
buildRowKernel(mlir::OpBuilder &b, mlir::Operation *root, const ElementReader &reader,
               mlir::ValueRange inits, llvm::ArrayRef<int64_t> outPerm = {});

} // namespace nncc

#endif // NNCC_LIB_CONVERSION_NNTOEXEC_ROWKERNELS_H
