/// nncc: the compiler driver. All logic lives in lib/Driver.
#include "lib/Driver/Driver.h"
#include "lib/Conversion/NNToExec/Passes.h"
#include "lib/Target/Passes.h"
#include "lib/Target/PlanPasses.h"
#include "passes/Pipelines.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdlib>
#include <csignal>
#include <vector>

namespace cl = llvm::cl;

/// nncc's own options: `--help` lists these; LLVM's and MLIR's (the pass
/// manager's --mlir-* included) only `--help-hidden`.
static cl::OptionCategory nnccOptions("nncc options");

static cl::opt<std::string> inputPath(cl::Positional, cl::desc("<model.onnx>"), cl::Required, cl::cat(nnccOptions));
static cl::opt<std::string> outputPath("o", cl::desc("Output file ('-' for stdout, text stages only)"),
                                       cl::value_desc("file"), cl::init(""), cl::cat(nnccOptions));
static cl::opt<nncc::EmitKind> emit(
    "emit", cl::desc("Stop after this stage (default: the shared library)"),
    cl::values(clEnumValN(nncc::EmitKind::NN, "nn", "the imported nn-dialect module"),
               clEnumValN(nncc::EmitKind::Exec, "exec", "kernels and library calls (exec + linalg)"),
               clEnumValN(nncc::EmitKind::LLVM, "llvm", "the kernels as LLVM IR"),
               clEnumValN(nncc::EmitKind::PTX, "ptx", "the kernels as PTX (per CUDA target)"),
               clEnumValN(nncc::EmitKind::Object, "obj", "the kernels as a host object file"),
               clEnumValN(nncc::EmitKind::Module, "so", "the shared library (model.so)")),
    cl::init(nncc::EmitKind::Module), cl::cat(nnccOptions));
static cl::opt<std::string> targets(
    "target",
    cl::desc("Code for these targets: cpu, cuda:sm_NN, comma-separated (default: cpu, plus "
             "cuda:sm_80,cuda:sm_90 when the CUDA toolkit's ptxas is found)"),
    cl::value_desc("LIST"), cl::cat(nnccOptions));
static cl::opt<std::string> cpu(
    "cpu",
    cl::desc("CPU the host code is compiled for: x86-64-v3 (default: AVX2+FMA), x86-64-v2, "
             "x86-64-v4 (AVX-512), native (this machine only) or an LLVM CPU name; the module "
             "records the features it needs and is refused where they are missing"),
    cl::value_desc("LEVEL"), cl::init("x86-64-v3"), cl::cat(nnccOptions));
static cl::opt<bool> emulateGpu(
    "emulate-gpu",
    cl::desc("Testing: host kernels run the GPU thread mapping one thread at a time"), cl::cat(nnccOptions));
static cl::list<std::string> shapes("shape",
                                    cl::desc("Fix the dims of a graph input: NAME:1x3x224x224 (NAME: for a scalar)"),
                                    cl::value_desc("NAME:DIMS"), cl::cat(nnccOptions));
static cl::list<std::string> bindInputs(
    "bind-input", cl::desc("Make a graph input a constant read from an ONNX TensorProto file"),
    cl::value_desc("NAME=FILE.pb"), cl::cat(nnccOptions));
static cl::opt<bool> noSimplify("no-simplify",
                                cl::desc("Print the importer's output before canonicalization"), cl::cat(nnccOptions));
static cl::opt<bool> weightsFile("weights-file",
                                 cl::desc("Store weights in <output>.weights (mmapped at load)"), cl::cat(nnccOptions));
static cl::opt<std::string> keepTemps("keep-temps",
                                      cl::desc("Keep the generated plan.c, kernels.o ... here"),
                                      cl::value_desc("dir"), cl::cat(nnccOptions));
static cl::opt<int64_t> memoryBudget(
    "memory-budget", cl::desc("Fail when an entry needs more bytes than this (weights + arena + I/O)"),
    cl::value_desc("BYTES"), cl::init(0), cl::cat(nnccOptions));
static cl::opt<bool> noFusion("no-fusion",
                              cl::desc("One kernel per op (for comparisons with fusion)"), cl::cat(nnccOptions));
static cl::opt<bool> noMemoryReuse(
    "no-memory-reuse", cl::desc("Give every intermediate its own arena bytes (for comparisons)"), cl::cat(nnccOptions));
