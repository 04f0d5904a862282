#ifndef NNCC_LIB_CONVERSION_NNTOEXEC_LINALGUTILS_H
#define NNCC_LIB_CONVERSION_NNTOEXEC_LINALGUTILS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

#include <functional>

namespace nncc {

using ScalarBody =
    std::function<mlir::Value(mlir::OpBuilder &, mlir::Location, mlir::ValueRange)>;

/// The map reading an operand of `inShape` inside the iteration space of
/// `outShape` under numpy broadcasting (size-1 dims read index 0).
mlir::AffineMap broadcastMap(mlir::MLIRContext *ctx, llvm::ArrayRef<int64_t> inShape,
                             llvm::ArrayRef<int64_t> outShape);

/// A parallel linalg.generic over `init`'s shape reading `inputs` with
/// broadcasting; `body` maps the input scalars to the output scalar.
mlir::Value broadcastGeneric(mlir::OpBuilder &b, mlir::Location loc, mlir::ValueRange inputs,
                             mlir::Value init, const ScalarBody &body);

/// A linalg.generic with explicit maps and iterator types; `body` gets the
/// input scalars then the output scalars, returns the yielded values.
llvm::SmallVector<mlir::Value>
generic(mlir::OpBuilder &b, mlir::Location loc, mlir::ValueRange inputs, mlir::ValueRange inits,
        llvm::ArrayRef<mlir::AffineMap> maps, llvm::ArrayRef<mlir::utils::IteratorType> iterators,
        const std::function<llvm::SmallVector<mlir::Value>(mlir::OpBuilder &, mlir::Location,
                                                           mlir::ValueRange)> &body);

/// A scalar constant of `type` (float or integer).
mlir::Value scalarConstant(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type, double value);

/// An `index` constant.
mlir::Value indexConstant(mlir::OpBuilder &b, mlir::Location loc, int64_t value);

/// x + y and x * y of float or integer scalars.
mlir::Value addScalars(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value y);
mlir::Value mulScalars(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value y);

/// Clamps an index into [0, size) (reads of masked-out positions stay in bounds).
mlir::Value clampIndex(mlir::OpBuilder &b, mlir::Location loc, mlir::Value i, int64_t size);

/// linalg.fill of `init` with `value`.
mlir::Value fill(mlir::OpBuilder &b, mlir::Location loc, mlir::Value init, mlir::Value value);

/// `x` [N, C, spatial...] with its spatial dims padded by ONNX `pads`
/// (begins then ends) with `value`: window kernels then read it through plain
/// affine maps, with no bounds check or select per element.
mlir::Value padSpatial(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                       llvm::ArrayRef<int64_t> pads, mlir::Value value);

/// ONNX `pads` (begins then ends) of a window op with each end raised as far
/// as the last window reaches (ceil_mode pools read past the end pad): the
/// padding padSpatial needs so that no window reads outside it.
llvm::SmallVector<int64_t> coveringPads(llvm::ArrayRef<int64_t> pads, llvm::ArrayRef<int64_t> inShape,
                                        llvm::ArrayRef<int64_t> outShape, llvm::ArrayRef<int64_t> kernel,
                                        llvm::ArrayRef<int64_t> strides, llvm::ArrayRef<int64_t> dilations);

/// `t` with its box at `offsets` of `sizes` (nothing when empty) set to
/// `value`, in place.
mlir::Value fillBox(mlir::OpBuilder &b, mlir::Location loc, mlir::Value t, llvm::ArrayRef<int64_t> offsets,
                    llvm::ArrayRef<int64_t> sizes, mlir::Value value);

/// `init` [N, C, H + pads[0] + pads[2], W + pads[1] + pads[3]] with zeros
/// around its interior [N, C, H, W] at (pads[0], pads[1]) (`interior`: that
/// shape), which is left as it was.
mlir::Value zeroBorder(mlir::OpBuilder &b, mlir::Location loc, mlir::Value init, llvm::ArrayRef<int64_t> interior,
                       llvm::ArrayRef<int64_t> pads);

/// The interior [N, C, H, W] (`interior`: that shape) of `framed` [N, C,
/// H + pads[0] + pads[2], W + pads[1] + pads[3]], at (pads[0], pads[1]).
mlir::Value extractInterior(mlir::OpBuilder &b, mlir::Location loc, mlir::Value framed,
                            llvm::ArrayRef<int64_t> interior, llvm::ArrayRef<int64_t> pads);
/// `x` [N, C, H, W] written into that interior of `framed`.
mlir::Value insertInterior(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value framed,
                           llvm::ArrayRef<int64_t> pads);

/// `x` [N, C, H, W] into `init` [N, C, H + pads[0] + pads[2], W + pads[1] +
/// pads[3]] at (pads[0], pads[1]), zeros around it: each element of `init`
/// written once (zeros on the border only, not a fill of the whole copy
/// that the input then overwrites).
mlir::Value copyWithZeroBorder(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value init,
                               llvm::ArrayRef<int64_t> pads);

/// The coordinates of `index` in a row-major `grid` (the last dim fastest):
/// the tile a task of a one-dimensional scf.forall over the grid computes.
llvm::SmallVector<mlir::Value> gridCoordinates(mlir::OpBuilder &b, mlir::Location loc, mlir::Value index,
                                               llvm::ArrayRef<int64_t> grid);

/// An empty tensor of `shape` and `elementType`.
mlir::Value emptyTensor(mlir::OpBuilder &b, mlir::Location loc, llvm::ArrayRef<int64_t> shape,
                        mlir::Type elementType);

/// The lowest/highest value of a float or integer type (for max/min identities).
mlir::Value lowestValue(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type, bool isUnsigned);
mlir::Value highestValue(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type, bool isUnsigned);

/// Converts a scalar between element types with ONNX Cast semantics.
mlir::Value castScalar(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v, mlir::Type from,
                       bool fromUnsigned, mlir::Type to, bool toUnsigned);

/// True when `t`'s element type is an unsigned integer (before signless conversion).
bool isUnsignedElement(mlir::Type t);

} // namespace nncc

#endif // NNCC_LIB_CONVERSION_NNTOEXEC_LINALGUTILS_H
