//===- Sgemm.cpp - packing and blocking around the micro-kernels ----------===//
#include "Sgemm.h"

#include "CpuFeatures.h"
#include "nncc/module_abi.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace nncc::rt {

const SgemmKernel *sgemmKernelFor() {
#if defined(__x86_64__)
  if (missingCpuFeatures("avx512f").empty())
    return &sgemmKernelAvx512();
  if (missingCpuFeatures("avx2,fma").empty())
    return &sgemmKernelAvx2();
#endif
  return nullptr;
}

void AlignedFree::operator()(float *p) const { std::free(p); }

AlignedFloats allocFloats(size_t n) {
  if (n == 0)
    return AlignedFloats();
  size_t bytes = (n * sizeof(float) + 63) / 64 * 64;
  auto *p = static_cast<float *>(std::aligned_alloc(64, bytes));
  if (!p)
    throw std::bad_alloc();
  return AlignedFloats(p);
}

size_t packedBFloats(const SgemmKernel &kern, int64_t k, int64_t n) {
  int64_t padded = (n + kern.nr - 1) / kern.nr * kern.nr;
  return static_cast<size_t>(k * padded);
}

void packB(const SgemmKernel &kern, const float *b, int64_t ldb, bool transB, int64_t k,
           int64_t n, float *dst) {
  const int64_t nr = kern.nr, padded = (n + nr - 1) / nr * nr;
  for (int64_t pc = 0; pc < k; pc += kSgemmKc) {
    int64_t kc = std::min(kSgemmKc, k - pc);
    for (int64_t j0 = 0; j0 < padded; j0 += nr) {
      // Block (pc, j0) starts after pc full rows and j0 / nr earlier panels.
      float *out = dst + pc * padded + j0 * kc;
      int64_t cols = std::min(nr, n - j0);
      for (int64_t p = 0; p < kc; ++p, out += nr) {
        if (transB) {
          for (int64_t j = 0; j < cols; ++j)
            out[j] = b[(j0 + j) * ldb + pc + p];
        } else { // a contiguous run of a row: B is packed per call by sgemmPackedA
          std::memcpy(out, b + (pc + p) * ldb + j0, static_cast<size_t>(cols) * sizeof(float));
        }
        for (int64_t j = cols; j < nr; ++j)
          out[j] = 0;
      }
    }
  }
}

