//===- Sgemm.h - the runtime's own f32 GEMM on packed B -------------------===//
//
// An f32 GEMM whose B operand was packed once (a constant weight, packed when
// the session is created), so a run only packs A into scratch the session
// preallocated. Register-blocked micro-kernels: AVX-512 (14 rows x 32
// columns: 28 accumulators + 2 B vectors + 1 broadcast of the 32 zmm
// registers) and AVX2+FMA (6 x 16: 12 + 2 + 1 of 16 ymm). Which one runs is
// chosen from CPUID when a session is created (NNCC_CPU_HIDE_FEATURES
// honoured), never from how the runtime was built: the kernels are compiled
// with per-function target attributes, and nothing else in the runtime uses
// those instructions. The bias (per column or per row), the relu/clip/gelu
// epilogue and alpha/beta are applied to the accumulators before the store.
//
// Blocking (BLIS's loop order): K in blocks of kSgemmKc; per K block, A in
// blocks of mc rows packed into scratch (mc x kSgemmKc: 224 x 256 floats for
// AVX-512, 224 KiB, held in L2); per M block, each B panel (kSgemmKc x nr)
// serves all the block's row tiles from L1 before the next one streams in.
// Each tile prefetches its C rows before its K loop. Threads split the M
// blocks, or the N panels when there are fewer M blocks than threads.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_CPU_SGEMM_H
#define NNCC_RUNTIME_CPU_SGEMM_H

#include "ThreadPool.h"

#include <cstddef>
#include <cstdint>
#include <memory>

