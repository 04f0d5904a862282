//===- CudaGemm.cpp -------------------------------------------------------===//
#include "CudaGemm.h"

#include "../DType.h"

namespace nncc::rt {

namespace {

cudaDataType_t cudaType(int32_t dtype) {
  switch (dtype) {
  case NNCC_DTYPE_F16:
    return CUDA_R_16F;
  case NNCC_DTYPE_BF16:
    return CUDA_R_16BF;
  default: // the verifier admits f32, f16 and bf16 only
    return CUDA_R_32F;
  }
}

cublasLtEpilogue_t epilogue(const GemmParams &g) {
  switch (static_cast<nncc_activation>(g.activation)) {
  case NNCC_ACTIVATION_RELU:
    return g.hasBias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
  case NNCC_ACTIVATION_GELU:
    return g.hasBias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
  case NNCC_ACTIVATION_NONE:
  case NNCC_ACTIVATION_CLIP: // refused by create()
    break;
  }
  return g.hasBias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
}

} // namespace

Status CudaGemm::create(const CublasLt &lt, cublasLtHandle_t handle, const nncc_step &step,
                        const int64_t alignment[4], CUdeviceptr biasHint, size_t workspaceBytes,
                        const std::string &where, std::unique_ptr<CudaGemm> *out) {
  std::unique_ptr<CudaGemm> gemm(new CudaGemm(lt, handle));
  CudaGemm &G = *gemm;
  G.where_ = where;
  G.workspaceBytes_ = workspaceBytes;
  GemmParams &g = G.params_;
  g = decodeGemm(step);
  // cuBLASLt (compute 32F, scale 32F) has algorithms only for A and B of one
  // type, with C of that type or, for f16/bf16 operands, f32.
  if (g.dtypeA != g.dtypeB || (g.dtypeC != g.dtypeA && g.dtypeC != NNCC_DTYPE_F32))
    return error(NNCC_ERROR_UNSUPPORTED,
                 format("%s: cuBLASLt has no GEMM for %s x %s -> %s (A and B need one type, and "
                        "C that type or f32 for f16/bf16 operands)",
                        where.c_str(), dtypeName(g.dtypeA), dtypeName(g.dtypeB),
                        dtypeName(g.dtypeC)));
  if (g.biasPerRow || g.activation == NNCC_ACTIVATION_CLIP) // the verifier refuses these too
    return error(NNCC_ERROR_UNSUPPORTED,
                 format("%s: cuBLASLt has no per-row bias or clip epilogue", where.c_str()));
  bool f32Inputs = g.dtypeA == NNCC_DTYPE_F32 && g.dtypeB == NNCC_DTYPE_F32;
  cublasComputeType_t compute =
      f32Inputs && g.allowTf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  NNCC_LT_CALL(lt, where, cublasLtMatmulDescCreate, &G.desc_, compute, CUDA_R_32F);

  // Swapped operands (see the header): cuBLASLt's A is the plan's B.
  cublasOperation_t opA = g.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opB = g.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  auto setDesc = [&](cublasLtMatmulDescAttributes_t attr, const void *value, size_t bytes) {
    return lt.check(lt.sym().cublasLtMatmulDescSetAttribute(G.desc_, attr, value, bytes),
                    "cublasLtMatmulDescSetAttribute", where);
  };
  NNCC_RETURN_IF_ERROR(setDesc(CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof(opA)));
  NNCC_RETURN_IF_ERROR(setDesc(CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof(opB)));
  cublasLtEpilogue_t epi = epilogue(g);
  NNCC_RETURN_IF_ERROR(setDesc(CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)));
  if (g.hasBias) {
    int32_t biasType = cudaType(g.dtypeC);
    NNCC_RETURN_IF_ERROR(setDesc(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &biasType, sizeof(biasType)));
    // The same bias for every batch.
    int64_t biasStride = 0;
    NNCC_RETURN_IF_ERROR(
        setDesc(CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, &biasStride, sizeof(biasStride)));
    NNCC_RETURN_IF_ERROR(setDesc(CUBLASLT_MATMUL_DESC_BIAS_POINTER, &biasHint, sizeof(biasHint)));
  }

