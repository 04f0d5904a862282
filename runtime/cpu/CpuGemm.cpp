//===- CpuGemm.cpp --------------------------------------------------------===//
#include "CpuGemm.h"

#include "HalfFloat.h"

#include <algorithm>
#include <cmath>

namespace nncc::rt {

namespace {

constexpr int kCblasRowMajor = 101, kCblasNoTrans = 111, kCblasTrans = 112;

/// `batch` f32 GEMMs through the BLAS; c has leading dimension ldc.
void sgemmBatch(const BlasSymbols &blas, const GemmParams &g, const float *a, const float *b,
                float *c) {
  int m = static_cast<int>(g.m), n = static_cast<int>(g.n), k = static_cast<int>(g.k);
  int lda = static_cast<int>(g.lda), ldb = static_cast<int>(g.ldb), ldc = static_cast<int>(g.ldc);
  int ta = g.transA ? kCblasTrans : kCblasNoTrans, tb = g.transB ? kCblasTrans : kCblasNoTrans;
  for (int64_t i = 0; i < g.batch; ++i) {
    const float *ai = a + i * g.strideA, *bi = b + i * g.strideB;
    float *ci = c + i * g.strideC;
    if (m == 1 && blas.cblas_sgemv) {
      // c(1 x n) = a(1 x k) op(b)(k x n): op(b)^T times the row of a.
      int incx = g.transA ? lda : 1;
      if (g.transB) // b is n x k
        blas.cblas_sgemv(kCblasRowMajor, kCblasNoTrans, n, k, g.alpha, bi, ldb, ai, incx, g.beta,
                         ci, 1);
      else // b is k x n
        blas.cblas_sgemv(kCblasRowMajor, kCblasTrans, k, n, g.alpha, bi, ldb, ai, incx, g.beta,
                         ci, 1);
      continue;
    }
    blas.cblas_sgemm(kCblasRowMajor, ta, tb, m, n, k, g.alpha, ai, lda, bi, ldb, g.beta, ci, ldc);
  }
}

float toFloat(int32_t dtype, const void *p, int64_t i) {
  auto h = static_cast<const uint16_t *>(p)[i];
  return dtype == NNCC_DTYPE_F16 ? f16ToFloat(h) : bf16ToFloat(h);
}

/// f16/bf16 elements [0, n) of src widened into dst (sized by reserve()).
const float *widen(int32_t dtype, const void *src, int64_t n, std::vector<float> &dst) {
  for (int64_t i = 0; i < n; ++i)
    dst[i] = toFloat(dtype, src, i);
  return dst.data();
}

float activate(int64_t activation, float v) {
  switch (static_cast<nncc_activation>(activation)) {
  case NNCC_ACTIVATION_RELU:
    return v > 0 ? v : 0;
  case NNCC_ACTIVATION_GELU:
    return 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752f));
  case NNCC_ACTIVATION_NONE:
  case NNCC_ACTIVATION_CLIP: // runEpilogueChunk's own loop
    break;
  }
  return v;
}

/// Elements of C below which the epilogue runs on the calling thread alone.
constexpr int64_t kParallelEpilogueElements = 16384;

/// The epilogue over rows [begin, end) of all batches' C (batch * M rows).
struct EpilogueJob {
  const GemmParams *g;
  float *c;             // the f32 product (C itself, or scratch)
  const float *bias;    // N values, or null
  uint16_t *out16;      // a f16/bf16 C to round into, or null (C is f32: in place)
  int64_t rows, chunks; // rows of all batches; pieces they are split into
};

