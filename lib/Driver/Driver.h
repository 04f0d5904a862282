#ifndef NNCC_LIB_DRIVER_DRIVER_H
#define NNCC_LIB_DRIVER_DRIVER_H

#include "lib/Conversion/NNToExec/Passes.h"
#include "lib/Import/OnnxImport.h"
#include "lib/Target/Package.h"
#include "passes/Autocast.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace nncc {

/// Where the compile pipeline stops.
enum class EmitKind {
  NN,     ///< the imported graph, canonicalized and constant-folded
  Exec,   ///< kernels, library calls and views (exec dialect + linalg kernels)
  LLVM,   ///< the kernels as LLVM IR
  PTX,    ///< the kernels as PTX, one text per CUDA architecture
  Object, ///< the kernels as a host object file
  Module, ///< the shared library (model.so)
};

/// The targets a module carries code for (`--target`).
struct TargetOptions {
  bool cpu = true;
  std::vector<std::string> cudaArchs; ///< "sm_80", "sm_90"
  /// Whether the CUDA targets were asked for (`--target`): then a kernel the
  /// GPU code generator cannot handle is an error; by default a warning, and
  /// the module is built for the CPU alone.
  bool cudaRequested = false;
};

/// `cpu`, plus `cuda:sm_80,cuda:sm_90` when the CUDA toolkit (ptxas) is found.
TargetOptions defaultTargets();

/// Parses `--target`: comma-separated `cpu` and `cuda:sm_NN` (`cuda` alone
/// means sm_80 and sm_90).
llvm::Error parseTargetOption(llvm::StringRef text, TargetOptions &out);

struct CompileOptions {
  ImportOptions import;
  TargetOptions targets = defaultTargets();
  /// The CPU host code is compiled for (`--cpu`, see resolveCpuTarget):
  /// x86-64-v3 (AVX2, FMA) by default, which every x86-64 server of the
  /// last decade runs; `native` for the build machine alone.
  std::string cpu = "x86-64-v3";
  /// Host kernels run the GPU thread mapping, one thread after another
  /// (`--emulate-gpu`): checks the mapping on machines without a GPU.
  bool emulateGpu = false;
  EmitKind emit = EmitKind::Module;
  /// Skip canonicalization (print the importer's raw output).
  bool noSimplify = false;
  PackageOptions package;
  /// Fail when an entry point needs more device memory than this (weights +
  /// arena + inputs and outputs); 0: no limit.
  int64_t memoryBudget = 0;
  /// Kernel formation options (`--no-fusion` turns fusion off).
  LoweringOptions lowering;
  /// Plan options (`--no-memory-reuse` turns reuse off for comparisons).
  PlanOptions plan;
  /// Compute precision (`--precision`); BF16, FP16 and Mixed run the
  /// nncc-autocast pass, TF32 sets allow_tf32 on every GEMM step.
  Precision precision = Precision::FP32;
  /// Add `<entry>_grad`, the gradients of the entry (`--gradients[=REGEX]`,
  /// nncc-differentiate), before autocast and lowering so the backward takes
  /// every later pass; `gradientConstants` selects the constants
  /// (initializers) that get gradients too.
  bool gradients = false;
  std::string gradientConstants;
  /// ONNX node names or op types computed in f32 (`--keep-fp32`).
  std::vector<std::string> keepFp32;
  /// Weights (initializer names fully matching this regular expression)
  /// that become module state a session may read and write
  /// (`--mutable-weights`); empty: none.
  std::string mutableWeights;
  /// Weights that stay constants although `mutableWeights` matches them
  /// (`--freeze`).
  std::string frozenWeights;
  /// `--train`: adds `train_step` and `eval_step` (loss, optimizer options
  /// below; the trainable weights are `mutableWeights`).
  bool train = false;
  /// `--loss`: adds the `eval_step` entry (empty: none), reading output
  /// `lossOutput` (empty: the only one) and labels named `labelName`.
  std::string loss, lossOutput, labelName = "labels";
  /// `--optimizer`: adds the `optimizer_step` entry (empty: none).
  std::string optimizer;
  double momentum = 0.9, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weightDecay = 0, gradClip = 0;
  /// `--parallel=dp:N` with `--train`: N ranks each run train_step on 1/N of
  /// the compiled (global) batch and average gradients and loss
  /// (docs/distributed.md); 1: one process.
  int64_t dataParallel = 1;
  /// `--parallel=tp:T`: the model's column/row-parallel layer pairs split
  /// over T ranks (nncc-tensor-parallel, docs/distributed.md); 1: whole.
  int64_t tensorParallel = 1;
  /// `--parallel=pp:P`: the model cut into P stages, each run by its own
  /// ranks over `microBatches` micro-batches of the rank's batch
  /// (nncc-pipeline-parallel, docs/distributed.md); 1: one stage.
  int64_t pipelineParallel = 1;
  /// `--micro-batches`: 0 picks the number of stages.
  int64_t microBatches = 0;
  /// `--bucket-bytes`: most bytes of one gradient all-reduce.
  int64_t bucketBytes = 25 << 20;
  /// Called at the start of each phase (for progress lines).
  std::function<void(llvm::StringRef phase)> onPhase;
};