namespace {

/// Where row i of op(A) starts; its element p lies p * colStep further.
const float *rowOfA(const SgemmCall &g, int64_t i) {
  const int64_t rowStep = g.transA ? 1 : g.lda;
  if (g.aBatchRows == 0)
    return g.a + i * rowStep;
  return g.a + (i / g.aBatchRows) * g.aBatchStride + (i % g.aBatchRows) * rowStep;
}

/// Packs rows [i0, i0 + mc) x K columns [pc, pc + kc) of op(A) into panels
/// of mr rows, each kc x mr (k-major), rows past mc zero.
void packARows(const SgemmCall &g, int mr, int64_t i0, int64_t mc, int64_t pc, int64_t kc,
               float *dst) {
  const int64_t colStep = g.transA ? g.lda : 1;
  for (int64_t ip = 0; ip < mc; ip += mr, dst += kc * mr) {
    int64_t rows = std::min<int64_t>(mr, mc - ip);
    const float *row[16]; // mr <= 16 (SgemmKernel::tile)
    for (int64_t r = 0; r < rows; ++r)
      row[r] = rowOfA(g, i0 + ip + r) + pc * colStep;
    if (g.transA) { // op(A)(i, p) = a[p * lda + i]: a panel's rows lie side by side
      // One contiguous run per k (unless the panel crosses an item of a
      // stacked batch): copied as one, which vectorizes; the gather of 14
      // row pointers did not, and took a fifth of a 49 x 128 x 1152 product.
      bool contiguous = row[rows - 1] - row[0] == rows - 1;
      for (int64_t p = 0; p < kc; ++p) {
        float *out = dst + p * mr;
        if (contiguous) { // a loop, not a memcpy call per run of at most 16 floats
          const float *src = row[0] + p * colStep;
          for (int64_t r = 0; r < rows; ++r)
            out[r] = src[r];
        } else {
          for (int64_t r = 0; r < rows; ++r)
            out[r] = row[r][p * colStep];
        }
        for (int64_t r = rows; r < mr; ++r)
          out[r] = 0;
      }
      continue;
    }
    for (int64_t r = 0; r < rows; ++r) // read each row of A contiguously
      for (int64_t p = 0; p < kc; ++p)
        dst[p * mr + r] = row[r][p];
    for (int64_t r = rows; r < mr; ++r)
      for (int64_t p = 0; p < kc; ++p)
        dst[p * mr + r] = 0;
  }
}

/// The tile fields every tile of one call shares: alpha, beta, the
/// activation with its bounds, C's leading dimension.
template <class Call> SgemmTile tileOf(const Call &g) {
  SgemmTile t{};
  t.alpha = g.alpha;
  t.beta = g.beta;
  t.activation = g.epilogue.activation;
  t.clipMin = g.epilogue.clipMin;
  t.clipMax = g.epilogue.clipMax;
  t.ldc = g.ldc;
  return t;
}

/// Rows [i0, i0 + rows) of C against the B panel and column bias `t`
/// holds: one tile per mr rows of the packed A block `aBlock` (t.kc deep),
/// written from `c` (C's column of the panel) on, with their row biases.
/// The first tile asks L2 for `nextPanel` (null: none) as it runs. A packed
/// weight B is read once per call, panel after panel, and with few row
/// tiles per panel (M = 64: 5) the first tile's wait for a panel from
/// memory cost a fifth of the product on a 5th-gen Xeon: BERT's 64 x 3072
/// x 768 product 102-106 -> 128-130 GFLOP/s with the caches flushed before
/// each call (AVX2 kernel 63 -> 71), unchanged with them warm (148-151).
void runRowTiles(const SgemmKernel &kern, SgemmTile &t, const float *aBlock, int64_t i0, int64_t rows,
                 const float *rowBias, float *c, const float *nextPanel) {
  for (int64_t ip = 0; ip < rows; ip += kern.mr) {
    t.prefetch = ip == 0 ? nextPanel : nullptr;
    t.rows = static_cast<int>(std::min<int64_t>(kern.mr, rows - ip));
    t.rowBias = rowBias ? rowBias + i0 + ip : nullptr;
    t.a = aBlock + ip * t.kc;
    t.c = c + (i0 + ip) * t.ldc;
    kern.tile[t.rows](t);
  }
}

struct SgemmJob {
  const SgemmKernel *kern;
  const SgemmCall *g;
  float *scratch;
  int64_t tasks;
  bool splitRows; // tasks split the M blocks (else the N panels)
};

/// One task: M blocks [mb0, mb1) x N panels [jp0, jp1), all of K.
void runTask(void *context, int64_t task) {
  const SgemmJob &job = *static_cast<const SgemmJob *>(context);
  const SgemmKernel &kern = *job.kern;
  const SgemmCall &g = *job.g;
  const int64_t nr = kern.nr, mc = kern.mc;
  const int64_t mBlocks = (g.m + mc - 1) / mc, nPanels = (g.n + nr - 1) / nr;
  const int64_t padded = nPanels * nr;
  int64_t mb0 = 0, mb1 = mBlocks, jp0 = 0, jp1 = nPanels;
  if (job.splitRows) {
    mb0 = mBlocks * task / job.tasks;
    mb1 = mBlocks * (task + 1) / job.tasks;
  } else {
    jp0 = nPanels * task / job.tasks;
    jp1 = nPanels * (task + 1) / job.tasks;
  }
  float *aPacked = job.scratch + task * static_cast<int64_t>(sgemmScratchFloats(kern, g.m, g.k));
  SgemmTile t = tileOf(g);
  const float *columnBias = g.epilogue.biasPerRow ? nullptr : g.epilogue.bias;
  const float *rowBias = g.epilogue.biasPerRow ? g.epilogue.bias : nullptr;
  for (int64_t pc = 0; pc < g.k; pc += kSgemmKc) {
    int64_t kc = std::min(kSgemmKc, g.k - pc);
    t.kc = kc;
    t.first = pc == 0;
    t.last = pc + kc == g.k;
    for (int64_t mb = mb0; mb < mb1; ++mb) {
      int64_t i0 = mb * mc, rows = std::min(mc, g.m - i0);
      packARows(g, kern.mr, i0, rows, pc, kc, aPacked);
      for (int64_t jp = jp0; jp < jp1; ++jp) {
        int64_t j0 = jp * nr;
        t.b = g.packedB + pc * padded + j0 * kc;
        t.cols = static_cast<int>(std::min(nr, g.n - j0));
        t.bias = columnBias ? columnBias + j0 : nullptr;
        // The next panel in packB's layout (the next K block's first after
        // the last; past the end a prefetch is only a hint, never a fault).
        runRowTiles(kern, t, aPacked, i0, rows, rowBias, g.c + j0, t.b + kc * nr);
      }
    }
  }
}

} // namespace

size_t sgemmScratchFloats(const SgemmKernel &kern, int64_t m, int64_t k) {
  int64_t rows = std::min(kern.mc, (m + kern.mr - 1) / kern.mr * kern.mr);
  return static_cast<size_t>(rows * std::min(kSgemmKc, k));
}

int sgemmTasks(int threads) { return std::max(threads, 1); }

