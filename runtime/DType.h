//===- DType.h - element types and shapes ---------------------------------===//
#ifndef NNCC_RUNTIME_DTYPE_H
#define NNCC_RUNTIME_DTYPE_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace nncc::rt {

/// "f32", "i64", "bool"...; "?" for a value outside nncc_dtype.
const char *dtypeName(int32_t dtype);
/// Bytes per element; 0 for a value outside nncc_dtype.
size_t dtypeSize(int32_t dtype);

/// "f32[1,64]" (a scalar is "f32[]"): the form every shape error uses.
std::string typeString(int32_t dtype, int32_t rank, const int64_t *dims);

/// Elements of a shape; false when a dim is negative or the product overflows.
bool numElements(int32_t rank, const int64_t *dims, int64_t *out);
/// Bytes of a tensor; false when the dtype is unknown or the size overflows.
bool byteSize(int32_t dtype, int32_t rank, const int64_t *dims, int64_t *out);

/// FNV-1a 64 of a byte range: the module's weight checksum.
uint64_t fnv1a64(const void *data, size_t bytes);

} // namespace nncc::rt

#endif // NNCC_RUNTIME_DTYPE_H
