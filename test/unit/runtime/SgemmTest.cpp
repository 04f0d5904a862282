//===- SgemmTest.cpp - the runtime's own packed-B SGEMM kernels -----------===//
//
// Each micro-kernel family this machine can run (AVX-512 and AVX2+FMA on an
// AVX-512 machine), called directly, against a float64 reference: M across
// 1..70 (partial row tiles of both kernels), N and K off the tile and block
// sizes, both transposes, leading dimensions beyond the columns, alpha,
// beta over an existing C, bias (per column or per row), relu, clip and
// gelu, on 1 and 2 threads. Then
// the transposed product of a constant A over a batch (sgemmTransposed) and
// the cost rule that picks it.
//
//===----------------------------------------------------------------------===//
#include "../../../runtime/cpu/CpuFeatures.h"
#include "../../../runtime/cpu/Sgemm.h"
#include "nncc/module_abi.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <vector>

namespace {

using namespace nncc::rt;

std::vector<const SgemmKernel *> kernelsHere() {
  std::vector<const SgemmKernel *> out;
#if defined(__x86_64__)
  if (missingCpuFeatures("avx512f").empty())
    out.push_back(&sgemmKernelAvx512());
  if (missingCpuFeatures("avx2,fma").empty())
    out.push_back(&sgemmKernelAvx2());
#endif
  return out;
}

struct Shape {
  int64_t m, n, k;
  bool transA, transB;
  int64_t padA, padB, padC; // leading dimension minus columns
  float alpha, beta;
  bool bias;
  int activation;
  bool biasPerRow = false;            // M bias values (a convolution's channels), not N
  float clipMin = 0, clipMax = 6;     // NNCC_ACTIVATION_CLIP's bounds
};

std::string describe(const SgemmKernel &kern, const Shape &s, int threads) {
  std::ostringstream os;
  os << kern.name << " m=" << s.m << " n=" << s.n << " k=" << s.k << " tA=" << s.transA
     << " tB=" << s.transB << " pads=" << s.padA << "," << s.padB << "," << s.padC
     << " alpha=" << s.alpha << " beta=" << s.beta << " bias=" << s.bias
     << " act=" << s.activation << " perRow=" << s.biasPerRow << " clip=[" << s.clipMin << ","
     << s.clipMax << "] threads=" << threads;
  return os.str();
}

double activate(int act, double v, double clipMin = 0, double clipMax = 0) {
  if (act == NNCC_ACTIVATION_RELU)
    return v > 0 ? v : 0;
  if (act == NNCC_ACTIVATION_CLIP) // ONNX Clip: crossed bounds give the max
    return std::min(std::max(v, clipMin), clipMax);
  if (act == NNCC_ACTIVATION_GELU)
    return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
  return v;
}

/// Runs one shape on `kern` and compares every element of C (and that the
/// padding between C's rows is untouched) with a float64 reference.
/// Which product check() runs: the packed B (a weight B), or the packed A
/// (a weight A, B packed per call).
enum class Packed { B, A };

void check(const SgemmKernel &kern, const Shape &s, int threads, std::mt19937 &rng,
           Packed which = Packed::B) {
  std::uniform_real_distribution<float> dist(-1, 1);
  int64_t aRows = s.transA ? s.k : s.m, aCols = s.transA ? s.m : s.k;
  int64_t bRows = s.transB ? s.n : s.k, bCols = s.transB ? s.k : s.n;
  int64_t lda = aCols + s.padA, ldb = bCols + s.padB, ldc = s.n + s.padC;
  std::vector<float> a(aRows * lda), b(bRows * ldb), c(s.m * ldc), bias(s.biasPerRow ? s.m : s.n);
  for (float &v : a)
    v = dist(rng);
  for (float &v : b)
    v = dist(rng);
  for (float &v : c)
    v = dist(rng);
  for (float &v : bias)
    v = dist(rng);
  std::vector<float> c0 = c;

  ThreadPool pool(threads);
  SgemmEpilogue epilogue{s.bias ? bias.data() : nullptr, s.activation, s.biasPerRow, s.clipMin, s.clipMax};
  if (which == Packed::B) {
    AlignedFloats packed = allocFloats(packedBFloats(kern, s.k, s.n));
    packB(kern, b.data(), ldb, s.transB, s.k, s.n, packed.get());
    AlignedFloats scratch = allocFloats(sgemmTasks(threads) * sgemmScratchFloats(kern, s.m, s.k));
    SgemmCall call{s.m,      s.n, s.k,     a.data(), lda,     s.transA,
                   packed.get(), c.data(), ldc, s.alpha,  s.beta, epilogue};
    sgemmPacked(kern, call, scratch.get(), pool);
  } else {
    AlignedFloats packed = allocFloats(packedAFloats(kern, s.m, s.k));
    packA(kern, a.data(), lda, s.transA, s.m, s.k, packed.get());
    AlignedFloats scratch = allocFloats(sgemmTasks(threads) * sgemmPackedAScratchFloats(kern, s.n, s.k));
    SgemmPackedACall call{s.m,      s.n, s.k,     packed.get(), b.data(), ldb,
                          s.transB, c.data(), ldc, s.alpha,     s.beta,   epilogue};
    sgemmPackedA(kern, call, scratch.get(), pool);
  }

  int failures = 0;
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < ldc; ++j) {
      double got = c[i * ldc + j];
      if (j >= s.n) { // padding: never written
        if (got != c0[i * ldc + j] && ++failures <= 3)
          ADD_FAILURE() << describe(kern, s, threads) << ": wrote padding c[" << i << "," << j << "]";
        continue;
      }
      double acc = 0, mag = 0;
      for (int64_t p = 0; p < s.k; ++p) {
        double x = a[s.transA ? p * lda + i : i * lda + p];
        double y = b[s.transB ? j * ldb + p : p * ldb + j];
        acc += x * y;
        mag += std::fabs(x * y);
      }
      double v = s.alpha * acc;
      if (s.beta != 0)
        v += s.beta * double(c0[i * ldc + j]);
      if (s.bias)
        v += bias[s.biasPerRow ? i : j];
      double want = activate(s.activation, v, s.clipMin, s.clipMax);
      // f32 accumulation over k terms, plus the gelu approximation.
      double allowed = 1e-6 * (std::fabs(s.alpha) * mag + 2) * std::sqrt(double(s.k) + 1) +
                       (s.activation == NNCC_ACTIVATION_GELU ? 1e-6 * (std::fabs(v) + 1) : 0);
      if (!(std::fabs(got - want) <= allowed) && ++failures <= 3)
        ADD_FAILURE() << describe(kern, s, threads) << ": c[" << i << "," << j << "] = " << got
                      << ", expected " << want << " (allowed " << allowed << ")";
    }
  EXPECT_EQ(failures, 0) << describe(kern, s, threads);
}

