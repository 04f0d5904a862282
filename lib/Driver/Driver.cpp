#include "lib/Driver/Driver.h"
#include "lib/Support/Error.h"
#include "lib/Support/PendingFile.h"

#include "lib/Conversion/NNToExec/Passes.h"
#include "lib/Target/GpuCodegen.h"
#include "lib/Target/HostCodegen.h"
#include "lib/Target/Passes.h"
#include "lib/Target/Plan.h"
#include "lib/Target/PlanPasses.h"
#include "passes/Passes.h"
#include "passes/Pipelines.h"

#include "dialects/Exec/ExecOps.h"
#include "dialects/Exec/ExecUtils.h"
#include "dialects/NN/NNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "nncc/module_abi.h"

#include <chrono>
#include <optional>

namespace nncc {
namespace {

/// Runs `fn` (a phase returning LogicalResult with diagnostics) into an llvm::Error.
llvm::Error withDiagnostics(mlir::MLIRContext &ctx, llvm::StringRef phase,
                            llvm::function_ref<mlir::LogicalResult()> fn) {
  DiagnosticCollector diags(&ctx);
  if (mlir::succeeded(fn()))
    return llvm::Error::success();
  return fail(phase + " failed:" + diags.text);
}

/// A pass manager honouring MLIR's pass-manager options (`--mlir-print-ir-*`,
/// crash reproducers; registered by tools/nncc), its passes timed under
/// `timing` (`--mlir-timing`).
llvm::Expected<std::unique_ptr<mlir::PassManager>> makePassManager(mlir::MLIRContext &context,
                                                                   mlir::TimingScope &timing) {
  auto pm = std::make_unique<mlir::PassManager>(&context);
  DiagnosticCollector diags(&context);
  if (mlir::failed(mlir::applyPassManagerCLOptions(*pm)))
    return fail("pass manager options:" + diags.text);
  pm->enableTiming(timing);
  return std::move(pm);
}

/// Runs the passes `build` adds on `module`, turning diagnostics into one
/// llvm::Error.
llvm::Error runPasses(mlir::ModuleOp module, mlir::TimingScope &timing, llvm::StringRef phase,
                      llvm::function_ref<void(mlir::OpPassManager &)> build) {
  auto pm = makePassManager(*module.getContext(), timing);
  if (!pm)
    return pm.takeError();
  build(**pm);
  return withDiagnostics(*module.getContext(), phase, [&] { return (*pm)->run(module); });
}

/// The driver's phases, one at a time (progress lines and `--stats`
/// phase_seconds): starting one ends the last.
class Phases {
public:
  Phases(const CompileOptions &options, CompileStats &stats) : options(options), stats(stats) {}
  ~Phases() { stop(); }

  void start(llvm::StringRef name) {
    stop();
    if (options.onPhase)
      options.onPhase(name);
    current = name.str();
    begin = std::chrono::steady_clock::now();
  }
  void stop() {
    if (current.empty())
      return;
    stats.phaseSeconds[current] +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    current.clear();
  }
  llvm::StringRef name() const { return current; }

private:
  const CompileOptions &options;
  CompileStats &stats;
  std::string current;
  std::chrono::steady_clock::time_point begin;
};

/// Splits one run of the nn pipeline (buildNNCCCompilePipeline) into the
/// driver's phases: "simplify" (the training passes, "training", before
/// and after it) until nncc-differentiate ("autodiff") or nncc-autocast
/// ("precision"), and nncc-insert-index-checks ("checks"); the lowering to
/// exec ("exec") follows, once per device kind.
/// `onPhase` sees the module as each phase starts, before the phase
/// becomes current (the figures of `--stats` are taken between phases).
class PhaseInstrumentation : public mlir::PassInstrumentation {
public:
  PhaseInstrumentation(Phases &phases, std::function<void(llvm::StringRef, mlir::ModuleOp)> onPhase)
      : phases(phases), onPhase(std::move(onPhase)) {}

