/// Kernels to PTX: loop nests mapped to GPU threads, MLIR's NVVM pipeline,
/// ptxas for cubins.
#include "lib/Target/GpuCodegen.h"
#include "lib/Support/Error.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"

#include <cstdlib>

using namespace mlir;

namespace nncc {
namespace {

/// Threads per block of a parallel nest: a multiple of the warp size, large
/// enough to hide latency, small enough to leave registers for unrolled bodies.
constexpr int64_t kBlockThreads = 256;

/// Ops that compute no data and may be repeated in every GPU function that
/// uses their result (constants, views of buffers, global constants).
bool isRematerializable(Operation *op) {
  return isa<arith::ConstantOp, memref::GetGlobalOp, memref::SubViewOp, memref::ExpandShapeOp,
             memref::CollapseShapeOp, memref::ReinterpretCastOp, memref::CastOp>(op);
}

/// A parallel nest that can map one thread per iteration: constant bounds,
/// no reductions.
bool isMappableNest(Operation *op) {
  auto loop = dyn_cast<scf::ParallelOp>(op);
  if (!loop || loop.getNumResults() != 0)
    return false;
  for (auto range : {loop.getLowerBound(), loop.getUpperBound(), loop.getStep()})
    for (Value v : range)
      if (!getConstantIntValue(v))
        return false;
  return true;
}

/// The iteration space of a mappable nest: per dim lower bound, step and
/// trip count.
struct NestSpace {
  SmallVector<int64_t> lbs, steps, extents;
  int64_t total = 1;

  explicit NestSpace(scf::ParallelOp loop) {
    for (auto [lb, ub, step] : llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
      int64_t l = *getConstantIntValue(lb), u = *getConstantIntValue(ub), s = *getConstantIntValue(step);
      lbs.push_back(l);
      steps.push_back(s);
      extents.push_back(u > l ? (u - l + s - 1) / s : 0);
      total *= extents.back();
    }
  }
  /// Trip counts other than 1: two nests with the same list give a thread
  /// the same iteration.
  SmallVector<int64_t> nonUnitExtents() const {
    SmallVector<int64_t> result;
    for (int64_t e : extents)
      if (e != 1)
        result.push_back(e);
    return result;
  }
};

/// Whether `indices` into a buffer of `shape` address exactly the element of
/// `loop`'s iteration in row-major order: the nest's non-unit ivs (from 0,
/// step 1) on the non-unit dims in order, 0 on unit dims.
bool isThreadOwnedAccess(scf::ParallelOp loop, ArrayRef<int64_t> shape, ValueRange indices) {
  NestSpace space(loop);
  SmallVector<Value> allIvs(loop.getInductionVars()), ivs;
  SmallVector<int64_t> ivExtents;
  for (auto [d, iv] : llvm::enumerate(allIvs))
    if (space.extents[d] != 1) {
      if (space.lbs[d] != 0 || space.steps[d] != 1)
        return false;
      ivs.push_back(iv);
      ivExtents.push_back(space.extents[d]);
    }
  auto isZero = [&](Value index) {
    if (auto c = getConstantIntValue(index))
      return *c == 0;
    auto it = llvm::find(allIvs, index);
    size_t d = it - allIvs.begin();
    return it != allIvs.end() && space.extents[d] == 1 && space.lbs[d] == 0;
  };
  size_t next = 0;
  for (auto [size, index] : llvm::zip(shape, indices)) {
    if (size == 1 ? !isZero(index)
                  : next >= ivs.size() || index != ivs[next] || ivExtents[next] != size)
      return false;
    if (size != 1)
      ++next;
  }
  return next == ivs.size();
}

/// How a nest touches the kernel's buffers (its function arguments): which
/// it writes, which it touches, and which only at the thread's own element.
struct NestAccesses {
  llvm::SmallDenseSet<Value> written, touched, notOwned;
  bool analyzable = true;

