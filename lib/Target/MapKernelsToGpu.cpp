/// Kernel loop nests as GPU launches, one thread per iteration (or, with
/// `emulate`, as host functions running the threads in order).
#include "lib/Target/Passes.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"

namespace nncc {
#define GEN_PASS_DEF_MAPKERNELSTOGPUPASS
#include "lib/Target/Passes.h.inc"
} // namespace nncc

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

/// One GPU launch of a kernel: the gpu.func and its grid and block sizes.
struct Launch {
  std::string function;
  int64_t grid = 1, block = 1;
};

/// Builds the GPU functions of one kernel into `gpuModule` or, when
/// emulating (no `gpuModule`), a host function of the same name, placed
/// before the kernel, that runs each launch's threads one after another (to
/// test the mapping on a CPU).
class KernelMapper {
public:
  KernelMapper(func::FuncOp kernel, gpu::GPUModuleOp gpuModule)
      : kernel(kernel), gpuModule(gpuModule), emulate(!gpuModule), builder(kernel.getContext()) {
    if (auto mayAlias = kernel->getAttrOfType<DenseI64ArrayAttr>(kMayAliasAttrName))
      mayAlias_.assign(mayAlias.asArrayRef().begin(), mayAlias.asArrayRef().end());
  }

  /// The kernel's launches in order; the emulating host function is
  /// `hostFunction()`.
  FailureOr<SmallVector<Launch>> run() {
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
    if (emulate)
      createHostFunction();
    SmallVector<Launch> launches;
    for (auto [i, group] : llvm::enumerate(groups)) {
      std::string name = (kernel.getName() + "_" + llvm::Twine(i)).str();
      auto launch = isMappableNest(group.front()) ? mapNests(name, group) : mapSerial(name, group);
      if (failed(launch))
        return failure();
      launches.push_back(*launch);
    }
    return launches;
  }