  NNCC_RETURN_IF_ERROR(G.makeLayouts(g.batch > 1));

  cublasLtMatmulPreference_t pref = nullptr;
  NNCC_LT_CALL(lt, where, cublasLtMatmulPreferenceCreate, &pref);
  struct PrefGuard {
    const CublasLt &lt;
    cublasLtMatmulPreference_t p;
    ~PrefGuard() { lt.sym().cublasLtMatmulPreferenceDestroy(p); }
  } guard{lt, pref};
  uint64_t ws = workspaceBytes;
  NNCC_LT_CALL(lt, where, cublasLtMatmulPreferenceSetAttribute, pref,
               CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
  std::pair<cublasLtMatmulPreferenceAttributes_t, int64_t> aligns[] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignment[1]},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignment[0]},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignment[2]},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignment[2]}};
  auto setAligns = [&]() -> Status {
    for (const auto &a : aligns) {
      uint32_t bytes = static_cast<uint32_t>(a.second);
      NNCC_LT_CALL(lt, where, cublasLtMatmulPreferenceSetAttribute, pref, a.first, &bytes,
                   sizeof(bytes));
    }
    return Status::ok();
  };
  NNCC_RETURN_IF_ERROR(setAligns());
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  auto query = [&]() -> Status {
    found = 0;
    cublasStatus_t st = lt.sym().cublasLtMatmulAlgoGetHeuristic(
        handle, G.desc_, G.layoutA_, G.layoutB_, G.layoutC_, G.layoutC_, pref, 1, &result, &found);
    if (st == CUBLAS_STATUS_NOT_SUPPORTED)
      found = 0; // no algorithm: the same answer as found == 0
    else
      NNCC_RETURN_IF_ERROR(lt.check(st, "cublasLtMatmulAlgoGetHeuristic", where));
    return Status::ok();
  };
  NNCC_RETURN_IF_ERROR(query());
  // A batch cuBLASLt has no batched algorithm for (e.g. a broadcast operand
  // of stride 0) runs as `batch` single products, one call each.
  if (found == 0 && g.batch > 1) {
    // Matrix b starts at base + b * stride bytes: at most as aligned as the
    // stride (in bytes) for every b > 0.
    auto strided = [](int64_t align, int64_t strideBytes) {
      int64_t s = strideBytes & -strideBytes; // largest power of two dividing it
      return strideBytes == 0 || s >= align ? align : s;
    };
    auto bytes = [](int64_t stride, int32_t dtype) {
      return stride * static_cast<int64_t>(dtypeSize(dtype));
    };
    aligns[0].second = strided(alignment[1], bytes(g.strideB, g.dtypeB));
    aligns[1].second = strided(alignment[0], bytes(g.strideA, g.dtypeA));
    aligns[2].second = aligns[3].second = strided(alignment[2], bytes(g.strideC, g.dtypeC));
    NNCC_RETURN_IF_ERROR(setAligns());
    NNCC_RETURN_IF_ERROR(G.makeLayouts(false));
    NNCC_RETURN_IF_ERROR(query());
    G.perBatch_ = found > 0;
  }
  if (found == 0)
    return error(NNCC_ERROR_UNSUPPORTED,
                 format("%s: cuBLASLt has no algorithm for this GEMM (%s x %s -> %s, batch %lld, "
                        "M=%lld N=%lld K=%lld%s)",
                        where.c_str(), dtypeName(g.dtypeA), dtypeName(g.dtypeB),
                        dtypeName(g.dtypeC), (long long)g.batch, (long long)g.m, (long long)g.n,
                        (long long)g.k, g.hasBias ? ", with bias" : ""));
  G.algo_ = result.algo;
  *out = std::move(gemm);
  return Status::ok();
}