  explicit NestAccesses(scf::ParallelOp loop) {
    loop.walk([&](Operation *op) {
      Value memref;
      ValueRange indices;
      if (auto load = dyn_cast<memref::LoadOp>(op)) {
        memref = load.getMemRef();
        indices = load.getIndices();
      } else if (auto store = dyn_cast<memref::StoreOp>(op)) {
        memref = store.getMemRef();
        indices = store.getIndices();
        written.insert(memref);
      } else {
        // Anything else that takes a buffer (views, copies) defeats the analysis.
        if (llvm::any_of(op->getOperandTypes(), llvm::IsaPred<MemRefType>))
          analyzable = false;
        return;
      }
      if (!isa<BlockArgument>(memref))
        analyzable = false;
      touched.insert(memref);
      if (!isThreadOwnedAccess(loop, cast<MemRefType>(memref.getType()).getShape(), indices))
        notOwned.insert(memref);
    });
  }
};

/// Whether `next` can run in the same thread right after the nests of
/// `group`: the same iterations, and every buffer one writes and another
/// touches is only accessed at the thread's own element, so no thread
/// reads what another writes.
bool canShareThreads(ArrayRef<Operation *> group, scf::ParallelOp next) {
  auto first = cast<scf::ParallelOp>(group.front());
  if (NestSpace(first).nonUnitExtents() != NestSpace(next).nonUnitExtents())
    return false;
  NestAccesses after(next);
  if (!after.analyzable)
    return false;
  for (Operation *op : group) {
    NestAccesses before(cast<scf::ParallelOp>(op));
    if (!before.analyzable)
      return false;
    for (Value buffer : before.touched) {
      bool shared = after.touched.contains(buffer) &&
                    (before.written.contains(buffer) || after.written.contains(buffer));
      if (shared && (before.notOwned.contains(buffer) || after.notOwned.contains(buffer)))
        return false;
    }
  }
  return true;
}

/// Builds the GPU functions of one kernel into `gpuModule` or, when
/// emulating, a host function of the same name into `hostModule` that runs
/// each launch's threads one after another (to test the mapping on a CPU).
class KernelMapper {
public:
  KernelMapper(func::FuncOp kernel, gpu::GPUModuleOp gpuModule, ModuleOp hostModule,
               ArrayRef<unsigned> mayAlias = {})
      : kernel(kernel), gpuModule(gpuModule), hostModule(hostModule), builder(kernel.getContext()),
        mayAlias_(mayAlias) {}

  llvm::Expected<SmallVector<GpuLaunch>> run() {
    // Top-level ops split into launches: each mappable nest alone, each run
    // of other ops together on one thread.
    // Consecutive nests whose threads only touch their own elements of the
    // buffers they share share one launch (fill + reduction + epilogue).
    SmallVector<SmallVector<Operation *>> groups;
    bool lastWasSerial = false;
    for (Operation &op : kernel.getBody().front()) {
      if (isa<func::ReturnOp>(op) || isRematerializable(&op))
        continue;
      if (isMappableNest(&op)) {
        if (!groups.empty() && !lastWasSerial && canShareThreads(groups.back(), cast<scf::ParallelOp>(op)))
          groups.back().push_back(&op);
        else
          groups.push_back({&op});
        lastWasSerial = false;
      } else {
        if (!lastWasSerial)
          groups.emplace_back();
        groups.back().push_back(&op);
        lastWasSerial = true;
      }
    }
    if (hostModule)
      createHostFunction();
    SmallVector<GpuLaunch> launches;
    for (auto [i, group] : llvm::enumerate(groups)) {
      std::string name = (kernel.getName() + "_" + llvm::Twine(i)).str();
      auto launch = isMappableNest(group.front()) ? mapNests(name, group) : mapSerial(name, group);
      if (!launch)
        return launch.takeError();
      launches.push_back(*launch);
    }
    return launches;
  }

private:
  /// Starts the code of one launch: a gpu.func taking the kernel's buffers
  /// (or, when emulating, the next part of the host function). `mapping`
  /// maps the kernel's arguments to the new function's.
  void beginLaunch(StringRef name, IRMapping &mapping) {
    if (hostModule) {
      Block &entry = hostFunction.getBody().front();
      for (auto [from, to] : llvm::zip(kernel.getArguments(), entry.getArguments()))
        mapping.map(from, to);
      builder.setInsertionPoint(entry.getTerminator());
      return;
    }
    builder.setInsertionPointToEnd(gpuModule.getBody());
    auto type = builder.getFunctionType(kernel.getArgumentTypes(), {});
    auto func = gpu::GPUFuncOp::create(builder, kernel.getLoc(), name, type);
    func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), builder.getUnitAttr());
    // The planner keeps a step's buffers apart, except an in-place launch's
    // operand and result: those stay without noalias, which would let LLVM
    // read the operand through the non-coherent cache (ld.global.nc) while
    // the same kernel stores to it. Without noalias every store forces
    // reloads (no accumulator in registers), so all others have it.
    ArrayRef<unsigned> mayAlias = mayAlias_;
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (!llvm::is_contained(mayAlias, i))
        func.setArgAttr(i, "llvm.noalias", builder.getUnitAttr());
    Block &entry = func.getBody().front();
    for (auto [from, to] : llvm::zip(kernel.getArguments(), entry.getArguments()))
      mapping.map(from, to);
    builder.setInsertionPointToEnd(&entry);
    gpu::ReturnOp::create(builder, kernel.getLoc());
    builder.setInsertionPointToStart(&entry);
  }