TEST(Sgemm, KernelsForThisCpu) {
  std::vector<const SgemmKernel *> kernels = kernelsHere();
  const SgemmKernel *chosen = sgemmKernelFor();
  if (kernels.empty()) {
    EXPECT_EQ(chosen, nullptr);
    GTEST_SKIP() << "this CPU has neither AVX-512 nor AVX2+FMA";
  }
  EXPECT_EQ(chosen, kernels.front()); // the widest one
  for (const SgemmKernel *k : kernels) {
    EXPECT_EQ(k->mc % k->mr, 0) << k->name;
    for (int r = 1; r <= k->mr; ++r)
      EXPECT_NE(k->tile[r], nullptr) << k->name << " rows " << r;
  }
}

// Every row count 1..70 (so each partial tile of 14 and 6 rows, and more
// than one M block), with N and K across tile and block edges.
TEST(Sgemm, RowsAndEdges) {
  std::mt19937 rng(1);
  for (const SgemmKernel *kern : kernelsHere())
    for (int64_t m = 1; m <= 70; ++m) {
      int64_t n = std::vector<int64_t>{1, 7, 16, 17, 31, 33, 48, 65}[m % 8];
      int64_t k = std::vector<int64_t>{1, 5, 64, 255, 257}[m % 5];
      check(*kern, {m, n, k, false, false, 0, 0, 0, 1, 0, false, NNCC_ACTIVATION_NONE}, 1, rng);
    }
}