void runEpilogueChunk(void *context, int64_t chunk) {
  const EpilogueJob &job = *static_cast<const EpilogueJob *>(context);
  const GemmParams &g = *job.g;
  int64_t begin = job.rows * chunk / job.chunks, end = job.rows * (chunk + 1) / job.chunks;
  // One simple loop per stage, so that the bias add and ReLU vectorize (a
  // per-element switch over the activation and the output type does not).
  for (int64_t r = begin; r < end; ++r) {
    int64_t row = (r / g.m) * g.strideC + (r % g.m) * g.ldc;
    float *c = job.c + row;
    if (job.bias && g.biasPerRow) {
      float b = job.bias[r % g.m];
      for (int64_t j = 0; j < g.n; ++j)
        c[j] += b;
    } else if (job.bias) {
      for (int64_t j = 0; j < g.n; ++j)
        c[j] += job.bias[j];
    }
    if (g.activation == NNCC_ACTIVATION_RELU)
      for (int64_t j = 0; j < g.n; ++j)
        c[j] = c[j] > 0 ? c[j] : 0;
    else if (g.activation == NNCC_ACTIVATION_CLIP)
      for (int64_t j = 0; j < g.n; ++j)
        c[j] = std::min(std::max(c[j], g.clipMin), g.clipMax);
    else if (g.activation != NNCC_ACTIVATION_NONE)
      for (int64_t j = 0; j < g.n; ++j)
        c[j] = activate(g.activation, c[j]);
    if (job.out16)
      for (int64_t j = 0; j < g.n; ++j)
        job.out16[row + j] = g.dtypeC == NNCC_DTYPE_F16 ? floatToF16(c[j]) : floatToBf16(c[j]);
  }
}

/// The choice between the runtime's own kernel and the BLAS, by what the
/// step is rather than by timings of one machine (docs/performance.md):
/// the own kernel needs f32 throughout, K >= 1 (K = 0 is only the epilogue)
/// and a B that is a module weight, so that B is packed once per session,
/// never per run. Everything else (f16/bf16, B computed by the model) runs
/// on the BLAS, which packs B on every call anyway. One-row products stay
/// on the BLAS's sgemv too: with no row to reuse a packed B for, they only
/// stream B, which sgemv does where it lies, without a packed copy.
bool ownKernelFits(const nncc_step &st, const GemmParams &g) {
  return g.dtypeA == NNCC_DTYPE_F32 && g.dtypeB == NNCC_DTYPE_F32 && g.dtypeC == NNCC_DTYPE_F32 &&
         g.batch > 0 && g.m > 1 && g.n > 0 && g.k > 0 && st.args[1].kind == NNCC_BUFFER_WEIGHT;
}

/// Whether a product whose A is the module weight runs on the own kernel
/// transposed (sgemmTransposed): op(A)^T is then packed once, when the
/// session is created. Only for f32, one A for the whole batch, and where
/// the cost model says so (sgemmTransposedIsCheaper); an accumulator (beta,
/// a convolution's residual) is added as the product is transposed into C.
bool transposedFits(const nncc_step &st, const GemmParams &g, const SgemmKernel &kern) {
  return g.dtypeA == NNCC_DTYPE_F32 && g.dtypeB == NNCC_DTYPE_F32 && g.dtypeC == NNCC_DTYPE_F32 &&
         g.batch > 0 && g.m > 0 && g.n > 0 && g.k > 0 && g.batch * g.n > 1 &&
         (g.strideA == 0 || g.batch == 1) && st.args[0].kind == NNCC_BUFFER_WEIGHT &&
         st.args[1].kind != NNCC_BUFFER_WEIGHT && sgemmTransposedIsCheaper(kern, g.m, g.n, g.k);
}

/// Row tiles a packed-A product needs before the own kernel takes it: each
/// chunk of B it packs per call serves ceil(M / mr) tiles, and with fewer
/// than 4 the packing weighs on the product (MobileNet's projections, M = 16
/// to 32 channels over 3136 positions, ran 8-12% slower than on the BLAS
/// with its epilogue pass after it; the expansions, M >= 96, 26% faster with
/// the epilogue applied in registers: docs/performance.md).
constexpr int64_t kPackedAMinRowTiles = 4;

