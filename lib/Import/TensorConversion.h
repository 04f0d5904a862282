#ifndef NNCC_LIB_IMPORT_TENSORCONVERSION_H
#define NNCC_LIB_IMPORT_TENSORCONVERSION_H

#include "onnx/onnx_pb.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/Error.h"

namespace nncc::import {

/// The MLIR element type of an ONNX TensorProto data type (ONNX's unsigned
/// types become unsigned MLIR integers, bool becomes i1).
llvm::Expected<mlir::Type> convertElementType(int32_t onnxType, mlir::MLIRContext *ctx);

/// The ranked tensor type of an ONNX TypeProto (dim_param and unknown dims
/// become dynamic dims). Fails for non-tensor or unranked types.
llvm::Expected<mlir::RankedTensorType> convertTensorType(const onnx::TypeProto &type,
                                                         mlir::MLIRContext *ctx);

/// The values of a TensorProto (raw_data, typed fields or external data
/// relative to `baseDir`), checked against its dims.
llvm::Expected<mlir::DenseElementsAttr> convertTensor(const onnx::TensorProto &tensor,
                                                      llvm::StringRef baseDir,
                                                      mlir::MLIRContext *ctx);

} // namespace nncc::import

#endif // NNCC_LIB_IMPORT_TENSORCONVERSION_H
