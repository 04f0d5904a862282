#ifndef NNCC_LIB_IMPORT_MODELVALIDATION_H
#define NNCC_LIB_IMPORT_MODELVALIDATION_H

/// Checks that stand between a parsed model and libonnx 1.12: its checker,
/// shape inference and version converter read past buffers, divide by zero
/// or follow null pointers on some malformed models instead of reporting
/// them. These checks reject such models first, with messages that name the
/// tensor or node at fault.

#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace nncc::import {

/// Rejects main graphs that are not in single static assignment form (a name
/// defined twice, a graph input or output listed twice), for every opset, and
/// what makes libonnx 1.12 crash before shape inference can report it:
/// tensors (initializers and tensor attributes, in subgraphs too) whose raw
/// data does not match their shape and type, main-graph outputs nothing
/// produces, and conv/pool nodes with zero or negative strides, dilations or
/// kernel_shape. Errors are "<file>: <what is wrong>".
llvm::Error validateModel(const onnx::ModelProto &model, llvm::StringRef file);

/// Rejects what makes onnx::version_conversion::ConvertVersion crash when it
/// upgrades from `opset`; runs after shape inference, whose ranks it reads.
/// Today: Gemm before opset 7 with an input of known rank other than 2.
llvm::Error validateForUpgrade(const onnx::ModelProto &model, int opset, llvm::StringRef file);

/// The schema registry to hand onnx::shape_inference::InferShapes: ONNX's own,
/// except that shapes are not inferred for nodes whose inference function
/// would crash (conv/pool ops with non-positive strides, dilations or
/// kernel_shape, or input and weight of different ranks; Gemm before opset 7
/// with inputs that are not matrices; ConstantOfShape, Expand, Reshape and
/// Resize whose shape input is longer than kMaxRank). Such nodes get element
/// types only; the op handlers or validateForUpgrade report them by name.
const onnx::ISchemaRegistry *shapeInferenceSchemas();

} // namespace nncc::import

#endif // NNCC_LIB_IMPORT_MODELVALIDATION_H
