/// Bufferized kernels to host object code: vectorizable math, the outer
/// parallel loop split into thread ranges, the upstream LLVM lowering, a
/// packed-argument entry per kernel, LLVM -O3 for the host CPU.
#include "lib/Target/HostCodegen.h"
#include "lib/Support/Error.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

using namespace mlir;

namespace nncc {
namespace {

/// Upstream passes from loops over buffers to the LLVM dialect. Kernel
/// arguments are passed as bare pointers.
constexpr const char *kLoweringPipeline =
    "buffer-deallocation-pipeline,"
    "convert-bufferization-to-memref,"
    "lower-affine,convert-scf-to-cf,"
    // Direct convolutions' vector code: 1-D transfers become (masked) vector
    // loads and stores.
    "convert-vector-to-llvm,"
    "expand-strided-metadata,lower-affine,"
    // LLVM intrinsics first (fma from the approximations must not become
    // fmaf calls), libm for the rest (erf of f64, pow...).
    "convert-math-to-llvm,convert-math-to-libm,"
    "finalize-memref-to-llvm,"
    "convert-arith-to-llvm,convert-index-to-llvm,convert-cf-to-llvm,"
    "convert-func-to-llvm{use-bare-ptr-memref-call-conv=1},"
    "reconcile-unrealized-casts";

/// Kernels whose parallel loop runs fewer innermost iterations than this in
/// all run on one thread: splitting them costs more than it saves.
constexpr int64_t kMinParallelWork = 16384;

/// Trip count of a loop with constant bounds (1 when they are not constant).
int64_t tripCount(Value lb, Value ub, Value step) {
  auto l = getConstantIntValue(lb), u = getConstantIntValue(ub), s = getConstantIntValue(step);
  return l && u && s && *s > 0 && *u > *l ? (*u - *l + *s - 1) / *s : 1;
}

/// Iterations of the innermost loops one iteration of `block` runs (the
/// longest nest): a row kernel's per-row work, for the split threshold. A
/// vector operation counts its lanes, so a direct convolution's tile (taps
/// unrolled into vector FMAs) weighs what it computes.
int64_t innerIterations(Block &block) {
  int64_t most = 1, lanes = 0;
  for (Operation &op : block)
    if (auto fma = dyn_cast<vector::FMAOp>(op))
      lanes += fma.getType().getNumElements();
  most = std::max(most, lanes);
  for (Operation &op : block) {
    int64_t trips = 1;
    if (auto loop = dyn_cast<scf::ForOp>(op))
      trips = tripCount(loop.getLowerBound(), loop.getUpperBound(), loop.getStep());
    else if (auto loop = dyn_cast<scf::ParallelOp>(op))
      for (auto [lb, ub, step] : llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep()))
        trips *= tripCount(lb, ub, step);
    for (Region &region : op.getRegions())
      for (Block &inner : region)
        most = std::max(most, trips * innerIterations(inner));
  }
  return most;
}

/// Gives every kernel two trailing `index` arguments (begin, end) and, when
/// its body is one top-level scf.parallel from 0 with step 1, restricts that
/// loop's first dimension to [begin, end). Returns the split extent of each
/// kernel (0: not splittable; the runtime then calls it with (0, 1)).
llvm::StringMap<int64_t> addParallelRange(ModuleOp module) {
  llvm::StringMap<int64_t> extents;
  module.walk([&](func::FuncOp func) {
    if (func.isExternal())
      return;
    Block &body = func.getBody().front();
    auto indexType = IndexType::get(func.getContext());
    unsigned n = func.getNumArguments();
    (void)func.insertArgument(n, indexType, {}, func.getLoc());
    (void)func.insertArgument(n + 1, indexType, {}, func.getLoc());
    Value begin = body.getArgument(n), end = body.getArgument(n + 1);
    extents[func.getName()] = 0;
    SmallVector<scf::ParallelOp> loops;
    bool onlyLoop = true;
    for (Operation &op : body) {
      if (auto loop = dyn_cast<scf::ParallelOp>(op))
        loops.push_back(loop);
      else if (!isa<arith::ConstantOp, func::ReturnOp>(op))
        onlyLoop = false;
    }
    if (loops.size() != 1 || !onlyLoop)
      return;
    scf::ParallelOp loop = loops.front();
    auto lb = getConstantIntValue(loop.getLowerBound()[0]);
    auto step = getConstantIntValue(loop.getStep()[0]);
    int64_t work = 1;
    for (Value ub : loop.getUpperBound()) {
      auto c = getConstantIntValue(ub);
      if (!c)
        return;
      work *= *c;
    }
    // Row kernels loop over each row's elements inside the parallel loop.
    work *= innerIterations(*loop.getBody());
    auto extent = getConstantIntValue(loop.getUpperBound()[0]);
    if (!lb || *lb != 0 || !step || *step != 1 || !extent || *extent < 2 || work < kMinParallelWork)
      return;
    loop.getLowerBoundMutable()[0].assign(begin);
    loop.getUpperBoundMutable()[0].assign(end);
    extents[func.getName()] = *extent;
  });
  return extents;
}

/// Moves the stack buffers a kernel allocates inside its loops (a row
/// kernel's per-row scores) to its entry: an alloca in a loop body takes new
/// stack space on every iteration (megabytes over the rows of one thread).
/// A loop iteration never reads what an earlier one left in such a buffer,
/// and every thread runs its own call of the kernel, so one buffer per call
/// serves all iterations.
void hoistStackBuffers(ModuleOp module) {
  module.walk([](func::FuncOp func) {
    if (func.isExternal())
      return;
    Block &entry = func.getBody().front();
    SmallVector<memref::AllocaOp> inLoops;
    func.walk([&](memref::AllocaOp alloca) {
      if (alloca->getBlock() != &entry && alloca.getType().hasStaticShape() && alloca->getNumOperands() == 0)
        inLoops.push_back(alloca);
    });
    for (memref::AllocaOp alloca : inLoops)
      alloca->moveBefore(&entry, entry.begin());
  });
}

/// Adds `nncc_<name>(ptr args, i64 begin, i64 end)` calling `kernel` with the
/// pointers args[0..n) and the range.
void addPackedEntry(OpBuilder &b, LLVM::LLVMFuncOp kernel) {
  MLIRContext *ctx = b.getContext();
  Location loc = kernel.getLoc();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i64 = IntegerType::get(ctx, 64);
  auto type = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptr, i64, i64});
  auto entry = LLVM::LLVMFuncOp::create(b, loc, ("nncc_" + kernel.getName()).str(), type);
  Block *body = entry.addEntryBlock(b);
  OpBuilder eb = OpBuilder::atBlockBegin(body);
  SmallVector<Value> args;
  unsigned numBuffers = kernel.getNumArguments() - 2;
  for (unsigned i = 0; i < numBuffers; ++i) {
    Value slot = LLVM::GEPOp::create(eb, loc, ptr, ptr, body->getArgument(0),
                                     ArrayRef<LLVM::GEPArg>{(int32_t)i});
    args.push_back(LLVM::LoadOp::create(eb, loc, ptr, slot));
  }
  args.push_back(body->getArgument(1));
  args.push_back(body->getArgument(2));
  LLVM::CallOp::create(eb, loc, kernel, args);
  LLVM::ReturnOp::create(eb, loc, ValueRange{});
}

} // namespace

