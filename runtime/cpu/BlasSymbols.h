//===- BlasSymbols.h - the CPU BLAS functions the runtime resolves --------===//
//
// An X-macro table in the style of IREE's dynamic_symbol_tables.h: one line per
// function, expanded into the function-pointer struct and the dlsym loop, so a
// function is declared exactly once. REQUIRED symbols must all resolve for a
// library to be used; OPTIONAL ones may be missing (NULL).
//
// CBLAS enums are passed as int (CblasRowMajor = 101, CblasNoTrans = 111,
// CblasTrans = 112), as every CBLAS ABI does.
//
//===----------------------------------------------------------------------===//

// NNCC_BLAS_REQUIRED(name, return type, parameter list)
NNCC_BLAS_REQUIRED(cblas_sgemm, void,
                   (int order, int trans_a, int trans_b, int m, int n, int k, float alpha,
                    const float *a, int lda, const float *b, int ldb, float beta, float *c,
                    int ldc))
// Matrix-vector products: GEMMs with one row (batch-1 dense layers) avoid
// sgemm's packing of the whole weight matrix on every call.
NNCC_BLAS_OPTIONAL(cblas_sgemv, void,
                   (int order, int trans, int m, int n, float alpha, const float *a, int lda,
                    const float *x, int incx, float beta, float *y, int incy))
// OpenBLAS only: its thread count (process-wide).
NNCC_BLAS_OPTIONAL(openblas_set_num_threads, void, (int threads))
// OpenBLAS only: the kernel set its CPU detection chose ("SkylakeX", "Prescott").
NNCC_BLAS_OPTIONAL(openblas_get_corename, char *, (void))