/// Figures of one compilation (`--stats`).
struct CompileStats {
  int64_t opsImported = 0;
  /// nn ops after simplification (recomposition included), before kernel formation.
  int64_t opsBeforeFusion = 0;
  int64_t kernels = 0;
  int64_t libraryCalls = 0;
  int64_t weightBytes = 0;
  /// Launches on a CUDA device: GPU functions, library calls and copies.
  std::map<std::string, int64_t> gpuLaunchesPerRun;
  /// Architectures whose PTX ptxas assembled into a cubin.
  std::vector<std::string> gpuCubins;
  std::map<std::string, int64_t> launchesPerRun, arenaBytes, noReuseBytes, liveLowerBoundBytes,
      bytesMovedPerRun, flopsPerRun;
  /// Per entry: collective steps (buckets) and the bytes they all-reduce per
  /// run, the gradient bytes of the scaling model (docs/distributed.md).
  std::map<std::string, int64_t> collectivesPerRun, collectiveBytesPerRun;
  /// Per training entry: bytes of the forward values its backward reads
  /// (the activations kept for backward, before fusion).
  std::map<std::string, int64_t> savedForBackwardBytes;
  std::map<std::string, double> phaseSeconds;
  /// Share of all entries' FLOPs computed in each precision ("f32", "tf32",
  /// "bf16", "f16"; a GEMM counts in its operands' type).
  std::map<std::string, double> flopShareByPrecision;
  /// nn.cast ops the autocast pass added (net, after folding cast pairs).
  int64_t castsInserted = 0;
  /// The stats as one JSON object with the documented keys.
  std::string toJson() const;
};

/// What a compilation produced: a module for the textual stages, the bytes
/// of the object file, or nothing (the shared library was written).
struct CompileResult {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  /// What the user should know but did not stop the compilation.
  std::vector<std::string> warnings;
  std::string text;
  CompileStats stats;
};

/// Registers every dialect the pipeline uses with `context`.
void loadCompilerDialects(mlir::MLIRContext &context);

/// The passes from the imported nn module to exec, as one pipeline:
/// nncc-make-weights-mutable with `--mutable-weights`, nncc-add-loss with
/// `--loss`, nncc-add-optimizer with `--optimizer`, simplification
/// (unless `noSimplify`), nncc-differentiate for `gradients`,
/// nncc-add-train-step then canonicalization for `train`, nncc-autocast
/// for bf16, fp16 and
/// mixed precision, and, past `EmitKind::NN`, nncc-insert-index-checks and
/// nncc-lower-nn-to-exec for the plan the targets run.
void buildNNCCCompilePipeline(mlir::OpPassManager &pm, const CompileOptions &options);

/// Parses `--parallel`: any of `dp:N`, `tp:M` and `pp:P`, comma separated
/// (each at least 1), into `options.dataParallel`, `tensorParallel` and
/// `pipelineParallel`.
llvm::Error parseParallelOption(llvm::StringRef text, CompileOptions &options);

/// The import options of one of `ranks` shards of the batch (data-parallel
/// ranks times pipeline micro-batches): each input of the imported entry
/// (the global batch) with its first dimension divided by `ranks`, which
/// must divide it; every input must have the same batch. Errors start with
/// `split`, the options that asked for it.
llvm::Expected<ImportOptions> shardedImportOptions(mlir::ModuleOp imported, const ImportOptions &global,
                                                   int64_t ranks, llvm::StringRef split);

/// The model at `path` imported as one of `ranks` shards of the batch sees
/// it: at the shard's batch (shardedImportOptions), its constant shapes that
/// hold the global batch rewritten for the shard's (import::shardBatchConstants,
/// which refuses, naming the node, those it cannot prove), the shapes the file
/// records for the global batch left to shape inference.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> importShard(mlir::MLIRContext &context, llvm::StringRef path,
                                                             mlir::ModuleOp imported, const ImportOptions &global,
                                                             int64_t ranks, llvm::StringRef split);

/// Runs the compile pipeline on an ONNX file up to `options.emit`;
/// `outputPath` is written for the Object and Module stages.
llvm::Expected<CompileResult> compileOnnxFile(mlir::MLIRContext &context, llvm::StringRef path,
                                              llvm::StringRef outputPath,
                                              const CompileOptions &options);

} // namespace nncc

#endif // NNCC_LIB_DRIVER_DRIVER_H