llvm::Expected<LoweredKernels> lowerKernelsToLLVM(BufferizedKernels kernels) {
  OwningOpRef<ModuleOp> module = std::move(kernels.module);
  MLIRContext *ctx = module->getContext();
  OpBuilder b(ctx);
  // bf16 arithmetic in f32, each result rounded back to bf16 (LLVM would
  // promote it the same way, but through compiler-rt calls; see below).
  if (auto err = runPipeline(*module, "arith-emulate-unsupported-floats{source-types=bf16 target-type=f32}",
                             "bf16 emulation"))
    return std::move(err);
  // Polynomial approximations of f32 transcendental functions vectorize;
  // libm calls (what the rest becomes) do not.
  {
    RewritePatternSet patterns(ctx);
    populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
      return llvm::is_contained({"math.tanh", "math.erf", "math.exp", "math.expm1", "math.log",
                                 "math.log1p", "math.log2"},
                                name);
    });
    // bf16 conversions as integer arithmetic: without AVX512-BF16, LLVM
    // would call compiler-rt's __truncsfbf2, which the system's libgcc may
    // lack (GCC 12's does), leaving model.so with an undefined symbol. The
    // same rounding (to nearest even) on every CPU.
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(*module, std::move(patterns))))
      return fail("internal error: math approximation did not converge");
  }
  hoistStackBuffers(*module);
  llvm::StringMap<int64_t> extents = addParallelRange(*module);
  if (auto err = runPipeline(*module, kLoweringPipeline, "kernel lowering"))
    return std::move(err);
  b.setInsertionPointToEnd(module->getBody());
  for (const auto &name : kernels.names) {
    auto kernel = module->lookupSymbol<LLVM::LLVMFuncOp>(name);
    if (!kernel)
      return fail("internal error: kernel '" + name + "' vanished during lowering");
    if (kernel.getFunctionType().getReturnType() != LLVM::LLVMVoidType::get(ctx))
      return fail("kernel '" + name + "' still returns a value after bufferization");
    // The planner never lets two buffers of a step overlap, except where an
    // elementwise kernel writes in place: element i is read and then written
    // at index i by the same iteration, which stays correct under noalias.
    // Without it LLVM guards every loop with overlap checks that an in-place
    // step always fails, falling back to scalar code.
    for (unsigned i = 0; i < kernel.getNumArguments(); ++i)
      if (isa<LLVM::LLVMPointerType>(kernel.getArgument(i).getType()))
        kernel.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(), b.getUnitAttr());
    addPackedEntry(b, kernel);
  }
  return LoweredKernels{std::move(module), std::move(extents)};
}

