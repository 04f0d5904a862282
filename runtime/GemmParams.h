//===- GemmParams.h - a GEMM step's parameters, decoded -------------------===//
//
// NNCC_STEP_GEMM carries NNCC_GEMM_REQUIRED_IPARAMS to NNCC_GEMM_MAX_IPARAMS
// iparams (module_abi.h); the verifier, the CPU executor and the CUDA executor
// all read them through this one struct so the defaults of the optional
// trailing ones live in one place.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_GEMMPARAMS_H
#define NNCC_RUNTIME_GEMMPARAMS_H

#include "nncc/module_abi.h"

#include <cstdint>

namespace nncc::rt {

struct GemmParams {
  int64_t batch, m, n, k;
  bool transA, transB;
  int64_t lda, ldb, ldc;
  int64_t strideA, strideB, strideC; // elements; 0 broadcasts
  int32_t dtypeA = NNCC_DTYPE_F32, dtypeB = NNCC_DTYPE_F32, dtypeC = NNCC_DTYPE_F32;
  bool allowTf32 = false;
  int64_t activation = NNCC_ACTIVATION_NONE; // nncc_activation; checked by the verifier
  bool hasBias = false;   // args[3]: biasCount() elements of dtypeC
  bool biasPerRow = false; // one bias value per row of C (M), not per column (N)
  float alpha = 1, beta = 0;
  float clipMin = 0, clipMax = 0; // NNCC_ACTIVATION_CLIP's bounds

  /// Anything beyond the plain f32 sgemm of ABI v1.
  bool plainF32() const {
    return dtypeA == NNCC_DTYPE_F32 && dtypeB == NNCC_DTYPE_F32 && dtypeC == NNCC_DTYPE_F32 &&
           !hasBias && activation == NNCC_ACTIVATION_NONE;
  }
  int64_t biasCount() const { return biasPerRow ? m : n; }
  /// Rows and columns of A, B as stored (row-major, before the transpose).
  int64_t aRows() const { return transA ? k : m; }
  int64_t aCols() const { return transA ? m : k; }
  int64_t bRows() const { return transB ? n : k; }
  int64_t bCols() const { return transB ? k : n; }
};

/// Decodes a GEMM step (the verifier has checked the counts: at least
/// NNCC_GEMM_REQUIRED_IPARAMS iparams and NNCC_GEMM_NUM_FPARAMS fparams).
inline GemmParams decodeGemm(const nncc_step &st) {
  const int64_t *p = st.iparams;
  GemmParams g;
  g.batch = p[NNCC_GEMM_BATCH];
  g.m = p[NNCC_GEMM_M];
  g.n = p[NNCC_GEMM_N];
  g.k = p[NNCC_GEMM_K];
  g.transA = p[NNCC_GEMM_TRANS_A] != 0;
  g.transB = p[NNCC_GEMM_TRANS_B] != 0;
  g.lda = p[NNCC_GEMM_LDA];
  g.ldb = p[NNCC_GEMM_LDB];
  g.ldc = p[NNCC_GEMM_LDC];
  g.strideA = p[NNCC_GEMM_STRIDE_A];
  g.strideB = p[NNCC_GEMM_STRIDE_B];
  g.strideC = p[NNCC_GEMM_STRIDE_C];
  int32_t n = st.num_iparams;
  if (n > NNCC_GEMM_DTYPE_A)
    g.dtypeA = static_cast<int32_t>(p[NNCC_GEMM_DTYPE_A]);
  if (n > NNCC_GEMM_DTYPE_B)
    g.dtypeB = static_cast<int32_t>(p[NNCC_GEMM_DTYPE_B]);
  if (n > NNCC_GEMM_DTYPE_C)
    g.dtypeC = static_cast<int32_t>(p[NNCC_GEMM_DTYPE_C]);
  if (n > NNCC_GEMM_ALLOW_TF32)
    g.allowTf32 = p[NNCC_GEMM_ALLOW_TF32] != 0;
  if (n > NNCC_GEMM_ACTIVATION)
    g.activation = p[NNCC_GEMM_ACTIVATION];
  if (n > NNCC_GEMM_BIAS_PER_ROW)
    g.biasPerRow = p[NNCC_GEMM_BIAS_PER_ROW] != 0;
  g.hasBias = st.num_args > 3;
  g.alpha = static_cast<float>(st.fparams[NNCC_GEMM_ALPHA]);
  g.beta = static_cast<float>(st.fparams[NNCC_GEMM_BETA]);
  if (st.num_fparams >= NNCC_GEMM_NUM_CLIP_FPARAMS) {
    g.clipMin = static_cast<float>(st.fparams[NNCC_GEMM_CLIP_MIN]);
    g.clipMax = static_cast<float>(st.fparams[NNCC_GEMM_CLIP_MAX]);
  }
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