  void createHostFunction() {
    builder.setInsertionPointToEnd(hostModule.getBody());
    hostFunction = func::FuncOp::create(builder, kernel.getLoc(), kernel.getName(), kernel.getFunctionType());
    hostFunction.setPrivate();
    Block *entry = hostFunction.addEntryBlock();
    builder.setInsertionPointToEnd(entry);
    func::ReturnOp::create(builder, kernel.getLoc());
  }

  /// The launch's linear thread index (blockIdx.x * block + threadIdx.x);
  /// when emulating, the index of a loop over all `threads`.
  Value linearThreadIndex(Location loc, int64_t block, int64_t threads) {
    auto constant = [&](int64_t v) { return arith::ConstantIndexOp::create(builder, loc, v).getResult(); };
    if (hostModule) {
      auto loop = scf::ForOp::create(builder, loc, constant(0), constant(threads), constant(1));
      builder.setInsertionPointToStart(loop.getBody());
      return loop.getInductionVar();
    }
    Value blockId = gpu::BlockIdOp::create(builder, loc, gpu::Dimension::x);
    Value threadId = gpu::ThreadIdOp::create(builder, loc, gpu::Dimension::x);
    return arith::AddIOp::create(builder, loc, arith::MulIOp::create(builder, loc, blockId, constant(block)),
                                 threadId);
  }

  /// Clones the top-level ops defining values that `op` (or its regions)
  /// uses from outside, then `op` itself, at the builder's position.
  llvm::Error cloneWithInputs(Operation *op, IRMapping &mapping) {
    llvm::Error err = llvm::Error::success();
    op->walk([&](Operation *inner) {
      for (Value operand : inner->getOperands()) {
        if (err || mapping.contains(operand))
          continue;
        Operation *def = operand.getDefiningOp();
        if (!def || def->getBlock() != &kernel.getBody().front())
          continue;
        if (!isRematerializable(def)) {
          err = fail("kernel '" + kernel.getName() + "': a value defined by '" +
                     def->getName().getStringRef() +
                     "' is used by another launch; the GPU target cannot pass it between launches");
          return;
        }
        if (auto e = cloneWithInputs(def, mapping))
          err = std::move(e);
      }
    });
    if (err)
      return err;
    if (!mapping.contains(op)) {
      Operation *clone = builder.clone(*op, mapping);
      mapping.map(op, clone);
      cloneGlobals(op);
    }
    return llvm::Error::success();
  }

  /// Device copies of the constant globals `op` reads.
  void cloneGlobals(Operation *op) {
    op->walk([&](memref::GetGlobalOp get) {
      if (gpuModule.lookupSymbol(get.getName()))
        return;
      auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(kernel, get.getNameAttr());
      OpBuilder::InsertionGuard guard(builder);
      if (hostModule) {
        if (hostModule.lookupSymbol(get.getName()))
          return;
        builder.setInsertionPointToStart(hostModule.getBody());
      } else {
        builder.setInsertionPointToStart(gpuModule.getBody());
      }
      builder.clone(*global);
    });
  }

  llvm::Expected<GpuLaunch> mapSerial(StringRef name, ArrayRef<Operation *> ops) {
    IRMapping mapping;
    beginLaunch(name, mapping);
    for (Operation *op : ops)
      if (auto err = cloneWithInputs(op, mapping))
        return std::move(err);
    return GpuLaunch{name.str(), {1, 1, 1}, {1, 1, 1}};
  }