llvm::Expected<std::string> translateToLLVMIR(ModuleOp llvmModule) {
  registerBuiltinDialectTranslation(*llvmModule.getContext());
  registerLLVMDialectTranslation(*llvmModule.getContext());
  llvm::LLVMContext llvmContext;
  auto llvmIR = translateModuleToLLVMIR(llvmModule, llvmContext);
  if (!llvmIR)
    return fail("translation to LLVM IR failed");
  std::string text;
  llvm::raw_string_ostream os(text);
  llvmIR->print(os, nullptr);
  return text;
}

llvm::Error emitHostObject(ModuleOp llvmModule, llvm::StringRef path, const CpuTarget &cpu) {
  registerBuiltinDialectTranslation(*llvmModule.getContext());
  registerLLVMDialectTranslation(*llvmModule.getContext());
  llvm::LLVMContext llvmContext;
  auto llvmIR = translateModuleToLLVMIR(llvmModule, llvmContext);
  if (!llvmIR)
    return fail("translation to LLVM IR failed");

  auto created = createHostTargetMachine(cpu);
  if (!created)
    return created.takeError();
  std::unique_ptr<llvm::TargetMachine> machine = std::move(*created);
  llvmIR->setDataLayout(machine->createDataLayout());
  llvmIR->setTargetTriple(machine->getTargetTriple());

  auto optimize = makeOptimizingTransformer(3, 0, machine.get());
  if (auto err = optimize(llvmIR.get()))
    return err;

  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return fail("cannot write '" + path + "': " + ec.message());
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, out, nullptr, llvm::CodeGenFileType::ObjectFile))
    return fail("the host target cannot emit object files");
  codegen.run(*llvmIR);
  return llvm::Error::success();
}

} // namespace nncc
