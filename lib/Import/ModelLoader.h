#ifndef NNCC_LIB_IMPORT_MODELLOADER_H
#define NNCC_LIB_IMPORT_MODELLOADER_H

#include "lib/Import/OnnxImport.h"

#include "onnx/onnx_pb.h"

namespace nncc::import {

/// The opset older models are upgraded to with ONNX's version converter when
/// one of their nodes has no handler at the model's own opset.
constexpr int kMinHandlerOpset = 13;
/// The newest opset ONNX 1.12's checker, converter and shape inference know.
constexpr int kMaxOnnxLibOpset = 17;
/// The newest opset the handlers accept.
constexpr int kMaxOpset = 21;

/// A model ready for graph import: parsed, checked, upgraded to
/// kMinHandlerOpset when its ops need it, with `--shape` applied and ONNX
/// shape inference run.
struct LoadedModel {
  onnx::ModelProto proto;
  int opset = 0;
  /// The opset the file declared, before any upgrade.
  int originalOpset = 0;
  /// Folder external data paths are relative to ("" when loading from bytes).
  std::string baseDir;
};

/// Parses and prepares a model. `displayName` names the file in messages.
llvm::Expected<LoadedModel> loadModel(llvm::StringRef bytes, llvm::StringRef displayName,
                                      llvm::StringRef baseDir, const ImportOptions &options);

} // namespace nncc::import

#endif // NNCC_LIB_IMPORT_MODELLOADER_H