  /// One thread per iteration of `nests` (which share their iterations),
  /// running their bodies one after another.
  llvm::Expected<GpuLaunch> mapNests(StringRef name, ArrayRef<Operation *> nests) {
    IRMapping mapping;
    beginLaunch(name, mapping);
    Location loc = nests.front()->getLoc();
    int64_t total = NestSpace(cast<scf::ParallelOp>(nests.front())).total;
    int64_t block = std::min(kBlockThreads, std::max<int64_t>(32, (total + 31) / 32 * 32));
    int64_t grid = std::max<int64_t>(1, (total + block - 1) / block);
    if (grid > INT32_MAX)
      return fail("kernel '" + kernel.getName() + "': " + llvm::Twine(total) +
                  " iterations exceed one launch's grid");
    auto constant = [&](int64_t v) { return arith::ConstantIndexOp::create(builder, loc, v).getResult(); };
    Value linear = linearThreadIndex(loc, block, grid * block);
    Value inRange = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::ult, linear, constant(total));
    auto guard = scf::IfOp::create(builder, loc, inRange, /*withElseRegion=*/false);
    builder.setInsertionPointToStart(&guard.getThenRegion().front());
    for (Operation *op : nests) {
      auto loop = cast<scf::ParallelOp>(op);
      NestSpace space(loop);
      // Delinearize, innermost dim fastest.
      SmallVector<Value> ivs(space.extents.size());
      Value rest = linear;
      for (int64_t d = space.extents.size() - 1; d >= 0; --d) {
        Value index = space.extents[d] == 1 ? constant(0)
                      : d == 0             ? rest
                                           : arith::RemUIOp::create(builder, loc, rest, constant(space.extents[d]));
        if (d > 0 && space.extents[d] != 1)
          rest = arith::DivUIOp::create(builder, loc, rest, constant(space.extents[d]));
        Value scaled = space.steps[d] == 1 ? index : arith::MulIOp::create(builder, loc, index, constant(space.steps[d]));
        ivs[d] = space.lbs[d] == 0 ? scaled : arith::AddIOp::create(builder, loc, scaled, constant(space.lbs[d]));
      }
      for (auto [iv, value] : llvm::zip(loop.getInductionVars(), ivs))
        mapping.map(iv, value);
      for (Operation &bodyOp : loop.getBody()->without_terminator())
        if (auto err = cloneWithInputs(&bodyOp, mapping))
          return std::move(err);
    }
    return GpuLaunch{name.str(),
                     {static_cast<uint32_t>(grid), 1, 1},
                     {static_cast<uint32_t>(block), 1, 1}};
  }

  func::FuncOp kernel;
  gpu::GPUModuleOp gpuModule;
  ModuleOp hostModule;
  func::FuncOp hostFunction;
  OpBuilder builder;
  /// Arguments that may share a buffer with another (BufferizedKernels::mayAlias).
  SmallVector<unsigned> mayAlias_;
};

/// The NVPTX backend's PTX ISA version: 8.0 covers sm_90 and is accepted by
/// CUDA 12+ drivers (the default, 6.0, rejects sm_90).
constexpr const char *kPtxFeatures = "+ptx80";

std::string nvvmPipeline(StringRef arch) {
  return ("lower-affine,expand-strided-metadata,lower-affine,"
          "gpu-lower-to-nvvm-pipeline{cubin-format=isa cubin-chip=" +
          arch + " cubin-features=" + kPtxFeatures + " kernel-bare-ptr-calling-convention=1 opt-level=3}")
      .str();
}