static cl::opt<std::string> precision(
    "precision",
    cl::desc("Compute precision: fp32 (default), tf32 (f32 GEMMs may use TF32), bf16 or fp16 "
             "(GEMMs and what follows them in the low type, f32 accumulation; reductions, "
             "softmax, normalizations, exp/log/pow in f32), mixed (bf16 GEMM operands, "
             "everything else f32); docs/precision.md"),
    cl::value_desc("fp32|tf32|bf16|fp16|mixed"), cl::init("fp32"), cl::cat(nnccOptions));
static cl::list<std::string> keepFp32(
    "keep-fp32", cl::desc("Compute these ONNX nodes or op types in f32 (names or types, "
                          "comma-separated)"),
    cl::value_desc("NODE_OR_OPTYPE,..."), cl::CommaSeparated, cl::cat(nnccOptions));
static cl::opt<std::string> mutableWeights(
    "mutable-weights",
    cl::desc("Make the weights whose initializer names fully match REGEX module state: each "
             "session keeps them on its device, readable and writable through the runtime API "
             "(--mutable-weights alone: all float weights)"),
    cl::value_desc("REGEX"), cl::ValueOptional, cl::cat(nnccOptions));
static cl::opt<bool> train(
    "train", cl::desc("Add the entries train_step(inputs..., labels, lr) -> loss and eval_step "
                      "(--loss, --optimizer; the weights --trainable selects are updated in "
                      "place; docs/training.md)"), cl::cat(nnccOptions));
static cl::opt<std::string> trainable(
    "trainable", cl::desc("With --train: the initializers trained (full-name regex; default all "
                          "float initializers)"),
    cl::value_desc("REGEX"), cl::cat(nnccOptions));
static cl::opt<std::string> freeze(
    "freeze", cl::desc("With --train: initializers that stay constants (full-name regex)"),
    cl::value_desc("REGEX"), cl::cat(nnccOptions));
static cl::opt<std::string> loss(
    "loss",
    cl::desc("Add the entry eval_step(inputs..., labels) -> loss: cross-entropy (int64 class "
             "labels, the output as logits), mse, or output (the output is the loss)"),
    cl::value_desc("cross-entropy|mse|output"), cl::cat(nnccOptions));
static cl::opt<std::string> lossOutput("loss-output",
                                       cl::desc("The output the loss reads (default: the only one)"),
                                       cl::value_desc("NAME"), cl::cat(nnccOptions));
static cl::opt<std::string> labelName("label-name", cl::desc("The name of the labels input"),
                                      cl::value_desc("NAME"), cl::init("labels"), cl::cat(nnccOptions));
static cl::opt<std::string> optimizer(
    "optimizer",
    cl::desc("Add the entry optimizer_step(lr, grad.<weight>...) -> step updating the mutable "
             "weights as torch.optim does (docs/training.md)"),
    cl::value_desc("sgd|momentum|adam|adamw"), cl::cat(nnccOptions));
static cl::opt<double> momentum("momentum", cl::desc("SGD momentum (--optimizer=momentum)"),
                                cl::init(0.9), cl::cat(nnccOptions));
static cl::opt<double> beta1("beta1", cl::desc("Adam beta1"), cl::init(0.9), cl::cat(nnccOptions));
static cl::opt<double> beta2("beta2", cl::desc("Adam beta2"), cl::init(0.999), cl::cat(nnccOptions));
static cl::opt<double> eps("eps", cl::desc("Adam epsilon"), cl::init(1e-8), cl::cat(nnccOptions));
static cl::opt<double> weightDecay("weight-decay",
                                   cl::desc("L2 penalty (decoupled for adamw)"), cl::init(0), cl::cat(nnccOptions));
static cl::opt<double> gradClip("grad-clip",
                                cl::desc("Clip the gradients' global L2 norm to this (0: off)"),
                                cl::init(0), cl::cat(nnccOptions));
static cl::opt<std::string> parallel(
    "parallel", cl::desc("The rank layout, world = N*M*P ranks under mpirun: dp:N (with --train) trains each "
                         "of N data-parallel ranks on 1/N of the compiled batch; tp:M splits the model's "
                         "column/row-parallel layer pairs over M ranks; pp:P cuts the model into P pipeline "
                         "stages run over --micro-batches (docs/distributed.md)"),
    cl::value_desc("dp:N,tp:M,pp:P"), cl::cat(nnccOptions));