  func::FuncOp hostFunction() const { return hostFunction_; }

private:
  /// Starts the code of one launch: a gpu.func taking the kernel's buffers
  /// (or, when emulating, the next part of the host function). `mapping`
  /// maps the kernel's arguments to the new function's.
  void beginLaunch(StringRef name, IRMapping &mapping) {
    if (emulate) {
      Block &entry = hostFunction_.getBody().front();
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
    builder.setInsertionPoint(kernel);
    hostFunction_ = func::FuncOp::create(builder, kernel.getLoc(), kernel.getName(), kernel.getFunctionType());
    hostFunction_.setPrivate();
    Block *entry = hostFunction_.addEntryBlock();
    builder.setInsertionPointToEnd(entry);
    func::ReturnOp::create(builder, kernel.getLoc());
  }

  /// The launch's linear thread index (blockIdx.x * block + threadIdx.x);
  /// when emulating, the index of a loop over all `threads`.
  Value linearThreadIndex(Location loc, int64_t block, int64_t threads) {
    auto constant = [&](int64_t v) { return arith::ConstantIndexOp::create(builder, loc, v).getResult(); };
    if (emulate) {
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
  LogicalResult cloneWithInputs(Operation *op, IRMapping &mapping) {
    LogicalResult result = success();
    op->walk([&](Operation *inner) {
      for (Value operand : inner->getOperands()) {
        if (failed(result) || mapping.contains(operand))
          continue;
        Operation *def = operand.getDefiningOp();
        if (!def || def->getBlock() != &kernel.getBody().front())
          continue;
        if (!isRematerializable(def)) {
          result = kernel.emitError("kernel '")
                   << kernel.getName() << "': a value defined by '" << def->getName()
                   << "' is used by another launch; the GPU target cannot pass it between launches";
          return;
        }
        result = cloneWithInputs(def, mapping);
      }
    });
    if (failed(result))
      return failure();
    if (!mapping.contains(op)) {
      Operation *clone = builder.clone(*op, mapping);
      mapping.map(op, clone);
      if (!emulate)
        cloneGlobals(op);
    }
    return success();
  }

  /// Device copies of the constant globals `op` reads (an emulating host
  /// function reads the kernel module's own).
  void cloneGlobals(Operation *op) {
    op->walk([&](memref::GetGlobalOp get) {
      if (gpuModule.lookupSymbol(get.getName()))
        return;
      auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(kernel, get.getNameAttr());
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(gpuModule.getBody());
      builder.clone(*global);
    });
  }

  FailureOr<Launch> mapSerial(StringRef name, ArrayRef<Operation *> ops) {
    IRMapping mapping;
    beginLaunch(name, mapping);
    for (Operation *op : ops)
      if (failed(cloneWithInputs(op, mapping)))
        return failure();
    return Launch{name.str(), 1, 1};
  }

  /// One thread per iteration of `nests` (which share their iterations),
  /// running their bodies one after another.
  FailureOr<Launch> mapNests(StringRef name, ArrayRef<Operation *> nests) {
    IRMapping mapping;
    beginLaunch(name, mapping);
    Location loc = nests.front()->getLoc();
    int64_t total = NestSpace(cast<scf::ParallelOp>(nests.front())).total;
    int64_t block = std::min(kBlockThreads, std::max<int64_t>(32, (total + 31) / 32 * 32));
    int64_t grid = std::max<int64_t>(1, (total + block - 1) / block);
    if (grid > INT32_MAX)
      return kernel.emitError("kernel '") << kernel.getName() << "': " << total
                                          << " iterations exceed one launch's grid";
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
        if (failed(cloneWithInputs(&bodyOp, mapping)))
          return failure();
    }
    return Launch{name.str(), grid, block};
  }

  func::FuncOp kernel;
  gpu::GPUModuleOp gpuModule;
  bool emulate;
  func::FuncOp hostFunction_;
  OpBuilder builder;
  /// Arguments that may share a buffer with another (the kernel's nncc.may_alias).
  SmallVector<unsigned> mayAlias_;
};

/// The launches of a kernel as `[{name, grid, block}, ...]`.
ArrayAttr launchesAttr(MLIRContext *ctx, ArrayRef<Launch> launches) {
  Builder b(ctx);
  SmallVector<Attribute> entries;
  for (const Launch &launch : launches)
    entries.push_back(b.getDictionaryAttr({b.getNamedAttr("name", b.getStringAttr(launch.function)),
                                           b.getNamedAttr("grid", b.getI64IntegerAttr(launch.grid)),
                                           b.getNamedAttr("block", b.getI64IntegerAttr(launch.block))}));
  return b.getArrayAttr(entries);
}

struct MapKernelsToGpuPass : impl::MapKernelsToGpuPassBase<MapKernelsToGpuPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<func::FuncOp> kernels;
    for (auto func : module.getOps<func::FuncOp>())
      if (isKernel(func))
        kernels.push_back(func);
    gpu::GPUModuleOp gpuModule;
    if (!emulate) {
      module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(), UnitAttr::get(ctx));
      OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
      gpuModule = gpu::GPUModuleOp::create(b, module.getLoc(), "nncc_kernels");
    }
    for (func::FuncOp kernel : kernels) {
      KernelMapper mapper(kernel, gpuModule);
      FailureOr<SmallVector<Launch>> launches = mapper.run();
      if (failed(launches))
        return signalPassFailure();
      if (emulate) {
        // The host function takes the kernel's place, marks included.
        func::FuncOp host = mapper.hostFunction();
        for (NamedAttribute attr : kernel->getDiscardableAttrs())
          host->setAttr(attr.getName(), attr.getValue());
        kernel.erase();
        continue;
      }
      kernel.eraseBody();
      kernel->setAttr(kGpuLaunchesAttrName, launchesAttr(ctx, *launches));
    }
  }
};

} // namespace
} // namespace nncc