llvm::Expected<std::string> assembleCubin(const std::string &ptxas, const std::string &ptx,
                                          StringRef arch) {
  llvm::SmallString<256> dir;
  if (auto ec = llvm::sys::fs::createUniqueDirectory("nncc-ptxas", dir))
    return fail("cannot create a temporary folder: " + ec.message());
  llvm::scope_exit cleanup([&] { llvm::sys::fs::remove_directories(dir); });
  std::string in = (dir + "/kernels.ptx").str(), out = (dir + "/kernels.cubin").str(),
              log = (dir + "/ptxas.log").str();
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(in, ec);
    if (ec)
      return fail("cannot write '" + in + "': " + ec.message());
    os << ptx;
  }
  std::string archFlag = ("-arch=" + arch).str();
  llvm::StringRef args[] = {ptxas, archFlag, "-O3", in, "-o", out};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(log), llvm::StringRef(log)};
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects, 0, 0, &error);
  auto read = [](const std::string &path) {
    auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
    return buffer ? (*buffer)->getBuffer().str() : std::string();
  };
  if (rc != 0) {
    std::string output = read(log);
    /// An unresolved `__nv_*` function means libdevice was not linked: say
    /// where to point nncc rather than leave the user with ptxas's words.
    std::string hint = llvm::StringRef(output).contains("function '__nv_")
                           ? "\nlibdevice (nvvm/libdevice/libdevice.10.bc) was not found; set CUDA_HOME to the "
                             "CUDA toolkit folder"
                           : "";
    return fail("ptxas (" + ptxas + ") rejected the PTX for " + arch + (error.empty() ? "" : ": " + error) +
                "\n" + output + hint);
  }
  return read(out);
}

/// MLIR's NVVM target links libdevice (the GPU math library: expf, erff...)
/// from the toolkit named by $CUDA_ROOT, $CUDA_HOME or $CUDA_PATH; with none
/// set the math calls stay unresolved and ptxas rejects the PTX. The toolkit
/// whose ptxas assembles the cubins is the natural default.
void pointNvvmAtToolkit(const std::string &ptxas) {
  if (std::getenv("CUDA_ROOT") || std::getenv("CUDA_HOME") || std::getenv("CUDA_PATH"))
    return;
  /// `ptxas` on PATH may be a wrapper script outside the toolkit (CI has
  /// /usr/local/bin/ptxas exec'ing the real one), so its folder is only the
  /// first guess; the usual install folders follow.
  llvm::SmallVector<std::string, 3> roots;
  llvm::SmallString<256> real;
  if (!ptxas.empty() && !llvm::sys::fs::real_path(ptxas, real)) {
    llvm::sys::path::remove_filename(real); // bin/
    llvm::sys::path::remove_filename(real);
    roots.push_back(real.str().str());
  }
  roots.push_back("/usr/local/cuda");
  roots.push_back("/usr/lib/cuda");
  for (const std::string &root : roots)
    if (llvm::sys::fs::exists(root + "/nvvm/libdevice")) {
      ::setenv("CUDA_HOME", root.c_str(), /*overwrite=*/0);
      return;
    }
}

/// The PTX function (entry or device function) around each call of the
/// device heap (malloc, free), in order of appearance.
SmallVector<std::pair<std::string, std::string>> deviceHeapCalls(StringRef ptx) {
  static const llvm::Regex function("^[.a-z ]*\\.(entry|func).*[ )]([A-Za-z_$][A-Za-z0-9_$]*)\\($");
  static const llvm::Regex heapCall("^[[:space:]]*call(\\.uni)?[[:space:]].*[ ,](malloc|free)[ ,;]");
  SmallVector<std::pair<std::string, std::string>> calls;
  std::string current;
  SmallVector<StringRef> lines, match;
  ptx.split(lines, '\n');
  for (StringRef line : lines) {
    if (!line.starts_with(".extern") && function.match(line.rtrim(), &match))
      current = match[2].str();
    else if (heapCall.match(line, &match))
      calls.emplace_back(current, match[2].str());
  }
  return calls;
}