/// Whether a product whose A is the module weight runs on the own kernel
/// as it is (sgemmPackedA), A packed once when the session is created and
/// B packed per call (as the BLAS packs both per call), with the bias (per
/// row or column), residual (beta) and ReLU/Clip applied to the
/// accumulators. Same operand rules as transposedFits, for every such step
/// the transposed form does not take and whose M fills kPackedAMinRowTiles
/// row tiles; one-column products stay on the BLAS's sgemv.
bool packedAFits(const nncc_step &st, const GemmParams &g, const SgemmKernel &kern) {
  return g.dtypeA == NNCC_DTYPE_F32 && g.dtypeB == NNCC_DTYPE_F32 && g.dtypeC == NNCC_DTYPE_F32 &&
         g.batch > 0 && g.m >= kPackedAMinRowTiles * kern.mr && g.n > 1 && g.k > 0 &&
         (g.strideA == 0 || g.batch == 1) && st.args[0].kind == NNCC_BUFFER_WEIGHT &&
         st.args[1].kind != NNCC_BUFFER_WEIGHT;
}

/// The step's bias and activation for the own kernel (bias: args[3], or null).
SgemmEpilogue epilogueOf(const GemmParams &g, const float *bias) {
  return SgemmEpilogue{bias, static_cast<int>(g.activation), g.biasPerRow, g.clipMin, g.clipMax};
}

int64_t span(const GemmParams &g, int64_t rows, int64_t cols, int64_t ld, int64_t stride) {
  int64_t n = 0;
  matrixSpan(g.batch, rows, cols, ld, stride, &n); // verified at load: no overflow
  return n;
}

} // namespace

int64_t CpuGemm::reserve(const nncc_plan &plan, std::vector<StepArgs<void *>> &args,
                         int threads) {
  kernel_ = sgemmKernelFor();
  int64_t bytes = 0;
  size_t a = 0, b = 0, c = 0, bias = 0, aPacked = 0, product = 0;
  for (int32_t e = 0; e < plan.num_entries; ++e) {
    const nncc_entry &entry = plan.entries[e];
    for (int32_t s = 0; s < entry.num_steps; ++s) {
      const nncc_step &st = entry.steps[s];
      if (st.kind != NNCC_STEP_GEMM)
        continue;
      GemmParams g = decodeGemm(st);
      if (kernel_ && ownKernelFits(st, g)) {
        // One packed copy per batch, or one for all when B broadcasts.
        const float *src = static_cast<const float *>(args[e].of(s)[1]);
        int64_t copies = g.strideB == 0 ? 1 : g.batch;
        PackedWeight packed{AlignedFloats(), packedBFloats(*kernel_, g.k, g.n)};
        packed.data = allocFloats(packed.perBatch * copies);
        for (int64_t i = 0; i < copies; ++i)
          packB(*kernel_, src + i * g.strideB, g.ldb, g.transB, g.k, g.n,
                packed.data.get() + i * packed.perBatch);
        bytes += static_cast<int64_t>(packed.perBatch * copies * sizeof(float));
        own_.emplace(&st, OwnStep{OwnForm::PackedB, std::move(packed)});
        aPacked = std::max(aPacked, sgemmScratchFloats(*kernel_, g.m, g.k));
      } else if (kernel_ && transposedFits(st, g, *kernel_)) {
        const float *src = static_cast<const float *>(args[e].of(s)[0]);
        // op(A)^T as the kernel's B: (p, j) = op(A)(j, p).
        PackedWeight packed{AlignedFloats(), packedBFloats(*kernel_, g.k, g.m)};
        packed.data = allocFloats(packed.perBatch);
        packB(*kernel_, src, g.lda, !g.transA, g.k, g.m, packed.data.get());
        bytes += static_cast<int64_t>(packed.perBatch * sizeof(float));
        own_.emplace(&st, OwnStep{OwnForm::TransposedA, std::move(packed)});
        aPacked = std::max(aPacked, sgemmTransposedScratchFloats(*kernel_, g.batch, g.n, g.k));
        product = std::max(product, sgemmTransposedProductFloats(g.batch, g.m, g.n));
      } else if (kernel_ && packedAFits(st, g, *kernel_)) {
        const float *src = static_cast<const float *>(args[e].of(s)[0]);
        PackedWeight packed{AlignedFloats(), packedAFloats(*kernel_, g.m, g.k)};
        packed.data = allocFloats(packed.perBatch);
        packA(*kernel_, src, g.lda, g.transA, g.m, g.k, packed.data.get());
        bytes += static_cast<int64_t>(packed.perBatch * sizeof(float));
        own_.emplace(&st, OwnStep{OwnForm::PackedA, std::move(packed)});
        aPacked = std::max(aPacked, sgemmPackedAScratchFloats(*kernel_, g.n, g.k));
      }
      if (g.dtypeA != NNCC_DTYPE_F32)
        a = std::max<size_t>(a, span(g, g.aRows(), g.aCols(), g.lda, g.strideA));
      if (g.dtypeB != NNCC_DTYPE_F32)
        b = std::max<size_t>(b, span(g, g.bRows(), g.bCols(), g.ldb, g.strideB));
      if (g.dtypeC != NNCC_DTYPE_F32) {
        c = std::max<size_t>(c, span(g, g.m, g.n, g.ldc, g.strideC));
        if (g.hasBias)
          bias = std::max<size_t>(bias, g.biasCount());
      }
    }
  }
  a_.resize(a);
  b_.resize(b);
  c_.resize(c);
  bias_.resize(bias);
  if (aPacked > 0) {
    size_t floats = static_cast<size_t>(sgemmTasks(threads)) * aPacked;
    scratch_ = allocFloats(floats);
    bytes += static_cast<int64_t>(floats * sizeof(float));
  }
  if (product > 0) {
    product_ = allocFloats(product);
    bytes += static_cast<int64_t>(product * sizeof(float));
  }
  return bytes + static_cast<int64_t>((a + b + c + bias) * sizeof(float));
}

