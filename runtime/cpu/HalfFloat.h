//===- HalfFloat.h - f16 and bf16 <-> f32 conversions ---------------------===//
//
// The CPU GEMM computes low-precision operands in f32 (a BLAS has no f16 or
// bf16 sgemm): operands are widened exactly, the result is rounded once to
// nearest even, as module_abi.h specifies for NNCC_STEP_GEMM.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_CPU_HALFFLOAT_H
#define NNCC_RUNTIME_CPU_HALFFLOAT_H

#include <cstdint>
#include <cstring>

namespace nncc::rt {

inline float bitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline uint32_t floatToBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

inline float bf16ToFloat(uint16_t h) { return bitsToFloat(uint32_t(h) << 16); }

/// Round to nearest even; NaN stays a (quiet) NaN.
inline uint16_t floatToBf16(float f) {
  uint32_t u = floatToBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1);
  return static_cast<uint16_t>(u >> 16);
}

inline float f16ToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0x1f) // inf / NaN
    return bitsToFloat(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) { // zero / subnormal: mant * 2^-24
    float v = static_cast<float>(mant) * bitsToFloat(0x33800000u);
    return sign ? -v : v;
  }
  return bitsToFloat(sign | ((exp + 112) << 23) | (mant << 13));
}

/// Round to nearest even, overflow to infinity, NaN stays a (quiet) NaN.
inline uint16_t floatToF16(float f) {
  uint32_t u = floatToBits(f);
  uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000);
  uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u)
    return sign | 0x7e00;
  if (abs >= 0x477ff000u) // rounds to >= 65520: infinity
    return sign | 0x7c00;
  if (abs < 0x38800000u) { // below 2^-14: subnormal f16 (or zero)
    // Adding 0.5 (2^-1) aligns the f16 subnormal step 2^-24 to the f32 ulp
    // of the sum, so the FPU's own rounding is round-to-nearest-even.
    float v = bitsToFloat(abs) + 0.5f;
    return sign | static_cast<uint16_t>(floatToBits(v) - 0x3f000000u);
  }
  uint32_t mantOdd = (abs >> 13) & 1;
  abs += 0xc8000fffu + mantOdd; // rebias the exponent (-112 << 23) and round
  return sign | static_cast<uint16_t>(abs >> 13);
}

} // namespace nncc::rt

#endif // NNCC_RUNTIME_CPU_HALFFLOAT_H
