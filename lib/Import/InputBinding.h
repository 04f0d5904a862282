#ifndef NNCC_LIB_IMPORT_INPUTBINDING_H
#define NNCC_LIB_IMPORT_INPUTBINDING_H

#include "lib/Import/OnnxImport.h"

#include "onnx/onnx_pb.h"

namespace nncc::import {

/// Turns each graph input named in `options.boundInputs` into an initializer
/// holding the TensorProto read from its file (`--bind-input NAME=FILE.pb`),
/// so shape inputs fed at run time in ONNX become compile-time constants.
llvm::Error bindInputs(onnx::ModelProto &model, llvm::StringRef displayName,
                       const ImportOptions &options);

/// Code generation needs every graph input's dims: fails listing each input
/// still dynamic after --shape and the --shape flags to add (its declared
/// dims, each dynamic one 1). Runs before shape inference and the version
/// converter, which fail less clearly on such inputs.
llvm::Error checkStaticInputs(const onnx::GraphProto &graph);

} // namespace nncc::import

#endif // NNCC_LIB_IMPORT_INPUTBINDING_H