TEST(Sgemm, LargerBlocks) {
  std::mt19937 rng(2);
  for (const SgemmKernel *kern : kernelsHere())
    for (int threads : {1, 2}) {
      // More M blocks than threads, fewer (split over N panels), K over 2 blocks.
      check(*kern, {230, 100, 600, false, false, 0, 0, 0, 1, 0, true, NNCC_ACTIVATION_NONE},
            threads, rng);
      check(*kern, {20, 200, 513, false, true, 3, 0, 5, 1, 0, true, NNCC_ACTIVATION_RELU},
            threads, rng);
      check(*kern, {1, 130, 300, false, false, 0, 1, 0, 1, 0, true, NNCC_ACTIVATION_GELU},
            threads, rng);
    }
}

TEST(Sgemm, TransposesStridesAndEpilogues) {
  std::mt19937 rng(3);
  const int acts[] = {NNCC_ACTIVATION_NONE, NNCC_ACTIVATION_RELU, NNCC_ACTIVATION_GELU};
  for (const SgemmKernel *kern : kernelsHere())
    for (int t = 0; t < 4; ++t)
      for (int act : acts)
        for (bool bias : {false, true}) {
          bool transA = t & 1, transB = t & 2;
          int64_t m = 9 + t * 11, n = 21 + act * 13, k = 40 + t * 97;
          check(*kern, {m, n, k, transA, transB, 2, 3, 4, 1, 0, bias, act}, 1, rng);
          // alpha, and beta over C (K over one block: the later blocks add).
          check(*kern, {m, n, k + 250, transA, transB, 0, 1, 7, -0.5f, 1.5f, bias, act}, 2, rng);
        }
}

// The packed-A product: M across tiles and blocks (more than one M block of
// 224 / 192 rows), N across the 8-panel chunks of B it packs per call, K
// over one and two blocks, both transposes, alpha/beta, epilogues, threads.
TEST(Sgemm, PackedAProduct) {
  std::mt19937 rng(5);
  for (const SgemmKernel *kern : kernelsHere())
    for (int threads : {1, 2}) {
      check(*kern, {96, 3136 / 4, 16, false, false, 0, 0, 0, 1, 0, false, NNCC_ACTIVATION_NONE}, threads, rng,
            Packed::A);
      check(*kern, {250, 300, 513, true, false, 3, 1, 2, 1, 0, true, NNCC_ACTIVATION_RELU}, threads, rng,
            Packed::A);
      check(*kern, {13, 70, 40, false, true, 0, 2, 5, -0.5f, 1.5f, true, NNCC_ACTIVATION_GELU}, threads, rng,
            Packed::A);
      check(*kern, {1, 2, 3, true, true, 1, 0, 0, 1, 0, false, NNCC_ACTIVATION_NONE}, threads, rng, Packed::A);
    }
}

// A convolution's epilogue on the GEMM step (the CPU plan's GEMM form):
// one bias per row (output channel) or per column, the residual as C with
// beta 1, ReLU or Clip (ReLU6, and crossed bounds, which give the max), on
// the packed-A product (weights as A, [channels, positions]) and the
// packed-B one, M and N across tiles, K over one and two blocks.
TEST(Sgemm, ConvolutionEpilogues) {
  std::mt19937 rng(6);
  const std::pair<float, float> clips[] = {{0, 6}, {-0.25f, 0.5f}, {0.5f, -0.25f}};
  for (const SgemmKernel *kern : kernelsHere())
    for (Packed which : {Packed::A, Packed::B})
      for (int threads : {1, 2})
        for (bool perRow : {true, false})
          for (float beta : {0.0f, 1.0f}) {
            int64_t m = perRow ? 96 : 19, n = perRow ? 230 : 75, k = beta != 0 ? 16 : 300;
            for (int act : {NNCC_ACTIVATION_NONE, NNCC_ACTIVATION_RELU})
              check(*kern, {m, n, k, false, false, 0, 0, 3, 1, beta, true, act, perRow}, threads, rng,
                    which);
            for (auto [lo, hi] : clips)
              check(*kern, {m, n, k, false, false, 0, 0, 3, 1, beta, true, NNCC_ACTIVATION_CLIP, perRow, lo, hi},
                    threads, rng, which);
          }
}