static cl::opt<int64_t> microBatches("micro-batches",
                                     cl::desc("With --parallel=pp:P: micro-batches each rank's batch is cut "
                                              "into (default P; must divide the batch)"),
                                     cl::init(0), cl::cat(nnccOptions));
static cl::opt<int64_t> bucketBytes("bucket-bytes",
                                    cl::desc("With --parallel: most bytes of one gradient all-reduce"),
                                    cl::init(25 << 20), cl::cat(nnccOptions));
static cl::opt<std::string> gradients(
    "gradients",
    cl::desc("Add the entry forward_grad: the gradients of forward's float inputs, and of the "
             "initializers whose name matches REGEX, given a cotangent of each output "
             "(docs/training.md)"),
    cl::value_desc("REGEX"), cl::ValueOptional, cl::cat(nnccOptions));
/// Prints the op table and exits before the required model path is checked.
static cl::opt<bool> listOps("list-ops", cl::desc("Print every supported ONNX op with its opsets and exit"),
                             cl::Hidden, cl::ValueDisallowed, cl::callback([](const bool &) {
                               nncc::printSupportedOps(llvm::outs());
                               llvm::outs().flush();
                               std::exit(0);
                             }));
static cl::opt<bool> elideWeights("elide-weights",
                                  cl::desc("Print large constants as '...' in text output"), cl::cat(nnccOptions));

