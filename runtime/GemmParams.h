//===- GemmParams.h - a GEMM step's parameters, decoded -------------------===//
//
// NNCC_STEP_GEMM carries 12 to 17 iparams (module_abi.h); the verifier, the
// CPU executor and the CUDA executor all read them through this one struct so
// the defaults of the optional trailing ones live in one place.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_GEMMPARAMS_H
#define NNCC_RUNTIME_GEMMPARAMS_H

#include "nncc/module_abi.h"

#include <cstdint>

namespace nncc::rt {

enum class GemmActivation : int64_t { None = 0, Relu = 1, Gelu = 2 };

struct GemmParams {
  int64_t batch, m, n, k;
  bool transA, transB;
  int64_t lda, ldb, ldc;
  int64_t strideA, strideB, strideC; // elements; 0 broadcasts
  int32_t dtypeA = NNCC_DTYPE_F32, dtypeB = NNCC_DTYPE_F32, dtypeC = NNCC_DTYPE_F32;
  bool allowTf32 = false;
  int64_t activation = 0; // GemmActivation; checked by the verifier
  bool hasBias = false;   // args[3]: N elements of dtypeC
  float alpha = 1, beta = 0;

  /// Anything beyond the plain f32 sgemm of ABI v1.
  bool plainF32() const {
    return dtypeA == NNCC_DTYPE_F32 && dtypeB == NNCC_DTYPE_F32 && dtypeC == NNCC_DTYPE_F32 &&
           !hasBias && activation == 0;
  }
  /// Rows and columns of A, B as stored (row-major, before the transpose).
  int64_t aRows() const { return transA ? k : m; }
  int64_t aCols() const { return transA ? m : k; }
  int64_t bRows() const { return transB ? n : k; }
  int64_t bCols() const { return transB ? k : n; }
};

/// Decodes a GEMM step (the verifier has checked the counts: >= 12 iparams,
/// >= 2 fparams).
inline GemmParams decodeGemm(const nncc_step &st) {
  const int64_t *p = st.iparams;
  GemmParams g;
  g.batch = p[0];
  g.m = p[1];
  g.n = p[2];
  g.k = p[3];
  g.transA = p[4] != 0;
  g.transB = p[5] != 0;
  g.lda = p[6];
  g.ldb = p[7];
  g.ldc = p[8];
  g.strideA = p[9];
  g.strideB = p[10];
  g.strideC = p[11];
  int32_t n = st.num_iparams;
  if (n > 12)
    g.dtypeA = static_cast<int32_t>(p[12]);
  if (n > 13)
    g.dtypeB = static_cast<int32_t>(p[13]);
  if (n > 14)
    g.dtypeC = static_cast<int32_t>(p[14]);
  if (n > 15)
    g.allowTf32 = p[15] != 0;
  if (n > 16)
    g.activation = p[16];
  g.hasBias = st.num_args > 3;
  g.alpha = static_cast<float>(st.fparams[0]);
  g.beta = static_cast<float>(st.fparams[1]);
  return g;
}

/// Elements a strided matrix operand spans: rows x cols with leading
/// dimension ld, `batch` times `stride` apart. False on overflow.
inline bool matrixSpan(int64_t batch, int64_t rows, int64_t cols, int64_t ld, int64_t stride,
                       int64_t *out) {
  if (batch == 0 || rows == 0 || cols == 0) {
    *out = 0;
    return true;
  }
  int64_t a, b, c;
  if (__builtin_mul_overflow(batch - 1, stride, &a) || __builtin_mul_overflow(rows - 1, ld, &b) ||
      __builtin_add_overflow(a, b, &c) || __builtin_add_overflow(c, cols, out))
    return false;
  return true;
}

} // namespace nncc::rt

#endif // NNCC_RUNTIME_GEMMPARAMS_H