/// A GPU kernel must not allocate: NVVM turns an allocation left in a kernel
/// (a per-thread temporary too large for the stack) into a call of the device
/// heap's malloc, which has no NULL check, is never freed, and serves all
/// threads from 8 MB by default: a long sequence would fault or corrupt
/// memory at run time. Refused at compile time instead, naming the kernel.
llvm::Error checkNoDeviceHeap(StringRef ptx, StringRef arch, const BufferizedKernels &kernels) {
  auto calls = deviceHeapCalls(ptx);
  if (calls.empty())
    return llvm::Error::success();
  auto [function, callee] = calls.front();
  // Launch functions are named <kernel>_<launch>; the kernel's location
  // names the ONNX nodes it computes.
  std::string kernel = function, nodes;
  for (const std::string &name : kernels.names)
    if (StringRef(function).starts_with(name + "_")) {
      kernel = name;
      kernels.module.get().lookupSymbol(name)->getLoc()->walk([&](Location loc) {
        if (auto named = dyn_cast<NameLoc>(loc))
          nodes += (nodes.empty() ? "" : ", ") + named.getName().str();
        return WalkResult::advance();
      });
    }
  if (!nodes.empty())
    kernel += "' (ONNX nodes " + nodes + ")";
  else
    kernel += "'";
  std::string more = calls.size() > 1 ? " (" + std::to_string(calls.size()) + " heap calls in all)" : "";
  return fail("kernel '" + kernel + " (PTX function '" + function + "', " + arch + ") calls the device heap's " +
              callee + ": a per-thread temporary of this kernel is too large for the stack, and GPU "
              "kernels must not allocate" + more);
}

} // namespace

std::string findPtxas() {
  if (const char *env = std::getenv("NNCC_PTXAS"))
    return env;
  if (auto onPath = llvm::sys::findProgramByName("ptxas"))
    return *onPath;
  if (llvm::sys::fs::can_execute("/usr/local/cuda/bin/ptxas"))
    return "/usr/local/cuda/bin/ptxas";
  return "";
}

llvm::Expected<GpuKernels> lowerKernelsToGpu(const BufferizedKernels &kernels,
                                             llvm::ArrayRef<std::string> archs) {
  ModuleOp source = kernels.module.get();
  MLIRContext *ctx = source.getContext();
  static const bool pipelineRegistered = (gpu::registerGPUToNVVMPipeline(), true);
  (void)pipelineRegistered;
  DialectRegistry registry;
  registry.insert<gpu::GPUDialect, NVVM::NVVMDialect>();
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerAllToLLVMIRTranslations(registry);
  ctx->appendDialectRegistry(registry);
  ctx->loadAllAvailableDialects();
  OwningOpRef<ModuleOp> module = ModuleOp::create(source.getLoc());
  (*module)->setAttr(gpu::GPUDialect::getContainerModuleAttrName(), UnitAttr::get(ctx));
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(module->getBody());
  auto gpuModule = gpu::GPUModuleOp::create(b, module->getLoc(), "nncc_kernels");
  GpuKernels result;
  for (const std::string &name : kernels.names) {
    auto kernel = source.lookupSymbol<func::FuncOp>(name);
    auto launches = KernelMapper(kernel, gpuModule, nullptr, kernels.mayAlias.lookup(name)).run();
    if (!launches)
      return launches.takeError();
    result.launches[name] = std::move(*launches);
  }
  std::string ptxas = findPtxas();
  pointNvvmAtToolkit(ptxas);
  for (const std::string &arch : archs) {
    OwningOpRef<ModuleOp> copy = cast<ModuleOp>((*module)->clone());
    if (auto err = runPipeline(*copy, nvvmPipeline(arch), "GPU code generation for " + arch))
      return std::move(err);
    GpuImage image{arch, "", ""};
    copy->walk([&](gpu::BinaryOp binary) {
      for (Attribute object : binary.getObjects())
        image.ptx = cast<gpu::ObjectAttr>(object).getObject().getValue().str();
    });
    if (image.ptx.empty())
      return fail("GPU code generation for " + arch + " produced no PTX");
    if (auto err = checkNoDeviceHeap(image.ptx, arch, kernels))
      return std::move(err);
    if (!ptxas.empty()) {
      auto cubin = assembleCubin(ptxas, image.ptx, arch);
      if (!cubin)
        return cubin.takeError();
      image.cubin = std::move(*cubin);
    }
    result.images.push_back(std::move(image));
  }
  return result;
}

llvm::Expected<BufferizedKernels> emulateGpuMapping(const BufferizedKernels &kernels) {
  ModuleOp source = kernels.module.get();
  BufferizedKernels result{ModuleOp::create(source.getLoc()), kernels.names, kernels.scratchBytes,
                           kernels.mayAlias};
  for (const std::string &name : kernels.names) {
    auto kernel = source.lookupSymbol<func::FuncOp>(name);
    if (auto launches = KernelMapper(kernel, nullptr, *result.module).run(); !launches)
      return launches.takeError();
  }
  return result;
}

} // namespace nncc