static int fail(llvm::Error err) {
  llvm::errs() << "nncc: error: " << llvm::toString(std::move(err)) << "\n";
  return 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // Past a file-size limit (ulimit -f) a write fails with EFBIG, reported
  // like any other write error, instead of SIGXFSZ killing the compiler.
  signal(SIGXFSZ, SIG_IGN);
  // LLVM owns a boolean -stats option, so --stats=FILE.json is taken out of
  // argv before the command line is parsed.
  std::string statsPath;
  std::vector<char *> args;
  for (int i = 0; i < argc; ++i) {
    llvm::StringRef arg(argv[i]);
    if (i > 0 && (arg.consume_front("--stats=") || arg.consume_front("-stats="))) {
      statsPath = arg.str();
      continue;
    }
    args.push_back(argv[i]);
  }
  cl::extrahelp statsHelp("\n  --stats=FILE.json  write compile figures (kernels, arena bytes, ...) as JSON\n");
  // MLIR's options for a real compile: --mlir-print-ir-after-all,
  // --mlir-timing, --mlir-pass-pipeline-crash-reproducer, ... The passes
  // are registered first: --mlir-print-ir-after=PASS names one of them.
  mlir::registerAllPasses();
  nncc::registerNNCCPipelines();
  nncc::registerNNToExecPipelines();
  nncc::registerPlanPasses();
  nncc::registerTargetPasses();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  mlir::registerAsmPrinterCLOptions();
  for (auto &[name, option] : cl::getRegisteredOptions())
    if (!llvm::is_contained(option->Categories, &nnccOptions) && option->getOptionHiddenFlag() == cl::NotHidden &&
        name != "help" && name != "version")
      option->setHiddenFlag(cl::Hidden);
  cl::ParseCommandLineOptions(args.size(), args.data(),
                              "nncc: ONNX graph compiler\n\n"
                              "  MLIR's pass-manager options (--mlir-print-ir-after-all, --mlir-timing,\n"
                              "  --mlir-pass-pipeline-crash-reproducer=FILE, ...) and LLVM's: --help-hidden\n");

  nncc::CompileOptions options;
  options.emit = emit;
  options.noSimplify = noSimplify;
  options.package.weightsFile = weightsFile;
  options.package.keepDir = keepTemps;
  options.memoryBudget = memoryBudget;
  options.cpu = cpu;
  options.plan.reuse = !noMemoryReuse;
  options.lowering.fuse = !noFusion;
  options.emulateGpu = emulateGpu;
  if (!targets.empty())
    if (auto err = nncc::parseTargetOption(targets, options.targets))
      return fail(std::move(err));
  for (const auto &bind : bindInputs)
    if (auto err = nncc::parseBindOption(bind, options.import))
      return fail(std::move(err));
  for (const auto &shape : shapes)
    if (auto err = nncc::parseShapeOption(shape, options.import))
      return fail(std::move(err));
  auto parsedPrecision = nncc::parsePrecision(precision);
  if (!parsedPrecision)
    return fail(llvm::createStringError(llvm::inconvertibleErrorCode(),
                                        "--precision: '%s' is not a precision (expected fp32, "
                                        "tf32, bf16, fp16 or mixed)",
                                        precision.c_str()));
  options.precision = *parsedPrecision;
  options.keepFp32.assign(keepFp32.begin(), keepFp32.end());
  if (mutableWeights.getNumOccurrences())
    options.mutableWeights = mutableWeights.empty() ? ".*" : mutableWeights.getValue();
  options.train = train;
  if (train) {
    if (mutableWeights.getNumOccurrences())
      return fail(llvm::createStringError(llvm::inconvertibleErrorCode(),
                                          "--train: name the weights it updates with --trainable, not --mutable-weights"));
    options.mutableWeights = trainable.empty() ? ".*" : trainable.getValue();
    options.frozenWeights = freeze;
  } else if (trainable.getNumOccurrences() || freeze.getNumOccurrences()) {
    return fail(llvm::createStringError(llvm::inconvertibleErrorCode(), "--trainable and --freeze need --train"));
  }
  options.loss = loss;
  options.lossOutput = lossOutput;
  options.labelName = labelName;
  options.optimizer = optimizer;
  options.momentum = momentum;
  options.beta1 = beta1;
  options.beta2 = beta2;
  options.eps = eps;
  options.weightDecay = weightDecay;
  options.gradClip = gradClip;
  if (parallel.getNumOccurrences())
    if (auto err = nncc::parseParallelOption(parallel, options))
      return fail(std::move(err));
  if (microBatches.getNumOccurrences() && (microBatches < 1 || options.pipelineParallel == 1))
    return fail(llvm::createStringError(llvm::inconvertibleErrorCode(),
                                        "--micro-batches needs --parallel=pp:P and must be at least 1"));
  options.microBatches = microBatches;
  if (bucketBytes < 1)
    return fail(llvm::createStringError(llvm::inconvertibleErrorCode(), "--bucket-bytes must be positive"));
  options.bucketBytes = bucketBytes;
  options.gradients = gradients.getNumOccurrences() > 0;
  options.gradientConstants = gradients;
  bool binary = emit == nncc::EmitKind::Object || emit == nncc::EmitKind::Module;
  std::string output = outputPath;
  if (output.empty())
    output = binary ? (emit == nncc::EmitKind::Module ? "model.so" : "model.o") : "-";
  if (binary && output == "-")
    return fail(llvm::createStringError(llvm::inconvertibleErrorCode(),
                                        "-o needs a file for --emit=obj and --emit=so"));
  if (memoryBudget < 0)
    return fail(llvm::createStringError(llvm::inconvertibleErrorCode(),
                                        "--memory-budget: %lld is not a byte count (0: no limit)",
                                        static_cast<long long>(memoryBudget.getValue())));


  // Progress lines only on a terminal, so pipes and logs stay clean.
  auto start = std::chrono::steady_clock::now();
  if (llvm::sys::Process::StandardErrIsDisplayed())
    options.onPhase = [&](llvm::StringRef phase) {
      double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      llvm::errs() << llvm::format("[%6.2fs] ", t) << phase << "\n";
    };

  mlir::MLIRContext context;
  context.printOpOnDiagnostic(false);
  auto result = nncc::compileOnnxFile(context, inputPath, output, options);
  if (!result)
    return fail(result.takeError());
  for (const std::string &warning : result->warnings)
    llvm::errs() << "nncc: warning: " << warning << "\n";

  if (!statsPath.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream stats(statsPath, ec);
    if (ec)
      return fail(llvm::createStringError(ec, "cannot write '%s'", statsPath.c_str()));
    stats << result->stats.toJson();
  }
  if (binary)
    return 0;

  std::error_code ec;
  llvm::ToolOutputFile out(output, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return fail(llvm::createStringError(ec, "cannot write '%s': %s", output.c_str(),
                                        ec.message().c_str()));
  if (!result->text.empty()) {
    out.os() << result->text;
  } else {
    mlir::OpPrintingFlags flags;
    if (elideWeights)
      flags.elideLargeElementsAttrs(16);
    result->module->print(out.os(), flags);
    out.os() << "\n";
  }
  out.keep();
  return 0;
}
