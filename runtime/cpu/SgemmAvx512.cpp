//===- SgemmAvx512.cpp - the 14 x 32 AVX-512 micro-kernel -----------------===//
//
// Every function here carries target("avx512f") and only sgemmKernelFor()
// hands them out, after CPUID said avx512f: the file is compiled with the
// runtime's ordinary flags, so no other code (inline library functions
// included) gets AVX-512 instructions.
//
//===----------------------------------------------------------------------===//
#include "Sgemm.h"

#include "nncc/module_abi.h"

#include <utility>

#if defined(__x86_64__)
#include <immintrin.h>

// GCC 12's avx512fintrin.h initializes some intrinsics' results from
// _mm512_undefined_ps() (`__Y = __Y`), which -Wmaybe-uninitialized reports
// at every use once they are inlined here.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#define NNCC_AVX512 __attribute__((target("avx512f"), always_inline)) inline
#define NNCC_AVX512_FN __attribute__((target("avx512f")))

namespace nncc::rt {
namespace {

constexpr int kMr = 14, kNr = 32;

/// e^x for x <= 0 (Cephes' expf: 2^n times a degree-6 polynomial of the
/// remainder), about 1 ulp.
NNCC_AVX512 __m512 expNeg(__m512 x) {
  x = _mm512_max_ps(x, _mm512_set1_ps(-87.0f));
  __m512 fx = _mm512_fmadd_ps(x, _mm512_set1_ps(1.44269504088896341f), _mm512_set1_ps(0.5f));
  fx = _mm512_roundscale_ps(fx, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  x = _mm512_fnmadd_ps(fx, _mm512_set1_ps(0.693359375f), x);
  x = _mm512_fnmadd_ps(fx, _mm512_set1_ps(-2.12194440e-4f), x);
  __m512 y = _mm512_set1_ps(1.9875691500e-4f);
  y = _mm512_fmadd_ps(y, x, _mm512_set1_ps(1.3981999507e-3f));
  y = _mm512_fmadd_ps(y, x, _mm512_set1_ps(8.3334519073e-3f));
  y = _mm512_fmadd_ps(y, x, _mm512_set1_ps(4.1665795894e-2f));
  y = _mm512_fmadd_ps(y, x, _mm512_set1_ps(1.6666665459e-1f));
  y = _mm512_fmadd_ps(y, x, _mm512_set1_ps(5.0000001201e-1f));
  y = _mm512_fmadd_ps(y, _mm512_mul_ps(x, x), _mm512_add_ps(x, _mm512_set1_ps(1.0f)));
  __m512i n = _mm512_add_epi32(_mm512_cvtps_epi32(fx), _mm512_set1_epi32(127));
  return _mm512_mul_ps(y, _mm512_castsi512_ps(_mm512_slli_epi32(n, 23)));
}

/// 0.5 v (1 + erf(v / sqrt 2)) with erfc(x) = poly(t) e^{-x^2}, t = 1 / (1 +
/// p x) for x >= 0 (Abramowitz & Stegun 7.1.26, |error| <= 1.5e-7).
NNCC_AVX512 __m512 gelu(__m512 v) {
  __m512 x = _mm512_mul_ps(_mm512_abs_ps(v), _mm512_set1_ps(0.70710678118654752f));
  __m512 t = _mm512_div_ps(_mm512_set1_ps(1.0f),
                           _mm512_fmadd_ps(x, _mm512_set1_ps(0.3275911f), _mm512_set1_ps(1.0f)));
  __m512 p = _mm512_set1_ps(1.061405429f);
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-1.453152027f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(1.421413741f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-0.284496736f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(0.254829592f));
  p = _mm512_mul_ps(p, t);
  __m512 e = _mm512_mul_ps(p, expNeg(_mm512_sub_ps(_mm512_setzero_ps(), _mm512_mul_ps(x, x))));
  // v >= 0: 1 + erf = 2 - erfc; v < 0: 1 - erf(|x|) = erfc.
  __mmask16 pos = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_GE_OQ);
  __m512 s = _mm512_mask_sub_ps(e, pos, _mm512_set1_ps(2.0f), e);
  return _mm512_mul_ps(_mm512_mul_ps(v, _mm512_set1_ps(0.5f)), s);
}

/// alpha/beta, bias (per column, or the row's) and activation on one accumulator of 16 columns, then
/// the store of its first `cols` (masked).
NNCC_AVX512 void finish(const SgemmTile &t, __m512 acc, float *c, const float *bias,
                        const float *rowBias, __mmask16 mask) {
  __m512 v = _mm512_mul_ps(acc, _mm512_set1_ps(t.alpha));
  if (!t.first)
    v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, c));
  else if (t.beta != 0)
    v = _mm512_fmadd_ps(_mm512_set1_ps(t.beta), _mm512_maskz_loadu_ps(mask, c), v);
  if (t.last) {
    if (bias)
      v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, bias));
    if (rowBias)
      v = _mm512_add_ps(v, _mm512_set1_ps(*rowBias));
    if (t.activation == NNCC_ACTIVATION_RELU)
      v = _mm512_max_ps(v, _mm512_setzero_ps());
    else if (t.activation == NNCC_ACTIVATION_CLIP) // the bounds first: a NaN passes through
      v = _mm512_min_ps(_mm512_set1_ps(t.clipMax), _mm512_max_ps(_mm512_set1_ps(t.clipMin), v));
    else if (t.activation == NNCC_ACTIVATION_GELU)
      v = gelu(v);
  }
  _mm512_mask_storeu_ps(c, mask, v);
}

