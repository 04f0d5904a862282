#ifndef NNCC_LIB_IMPORT_HANDLERS_HANDLERUTILS_H
#define NNCC_LIB_IMPORT_HANDLERS_HANDLERUTILS_H

#include "lib/Import/NodeContext.h"

#include "dialects/NN/NNOps.h"
#include "dialects/NN/ShapeUtils.h"

namespace nncc::import {

/// Builds `OpTy` with the generic builder (types, operands, attributes).
template <typename OpTy>
OpTy build(NodeContext &ctx, mlir::TypeRange types, mlir::ValueRange operands,
           llvm::ArrayRef<mlir::NamedAttribute> attrs = {}) {
  return OpTy::create(ctx.builder(), ctx.loc(), types, operands, attrs);
}

inline mlir::NamedAttribute namedAttr(NodeContext &ctx, llvm::StringRef name,
                                      mlir::Attribute value) {
  return ctx.builder().getNamedAttr(name, value);
}
inline mlir::NamedAttribute f64Attr(NodeContext &ctx, llvm::StringRef name, double v) {
  return namedAttr(ctx, name, ctx.builder().getF64FloatAttr(v));
}
inline mlir::NamedAttribute i64Attr(NodeContext &ctx, llvm::StringRef name, int64_t v) {
  return namedAttr(ctx, name, ctx.builder().getI64IntegerAttr(v));
}
inline mlir::NamedAttribute boolAttr(NodeContext &ctx, llvm::StringRef name, bool v) {
  return namedAttr(ctx, name, ctx.builder().getBoolAttr(v));
}
inline mlir::NamedAttribute i64ArrayAttr(NodeContext &ctx, llvm::StringRef name,
                                         llvm::ArrayRef<int64_t> v) {
  return namedAttr(ctx, name, ctx.builder().getDenseI64ArrayAttr(v));
}
inline mlir::NamedAttribute strAttr(NodeContext &ctx, llvm::StringRef name, llvm::StringRef v) {
  return namedAttr(ctx, name, ctx.builder().getStringAttr(v));
}

/// The broadcast type of `a` and `b` with `elementType` (for intermediate
/// results of variadic ops, which shape inference does not see).
mlir::RankedTensorType broadcastType(mlir::Type a, mlir::Type b, mlir::Type elementType);

/// Fails with a message unless input `i` is present.
mlir::LogicalResult requireInputs(NodeContext &ctx, size_t count);

/// Normalizes an axis attribute or fails naming it.
mlir::FailureOr<int64_t> axisAttr(NodeContext &ctx, llvm::StringRef name, int64_t dflt,
                                  int64_t rank);

/// Window attributes shared by Conv, ConvTranspose, the integer
/// convolutions and the pools, with auto_pad resolved into explicit pads.
struct Window {
  llvm::SmallVector<int64_t> kernel, strides, pads, dilations;
};

/// Reads a convolution's window attributes for `kernel`, resolving `auto_pad`
/// for an output of ceil(in / stride) (SAME_*) or taking explicit pads.
mlir::FailureOr<Window> readWindow(NodeContext &ctx, mlir::RankedTensorType input,
                                   llvm::ArrayRef<int64_t> kernel);

/// Reads the window attributes of a pool (kernel given) with auto_pad
/// resolved; returns the explicit pads and fills strides and dilations.
mlir::FailureOr<llvm::SmallVector<int64_t>> poolPads(NodeContext &ctx,
                                                     mlir::RankedTensorType input,
                                                     llvm::ArrayRef<int64_t> kernel,
                                                     llvm::SmallVector<int64_t> &strides,
                                                     llvm::SmallVector<int64_t> &dilations);

/// The row-major linear index into `dims` of each index tuple along the last
/// axis of `indices` (GatherND, ScatterND), negative entries wrapped; i64 of
/// the indices' shape without the last axis.
mlir::Value linearIndex(NodeContext &ctx, mlir::Value indices, llvm::ArrayRef<int64_t> dims);

} // namespace nncc::import

#endif // NNCC_LIB_IMPORT_HANDLERS_HANDLERUTILS_H
