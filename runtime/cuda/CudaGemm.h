//===- CudaGemm.h - one GEMM step prepared for cuBLASLt -------------------===//
//
// cuBLASLt is column-major; the plan's GEMMs are row-major. A row-major C
// (MxN) is a column-major C^T (NxM), and C^T = op(B)^T op(A)^T, so the step
// runs as a column-major GEMM of B and A swapped, with m = N and n = M; each
// stored row-major matrix is read as its column-major transpose, same
// leading dimension. The bias (one value per row-major column) is then one
// value per column-major row, which is what cuBLASLt's bias epilogue adds.
//
// Descriptors, layouts and the algorithm are chosen once, at session
// creation; a run only sets the bias pointer (it may be an input) and
// enqueues cublasLtMatmul, which stream capture records into the graph.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_CUDA_CUDAGEMM_H
#define NNCC_RUNTIME_CUDA_CUDAGEMM_H

#include "../GemmParams.h"
#include "CublasLt.h"
#include "CudaDriver.h"

#include <memory>

namespace nncc::rt {

class CudaGemm {
public:
  /// Prepares `step`. alignment[i]: the alignment in bytes (a power of two,
  /// at most 256) of arg i's device address; biasHint: an address with the
  /// bias's alignment (cuBLASLt picks its algorithm from it).
  static Status create(const CublasLt &lt, cublasLtHandle_t handle, const nncc_step &step,
                       const int64_t alignment[4], CUdeviceptr biasHint, size_t workspaceBytes,
                       const std::string &where, std::unique_ptr<CudaGemm> *out);
  ~CudaGemm();

  /// Enqueues the product on `stream`. args: A, B, C and the bias (or 0).
  Status enqueue(const CUdeviceptr *args, CUdeviceptr workspace, CUstream stream) const;

private:
  CudaGemm(const CublasLt &lt, cublasLtHandle_t handle) : lt_(lt), handle_(handle) {}
  /// (Re)creates the three layouts, batched (strided) or for one matrix.
  Status makeLayouts(bool batched);
  void destroyLayouts();

  const CublasLt &lt_;
  cublasLtHandle_t handle_;
  std::string where_;
  GemmParams params_{};
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t layoutA_ = nullptr, layoutB_ = nullptr, layoutC_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  size_t workspaceBytes_ = 0;
  bool perBatch_ = false; // no batched algorithm: one call per batch
};

} // namespace nncc::rt

#endif // NNCC_RUNTIME_CUDA_CUDAGEMM_H
