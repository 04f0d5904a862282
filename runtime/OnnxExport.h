//===- OnnxExport.h - trained weights back into the ONNX model ------------===//
//
// The runtime links no protobuf library: the model is edited in protobuf's
// wire format. ModelProto.graph (field 7) is rewritten with each
// GraphProto.initializer (field 5) whose name is a module state replaced by a
// TensorProto of name, dims, data_type and raw_data holding the session's
// value; every other byte of the model is copied as it is, so frozen
// initializers stay bit-identical.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_ONNXEXPORT_H
#define NNCC_RUNTIME_ONNXEXPORT_H

#include "Session.h"
#include "Status.h"

namespace nncc::rt {

/// Writes `original` (the ONNX model the module was compiled from) to
/// `output` with the session's state as its initializers. A state whose
/// initializer has another dtype or shape is an error naming both.
Status exportOnnx(Session &session, const char *original, const char *output);

} // namespace nncc::rt

#endif // NNCC_RUNTIME_ONNXEXPORT_H