void CpuGemm::runOwn(const GemmParams &g, const PackedWeight &b, void *const *args, ThreadPool &pool) {
  const auto *a = static_cast<const float *>(args[0]);
  auto *c = static_cast<float *>(args[2]);
  const float *bias = g.hasBias ? static_cast<const float *>(args[3]) : nullptr;
  for (int64_t i = 0; i < g.batch; ++i) {
    SgemmCall call{g.m,     g.n,     g.k,     a + i * g.strideA,
                   g.lda,   g.transA, b.data.get() + (g.strideB == 0 ? 0 : i * b.perBatch),
                   c + i * g.strideC, g.ldc, g.alpha, g.beta, epilogueOf(g, bias)};
    sgemmPacked(*kernel_, call, scratch_.get(), pool);
  }
}

void CpuGemm::runPackedA(const GemmParams &g, const PackedWeight &a, void *const *args,
                         ThreadPool &pool) {
  const auto *b = static_cast<const float *>(args[1]);
  auto *c = static_cast<float *>(args[2]);
  const float *bias = g.hasBias ? static_cast<const float *>(args[3]) : nullptr;
  for (int64_t i = 0; i < g.batch; ++i) {
    SgemmPackedACall call{g.m,      g.n,      g.k,     a.data.get(),
                          b + i * g.strideB,  g.ldb,   g.transB,
                          c + i * g.strideC,  g.ldc,   g.alpha,
                          g.beta,   epilogueOf(g, bias)};
    sgemmPackedA(*kernel_, call, scratch_.get(), pool);
  }
}

