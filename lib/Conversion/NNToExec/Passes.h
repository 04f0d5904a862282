#ifndef NNCC_LIB_CONVERSION_NNTOEXEC_PASSES_H
#define NNCC_LIB_CONVERSION_NNTOEXEC_PASSES_H

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace nncc {

/// What the nn -> exec lowering (buildNNToExecPipeline) builds: library
/// calls (GEMMs), views (static reshapes) and launches of outlined kernels
/// (`func.func private @k<N>_<op>` holding linalg on tensors, in
/// destination-passing style). nn.constant stays: constants are weights.
struct LoweringOptions {
  /// Fuse chains and DAGs of elementwise/broadcast ops into single kernels.
  bool fuse = true;
  /// Bias and activation in the GEMM's library epilogue. cuBLASLt fuses them;
  /// the CPU runtime runs a scalar pass over C, slower than reading the bias
  /// inside the consumer's generated kernel, so CPU-only modules keep them
  /// in kernels.
  bool gemmEpilogues = true;
  /// The module runs on the CPU alone, so the lowering may pick what is
  /// fastest there: 2-D f32 convolutions as generated direct kernels (vector
  /// code blocked over output channels, rows and columns; DirectConv.cpp),
  /// the others' im2col from a padded copy. With a GPU in the targets,
  /// convolutions stay im2col + GEMM (cuBLASLt fills the device; a direct
  /// kernel would run one thread per tile).
  bool cpuOnly = false;
  /// The target CPU's vector unit (CpuTarget, from `--cpu`): direct
  /// convolution kernels are blocked for its vector width and register
  /// file. The default is x86-64-v3's (AVX2).
  int64_t vectorBits = 256;
  int64_t vectorRegisters = 16;
  /// The target CPU has one of the CPU runtime's own SGEMM kernels
  /// (AVX2+FMA or AVX-512F), which packs a GEMM's B once per session when B
  /// is a module weight: CPU-plan convolutions then run as the transposed
  /// product with the weights as B (nncc-lower-contractions
  /// `packed-weights`).
  bool packedWeights = false;
};

/// The plan nncc-form-conv-kernels builds convolutions for.
enum class ConvPlan { Cpu, Gpu };

#define GEN_PASS_DECL
#include "lib/Conversion/NNToExec/Passes.h.inc"

/// Adds the nn -> exec passes for `options` to `pm` (on a module).
void buildNNToExecPipeline(mlir::OpPassManager &pm, const LoweringOptions &options);

/// Registers the nn -> exec passes and the pipeline `nncc-lower-nn-to-exec`.
void registerNNToExecPipelines();

} // namespace nncc

#endif // NNCC_LIB_CONVERSION_NNTOEXEC_PASSES_H