struct BatchShape {
  int64_t batch, m, n, k;
  bool transA, transB;
  int64_t padB, gapB, padC, gapC; // ldb - columns, strideB - item, ldc - n, strideC - item
  int activation = NNCC_ACTIVATION_NONE; // with a bias when not NONE
  bool biasPerRow = false;
  float beta = 0; // C = act(alpha * AB + beta * C + bias): a residual when 1
};

/// sgemmTransposed on `kern` against a float64 reference, and the padding
/// and gaps of C untouched.
void checkTransposed(const SgemmKernel &kern, const BatchShape &s, int threads, std::mt19937 &rng) {
  std::uniform_real_distribution<float> dist(-1, 1);
  int64_t lda = s.transA ? s.m : s.k;
  int64_t bRows = s.transB ? s.n : s.k, bCols = s.transB ? s.k : s.n;
  int64_t ldb = bCols + s.padB, strideB = bRows * ldb + s.gapB;
  int64_t ldc = s.n + s.padC, strideC = s.m * ldc + s.gapC;
  std::vector<float> a((s.transA ? s.k : s.m) * lda), b(s.batch * strideB), c(s.batch * strideC);
  std::vector<float> bias(s.biasPerRow ? s.m : s.n);
  bool epilogue = s.activation != NNCC_ACTIVATION_NONE;
  for (std::vector<float> *v : {&a, &b, &c, &bias})
    for (float &x : *v)
      x = dist(rng);
  std::vector<float> c0 = c;
  AlignedFloats packed = allocFloats(packedBFloats(kern, s.k, s.m));
  packB(kern, a.data(), lda, !s.transA, s.k, s.m, packed.get());
  AlignedFloats product = allocFloats(sgemmTransposedProductFloats(s.batch, s.m, s.n));
  AlignedFloats scratch =
      allocFloats(sgemmTasks(threads) * sgemmTransposedScratchFloats(kern, s.batch, s.n, s.k));
  ThreadPool pool(threads);
  float alpha = 0.75f;
  SgemmTransposedCall call{s.batch,  s.m,      s.n,      s.k, packed.get(), b.data(), ldb,
                           strideB,  s.transB, c.data(), ldc,   strideC, alpha, s.beta};
  if (epilogue)
    call.epilogue = SgemmEpilogue{bias.data(), s.activation, s.biasPerRow, 0, 6};
  sgemmTransposed(kern, call, product.get(), scratch.get(), pool);

  std::ostringstream what;
  what << kern.name << " batch=" << s.batch << " m=" << s.m << " n=" << s.n << " k=" << s.k
       << " tA=" << s.transA << " tB=" << s.transB << " act=" << s.activation << " perRow=" << s.biasPerRow
       << " beta=" << s.beta << " threads=" << threads;
  int failures = 0;
  for (int64_t i = 0; i < s.batch; ++i)
    for (int64_t e = 0; e < strideC; ++e) {
      int64_t r = e / ldc, j = e % ldc;
      double got = c[i * strideC + e];
      if (r >= s.m || j >= s.n) { // padding and gaps: never written
        if (got != c0[i * strideC + e] && ++failures <= 3)
          ADD_FAILURE() << what.str() << ": wrote outside C_" << i << " at " << e;
        continue;
      }
      double acc = 0, mag = 0;
      for (int64_t p = 0; p < s.k; ++p) {
        double x = a[s.transA ? p * lda + r : r * lda + p];
        double y = b[i * strideB + (s.transB ? j * ldb + p : p * ldb + j)];
        acc += x * y;
        mag += std::fabs(x * y);
      }
      double want = alpha * acc + s.beta * c0[i * strideC + e];
      if (epilogue)
        want = activate(s.activation, want + bias[s.biasPerRow ? r : j], 0, 6);
      double allowed = 1e-6 * (alpha * mag + 3) * std::sqrt(double(s.k) + 1);
      if (!(std::fabs(got - want) <= allowed) && ++failures <= 3)
        ADD_FAILURE() << what.str() << ": C_" << i << "[" << r << "," << j << "] = " << got
                      << ", expected " << want;
    }
  EXPECT_EQ(failures, 0) << what.str();
}