  void runBeforePass(mlir::Pass *pass, mlir::Operation *op) override {
    if (isTrainingPass(pass))
      enter("training", op);
    else if (pass->getArgument() == "nncc-differentiate")
      enter("autodiff", op);
    else if (pass->getArgument() == "nncc-autocast")
      enter("precision", op);
    else if (pass->getArgument() == "nncc-insert-index-checks")
      enter("checks", op);
  }
  void runAfterPass(mlir::Pass *pass, mlir::Operation *op) override {
    if (isTrainingPass(pass))
      enter("simplify", op); // what follows them: simplification, or its cleanup
  }

private:
  /// The passes that add training entries and module state.
  static bool isTrainingPass(mlir::Pass *pass) {
    llvm::StringRef arg = pass->getArgument();
    return arg == "nncc-make-weights-mutable" || arg == "nncc-add-loss" || arg == "nncc-add-optimizer" ||
           arg == "nncc-add-train-step" || arg == "nncc-data-parallel" || arg == "nncc-tensor-parallel";
  }

  void enter(llvm::StringRef phase, mlir::Operation *op) {
    // Phases are module passes, run one at a time.
    auto module = mlir::dyn_cast<mlir::ModuleOp>(op);
    if (!module)
      return;
    onPhase(phase, module);
    phases.start(phase);
  }

