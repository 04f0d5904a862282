/* The BLAS's own single-thread sgemm rate: the practical CPU ceiling for the roofline columns.
 *
 *   sgemm [N] [RUNS]      (default 1024, 10)
 *
 * dlopen()s libopenblas.so.0 (the library nncc's runtime loads first), sets one thread, times
 * C = A*B for N x N x N after two warm-up calls, prints one JSON object. The runtime loads the
 * library first (nncc_cpu_blas_kernels), so the rate is that of the kernels the runtime runs:
 * it names OpenBLAS's kernels where OpenBLAS's own detection falls below the CPU
 * (docs/runtime.md, "The CPU BLAS's kernels"), and the dlopen below gets that same library. */
#include "nncc/runtime.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef void (*sgemm_fn)(int order, int transa, int transb, int m, int n, int k, float alpha,
                         const float *a, int lda, const float *b, int ldb, float beta, float *c,
                         int ldc);
typedef void (*set_threads_fn)(int);

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1024;
  int runs = argc > 2 ? atoi(argv[2]) : 10;
  const char *libname = "libopenblas.so.0", *kernels = "";
  if (nncc_cpu_blas_kernels(&kernels) != NNCC_OK)
    kernels = "";
  void *lib = dlopen(libname, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "sgemm: cannot load %s: %s\n", libname, dlerror());
    return 1;
  }
  sgemm_fn sgemm = (sgemm_fn)dlsym(lib, "cblas_sgemm");
  set_threads_fn set_threads = (set_threads_fn)dlsym(lib, "openblas_set_num_threads");
  if (!sgemm) {
    fprintf(stderr, "sgemm: %s has no cblas_sgemm\n", libname);
    return 1;
  }
  if (set_threads)
    set_threads(1);
  size_t elems = (size_t)n * n;
  float *a = malloc(elems * sizeof(float)), *b = malloc(elems * sizeof(float)),
        *c = malloc(elems * sizeof(float));
  srand(1);
  for (size_t i = 0; i < elems; ++i) {
    a[i] = (float)rand() / RAND_MAX - 0.5f;
    b[i] = (float)rand() / RAND_MAX - 0.5f;
    c[i] = 0;
  }
  enum { RowMajor = 101, NoTrans = 111 };
  for (int i = 0; i < 2; ++i)
    sgemm(RowMajor, NoTrans, NoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
  double *t = malloc(sizeof(double) * runs);
  for (int i = 0; i < runs; ++i) {
    double s = now();
    sgemm(RowMajor, NoTrans, NoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
    t[i] = now() - s;
  }
  qsort(t, runs, sizeof(double), cmp);
  double flops = 2.0 * n * n * (double)n;
  printf("{\"library\": \"%s\", \"kernels\": \"%s\", \"n\": %d, \"runs\": %d, \"threads\": 1, "
         "\"median_gflops\": %.2f, \"best_gflops\": %.2f, \"median_ms\": %.3f}\n",
         libname, kernels, n, runs, flops / t[runs / 2] / 1e9, flops / t[0] / 1e9, t[runs / 2] * 1e3);
  free(a);
  free(b);
  free(c);
  free(t);
  return 0;
}