void CpuGemm::runTransposed(const GemmParams &g, const PackedWeight &at, void *const *args,
                            ThreadPool &pool) {
  SgemmTransposedCall call{g.batch,
                           g.m,
                           g.n,
                           g.k,
                           at.data.get(),
                           static_cast<const float *>(args[1]),
                           g.ldb,
                           g.strideB,
                           g.transB,
                           static_cast<float *>(args[2]),
                           g.ldc,
                           g.strideC,
                           g.alpha,
                           g.beta};
  if (g.activation != NNCC_ACTIVATION_GELU) // else runEpilogue after it
    call.epilogue = epilogueOf(g, g.hasBias ? static_cast<const float *>(args[3]) : nullptr);
  sgemmTransposed(*kernel_, call, product_.get(), scratch_.get(), pool);
}

Status CpuGemm::run(const nncc_step &step, void *const *args, ThreadPool &pool) {
  if (auto own = own_.find(&step); own != own_.end()) {
    GemmParams g = decodeGemm(step);
    const PackedWeight &weight = own->second.weight;
    switch (own->second.form) {
    case OwnForm::PackedB:
      runOwn(g, weight, args, pool);
      break;
    case OwnForm::PackedA:
      runPackedA(g, weight, args, pool);
      break;
    case OwnForm::TransposedA:
      runTransposed(g, weight, args, pool);
      // The transpose applies bias, ReLU and Clip; GELU gets its own pass.
      if (g.activation == NNCC_ACTIVATION_GELU)
        runEpilogue(g, static_cast<float *>(args[2]), static_cast<const float *>(args[3]), nullptr,
                    pool);
      break;
    }
    return Status::ok();
  }
  const Blas *blas = nullptr;
  NNCC_RETURN_IF_ERROR(Blas::get(&blas));
  blas->setThreads(pool.threads());
  GemmParams g = decodeGemm(step);
  if (g.m == 0 || g.n == 0 || g.batch == 0)
    return Status::ok();
  if (g.plainF32()) {
    sgemmBatch(blas->symbols(), g, static_cast<const float *>(args[0]),
               static_cast<const float *>(args[1]), static_cast<float *>(args[2]));
    return Status::ok();
  }

  const float *a = g.dtypeA == NNCC_DTYPE_F32
                       ? static_cast<const float *>(args[0])
                       : widen(g.dtypeA, args[0], span(g, g.aRows(), g.aCols(), g.lda, g.strideA), a_);
  const float *b = g.dtypeB == NNCC_DTYPE_F32
                       ? static_cast<const float *>(args[1])
                       : widen(g.dtypeB, args[1], span(g, g.bRows(), g.bCols(), g.ldb, g.strideB), b_);
  bool narrowC = g.dtypeC != NNCC_DTYPE_F32;
  float *c = static_cast<float *>(args[2]);
  if (narrowC) {
    c = c_.data();
    // beta = 0 never reads C: the BLAS overwrites it.
    if (g.beta != 0)
      widen(g.dtypeC, args[2], span(g, g.m, g.n, g.ldc, g.strideC), c_);
  }
  sgemmBatch(blas->symbols(), g, a, b, c);

  const float *bias = nullptr;
  if (g.hasBias)
    bias = g.dtypeC == NNCC_DTYPE_F32 ? static_cast<const float *>(args[3])
                                      : widen(g.dtypeC, args[3], g.biasCount(), bias_);
  runEpilogue(g, c, bias, narrowC ? static_cast<uint16_t *>(args[2]) : nullptr, pool);
  return Status::ok();
}

void CpuGemm::runEpilogue(const GemmParams &g, float *c, const float *bias, uint16_t *out16,
                          ThreadPool &pool) {
  // One pass over C: bias, activation, and the single rounding to its dtype;
  // rows split over the pool when there is enough of it (erf is not cheap).
  EpilogueJob job{&g, c, g.hasBias ? bias : nullptr, out16, g.batch * g.m, 1};
  if (pool.threads() > 1 && job.rows * g.n >= kParallelEpilogueElements)
    job.chunks = std::min<int64_t>(job.rows, int64_t(pool.threads()) * 4);
  if (job.chunks == 1)
    runEpilogueChunk(&job, 0);
  else
    pool.parallelFor(job.chunks, runEpilogueChunk, &job);
}

} // namespace nncc::rt