void sgemmPacked(const SgemmKernel &kern, const SgemmCall &call, float *scratch, ThreadPool &pool) {
  const int64_t mBlocks = (call.m + kern.mc - 1) / kern.mc;
  const int64_t nPanels = (call.n + kern.nr - 1) / kern.nr;
  // Whole M blocks per thread when there are enough (each packs only its
  // own rows of A), else N panels (each thread packs all of A once).
  SgemmJob job{&kern, &call, scratch, 1, true};
  int threads = pool.threads();
  if (threads > 1) {
    job.splitRows = mBlocks >= threads;
    job.tasks = std::min<int64_t>(threads, job.splitRows ? mBlocks : nPanels);
  }
  if (job.tasks <= 1)
    runTask(&job, 0);
  else
    pool.parallelFor(job.tasks, runTask, &job);
}

size_t packedAFloats(const SgemmKernel &kern, int64_t m, int64_t k) {
  return static_cast<size_t>(k * ((m + kern.mr - 1) / kern.mr * kern.mr));
}

void packA(const SgemmKernel &kern, const float *a, int64_t lda, bool transA, int64_t m, int64_t k,
           float *dst) {
  const int64_t padded = (m + kern.mr - 1) / kern.mr * kern.mr;
  SgemmCall g{};
  g.m = m;
  g.k = k;
  g.a = a;
  g.lda = lda;
  g.transA = transA;
  for (int64_t pc = 0; pc < k; pc += kSgemmKc) {
    int64_t kc = std::min(kSgemmKc, k - pc);
    // Block (pc, i0) starts after pc full columns and i0 rows of this one.
    for (int64_t i0 = 0; i0 < m; i0 += kern.mc)
      packARows(g, kern.mr, i0, std::min(kern.mc, m - i0), pc, kc, dst + pc * padded + i0 * kc);
  }
}

namespace {

/// Columns of B one task packs at a time: 8 panels of kSgemmKc rows (256
/// KiB with AVX-512's 32 columns), which the M blocks then reuse from L2.
constexpr int64_t kPackedAPanelsPerChunk = 8;

struct PackedAJob {
  const SgemmKernel *kern;
  const SgemmPackedACall *g;
  float *scratch;
  int64_t tasks;
};

/// One task: N panels [jp0, jp1), all of M and K. Per K block and chunk of
/// panels, the chunk of B is packed once and serves every M block.
void runPackedATask(void *context, int64_t task) {
  const PackedAJob &job = *static_cast<const PackedAJob *>(context);
  const SgemmKernel &kern = *job.kern;
  const SgemmPackedACall &g = *job.g;
  const int64_t mr = kern.mr, nr = kern.nr, mc = kern.mc;
  const int64_t nPanels = (g.n + nr - 1) / nr, padded = (g.m + mr - 1) / mr * mr;
  const int64_t jp0 = nPanels * task / job.tasks, jp1 = nPanels * (task + 1) / job.tasks;
  float *bPacked = job.scratch + task * static_cast<int64_t>(sgemmPackedAScratchFloats(kern, g.n, g.k));
  SgemmTile t = tileOf(g);
  const float *columnBias = g.epilogue.biasPerRow ? nullptr : g.epilogue.bias;
  const float *rowBias = g.epilogue.biasPerRow ? g.epilogue.bias : nullptr;
  for (int64_t pc = 0; pc < g.k; pc += kSgemmKc) {
    int64_t kc = std::min(kSgemmKc, g.k - pc);
    t.kc = kc;
    t.first = pc == 0;
    t.last = pc + kc == g.k;
    for (int64_t chunk = jp0; chunk < jp1; chunk += kPackedAPanelsPerChunk) {
      int64_t chunkEnd = std::min(jp1, chunk + kPackedAPanelsPerChunk);
      int64_t j0 = chunk * nr, cols = std::min(g.n, chunkEnd * nr) - j0;
      // The chunk's panels, each kc x nr (packB's layout for one K block).
      const float *b = g.transB ? g.b + j0 * g.ldb + pc : g.b + pc * g.ldb + j0;
      packB(kern, b, g.ldb, g.transB, kc, cols, bPacked);
      for (int64_t i0 = 0; i0 < g.m; i0 += mc) {
        int64_t rows = std::min(mc, g.m - i0);
        const float *aBlock = g.packedA + pc * padded + i0 * kc;
        for (int64_t jp = chunk; jp < chunkEnd; ++jp) {
          int64_t j = jp * nr;
          t.b = bPacked + (jp - chunk) * nr * kc;
          t.cols = static_cast<int>(std::min(nr, g.n - j));
          t.bias = columnBias ? columnBias + j : nullptr;
          runRowTiles(kern, t, aBlock, i0, rows, rowBias, g.c + j, nullptr);
        }
      }
    }
  }
}

} // namespace