  Phases &phases;
  std::function<void(llvm::StringRef, mlir::ModuleOp)> onPhase;
};

/// What a failure in each phase of the nn pipeline is reported as.
llvm::StringRef phaseFailure(llvm::StringRef phase) {
  return llvm::StringSwitch<llvm::StringRef>(phase)
      .Case("simplify", "simplification")
      .Case("autodiff", "autodiff")
      .Case("training", "building the training entries")
      .Case("precision", "autocast")
      .Case("checks", "index checks")
      .Default("code generation");
}

/// True for the nn ops counted in FLOPs and stats (not constants).
bool isComputeOp(mlir::Operation *op) {
  return op->getDialect() && mlir::isa<nn::NNDialect>(op->getDialect()) &&
         !mlir::isa<nn::ConstantOp>(op) && op->getNumResults() > 0;
}

/// Multiply-adds count two FLOPs; other ops one per output element.
int64_t opFlops(mlir::Operation *op) {
  auto elements = [](mlir::Type t) {
    auto r = mlir::dyn_cast<mlir::RankedTensorType>(t);
    return r && r.hasStaticShape() ? r.getNumElements() : 0;
  };
  int64_t out = elements(op->getResult(0).getType());
  if (auto mm = mlir::dyn_cast<nn::MatMulOp>(op)) {
    auto lhs = mlir::cast<mlir::RankedTensorType>(mm.getLhs().getType());
    return 2 * out * lhs.getShape().back();
  }
  if (auto g = mlir::dyn_cast<nn::GemmOp>(op)) {
    auto a = mlir::cast<mlir::RankedTensorType>(g.getA().getType());
    return 2 * out * a.getShape()[g.getTransA() ? 0 : 1];
  }
  if (auto c = mlir::dyn_cast<nn::ConvOp>(op)) {
    auto w = mlir::cast<mlir::RankedTensorType>(c.getWeight().getType());
    return 2 * out * (w.getNumElements() / w.getShape()[0]);
  }
  if (auto c = mlir::dyn_cast<nn::ConvTransposeOp>(op)) {
    auto w = mlir::cast<mlir::RankedTensorType>(c.getWeight().getType());
    return 2 * elements(c.getInput().getType()) * (w.getNumElements() / w.getShape()[0]);
  }
  if (auto a = mlir::dyn_cast<nn::AttentionOp>(op)) {
    // q kᵀ and p v: 2 * rows * Sk * (D + Dv).
    auto k = mlir::cast<mlir::RankedTensorType>(a.getK().getType());
    int64_t depth = k.getShape().back(), keys = k.getShape()[k.getRank() - 2];
    auto v = mlir::cast<mlir::RankedTensorType>(a.getV().getType());
    return 2 * (out / v.getShape().back()) * keys * (depth + v.getShape().back());
  }
  return out;
}

int64_t estimateFlops(mlir::func::FuncOp func) {
  int64_t flops = 0;
  func.walk([&](mlir::Operation *op) {
    if (isComputeOp(op))
      flops += opFlops(op);
  });
  return flops;
}

/// The precision an op computes in: its first float operand's type (a GEMM
/// multiplies its operands' type), else its first float result's; "tf32"
/// for f32 contractions when TF32 is allowed, "other" for integer ops.
std::string computePrecision(mlir::Operation *op, bool tf32) {
  auto floatName = [](mlir::Type t) -> std::string {
    mlir::Type e = mlir::getElementTypeOrSelf(t);
    if (e.isF32()) return "f32";
    if (e.isF16()) return "f16";
    if (e.isBF16()) return "bf16";
    if (e.isF64()) return "f64";
    return "";
  };
  std::string name;
  for (mlir::Type t : op->getOperandTypes())
    if (name.empty())
      name = floatName(t);
  for (mlir::Type t : op->getResultTypes())
    if (name.empty())
      name = floatName(t);
  auto kind = mlir::dyn_cast<nn::FusionKindOpInterface>(op);
  if (tf32 && name == "f32" && kind && kind.getFusionKind() == nn::FusionKind::Contraction)
    return "tf32";
  return name.empty() ? "other" : name;
}

/// The nn.cast ops of `module`.
int64_t countCasts(mlir::ModuleOp module) {
  int64_t casts = 0;
  module.walk([&](nn::CastOp) { ++casts; });
  return casts;
}

} // namespace

TargetOptions defaultTargets() {
  TargetOptions targets;
  if (!findPtxas().empty())
    targets.cudaArchs = {"sm_80", "sm_90"};
  return targets;
}

llvm::Error parseTargetOption(llvm::StringRef text, TargetOptions &out) {
  out = TargetOptions{false, {}, false};
  llvm::SmallVector<llvm::StringRef> parts;
  text.split(parts, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef part : parts) {
    part = part.trim();
    llvm::StringRef name = part;
    unsigned cc = 0;
    if (part == "cpu") {
      out.cpu = true;
    } else if (part == "cuda") {
      out.cudaRequested = true;
      out.cudaArchs = {"sm_80", "sm_90"};
    } else if (part.consume_front("cuda:") && part.starts_with("sm_") &&
               !part.drop_front(3).getAsInteger(10, cc) && cc >= 70) {
      out.cudaRequested = true;
      if (!llvm::is_contained(out.cudaArchs, part))
        out.cudaArchs.push_back(part.str());
    } else {
      return fail("--target: '" + name + "' is not a target (expected cpu, cuda or "
                  "cuda:sm_NN with NN >= 70, comma-separated)");
    }
  }
  if (!out.cpu && out.cudaArchs.empty())
    return fail("--target names no target");
  return llvm::Error::success();
}

void loadCompilerDialects(mlir::MLIRContext &context) {
  mlir::DialectRegistry registry;
  registry.insert<nn::NNDialect, exec::ExecDialect, dist::DistDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::math::MathDialect, mlir::linalg::LinalgDialect,
                  mlir::tensor::TensorDialect, mlir::bufferization::BufferizationDialect,
                  mlir::memref::MemRefDialect, mlir::scf::SCFDialect, mlir::LLVM::LLVMDialect>();
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
}

std::string CompileStats::toJson() const {
  std::string s;
  llvm::raw_string_ostream os(s);
  auto perEntry = [&](const std::map<std::string, int64_t> &m) {
    os << "{";
    bool first = true;
    for (const auto &[k, v] : m) {
      os << (first ? "" : ", ") << "\"" << k << "\": " << v;
      first = false;
    }
    os << "}";
  };
  os << "{\n  \"ops_imported\": " << opsImported << ",\n  \"ops_before_fusion\": " << opsBeforeFusion
     << ",\n  \"kernels\": " << kernels
     << ",\n  \"library_calls\": " << libraryCalls << ",\n  \"launches_per_run\": ";
  perEntry(launchesPerRun);
  os << ",\n  \"gpu_launches_per_run\": ";
  perEntry(gpuLaunchesPerRun);
  os << ",\n  \"gpu_cubins\": [";
  for (size_t i = 0; i < gpuCubins.size(); ++i)
    os << (i ? ", " : "") << "\"" << gpuCubins[i] << "\"";
  os << "]";
  os << ",\n  \"arena_bytes\": ";
  perEntry(arenaBytes);
  os << ",\n  \"no_reuse_bytes\": ";
  perEntry(noReuseBytes);
  os << ",\n  \"live_lower_bound_bytes\": ";
  perEntry(liveLowerBoundBytes);
  os << ",\n  \"bytes_moved_per_run\": ";
  perEntry(bytesMovedPerRun);
  os << ",\n  \"collectives_per_run\": ";
  perEntry(collectivesPerRun);
  os << ",\n  \"collective_bytes_per_run\": ";
  perEntry(collectiveBytesPerRun);
  os << ",\n  \"weight_bytes\": " << weightBytes << ",\n  \"flops_per_run\": ";
  perEntry(flopsPerRun);
  os << ",\n  \"flop_share_by_precision\": {";
  bool firstShare = true;
  for (const auto &[k, v] : flopShareByPrecision) {
    os << (firstShare ? "" : ", ") << "\"" << k << "\": " << llvm::formatv("{0:f4}", v);
    firstShare = false;
  }
  os << "},\n  \"saved_for_backward_bytes\": ";
  perEntry(savedForBackwardBytes);
  os << ",\n  \"casts_inserted\": " << castsInserted;
  os << ",\n  \"phase_seconds\": {";
  bool first = true;
  for (const auto &[k, v] : phaseSeconds) {
    os << (first ? "" : ", ") << "\"" << k << "\": " << llvm::formatv("{0:f4}", v);
    first = false;
  }
  os << "}\n}\n";
  return s;
}

/// BF16, FP16 and mixed precision run nncc-autocast.
static bool autocasts(Precision precision) {
  return precision == Precision::BF16 || precision == Precision::FP16 || precision == Precision::Mixed;
}

void buildNNCCCompilePipeline(mlir::OpPassManager &pm, const CompileOptions &options) {
  // Before simplification: a weight the user may change is never folded
  // into another constant (BatchNorm into a convolution, Q/K/V merged).
  if (!options.mutableWeights.empty())
    pm.addPass(createMakeWeightsMutablePass(
        MakeWeightsMutablePassOptions{options.mutableWeights, options.frozenWeights}));
  // Before simplification: the split follows the imported graph (heads not
  // yet merged into attention, Q/K/V weights not yet one).
  if (options.tensorParallel > 1) {
    TensorParallelPassOptions split;
    split.parts = options.tensorParallel;
    split.entry = options.import.entryName;
    split.shardConstants = !options.train;
    pm.addPass(createTensorParallelPass(split));
  }
  if (!options.loss.empty() && !options.train)
    pm.addPass(createAddLossPass(AddLossPassOptions{options.loss, options.lossOutput, options.labelName}));
  if (!options.optimizer.empty() && !options.train)
    pm.addPass(createAddOptimizerPass(AddOptimizerPassOptions{
        options.optimizer, options.momentum, options.beta1, options.beta2, options.eps,
        options.weightDecay, options.gradClip}));
  if (!options.noSimplify)
    buildNNSimplifyPipeline(pm, /*recompose=*/options.lowering.fuse);
  if (options.gradients) {
    DifferentiatePassOptions differentiate;
    differentiate.entry = options.import.entryName;
    differentiate.wrtConstants = options.gradientConstants;
    pm.addPass(createDifferentiatePass(differentiate));
  }
  if (options.pipelineParallel > 1) {
    PipelineParallelPassOptions pipeline;
    pipeline.stages = options.pipelineParallel;
    pipeline.microBatches = options.microBatches > 0 ? options.microBatches : options.pipelineParallel;
    pipeline.train = options.train;
    pipeline.loss = options.loss.empty() ? "cross-entropy" : options.loss;
    pipeline.output = options.lossOutput;
    pipeline.labelName = options.labelName;
    pipeline.optimizer = options.optimizer.empty() ? "sgd" : options.optimizer;
    pipeline.momentum = options.momentum;
    pipeline.beta1 = options.beta1;
    pipeline.beta2 = options.beta2;
    pipeline.eps = options.eps;
    pipeline.weightDecay = options.weightDecay;
    pipeline.gradClip = options.gradClip;
    pm.addPass(createPipelineParallelPass(pipeline));
  }
  if (options.train) {
    AddTrainStepPassOptions train{options.loss.empty() ? "cross-entropy" : options.loss,
                                  options.lossOutput,
                                  options.labelName,
                                  options.optimizer.empty() ? "sgd" : options.optimizer,
                                  options.momentum,
                                  options.beta1,
                                  options.beta2,
                                  options.eps,
                                  options.weightDecay,
                                  options.gradClip};
    if (options.pipelineParallel == 1)
      pm.addPass(createAddTrainStepPass(train));
    pm.addPass(createDataParallelPass(DataParallelPassOptions{options.dataParallel, options.bucketBytes}));
    // The forward inside train_step is computed once (its copies merge).
    pm.addPass(mlir::createCanonicalizerPass());
    pm.addPass(mlir::createCSEPass());
  }
  if (autocasts(options.precision)) {
    AutocastPassOptions autocast;
    autocast.precision = precisionName(options.precision).str();
    autocast.keepFp32.assign(options.keepFp32.begin(), options.keepFp32.end());
    pm.addPass(createAutocastPass(autocast));
  }
  if (options.emit == EmitKind::NN)
    return;
  pm.addPass(createInsertIndexChecksPass());
}

llvm::Expected<CompileResult> compileOnnxFile(mlir::MLIRContext &context, llvm::StringRef path,
                                              llvm::StringRef outputPath,
                                              const CompileOptions &options) {
  loadCompilerDialects(context);
  CompileResult result;
  // `--mlir-timing`: every phase, and the passes of those that run passes.
  mlir::DefaultTimingManager timingManager;
  mlir::applyDefaultTimingManagerCLOptions(timingManager);
  mlir::TimingScope timing = timingManager.getRootScope();
  Phases phases(options, result.stats);
  auto timed = [&](llvm::StringRef name, auto &&fn) {
    phases.start(name);
    mlir::TimingScope scope = timing.nest(name);
    auto r = fn(scope);
    phases.stop();
    return r;
  };

  bool sameFile = false;
  if (!outputPath.empty() && outputPath != "-" && !llvm::sys::fs::equivalent(path, outputPath, sameFile) &&
      sameFile)
    return fail("-o '" + outputPath + "' is the input model; refusing to overwrite it");
  // Before the import: a bad --cpu is reported before any work is done.
  auto cpu = resolveCpuTarget(options.cpu);
  if (!cpu)
    return cpu.takeError();
  // Code generation needs static input shapes; the importer refuses dynamic
  // ones first, before shape inference and the version converter trip on them.
  ImportOptions importOptions = options.import;
  importOptions.requireStaticInputs = options.emit != EmitKind::NN;
  auto imported = timed("import", [&](mlir::TimingScope &) {
    return importOnnxFile(context, path, importOptions);
  });
  if (!imported)
    return imported.takeError();
  result.module = std::move(*imported);
  mlir::ModuleOp module = *result.module;
  // nncc-pipeline-parallel stages forward, eval_step and train_step only.
  if (options.pipelineParallel > 1 &&
      (options.gradients || (!options.train && (!options.loss.empty() || !options.optimizer.empty()))))
    return fail("--parallel=pp:P stages forward (and eval_step and train_step with --train); --gradients, "
                "and --loss or --optimizer without --train, are not staged");
  // Pipeline stages run micro-batches: the graph is compiled at a
  // micro-batch's size, and entries take M of them.
  int64_t microBatches =
      options.pipelineParallel > 1 ? (options.microBatches > 0 ? options.microBatches : options.pipelineParallel) : 1;
  if (options.dataParallel > 1 || microBatches > 1) {
    // Each rank's module is the graph at the shard's batch: imported again,
    // so every shape is the one ONNX shape inference gives that batch.
    if (options.dataParallel > 1 && !options.train)
      return fail("--parallel=dp:N needs --train (data parallelism splits train_step's batch)");
    auto sharded = timed("import", [&](mlir::TimingScope &) {
      std::string split = options.dataParallel > 1 ? "--parallel=dp:" + std::to_string(options.dataParallel) : "";
      if (options.pipelineParallel > 1)
        split += (split.empty() ? "--parallel=pp:" : ",pp:") + std::to_string(options.pipelineParallel) +
                 " --micro-batches=" + std::to_string(microBatches);
      return importShard(context, path, module, options.import, options.dataParallel * microBatches, split);
    });
    if (!sharded)
      return sharded.takeError();
    result.module = std::move(*sharded);
    module = *result.module;
  }
  module.walk([&](mlir::Operation *op) {
    if (op->getDialect() && mlir::isa<nn::NNDialect>(op->getDialect()) && !mlir::isa<nn::ConstantOp>(op))
      ++result.stats.opsImported;
  });

  // The figures of the simplified graph (before autocast), then of the graph
  // kernels are formed from: taken between the phases of the nn pipeline,
  // or after it when it ends first.
  bool simplifiedCounted = false, graphCounted = false;
  int64_t castsBefore = 0;
  auto countSimplified = [&](mlir::ModuleOp m) {
    simplifiedCounted = true;
    for (auto func : m.getOps<mlir::func::FuncOp>())
      result.stats.flopsPerRun[func.getName().str()] = estimateFlops(func);
    castsBefore = countCasts(m);
  };
  auto countGraph = [&](mlir::ModuleOp m) {
    if (!simplifiedCounted)
      countSimplified(m);
    graphCounted = true;
    if (autocasts(options.precision))
      result.stats.castsInserted = countCasts(m) - castsBefore;
    std::map<std::string, int64_t> flopsByPrecision;
    int64_t totalFlops = 0;
    m.walk([&](mlir::Operation *op) {
      if (!isComputeOp(op) || !op->getParentOfType<mlir::func::FuncOp>() ||
          op->getParentOfType<mlir::func::FuncOp>().isPrivate())
        return;
      int64_t flops = opFlops(op);
      flopsByPrecision[computePrecision(op, options.precision == Precision::TF32)] += flops;
      totalFlops += flops;
    });
    for (const auto &[name, flops] : flopsByPrecision)
      result.stats.flopShareByPrecision[name] = totalFlops ? (double)flops / totalFlops : 0.0;
    // The forward values a training entry's backward reads (nncc-add-train-step
    // marks its forward ops nncc.forward).
    for (auto func : m.getOps<mlir::func::FuncOp>()) {
      int64_t saved = 0;
      bool training = false;
      func.walk([&](mlir::Operation *op) {
        if (!op->hasAttr(kForwardOpAttr) || mlir::isa<nn::ConstantOp>(op))
          return;
        training = true;
        for (mlir::Value r : op->getResults())
          if (llvm::any_of(r.getUsers(), [](mlir::Operation *u) {
                return !u->hasAttr(kForwardOpAttr) && !mlir::isa<mlir::func::ReturnOp>(u);
              }))
            saved += exec::bufferBytes(r.getType());
      });
      if (training)
        result.stats.savedForBackwardBytes[func.getName().str()] = saved;
    }
    if (options.emit == EmitKind::NN)
      return;
    m.walk([&](mlir::Operation *op) {
      if (op->getDialect() && mlir::isa<nn::NNDialect>(op->getDialect()) && !mlir::isa<nn::ConstantOp>(op))
        ++result.stats.opsBeforeFusion;
    });
  };
  {
    mlir::TimingScope scope = timing.nest("nn pipeline");
    auto pm = makePassManager(context, scope);
    if (!pm)
      return pm.takeError();
    // Kernels are blocked for the vector unit of the CPU the code is for.
    buildNNCCCompilePipeline(**pm, options);
    (*pm)->addInstrumentation(std::make_unique<PhaseInstrumentation>(
        phases, [&](llvm::StringRef phase, mlir::ModuleOp m) {
          if (phase == "precision")
            countSimplified(m);
          else if (phase == "checks")
            countGraph(m);
        }));
    if (!options.noSimplify)
      phases.start("simplify");
    DiagnosticCollector diags(&context);
    if (mlir::failed((*pm)->run(module)))
      return fail(phaseFailure(phases.name()) + " failed:" + diags.text);
    phases.stop();
  }
  if (!graphCounted)
    countGraph(module);
  if (options.emit == EmitKind::NN)
    return result;

  // One plan per device kind, each lowered from the nn module on its own:
  // the CPU's with CPU-shaped kernels (direct convolutions), the GPU's with
  // library calls and im2col (also when its thread mapping is emulated on
  // the CPU, --emulate-gpu). A module for both is as fast on each as a
  // module for one.
  TargetOptions targets = options.targets;
  bool wantCpu = targets.cpu, wantGpu = !targets.cudaArchs.empty();
  switch (options.emit) {
  case EmitKind::PTX:
    if (!wantGpu)
      return fail("--emit=ptx needs a CUDA target (--target=cuda:sm_90)");
    wantCpu = false;
    break;
  case EmitKind::LLVM:
  case EmitKind::Object:
    if (!wantCpu)
      return fail("--emit=llvm and --emit=obj need the cpu target");
    wantGpu = false;
    break;
  case EmitKind::Exec: // the GPU's exec IR when there is one
    wantCpu = wantCpu && !wantGpu;
    break;
  default:
    break;
  }
  // The CPU plan lowers a copy when the GPU's lowers the module itself.
  mlir::OwningOpRef<mlir::ModuleOp> cpuCopy;
  if (wantCpu && wantGpu)
    cpuCopy = module.clone();
  mlir::ModuleOp cpuModule = cpuCopy ? *cpuCopy : module;
  auto lowerToExec = [&](mlir::ModuleOp m, bool gpuShaped) -> llvm::Error {
    LoweringOptions lowering = options.lowering;
    lowering.vectorBits = cpu->vectorBits;
    lowering.vectorRegisters = cpu->vectorRegisters;
    lowering.packedWeights = cpu->hasOwnSgemm;
    lowering.gemmEpilogues = gpuShaped;
    lowering.cpuOnly = !gpuShaped;
    if (auto err = timed("exec", [&](mlir::TimingScope &scope) {
          return runPasses(m, scope, "code generation",
                           [&](mlir::OpPassManager &pm) { buildNNToExecPipeline(pm, lowering); });
        }))
      return err;
    return withDiagnostics(context, "exec verification", [&] { return mlir::verify(m); });
  };
  if (wantCpu)
    if (auto err = lowerToExec(cpuModule, options.emulateGpu))
      return std::move(err);
  if (wantGpu)
    if (auto err = lowerToExec(module, /*gpuShaped=*/true))
      return std::move(err);
  if (options.emit == EmitKind::Exec)
    return result;

  PlanOptions planOptions = options.plan;
  planOptions.allowTf32 |= options.precision == Precision::TF32;
  // Kernels are lowered first: the plan places their scratch buffers.
  auto planFor = [&](mlir::ModuleOp m, int32_t deviceKind, GpuKernels *gpu,
                     mlir::OwningOpRef<mlir::ModuleOp> *hostKernels) -> llvm::Expected<ModulePlan> {
    mlir::OwningOpRef<mlir::ModuleOp> kernels = extractKernels(m);
    if (auto err = timed("bufferize", [&](mlir::TimingScope &scope) {
          return runPasses(*kernels, scope, "kernel bufferization", buildKernelBufferizationPipeline);
        }))
      return std::move(err);
    llvm::StringMap<llvm::SmallVector<int64_t>> scratchBytes = kernelScratchBytes(*kernels);
    llvm::StringMap<int64_t> parallelExtent;
    if (gpu) {
      auto lowered = timed("ptx", [&](mlir::TimingScope &) { return lowerKernelsToGpu(*kernels, targets.cudaArchs); });
      if (!lowered)
        return lowered.takeError();
      *gpu = std::move(*lowered);
    } else {
      if (auto err = timed("llvm", [&](mlir::TimingScope &scope) {
            return runPasses(*kernels, scope, "kernel lowering", [&](mlir::OpPassManager &pm) {
              // The GPU thread mapping run on the CPU, thread after thread.
              if (options.emulateGpu)
                pm.addPass(createMapKernelsToGpuPass(MapKernelsToGpuPassOptions{/*emulate=*/true}));
              buildHostCodegenPipeline(pm);
            });
          }))
        return std::move(err);
      parallelExtent = parallelExtents(*kernels);
      *hostKernels = std::move(kernels);
    }
    recordKernelFacts(m, scratchBytes, parallelExtent, gpu ? gpu->launches : GpuKernels().launches);
    if (auto err = timed("plan", [&](mlir::TimingScope &scope) {
          return runPasses(m, scope, "memory planning",
                           [&](mlir::OpPassManager &pm) { buildPlanPipeline(pm, options.plan.reuse); });
        }))
      return std::move(err);
    PlanOptions kindOptions = planOptions;
    kindOptions.deviceKind = deviceKind;
    kindOptions.hostCode = !gpu;
    return buildPlan(m, kindOptions);
  };

  mlir::OwningOpRef<mlir::ModuleOp> llvmModule;
  std::optional<ModulePlan> cpuPlan, gpuPlan;
  GpuKernels gpu;
  if (wantGpu) {
    auto built = planFor(module, NNCC_DEVICE_CUDA, &gpu, nullptr);
    if (built) {
      gpuPlan = std::move(*built);
      gpuPlan->gpuImages = std::move(gpu.images);
    } else if (targets.cudaRequested || !wantCpu) {
      return built.takeError();
    } else {
      result.warnings.push_back("no CUDA code in this module: " + llvm::toString(built.takeError()) +
                                " (--target=cpu builds for the CPU alone without this warning)");
    }
  }
  if (options.emit == EmitKind::PTX) {
    for (const GpuImage &image : gpuPlan->gpuImages)
      result.text += "// nncc: PTX for " + image.arch + "\n" + image.ptx;
    return result;
  }
  if (wantCpu) {
    auto built = planFor(cpuModule, NNCC_DEVICE_CPU, nullptr, &llvmModule);
    if (!built)
      return built.takeError();
    cpuPlan = std::move(*built);
    cpuPlan->cpuName = cpu->name;
    cpuPlan->cpuFeatures = cpu->requiredFeatures;
  }
  // --stats describes the GPU plan when there is one (launches, library
  // calls), the CPU plan otherwise; weight bytes are the module's.
  const ModulePlan &primary = gpuPlan ? *gpuPlan : *cpuPlan;
  for (const GpuImage &image : primary.gpuImages)
    if (!image.cubin.empty())
      result.stats.gpuCubins.push_back(image.arch);
  for (const auto &entry : primary.plans.front().entries) {
    int64_t launches = 0;
    for (const auto &step : entry.steps)
      if (step.kind == NNCC_STEP_KERNEL || step.kind == NNCC_STEP_GEMM) {
        ++launches;
        if (step.kind == NNCC_STEP_GEMM)
          ++result.stats.libraryCalls;
      }
    result.stats.launchesPerRun[entry.name] = launches;
    int64_t collectives = 0, collectiveBytes = 0;
    for (const auto &step : entry.steps)
      if (step.kind == NNCC_STEP_COLLECTIVE) {
        ++collectives;
        // Its args are the k inputs, then the k outputs.
        for (size_t i = 0; i < step.args.size() / 2; ++i)
          collectiveBytes += step.args[i].bytes;
      }
    result.stats.collectivesPerRun[entry.name] = collectives;
    result.stats.collectiveBytesPerRun[entry.name] = collectiveBytes;
    if (gpuPlan) {
      int64_t gpuLaunches = 0;
      for (const auto &step : entry.steps)
        gpuLaunches += step.kind == NNCC_STEP_KERNEL ? primary.gpuLaunches[step.kernel].size() : 1;
      result.stats.gpuLaunchesPerRun[entry.name] = gpuLaunches;
    }
    result.stats.arenaBytes[entry.name] = entry.arenaBytes;
    result.stats.noReuseBytes[entry.name] = entry.noReuseBytes;
    result.stats.liveLowerBoundBytes[entry.name] = entry.liveLowerBound;
    result.stats.bytesMovedPerRun[entry.name] = entry.bytesMoved;
  }
  result.stats.kernels = primary.kernels.size();

  llvm::Expected<ModulePlan> plan = cpuPlan && gpuPlan ? mergePlans(std::move(*cpuPlan), std::move(*gpuPlan))
                                    : cpuPlan          ? std::move(*cpuPlan)
                                                       : std::move(*gpuPlan);
  if (!plan)
    return plan.takeError();
  result.stats.weightBytes = plan->weights.data.size();
  if (options.memoryBudget > 0)
    for (const DevicePlan &schedule : plan->plans)
      for (const auto &entry : schedule.entries) {
        int64_t io = 0;
        for (const auto *descs : {&entry.inputs, &entry.outputs})
          for (const auto &d : *descs) {
            int64_t n = 1;
            for (int64_t dim : d.dims)
              n *= dim;
            io += n * nncc_dtype_bytes(d.dtype);
          }
        int64_t weights = plan->weights.data.size();
        int64_t need = weights + entry.arenaBytes + io;
        if (need > options.memoryBudget)
          return fail(llvm::formatv("entry '{0}' needs {1} bytes (weights {2} + arena {3} + inputs and "
                                    "outputs {4}), more than --memory-budget {5}; the smallest arena "
                                    "this schedule allows is {6} bytes",
                                    entry.name, need, weights, entry.arenaBytes, io, options.memoryBudget,
                                    entry.liveLowerBound)
                          .str());
      }

  if (options.emit == EmitKind::LLVM) {
    auto text = translateToLLVMIR(*llvmModule);
    if (!text)
      return text.takeError();
    result.text = std::move(*text);
    return result;
  }
  if (options.emit == EmitKind::Object) {
    auto object = PendingFile::create(outputPath);
    if (!object)
      return object.takeError();
    if (auto err = timed("object", [&](mlir::TimingScope &) { return emitHostObject(*llvmModule, object->tempPath(), *cpu); }))
      return std::move(err);
    if (auto err = object->commit())
      return std::move(err);
    return result;
  }
  PackageOptions package = options.package;
  package.cpu = *cpu;
  if (auto err = timed("link", [&](mlir::TimingScope &) {
        return packageSharedLibrary(*plan, llvmModule ? *llvmModule : mlir::ModuleOp(), outputPath,
                                    package);
      }))
    return std::move(err);
  return result;
}

} // namespace nncc