namespace nncc::rt {

/// Rows of K per block of packed A and B.
constexpr int64_t kSgemmKc = 256;

/// One micro-tile: C[rows x cols] (rows <= mr, cols <= nr) from a packed A
/// panel (kc x mr, rows past `rows` zero) and a packed B panel (kc x nr,
/// columns past `cols` zero).
struct SgemmTile {
  const float *a, *b;
  int64_t kc;
  float *c;
  int64_t ldc;
  int rows, cols;
  float alpha, beta;
  /// The first K block: C = alpha*AB + beta*C (C not read when beta is 0);
  /// later blocks: C += alpha*AB.
  bool first;
  /// The last K block: then the biases and the activation.
  bool last;
  const float *bias;    // cols values, or null
  const float *rowBias; // rows values (one per row of the tile), or null
  int activation;       // nncc_activation
  float clipMin, clipMax; // NNCC_ACTIVATION_CLIP's bounds
  /// A packed B panel (kc x nr) to ask L2 for while this tile runs, one k
  /// row per k step, or null. The first row tile of each panel of a packed
  /// weight names the next panel: a weight that left the caches then
  /// arrives before its tiles need it (see runRowTiles).
  const float *prefetch;
};

/// A micro-kernel family: tile sizes and one function per row count.
struct SgemmKernel {
  const char *name; // "avx512", "avx2"
  int lanes;        // f32 lanes of a vector register: 16, 8
  int mr, nr;
  int64_t mc; // rows of A packed per block (a multiple of mr)
  void (*tile[16])(const SgemmTile &); // tile[r] computes r rows, 1 <= r <= mr
};

/// The kernels in their own translation units; only called when the CPU
/// has the features (sgemmKernelFor checks).
const SgemmKernel &sgemmKernelAvx512();
const SgemmKernel &sgemmKernelAvx2();

/// The best kernel this CPU runs (avx512f, else avx2 + fma; features hidden
/// by NNCC_CPU_HIDE_FEATURES count as missing), or null: then the BLAS runs
/// every GEMM.
const SgemmKernel *sgemmKernelFor();

/// 64-byte aligned floats (a whole zmm load never splits a cache line).
struct AlignedFree {
  void operator()(float *p) const;
};
using AlignedFloats = std::unique_ptr<float[], AlignedFree>;
AlignedFloats allocFloats(size_t n);

/// Floats of B (k x n) packed for `kern`: k x n rounded up to nr columns.
size_t packedBFloats(const SgemmKernel &kern, int64_t k, int64_t n);

/// Packs op(B) (k x n; b is n x k with leading dimension ldb when transB,
/// k x ldb otherwise) into dst: for each K block of kSgemmKc rows, panels of
/// nr columns, each kc x nr row-major, zero past column n.
void packB(const SgemmKernel &kern, const float *b, int64_t ldb, bool transB, int64_t k,
           int64_t n, float *dst);

/// What a call applies to its product before C is stored (after alpha and
/// beta): a bias, then the activation.
struct SgemmEpilogue {
  const float *bias = nullptr; // n values, m with biasPerRow, or null
  int activation = 0;          // nncc_activation
  bool biasPerRow = false;     // one value per row of C, not per column
  float clipMin = 0, clipMax = 0; // NNCC_ACTIVATION_CLIP's bounds
};

/// One GEMM over a packed B: C (m x n, ldc) = act(alpha * op(A) * B + beta * C
/// + bias).
struct SgemmCall {
  int64_t m, n, k;
  const float *a;
  int64_t lda;
  bool transA;
  const float *packedB;
  float *c;
  int64_t ldc;
  float alpha, beta;
  SgemmEpilogue epilogue; // a bias per row not with aBatchRows: it follows the call's rows
  /// When non-zero, op(A) stacks the same-shaped op(A_i) of a batch: row r
  /// is row r % aBatchRows of A_i, i = r / aBatchRows, which starts
  /// aBatchStride elements after A_0. One call then covers a batch whose
  /// items are too short to fill the row tiles on their own.
  int64_t aBatchRows = 0, aBatchStride = 0;
};

/// Floats of packed A one task needs for an m x k A (one M block by one K
/// block at most); sgemmPacked uses sgemmTasks(threads) of them.
size_t sgemmScratchFloats(const SgemmKernel &kern, int64_t m, int64_t k);
int sgemmTasks(int threads);

/// Runs `call` on the pool; scratch holds sgemmTasks(pool.threads()) *
/// sgemmScratchFloats(kern, call.m, call.k) floats.
void sgemmPacked(const SgemmKernel &kern, const SgemmCall &call, float *scratch, ThreadPool &pool);

/// Floats of A (m x k) packed once (packA): for each K block, M blocks of
/// mr-row panels, m rounded up to mr.
size_t packedAFloats(const SgemmKernel &kern, int64_t m, int64_t k);

/// Packs op(A) (m x k; a is k x lda when transA, m x lda otherwise) into
/// dst: for each K block of kSgemmKc columns, the M blocks of kern.mc rows,
/// each in panels of mr rows (kc x mr, k-major), zero past row m.
void packA(const SgemmKernel &kern, const float *a, int64_t lda, bool transA, int64_t m, int64_t k,
           float *dst);

/// One GEMM over a packed A (a constant weight, packed once), B packed per
/// call into scratch: C (m x n, ldc) = act(alpha * A * op(B) + beta * C +
/// bias). The weights-as-A form of a convolution, [channels, positions] =
/// W col, whose per-channel bias (biasPerRow), residual (beta 1 on C) and
/// ReLU/Clip are applied to the accumulators: no pass over C after it.
struct SgemmPackedACall {
  int64_t m, n, k;
  const float *packedA;
  const float *b; // k x n (n x k when transB), leading dimension ldb
  int64_t ldb;
  bool transB;
  float *c;
  int64_t ldc;
  float alpha, beta;
  SgemmEpilogue epilogue;
};

/// Floats of packed B one task of sgemmPackedA needs; it uses
/// sgemmTasks(threads) of them.
size_t sgemmPackedAScratchFloats(const SgemmKernel &kern, int64_t n, int64_t k);

void sgemmPackedA(const SgemmKernel &kern, const SgemmPackedACall &call, float *scratch,
                  ThreadPool &pool);

/// C_i = alpha * op(A) op(B_i) for the items of a batch when A (m x k, one
/// for all items) is the constant: computed as the transposed product
/// C_i^T = op(B_i)^T op(A)^T with op(A)^T as the packed B, every item's
/// op(B_i)^T stacked as the rows of one call (batch * n rows), into
/// `product` (batch * n x m), then transposed into C. This is the
/// weights-as-A form of a 1x1 convolution over small images (N = positions:
/// 16 or 49 fill a half to three quarters of the kernel's nr-column panels,
/// where M = channels fills them).
struct SgemmTransposedCall {
  int64_t batch, m, n, k;
  const float *packedAT; // packB(kern, a, lda, !transA, k, m, packedAT)
  const float *b;        // op(B_i): k x n (n x k when transB), item i at b + i * strideB
  int64_t ldb, strideB;
  bool transB;
  float *c; // m x n (ldc), item i at c + i * strideC
  int64_t ldc, strideC;
  float alpha;
  /// C = act(alpha * op(A) op(B_i) + beta * C + bias): beta * C (a
  /// residual), the bias and the activation (NONE, RELU or CLIP, not GELU)
  /// are applied as the product is transposed into C.
  float beta = 0;
  SgemmEpilogue epilogue;
};

/// Floats of `product` and of the packing scratch (sgemmTasks(threads)
/// times this) sgemmTransposed needs.
size_t sgemmTransposedProductFloats(int64_t batch, int64_t m, int64_t n);
size_t sgemmTransposedScratchFloats(const SgemmKernel &kern, int64_t batch, int64_t n, int64_t k);

void sgemmTransposed(const SgemmKernel &kern, const SgemmTransposedCall &call, float *product,
                     float *scratch, ThreadPool &pool);

/// Whether sgemmTransposed beats the direct product for an m x n x k GEMM
/// on `kern`. A cost model in FMA lanes per element of C, not a timing: the
/// direct form wastes k * (1/fill(n) - 1) lanes per element, where fill is
/// the share of the nr-column panels the columns fill; the transposed one
/// k * (1/fill(m) - 1), plus the transpose: one load and one store per
/// element against two vector FMAs per cycle, 2 * lanes.
bool sgemmTransposedIsCheaper(const SgemmKernel &kern, int64_t m, int64_t n, int64_t k);

} // namespace nncc::rt

#endif // NNCC_RUNTIME_CPU_SGEMM_H
