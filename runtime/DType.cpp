//===- DType.cpp ----------------------------------------------------------===//
#include "DType.h"

#include "nncc/module_abi.h"

namespace nncc::rt {

const char *dtypeName(int32_t dtype) {
  switch (dtype) {
  case NNCC_DTYPE_F32: return "f32";
  case NNCC_DTYPE_U8: return "u8";
  case NNCC_DTYPE_I8: return "i8";
  case NNCC_DTYPE_U16: return "u16";
  case NNCC_DTYPE_I16: return "i16";
  case NNCC_DTYPE_I32: return "i32";
  case NNCC_DTYPE_I64: return "i64";
  case NNCC_DTYPE_BOOL: return "bool";
  case NNCC_DTYPE_F16: return "f16";
  case NNCC_DTYPE_F64: return "f64";
  case NNCC_DTYPE_U32: return "u32";
  case NNCC_DTYPE_U64: return "u64";
  case NNCC_DTYPE_BF16: return "bf16";
  default: return "?";
  }
}

size_t dtypeSize(int32_t dtype) { return static_cast<size_t>(nncc_dtype_bytes(dtype)); }

std::string typeString(int32_t dtype, int32_t rank, const int64_t *dims) {
  std::string s = dtypeName(dtype);
  if (dtypeSize(dtype) == 0)
    s += "(" + std::to_string(dtype) + ")";
  s += '[';
  for (int32_t i = 0; i < rank && dims; ++i) {
    if (i)
      s += ',';
    s += std::to_string(dims[i]);
  }
  s += ']';
  return s;
}

bool numElements(int32_t rank, const int64_t *dims, int64_t *out) {
  if (rank < 0 || (rank > 0 && !dims))
    return false;
  int64_t n = 1;
  for (int32_t i = 0; i < rank; ++i) {
    if (dims[i] < 0 || __builtin_mul_overflow(n, dims[i], &n))
      return false;
  }
  *out = n;
  return true;
}

bool byteSize(int32_t dtype, int32_t rank, const int64_t *dims, int64_t *out) {
  int64_t n;
  size_t size = dtypeSize(dtype);
  if (size == 0 || !numElements(rank, dims, &n))
    return false;
  return !__builtin_mul_overflow(n, static_cast<int64_t>(size), out);
}

uint64_t fnv1a64(const void *data, size_t bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  const unsigned char *p = static_cast<const unsigned char *>(data);
  for (size_t i = 0; i < bytes; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

} // namespace nncc::rt
