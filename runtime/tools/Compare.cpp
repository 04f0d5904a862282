//===- Compare.cpp --------------------------------------------------------===//
#include "Compare.h"

#include "nncc/runtime.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace nncc::tools {

namespace {

float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else { // subnormal: normalize
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while (!(mant & 0x400));
      bits = sign | uint32_t(127 - 15 - e) << 23 | (mant & 0x3ff) << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | mant << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | mant << 13;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

template <typename T> T load(const void *data, int64_t i) {
  T v;
  std::memcpy(&v, static_cast<const uint8_t *>(data) + i * sizeof(T), sizeof(T));
  return v;
}

bool isFloat(int32_t dtype) {
  return dtype == NNCC_DTYPE_F32 || dtype == NNCC_DTYPE_F64 || dtype == NNCC_DTYPE_F16 ||
         dtype == NNCC_DTYPE_BF16;
}

std::string typeString(int32_t dtype, const std::vector<int64_t> &dims) {
  std::string s = nncc_dtype_name(dtype);
  s += '[';
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? "," : "") + std::to_string(dims[i]);
  return s + ']';
}

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

} // namespace

double elementAsDouble(int32_t dtype, const void *data, int64_t i) {
  switch (dtype) {
  case NNCC_DTYPE_F32: return load<float>(data, i);
  case NNCC_DTYPE_F64: return load<double>(data, i);
  case NNCC_DTYPE_F16: return halfToFloat(load<uint16_t>(data, i));
  case NNCC_DTYPE_BF16: {
    uint32_t bits = uint32_t(load<uint16_t>(data, i)) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  case NNCC_DTYPE_I8: return load<int8_t>(data, i);
  case NNCC_DTYPE_U8:
  case NNCC_DTYPE_BOOL: return load<uint8_t>(data, i);
  case NNCC_DTYPE_I16: return load<int16_t>(data, i);
  case NNCC_DTYPE_U16: return load<uint16_t>(data, i);
  case NNCC_DTYPE_I32: return load<int32_t>(data, i);
  case NNCC_DTYPE_U32: return load<uint32_t>(data, i);
  case NNCC_DTYPE_I64: return static_cast<double>(load<int64_t>(data, i));
  case NNCC_DTYPE_U64: return static_cast<double>(load<uint64_t>(data, i));
  default: return 0;
  }
}

std::string formatIndex(const std::vector<int64_t> &dims, int64_t flat) {
  std::vector<int64_t> idx(dims.size());
  for (size_t k = dims.size(); k-- > 0;) {
    if (dims[k] > 0) {
      idx[k] = flat % dims[k];
      flat /= dims[k];
    }
  }
  std::string s = "[";
  for (size_t k = 0; k < idx.size(); ++k)
    s += (k ? "," : "") + std::to_string(idx[k]);
  return s + "]";
}

CompareResult compareTensors(const TensorView &got, const TensorView &expected, double rtol,
                             double atol) {
  CompareResult r;
  if (got.dtype != expected.dtype || got.dims != expected.dims) {
    r.ok = false;
    r.message = "expected " + typeString(expected.dtype, expected.dims) + ", got " +
                typeString(got.dtype, got.dims);
    return r;
  }
  int64_t n = 1;
  for (int64_t d : got.dims)
    n *= d;
  size_t elem = nncc_dtype_size(got.dtype);
  bool floating = isFloat(got.dtype);
  for (int64_t i = 0; i < n; ++i) {
    double a = elementAsDouble(got.dtype, got.data, i);
    double b = elementAsDouble(expected.dtype, expected.data, i);
    bool match;
    if (!floating) {
      // Exact, on the bits: doubles cannot hold every 64-bit integer.
      match = std::memcmp(static_cast<const uint8_t *>(got.data) + i * elem,
                          static_cast<const uint8_t *>(expected.data) + i * elem, elem) == 0;
    } else if (std::isnan(a) || std::isnan(b)) {
      match = std::isnan(a) && std::isnan(b);
    } else if (std::isinf(a) || std::isinf(b)) {
      match = a == b;
    } else {
      match = std::fabs(a - b) <= atol + rtol * std::fabs(b);
    }
    if (!std::isnan(a) && !std::isnan(b) && !std::isinf(a) && !std::isinf(b)) {
      double abs = std::fabs(a - b);
      r.maxAbsError = std::max(r.maxAbsError, abs);
      if (b != 0)
        r.maxRelError = std::max(r.maxRelError, abs / std::fabs(b));
      else if (abs > 0)
        r.maxRelError = INFINITY;
    }
    if (!match) {
      if (r.mismatches++ == 0) {
        r.firstMismatch = i;
        r.firstGot = a;
        r.firstExpected = b;
      }
    }
  }
  if (r.mismatches) {
    r.ok = false;
    r.message = std::to_string(r.mismatches) + " of " + std::to_string(n) +
                " elements differ; first at index " + formatIndex(got.dims, r.firstMismatch) +
                " (flat " + std::to_string(r.firstMismatch) + "): got " + num(r.firstGot) +
                ", expected " + num(r.firstExpected);
  }
  return r;
}

} // namespace nncc::tools
