//===- Npy.h - numpy .npy files ------------------------------------------===//
//
// `nncc-run --train --data DIR` reads one .npy per model input and labels
// (numpy's format 1.0/2.0/3.0: the magic, a header dict with descr,
// fortran_order and shape, then the raw little-endian elements). Every read
// is bounds-checked; a malformed or unsupported file is an error naming it.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_TOOLS_NPY_H
#define NNCC_RUNTIME_TOOLS_NPY_H

#include "TensorProto.h"

#include <string>

namespace nncc::tools {

/// Parses the bytes of a .npy file into `out` (dtype an ONNX/nncc dtype:
/// f4 f8 f2 i1 i2 i4 i8 u1 u2 u4 u8 b1, little-endian or byte-sized; C
/// order). On failure returns false and sets *error (without the file name).
bool parseNpy(const uint8_t *bytes, size_t size, HostTensor *out, std::string *error);

/// Reads and parses a file; errors start with the file name.
bool readNpyFile(const std::string &path, HostTensor *out, std::string *error);

} // namespace nncc::tools

#endif // NNCC_RUNTIME_TOOLS_NPY_H