size_t sgemmPackedAScratchFloats(const SgemmKernel &kern, int64_t n, int64_t k) {
  int64_t cols = std::min(kPackedAPanelsPerChunk * kern.nr, (n + kern.nr - 1) / kern.nr * kern.nr);
  return static_cast<size_t>(cols * std::min(kSgemmKc, k));
}

void sgemmPackedA(const SgemmKernel &kern, const SgemmPackedACall &call, float *scratch,
                  ThreadPool &pool) {
  const int64_t nPanels = (call.n + kern.nr - 1) / kern.nr;
  PackedAJob job{&kern, &call, scratch, std::min<int64_t>(std::max(pool.threads(), 1), nPanels)};
  if (job.tasks <= 1)
    runPackedATask(&job, 0);
  else
    pool.parallelFor(job.tasks, runPackedATask, &job);
}

namespace {

/// Rows of C each transpose task writes (per item of the batch).
constexpr int64_t kTransposeRows = 16;

/// Task t writes rows [r0, r0 + kTransposeRows) of one C_i in blocks of 16
/// columns, so that the 16 rows of the product a block reads stay in L1
/// while it is written.
struct TransposeJob {
  const SgemmTransposedCall *g;
  const float *product;
  int64_t rowBlocks; // per item
};

void runTransposeTask(void *context, int64_t task) {
  const TransposeJob &job = *static_cast<const TransposeJob *>(context);
  const SgemmTransposedCall &g = *job.g;
  const int64_t i = task / job.rowBlocks, r0 = task % job.rowBlocks * kTransposeRows;
  const int64_t r1 = std::min(g.m, r0 + kTransposeRows);
  const float *p = job.product + i * g.n * g.m;
  float *c = g.c + i * g.strideC;
  const SgemmEpilogue &e = g.epilogue;
  const bool epilogue = e.bias || e.activation != NNCC_ACTIVATION_NONE || g.beta != 0;
  for (int64_t j0 = 0; j0 < g.n; j0 += 16) {
    int64_t j1 = std::min(g.n, j0 + 16);
    for (int64_t r = r0; r < r1; ++r) {
      if (!epilogue) {
        for (int64_t j = j0; j < j1; ++j)
          c[r * g.ldc + j] = p[j * g.m + r];
        continue;
      }
      for (int64_t j = j0; j < j1; ++j) {
        float v = p[j * g.m + r];
        if (g.beta != 0)
          v += g.beta * c[r * g.ldc + j];
        if (e.bias)
          v += e.bias[e.biasPerRow ? r : j];
        if (e.activation == NNCC_ACTIVATION_RELU)
          v = v > 0 ? v : 0;
        else if (e.activation == NNCC_ACTIVATION_CLIP)
          v = std::min(std::max(v, e.clipMin), e.clipMax);
        c[r * g.ldc + j] = v;
      }
    }
  }
}

double panelFill(int64_t cols, int nr) {
  return static_cast<double>(cols) / static_cast<double>((cols + nr - 1) / nr * nr);
}

} // namespace

size_t sgemmTransposedProductFloats(int64_t batch, int64_t m, int64_t n) {
  return static_cast<size_t>(batch * n * m);
}

size_t sgemmTransposedScratchFloats(const SgemmKernel &kern, int64_t batch, int64_t n, int64_t k) {
  return sgemmScratchFloats(kern, batch * n, k);
}

void sgemmTransposed(const SgemmKernel &kern, const SgemmTransposedCall &g, float *product,
                     float *scratch, ThreadPool &pool) {
  // Row (i, j) of the stacked product is column j of op(B_i).
  SgemmCall call{g.batch * g.n, g.m,     g.k,  g.b,   g.ldb, !g.transB, g.packedAT,
                 product,       g.m,     g.alpha, 0.0f, SgemmEpilogue{}};
  call.aBatchRows = g.n;
  call.aBatchStride = g.strideB;
  sgemmPacked(kern, call, scratch, pool);
  TransposeJob job{&g, product, (g.m + kTransposeRows - 1) / kTransposeRows};
  int64_t tasks = g.batch * job.rowBlocks;
  if (pool.threads() > 1 && tasks > 1)
    pool.parallelFor(tasks, runTransposeTask, &job);
  else
    for (int64_t t = 0; t < tasks; ++t)
      runTransposeTask(&job, t);
}

bool sgemmTransposedIsCheaper(const SgemmKernel &kern, int64_t m, int64_t n, int64_t k) {
  double direct = static_cast<double>(k) * (1 / panelFill(n, kern.nr) - 1);
  double transposed = static_cast<double>(k) * (1 / panelFill(m, kern.nr) - 1) + 2.0 * kern.lanes;
  return transposed < direct;
}

} // namespace nncc::rt
