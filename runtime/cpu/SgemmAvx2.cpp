//===- SgemmAvx2.cpp - the 6 x 16 AVX2 + FMA micro-kernel -----------------===//
//
// As SgemmAvx512.cpp: target("avx2,fma") on every function, handed out only
// after CPUID said avx2 and fma.
//
//===----------------------------------------------------------------------===//
#include "Sgemm.h"

#include "nncc/module_abi.h"

#include <utility>

#if defined(__x86_64__)
#include <immintrin.h>

#define NNCC_AVX2 __attribute__((target("avx2,fma"), always_inline)) inline
#define NNCC_AVX2_FN __attribute__((target("avx2,fma")))

namespace nncc::rt {
namespace {

constexpr int kMr = 6, kNr = 16;

/// Lanes [8 - n, 16 - n) of this table enable the first n of 8 lanes.
alignas(64) constexpr int32_t kMaskTable[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                                0,  0,  0,  0,  0,  0,  0,  0};

/// e^x for x <= 0 (Cephes' expf, as SgemmAvx512.cpp).
NNCC_AVX2 __m256 expNeg(__m256 x) {
  x = _mm256_max_ps(x, _mm256_set1_ps(-87.0f));
  __m256 fx = _mm256_fmadd_ps(x, _mm256_set1_ps(1.44269504088896341f), _mm256_set1_ps(0.5f));
  fx = _mm256_floor_ps(fx);
  x = _mm256_fnmadd_ps(fx, _mm256_set1_ps(0.693359375f), x);
  x = _mm256_fnmadd_ps(fx, _mm256_set1_ps(-2.12194440e-4f), x);
  __m256 y = _mm256_set1_ps(1.9875691500e-4f);
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.3981999507e-3f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(8.3334519073e-3f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(4.1665795894e-2f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.6666665459e-1f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(5.0000001201e-1f));
  y = _mm256_fmadd_ps(y, _mm256_mul_ps(x, x), _mm256_add_ps(x, _mm256_set1_ps(1.0f)));
  __m256i n = _mm256_add_epi32(_mm256_cvtps_epi32(fx), _mm256_set1_epi32(127));
  return _mm256_mul_ps(y, _mm256_castsi256_ps(_mm256_slli_epi32(n, 23)));
}

/// GELU with erf (Abramowitz & Stegun 7.1.26, as SgemmAvx512.cpp).
NNCC_AVX2 __m256 gelu(__m256 v) {
  __m256 absv = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v);
  __m256 x = _mm256_mul_ps(absv, _mm256_set1_ps(0.70710678118654752f));
  __m256 t = _mm256_div_ps(_mm256_set1_ps(1.0f),
                           _mm256_fmadd_ps(x, _mm256_set1_ps(0.3275911f), _mm256_set1_ps(1.0f)));
  __m256 p = _mm256_set1_ps(1.061405429f);
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-1.453152027f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(1.421413741f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-0.284496736f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.254829592f));
  p = _mm256_mul_ps(p, t);
  __m256 e = _mm256_mul_ps(p, expNeg(_mm256_sub_ps(_mm256_setzero_ps(), _mm256_mul_ps(x, x))));
  __m256 pos = _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_GE_OQ);
  __m256 s = _mm256_blendv_ps(e, _mm256_sub_ps(_mm256_set1_ps(2.0f), e), pos);
  return _mm256_mul_ps(_mm256_mul_ps(v, _mm256_set1_ps(0.5f)), s);
}

NNCC_AVX2 void finish(const SgemmTile &t, __m256 acc, float *c, const float *bias,
                      const float *rowBias, __m256i mask) {
  __m256 v = _mm256_mul_ps(acc, _mm256_set1_ps(t.alpha));
  if (!t.first)
    v = _mm256_add_ps(v, _mm256_maskload_ps(c, mask));
  else if (t.beta != 0)
    v = _mm256_fmadd_ps(_mm256_set1_ps(t.beta), _mm256_maskload_ps(c, mask), v);
  if (t.last) {
    if (bias)
      v = _mm256_add_ps(v, _mm256_maskload_ps(bias, mask));
    if (rowBias)
      v = _mm256_add_ps(v, _mm256_set1_ps(*rowBias));
    if (t.activation == NNCC_ACTIVATION_RELU)
      v = _mm256_max_ps(v, _mm256_setzero_ps());
    else if (t.activation == NNCC_ACTIVATION_CLIP) // the bounds first: a NaN passes through
      v = _mm256_min_ps(_mm256_set1_ps(t.clipMax), _mm256_max_ps(_mm256_set1_ps(t.clipMin), v));
    else if (t.activation == NNCC_ACTIVATION_GELU)
      v = gelu(v);
  }
  _mm256_maskstore_ps(c, mask, v);
}

