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
// those instructions. The bias and relu/gelu epilogue and alpha/beta are
// applied to the accumulators before the store.
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
  /// The last K block: then bias (cols values, or null) and the activation.
  bool last;
  const float *bias;
  int activation; // nncc_activation
};

/// A micro-kernel family: tile sizes and one function per row count.
struct SgemmKernel {
  const char *name; // "avx512", "avx2"
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
  const float *bias; // n values, or null
  int activation;
};

/// Floats of packed A one task needs for an m x k A (one M block by one K
/// block at most); sgemmPacked uses sgemmTasks(threads) of them.
size_t sgemmScratchFloats(const SgemmKernel &kern, int64_t m, int64_t k);
int sgemmTasks(int threads);

/// Runs `call` on the pool; scratch holds sgemmTasks(pool.threads()) *
/// sgemmScratchFloats(kern, call.m, call.k) floats.
void sgemmPacked(const SgemmKernel &kern, const SgemmCall &call, float *scratch, ThreadPool &pool);

} // namespace nncc::rt

#endif // NNCC_RUNTIME_CPU_SGEMM_H