// Items of 7 and 16 rows (row tiles of 14 and 6 span item boundaries), 49
// (partial tiles), K over two blocks, both transposes, gaps between items.
TEST(Sgemm, TransposedProductOverABatch) {
  std::mt19937 rng(4);
  for (const SgemmKernel *kern : kernelsHere())
    for (int threads : {1, 2}) {
      checkTransposed(*kern, {3, 40, 16, 64, false, false, 0, 0, 0, 0}, threads, rng);
      checkTransposed(*kern, {5, 33, 7, 300, true, false, 2, 5, 3, 4}, threads, rng);
      checkTransposed(*kern, {2, 70, 49, 96, false, true, 1, 3, 0, 7}, threads, rng);
      checkTransposed(*kern, {1, 17, 2, 9, true, true, 0, 0, 5, 0}, threads, rng);
      // The epilogue the transpose applies: bias per row or column, ReLU, Clip.
      checkTransposed(*kern, {3, 40, 16, 64, false, false, 0, 0, 2, 3, NNCC_ACTIVATION_CLIP, true}, threads, rng);
      checkTransposed(*kern, {2, 33, 7, 30, false, false, 0, 0, 0, 0, NNCC_ACTIVATION_RELU, false}, threads, rng);
      // A residual as the accumulator (beta), alone and under bias + Clip.
      checkTransposed(*kern, {3, 40, 16, 64, false, false, 0, 0, 2, 3, NNCC_ACTIVATION_NONE, false, 1}, threads,
                      rng);
      checkTransposed(*kern, {2, 70, 49, 96, false, true, 1, 3, 0, 7, NNCC_ACTIVATION_CLIP, true, 0.5f}, threads,
                      rng);
    }
}

// The rule that sends a constant A's product there, on MobileNet's 1x1
// convolutions at batch 32 (weights as A: M channels, N positions).
TEST(Sgemm, TransposedProductCostRule) {
#if defined(__x86_64__)
  const SgemmKernel &avx512 = sgemmKernelAvx512(), &avx2 = sgemmKernelAvx2();
  // 16 positions fill half a 32-column panel: transposed on AVX-512; a
  // 16-column AVX2 panel is full: direct.
  EXPECT_TRUE(sgemmTransposedIsCheaper(avx512, 1280, 16, 320));
  EXPECT_FALSE(sgemmTransposedIsCheaper(avx2, 1280, 16, 320));
  // 49 positions fill 77% of their panels on both: worth the transpose for
  // K = 576, not for K = 96.
  EXPECT_TRUE(sgemmTransposedIsCheaper(avx512, 96, 49, 576));
  EXPECT_TRUE(sgemmTransposedIsCheaper(avx2, 96, 49, 576));
  EXPECT_FALSE(sgemmTransposedIsCheaper(avx512, 576, 49, 96));
  // Large images fill their panels: direct; so do M that fill theirs worse.
  EXPECT_FALSE(sgemmTransposedIsCheaper(avx512, 96, 3136, 16));
  EXPECT_FALSE(sgemmTransposedIsCheaper(avx512, 40, 16, 64));
#else
  GTEST_SKIP() << "x86-64 kernels";
#endif
}

} // namespace