/// One k step of R rows into acc (a: the step's mr values, b: its nr).
template <int R> NNCC_AVX2 void step(__m256 (&acc)[R][2], const float *a, const float *b) {
  __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8);
#pragma GCC unroll 6
  for (int i = 0; i < R; ++i) {
    __m256 ai = _mm256_broadcast_ss(a + i);
    acc[i][0] = _mm256_fmadd_ps(ai, b0, acc[i][0]);
    acc[i][1] = _mm256_fmadd_ps(ai, b1, acc[i][1]);
  }
}

/// The K loop of a tile: U sets of R-row accumulators over t.kc steps,
/// each step also asking L2 for the same k row (one line) of t.prefetch's
/// panel when Prefetch.
template <int R, int U, bool Prefetch>
NNCC_AVX2 void kLoop(__m256 (&acc)[U][R][2], const SgemmTile &t) {
  const float *a = t.a, *b = t.b, *next = t.prefetch;
  int64_t p = 0;
  for (; p + U <= t.kc; p += U, a += U * kMr, b += U * kNr, next += U * kNr)
#pragma GCC unroll 4
    for (int u = 0; u < U; ++u) {
      step<R>(acc[u], a + u * kMr, b + u * kNr);
      if constexpr (Prefetch)
        _mm_prefetch(reinterpret_cast<const char *>(next + u * kNr), _MM_HINT_T1);
    }
  for (; p < t.kc; ++p, a += kMr, b += kNr, next += kNr) {
    step<R>(acc[0], a, b);
    if constexpr (Prefetch)
      _mm_prefetch(reinterpret_cast<const char *>(next), _MM_HINT_T1);
  }
}

template <int R> NNCC_AVX2_FN void tile(const SgemmTile &t) {
  // Two pipelined FMA units with 4 cycles of latency need 8 independent
  // sums: fewer than 4 rows split K over U sets of accumulators.
  constexpr int U = R == 1 ? 4 : R <= 3 ? 2 : 1;
  __m256 acc[U][R][2];
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u)
#pragma GCC unroll 6
    for (int i = 0; i < R; ++i)
      acc[u][i][0] = acc[u][i][1] = _mm256_setzero_ps();
  if (t.prefetch)
    kLoop<R, U, true>(acc, t);
  else
    kLoop<R, U, false>(acc, t);
#pragma GCC unroll 4
  for (int u = 1; u < U; ++u)
#pragma GCC unroll 6
    for (int i = 0; i < R; ++i) {
      acc[0][i][0] = _mm256_add_ps(acc[0][i][0], acc[u][i][0]);
      acc[0][i][1] = _mm256_add_ps(acc[0][i][1], acc[u][i][1]);
    }
  int c0 = t.cols < 8 ? t.cols : 8, c1 = t.cols - c0;
  __m256i m0 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(kMaskTable + 8 - c0));
  __m256i m1 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(kMaskTable + 8 - c1));
  const float *bias1 = t.bias ? t.bias + 8 : nullptr;
#pragma GCC unroll 6
  for (int i = 0; i < R; ++i) {
    float *c = t.c + i * t.ldc;
    const float *rowBias = t.rowBias ? t.rowBias + i : nullptr;
    finish(t, acc[0][i][0], c, t.bias, rowBias, m0);
    if (c1 > 0)
      finish(t, acc[0][i][1], c + 8, bias1, rowBias, m1);
  }
}

template <int... R> constexpr SgemmKernel makeKernel(std::integer_sequence<int, R...>) {
  return SgemmKernel{"avx2", 8, kMr, kNr, 32 * kMr, {nullptr, &tile<R + 1>...}};
}

} // namespace

const SgemmKernel &sgemmKernelAvx2() {
  static const SgemmKernel kernel = makeKernel(std::make_integer_sequence<int, kMr>());
  return kernel;
}

} // namespace nncc::rt

#else
namespace nncc::rt {
const SgemmKernel &sgemmKernelAvx2() { __builtin_trap(); }
} // namespace nncc::rt
#endif