/// One k step of R rows into acc (a: the step's mr values, b: its nr).
template <int R> NNCC_AVX512 void step(__m512 (&acc)[R][2], const float *a, const float *b) {
  __m512 b0 = _mm512_load_ps(b), b1 = _mm512_load_ps(b + 16);
#pragma GCC unroll 14
  for (int i = 0; i < R; ++i) {
    __m512 ai = _mm512_set1_ps(a[i]);
    acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
    acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
  }
}

/// The K loop of a tile: U sets of R-row accumulators over t.kc steps,
/// each step also asking L2 for the same k row (2 lines) of t.prefetch's
/// panel when Prefetch.
template <int R, int U, bool Prefetch>
NNCC_AVX512 void kLoop(__m512 (&acc)[U][R][2], const SgemmTile &t) {
  const float *a = t.a, *b = t.b, *next = t.prefetch;
  int64_t p = 0;
  for (; p + U <= t.kc; p += U, a += U * kMr, b += U * kNr, next += U * kNr)
#pragma GCC unroll 4
    for (int u = 0; u < U; ++u) {
      step<R>(acc[u], a + u * kMr, b + u * kNr);
      if constexpr (Prefetch) {
        _mm_prefetch(reinterpret_cast<const char *>(next + u * kNr), _MM_HINT_T1);
        _mm_prefetch(reinterpret_cast<const char *>(next + u * kNr + 16), _MM_HINT_T1);
      }
    }
  for (; p < t.kc; ++p, a += kMr, b += kNr, next += kNr) {
    step<R>(acc[0], a, b);
    if constexpr (Prefetch) {
      _mm_prefetch(reinterpret_cast<const char *>(next), _MM_HINT_T1);
      _mm_prefetch(reinterpret_cast<const char *>(next + 16), _MM_HINT_T1);
    }
  }
}

template <int R> NNCC_AVX512_FN void tile(const SgemmTile &t) {
  // Two pipelined FMA units with 4 cycles of latency need 8 independent
  // sums: fewer than 4 rows split K over U sets of accumulators.
  constexpr int U = R == 1 ? 4 : R <= 3 ? 2 : 1;
  __m512 acc[U][R][2];
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u)
#pragma GCC unroll 14
    for (int i = 0; i < R; ++i)
      acc[u][i][0] = acc[u][i][1] = _mm512_setzero_ps();
  // C is read only after the K loop: ask for its lines now, so that a C
  // that left the cache (a large M) arrives while the loop runs.
#pragma GCC unroll 14
  for (int i = 0; i < R; ++i) {
    _mm_prefetch(reinterpret_cast<const char *>(t.c + i * t.ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char *>(t.c + i * t.ldc + 31), _MM_HINT_T0);
  }
  if (t.prefetch)
    kLoop<R, U, true>(acc, t);
  else
    kLoop<R, U, false>(acc, t);
#pragma GCC unroll 4
  for (int u = 1; u < U; ++u)
#pragma GCC unroll 14
    for (int i = 0; i < R; ++i) {
      acc[0][i][0] = _mm512_add_ps(acc[0][i][0], acc[u][i][0]);
      acc[0][i][1] = _mm512_add_ps(acc[0][i][1], acc[u][i][1]);
    }
  int c0 = t.cols < 16 ? t.cols : 16, c1 = t.cols - c0;
  __mmask16 m0 = static_cast<__mmask16>((1u << c0) - 1), m1 = static_cast<__mmask16>((1u << c1) - 1);
  const float *bias1 = t.bias ? t.bias + 16 : nullptr;
#pragma GCC unroll 14
  for (int i = 0; i < R; ++i) {
    float *c = t.c + i * t.ldc;
    const float *rowBias = t.rowBias ? t.rowBias + i : nullptr;
    finish(t, acc[0][i][0], c, t.bias, rowBias, m0);
    if (m1)
      finish(t, acc[0][i][1], c + 16, bias1, rowBias, m1);
  }
}

template <int... R> constexpr SgemmKernel makeKernel(std::integer_sequence<int, R...>) {
  return SgemmKernel{"avx512", 16, kMr, kNr, 16 * kMr, {nullptr, &tile<R + 1>...}};
}

} // namespace

const SgemmKernel &sgemmKernelAvx512() {
  static const SgemmKernel kernel = makeKernel(std::make_integer_sequence<int, kMr>());
  return kernel;
}

} // namespace nncc::rt

#else
namespace nncc::rt {
const SgemmKernel &sgemmKernelAvx512() { __builtin_trap(); }
} // namespace nncc::rt
#endif