Status CudaGemm::makeLayouts(bool batched) {
  destroyLayouts();
  const GemmParams &g = params_;
  auto layout = [&](cublasLtMatrixLayout_t *l, int32_t dtype, int64_t rows, int64_t cols,
                    int64_t ld, int64_t stride) -> Status {
    NNCC_LT_CALL(lt_, where_, cublasLtMatrixLayoutCreate, l, cudaType(dtype),
                 static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), ld);
    if (batched) {
      int32_t count = static_cast<int32_t>(g.batch);
      NNCC_LT_CALL(lt_, where_, cublasLtMatrixLayoutSetAttribute, *l,
                   CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count));
      NNCC_LT_CALL(lt_, where_, cublasLtMatrixLayoutSetAttribute, *l,
                   CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride));
    }
    return Status::ok();
  };
  // Column-major views of the row-major operands, B and A swapped.
  NNCC_RETURN_IF_ERROR(layout(&layoutA_, g.dtypeB, g.transB ? g.k : g.n, g.transB ? g.n : g.k,
                              g.ldb, g.strideB));
  NNCC_RETURN_IF_ERROR(layout(&layoutB_, g.dtypeA, g.transA ? g.m : g.k, g.transA ? g.k : g.m,
                              g.lda, g.strideA));
  return layout(&layoutC_, g.dtypeC, g.n, g.m, g.ldc, g.strideC);
}

void CudaGemm::destroyLayouts() {
  for (cublasLtMatrixLayout_t *l : {&layoutA_, &layoutB_, &layoutC_}) {
    if (*l)
      lt_.sym().cublasLtMatrixLayoutDestroy(*l);
    *l = nullptr;
  }
}

CudaGemm::~CudaGemm() {
  const CublasLtSymbols &s = lt_.sym();
  destroyLayouts();
  if (desc_)
    s.cublasLtMatmulDescDestroy(desc_);
}

Status CudaGemm::enqueue(const CUdeviceptr *args, CUdeviceptr workspace, CUstream stream) const {
  const GemmParams &g = params_;
  if (g.m == 0 || g.n == 0 || g.batch == 0)
    return Status::ok();
  if (g.hasBias)
    NNCC_LT_CALL(lt_, where_, cublasLtMatmulDescSetAttribute, desc_,
                 CUBLASLT_MATMUL_DESC_BIAS_POINTER, &args[3], sizeof(args[3]));
  auto ptr = [](CUdeviceptr p) { return reinterpret_cast<void *>(static_cast<uintptr_t>(p)); };
  int64_t calls = perBatch_ ? g.batch : 1;
  for (int64_t b = 0; b < calls; ++b) {
    // Per-batch calls step through the batch by hand (bytes of each stride).
    CUdeviceptr a = args[0] + static_cast<CUdeviceptr>(b * g.strideA * static_cast<int64_t>(dtypeSize(g.dtypeA)));
    CUdeviceptr bm = args[1] + static_cast<CUdeviceptr>(b * g.strideB * static_cast<int64_t>(dtypeSize(g.dtypeB)));
    CUdeviceptr c = args[2] + static_cast<CUdeviceptr>(b * g.strideC * static_cast<int64_t>(dtypeSize(g.dtypeC)));
    // alpha and beta are host values (the default pointer mode), read when
    // the call is enqueued or captured.
    cublasStatus_t st = lt_.sym().cublasLtMatmul(
        handle_, desc_, &g.alpha, ptr(bm), layoutA_, ptr(a), layoutB_, &g.beta, ptr(c), layoutC_,
        ptr(c), layoutC_, &algo_, ptr(workspace), workspaceBytes_,
        reinterpret_cast<cudaStream_t>(stream));
    if (st != CUBLAS_STATUS_SUCCESS)
      return lt_.check(st, "cublasLtMatmul", where_);
  }
  return Status::ok();
}

} // namespace nncc::rt
