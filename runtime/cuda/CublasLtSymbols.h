//===- CublasLtSymbols.h - the cuBLASLt functions the runtime calls -------===//
//
// As CudaSymbols.h: one line per function, prototypes from cublasLt.h.
//
//===----------------------------------------------------------------------===//

NNCC_LT(cublasLtGetVersion)
NNCC_LT(cublasLtGetStatusName)
NNCC_LT(cublasLtGetStatusString)
NNCC_LT(cublasLtCreate)
NNCC_LT(cublasLtDestroy)
NNCC_LT(cublasLtMatmulDescCreate)
NNCC_LT(cublasLtMatmulDescDestroy)
NNCC_LT(cublasLtMatmulDescSetAttribute)
NNCC_LT(cublasLtMatrixLayoutCreate)
NNCC_LT(cublasLtMatrixLayoutDestroy)
NNCC_LT(cublasLtMatrixLayoutSetAttribute)
NNCC_LT(cublasLtMatmulPreferenceCreate)
NNCC_LT(cublasLtMatmulPreferenceDestroy)
NNCC_LT(cublasLtMatmulPreferenceSetAttribute)
NNCC_LT(cublasLtMatmulAlgoGetHeuristic)
NNCC_LT(cublasLtMatmul)
