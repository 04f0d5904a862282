//===- FoldShapes.h - shape computations folded once --shape is bound ----===//
//
// Exporters compute sizes from the model's inputs at run time (BERT slices
// its position ids by the sequence length: Shape -> Gather -> Unsqueeze ->
// Slice). Once --shape fixes the input dims, those computations are
// constants; ONNX's shape inference does not see through all of them, so the
// ops downstream keep unknown ranks or dims. foldShapeComputations evaluates
// them on the ONNX graph (small integer tensors only) and turns each into a
// Constant node; shape inference then runs again and gives the downstream
// ops their static shapes.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_LIB_IMPORT_FOLDSHAPES_H
#define NNCC_LIB_IMPORT_FOLDSHAPES_H

#include "onnx/onnx_pb.h"

namespace nncc::import {

/// Replaces every node computing a small integer tensor from constants and
/// static shapes (Shape, Size, Gather, Unsqueeze, Squeeze, Concat, Slice,
/// Cast, Add, Sub, Mul, Div, Range-free arithmetic) by a Constant node of its
/// value. Returns how many nodes it replaced.
int foldShapeComputations(onnx::ModelProto &model);

} // namespace nncc::import

#endif // NNCC_LIB_IMPORT_FOLDSHAPES_H
