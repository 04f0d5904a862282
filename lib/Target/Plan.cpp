/// The plan translation: an exec module annotated by the plan pipeline
/// (lib/Target/PlanPasses.td) and its kernels' facts, read into the plan
/// tables of the module ABI. No decision is made here.
#include "lib/Target/Plan.h"
#include "lib/Support/Error.h"

#include "lib/Target/MemoryPlanner.h"
#include "lib/Target/Passes.h"
#include "lib/Target/PlanPasses.h"

#include "dialects/Dist/DistOps.h"
#include "dialects/Exec/ExecOps.h"
#include "dialects/Exec/ExecUtils.h"
#include "dialects/NN/NNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include "nncc/module_abi.h"

#include <algorithm>

using namespace mlir;

namespace nncc {
namespace {

llvm::Expected<int32_t> dtypeOf(Type type) {
  Type e = cast<RankedTensorType>(type).getElementType();
  if (e.isF32()) return NNCC_DTYPE_F32;
  if (e.isF64()) return NNCC_DTYPE_F64;
  if (e.isF16()) return NNCC_DTYPE_F16;
  if (e.isBF16()) return NNCC_DTYPE_BF16;
  if (e.isInteger(1)) return NNCC_DTYPE_BOOL;
  if (auto i = dyn_cast<IntegerType>(e)) {
    bool u = i.isUnsigned();
    switch (i.getWidth()) {
    case 8: return u ? NNCC_DTYPE_U8 : NNCC_DTYPE_I8;
    case 16: return u ? NNCC_DTYPE_U16 : NNCC_DTYPE_I16;
    case 32: return u ? NNCC_DTYPE_U32 : NNCC_DTYPE_I32;
    case 64: return u ? NNCC_DTYPE_U64 : NNCC_DTYPE_I64;
    }
  }
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return fail("no runtime dtype for " + s);
}

/// The bytes of a constant as the runtime sees them (bool as one byte).
std::string constantBytes(DenseElementsAttr attr) {
  Type e = attr.getElementType();
  int64_t n = attr.getNumElements();
  std::string out;
  if (e.isInteger(1)) {
    for (bool v : attr.getValues<bool>())
      out.push_back(v ? 1 : 0);
    return out;
  }
  ArrayRef<char> raw = attr.getRawData();
  if (attr.isSplat()) {
    int64_t width = e.getIntOrFloatBitWidth() / 8;
    for (int64_t i = 0; i < n; ++i)
      out.append(raw.data(), width);
    return out;
  }
  return std::string(raw.data(), raw.size());
}
/// The plan of one entry function, from its annotations.
class EntryTranslator {
public:
  EntryTranslator(func::FuncOp func, ModulePlan &plan, llvm::StringMap<int32_t> &kernelIndex,
                  const llvm::StringMap<int32_t> &stateIndex, const PlanOptions &options)
      : func_(func), plan_(plan), kernelIndex_(kernelIndex), stateIndex_(stateIndex), options_(options) {}

  llvm::Expected<EntryPlan> run();

private:
  BufferRef ref(Value v) {
    Value r = exec::viewRoot(v);
    BufferRef result = refs_.lookup(r);
    result.bytes = exec::bufferBytes(v.getType());
    return result;
  }
  llvm::Error addWeight(nn::ConstantOp op);
  llvm::Error addResultBuffers(Operation *op);
  llvm::Expected<int32_t> kernelOf(exec::LaunchOp launch);
  llvm::Error gemmParams(exec::GemmOp gemm, PlanStep &step);
  /// The collective step of `op` (dist::isCollectiveStep): its iparams and
  /// its args, the operands then the results.
  llvm::Error collectiveStep(Operation *op, PlanStep &step);

  func::FuncOp func_;
  ModulePlan &plan_;
  llvm::StringMap<int32_t> &kernelIndex_;
  const llvm::StringMap<int32_t> &stateIndex_;
  const PlanOptions &options_;
  llvm::DenseMap<Value, BufferRef> refs_;
};

std::string locString(Location loc) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << loc;
  return s;
}

/// The translation reads what the plan pipeline wrote; IR without it is
/// refused, naming the op.
llvm::Error notPlanned(Operation *op, llvm::StringRef what) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (auto func = dyn_cast<func::FuncOp>(op))
    os << "entry '" << func.getName() << "'";
  else
    os << "'" << op->getName() << "' at " << op->getLoc();
  os << " has no " << what << " (run the plan pipeline, nncc-plan, first)";
  return fail(s);
}

/// Appends a constant to the weight blob (64-byte aligned); its index.
int32_t appendWeight(WeightBlob &w, llvm::StringRef name, DenseElementsAttr value) {
  int64_t offset = alignToArena(w.data.size());
  w.data.resize(offset, '\0');
  std::string bytes = constantBytes(value);
  w.data += bytes;
  w.names.push_back(name.str());
  w.offsets.push_back(offset);
  w.sizes.push_back(bytes.size());
  return w.names.size() - 1;
}

/// The attributes of the parallel contract (docs/distributed.md): the
/// module's layout and a global's shard.
constexpr const char *kParallelAttrName = dist::kParallelAttrName.data();
constexpr const char *kShardAttrName = dist::kShardAttrName.data();

/// What a collective step op says of its NNCC_STEP_COLLECTIVE: the iparams
/// beyond the group, and the step's name when its location has none. A
/// reduction makes an f32 step (the ops' verifiers); the others move bytes
/// (reduction and dtype 0).
struct CollectiveParams {
  int64_t kind;
  const char *name;
  StringRef group;
  int64_t groupSize;
  int64_t peer = -1; // send, recv: the other side; broadcast: the root
  std::optional<StringRef> reduction;
};

template <typename OpT> CollectiveParams paramsOf(OpT op, int64_t kind, const char *name) {
  return {kind, name, op.getGroup(), static_cast<int64_t>(op.getGroupSize())};
}

CollectiveParams collectiveParams(Operation *op) {
  return TypeSwitch<Operation *, CollectiveParams>(op)
      .Case([](dist::AllReduceStepOp op) {
        CollectiveParams p = paramsOf(op, NNCC_COLLECTIVE_ALL_REDUCE, "all-reduce");
        p.reduction = op.getReduction();
        return p;
      })
      .Case([](dist::ReduceScatterStepOp op) {
        CollectiveParams p = paramsOf(op, NNCC_COLLECTIVE_REDUCE_SCATTER, "reduce-scatter");
        p.reduction = op.getReduction();
        return p;
      })
      .Case([](dist::AllGatherStepOp op) { return paramsOf(op, NNCC_COLLECTIVE_ALL_GATHER, "all-gather"); })
      .Case([](dist::BroadcastStepOp op) {
        CollectiveParams p = paramsOf(op, NNCC_COLLECTIVE_BROADCAST, "broadcast");
        p.peer = op.getRoot();
        return p;
      })
      .Case([](dist::SendOp op) {
        CollectiveParams p = paramsOf(op, NNCC_COLLECTIVE_SEND, "send");
        p.peer = op.getPeer();
        return p;
      })
      .Case([](dist::RecvOp op) {
        CollectiveParams p = paramsOf(op, NNCC_COLLECTIVE_RECV, "recv");
        p.peer = op.getPeer();
        return p;
      });
}

/// The module's layout from `nncc.parallel = array<i64: D, T>` (1 x 1
/// without it).
llvm::Error readLayout(ModuleOp module, ModulePlan &plan) {
  Attribute attr = module->getAttr(kParallelAttrName);
  if (!attr) {
    // A module from before the attribute (data parallel only): the layout
    // its collectives' group sizes imply; disagreements are caught per step.
    module.walk([&](Operation *op) {
      if (!dist::isCollectiveStep(op))
        return;
      CollectiveParams params = collectiveParams(op);
      int32_t &size = params.group == "tensor"     ? plan.tensorParallel
                      : params.group == "pipeline" ? plan.pipelineParallel
                                                   : plan.dataParallel;
      if (size == 1 && params.groupSize > 1 && params.groupSize <= INT32_MAX)
        size = static_cast<int32_t>(params.groupSize);
    });
    return llvm::Error::success();
  }
  auto layout = dyn_cast<DenseI64ArrayAttr>(attr);
  int64_t stages = layout && layout.size() == 3 ? layout[2] : 1;
  if (!layout || layout.size() < 2 || layout.size() > 3 || layout[0] < 1 || layout[1] < 1 || stages < 1 ||
      layout[0] > INT32_MAX / layout[1] / stages)
    return fail(std::string("the module's ") + kParallelAttrName +
                " must be array<i64: D, T[, P]> with D, T, P >= 1 (data-, tensor- and pipeline-parallel ranks)");
  plan.dataParallel = static_cast<int32_t>(layout[0]);
  plan.tensorParallel = static_cast<int32_t>(layout[1]);
  plan.pipelineParallel = static_cast<int32_t>(stages);
  return llvm::Error::success();
}

/// The module's state: every `ml_program.global`, in module order, starting
/// as its initial value (a weight), or zero-filled without one.
llvm::Error addStates(ModuleOp module, ModulePlan &plan, llvm::StringMap<int32_t> &stateIndex) {
  for (auto global : module.getOps<ml_program::GlobalOp>()) {
    if (!global.getIsMutable())
      return fail("global '" + global.getSymName().str() + "' is not mutable: module state is");
    auto type = dyn_cast<RankedTensorType>(global.getType());
    if (!type || !type.hasStaticShape())
      return fail("global '" + global.getSymName().str() + "' is not a statically shaped tensor");
    auto dtype = dtypeOf(type);
    if (!dtype)
      return dtype.takeError();
    StateDesc state{{global.getSymName().str(), *dtype, {type.getShape().begin(), type.getShape().end()}},
                    exec::bufferBytes(type), -1};
    std::string name = global.getSymName().str();
    int64_t parts = 1;
    if (Attribute attr = global->getAttr(kShardAttrName)) {
      auto shard = dyn_cast<DenseI64ArrayAttr>(attr);
      if (!shard || (shard.size() != 2 && shard.size() != 3))
        return fail("global '" + name + "': " + kShardAttrName + " must be array<i64: axis, parts[, blocks]>");
      int64_t axis = shard[0], blocks = shard.size() == 3 ? shard[2] : 1;
      parts = shard[1];
      if (axis < 0 || axis >= type.getRank() || parts < 1 || parts != plan.tensorParallel || blocks < 1 ||
          blocks > INT32_MAX || type.getDimSize(axis) % blocks != 0)
        return fail(llvm::formatv("global '{0}': {1} = [{2}, {3}, {6}] needs 0 <= axis < {4}, parts == the "
                                  "module's tensor-parallel size {5} and blocks dividing the part's axis",
                                  name, kShardAttrName, axis, parts, type.getRank(), plan.tensorParallel, blocks)
                        .str());
      if (parts > 1) {
        state.shardParts = static_cast<int32_t>(parts);
        state.shardAxis = static_cast<int32_t>(axis);
        state.shardBlocks = blocks > 1 ? static_cast<int32_t>(blocks) : 0;
      }
    }
    if (auto value = global.getValue()) {
      auto dense = dyn_cast<DenseElementsAttr>(*value);
      if (!dense)
        return fail("global '" + name + "' starts from no dense value");
      // A sharded global's value is the whole tensor: its type's dims with
      // the split one times the parts.
      SmallVector<int64_t> whole(type.getShape());
      whole[state.shardAxis] *= parts;
      if (dense.getType().getShape() != ArrayRef<int64_t>(whole))
        return fail("global '" + name + "': its initial value is not the whole tensor of its " +
                    std::to_string(parts) + " part(s)");
      state.initWeight = appendWeight(plan.weights, global.getSymName(), dense);
    }
    if (auto stage = global->getAttrOfType<IntegerAttr>(dist::kPipelineStageAttrName)) {
      if (stage.getInt() < -1 || stage.getInt() >= plan.pipelineParallel)
        return fail(llvm::formatv("global '{0}': {1} = {2} is no stage of the module's {3} (or -1)", name,
                                  dist::kPipelineStageAttrName, stage.getInt(), plan.pipelineParallel)
                        .str());
      state.pipelineStage = static_cast<int32_t>(stage.getInt());
    }
    stateIndex[global.getSymName()] = plan.states.size();
    plan.states.push_back(std::move(state));
  }
  return llvm::Error::success();
}

llvm::Error EntryTranslator::addWeight(nn::ConstantOp op) {
  auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
  if (!dense)
    return fail("constants must be dense elements");
  std::string name;
  if (auto loc = dyn_cast<NameLoc>(op.getLoc()))
    name = loc.getName().str();
  int32_t index = appendWeight(plan_.weights, name, dense);
  refs_[op.getResult()] = {NNCC_BUFFER_WEIGHT, index, 0, (int64_t)plan_.weights.sizes[index]};
  return llvm::Error::success();
}


llvm::Error EntryTranslator::collectiveStep(Operation *op, PlanStep &step) {
  CollectiveParams params = collectiveParams(op);
  StringRef group = params.group;
  int64_t groupSize = params.groupSize;
  step.kind = NNCC_STEP_COLLECTIVE;
  step.name = params.name;
  if (auto loc = dyn_cast<NameLoc>(op->getLoc()))
    step.name = loc.getName().str();
  int64_t size = group == "data"     ? plan_.dataParallel
                 : group == "tensor" ? plan_.tensorParallel
                 : group == "pipeline" ? plan_.pipelineParallel
                                       : -1;
  if (size < 0)
    return fail("'" + op->getName().getStringRef().str() + "' at " + locString(op->getLoc()) +
                ": unknown group '" + group.str() + "' (expected \"data\", \"tensor\" or \"pipeline\")");
  if (groupSize != size)
    return fail(llvm::formatv("'{0}' at {1}: group_size {2} is not the module's {3}-parallel size {4} "
                              "(nncc.parallel)",
                              op->getName().getStringRef(), locString(op->getLoc()), groupSize, group, size)
                    .str());
  step.iparams.assign(NNCC_COLLECTIVE_NUM_IPARAMS, 0);
  step.iparams[NNCC_COLLECTIVE_OP] = params.kind;
  if (params.reduction) {
    step.iparams[NNCC_COLLECTIVE_REDUCTION] = *params.reduction == "mean" ? NNCC_REDUCTION_MEAN : NNCC_REDUCTION_SUM;
    step.iparams[NNCC_COLLECTIVE_DTYPE] = NNCC_DTYPE_F32;
  }
  step.iparams[NNCC_COLLECTIVE_GROUP_SIZE] = groupSize;
  step.iparams[NNCC_COLLECTIVE_GROUP] = group == "data"     ? NNCC_GROUP_DATA
                                        : group == "tensor" ? NNCC_GROUP_TENSOR
                                                            : NNCC_GROUP_PIPELINE;
  step.iparams[NNCC_COLLECTIVE_PEER] = params.peer;
  for (Value operand : op->getOperands())
    step.args.push_back(ref(operand));
  for (Value result : op->getResults())
    step.args.push_back(ref(result));
  return llvm::Error::success();
}

llvm::Error EntryTranslator::addResultBuffers(Operation *op) {
  auto buffers = op->getAttrOfType<ArrayAttr>(kBuffersAttrName);
  if (!buffers || buffers.size() != op->getNumResults())
    return notPlanned(op, "nncc.buffers for each result");
  for (auto [r, buffer] : llvm::zip(op->getResults(), buffers)) {
    int64_t bytes = exec::bufferBytes(r.getType());
    if (auto arena = dyn_cast<exec::ArenaBufferAttr>(buffer))
      refs_[r] = {NNCC_BUFFER_ARENA, 0, arena.getOffset(), bytes};
    else if (auto output = dyn_cast<exec::OutputBufferAttr>(buffer))
      refs_[r] = {NNCC_BUFFER_OUTPUT, (int32_t)output.getIndex(), 0, bytes};
    else
      return notPlanned(op, "#exec.arena or #exec.output buffer");
  }
  return llvm::Error::success();
}

/// The kernel table index of the kernel `launch` runs; the kernel's host
/// parallel extent and GPU launches (its facts from code generation) are
/// recorded when it is first seen.
llvm::Expected<int32_t> EntryTranslator::kernelOf(exec::LaunchOp launch) {
  auto [it, inserted] = kernelIndex_.try_emplace(launch.getKernel(), plan_.kernels.size());
  if (!inserted)
    return it->second;
  plan_.kernels.push_back(launch.getKernel().str());
  auto kernel = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(launch, launch.getKernelAttr());
  std::vector<GpuLaunch> &launches = plan_.gpuLaunches.emplace_back();
  if (auto attr = kernel ? kernel->getAttrOfType<ArrayAttr>(kGpuLaunchesAttrName) : nullptr)
    for (auto dict : attr.getAsRange<DictionaryAttr>()) {
      auto name = dict.getAs<StringAttr>("name");
      auto grid = dict.getAs<IntegerAttr>("grid"), block = dict.getAs<IntegerAttr>("block");
      if (!name || !grid || !block)
        return notPlanned(kernel, "well-formed nncc.gpu_launches ({name, grid, block})");
      launches.push_back({name.str(),
                          {static_cast<uint32_t>(grid.getInt()), 1, 1},
                          {static_cast<uint32_t>(block.getInt()), 1, 1}});
    }
  return it->second;
}

llvm::Error EntryTranslator::gemmParams(exec::GemmOp gemm, PlanStep &step) {
  auto a = cast<RankedTensorType>(gemm.getA().getType()), b = cast<RankedTensorType>(gemm.getB().getType());
  auto c = cast<RankedTensorType>(gemm.getType());
  int64_t m = c.getShape()[c.getRank() - 2], n = c.getShape()[c.getRank() - 1];
  int64_t k = a.getShape()[a.getRank() - (gemm.getTransA() ? 2 : 1)];
  int64_t batch = c.getNumElements() / (m * n);
  auto batchStride = [&](RankedTensorType t) {
    int64_t matrix = t.getShape()[t.getRank() - 1] * t.getShape()[t.getRank() - 2];
    return t.getNumElements() == matrix ? 0 : matrix;
  };
  auto dtA = dtypeOf(a), dtB = dtypeOf(b), dtC = dtypeOf(c);
  if (!dtA || !dtB || !dtC)
    return llvm::joinErrors(llvm::joinErrors(dtA.takeError(), dtB.takeError()), dtC.takeError());
  // Every iparam, the optional ones included (module_abi.h).
  std::vector<int64_t> &ip = step.iparams;
  ip.assign(NNCC_GEMM_MAX_IPARAMS, 0);
  ip[NNCC_GEMM_BATCH] = batch;
  ip[NNCC_GEMM_M] = m;
  ip[NNCC_GEMM_N] = n;
  ip[NNCC_GEMM_K] = k;
  ip[NNCC_GEMM_TRANS_A] = gemm.getTransA();
  ip[NNCC_GEMM_TRANS_B] = gemm.getTransB();
  ip[NNCC_GEMM_LDA] = a.getShape().back();
  ip[NNCC_GEMM_LDB] = b.getShape().back();
  ip[NNCC_GEMM_LDC] = n;
  ip[NNCC_GEMM_STRIDE_A] = batchStride(a);
  ip[NNCC_GEMM_STRIDE_B] = batchStride(b);
  ip[NNCC_GEMM_STRIDE_C] = m * n;
  ip[NNCC_GEMM_DTYPE_A] = *dtA;
  ip[NNCC_GEMM_DTYPE_B] = *dtB;
  ip[NNCC_GEMM_DTYPE_C] = *dtC;
  ip[NNCC_GEMM_ALLOW_TF32] = options_.allowTf32; // --precision=tf32
  ip[NNCC_GEMM_ACTIVATION] = llvm::StringSwitch<nncc_activation>(gemm.getActivation())
                                 .Case("relu", NNCC_ACTIVATION_RELU)
                                 .Case("gelu", NNCC_ACTIVATION_GELU)
                                 .Case("clip", NNCC_ACTIVATION_CLIP)
                                 .Default(NNCC_ACTIVATION_NONE);
  ip[NNCC_GEMM_BIAS_PER_ROW] = gemm.getBiasPerRow();
  bool clip = ip[NNCC_GEMM_ACTIVATION] == NNCC_ACTIVATION_CLIP;
  step.fparams.assign(clip ? NNCC_GEMM_NUM_CLIP_FPARAMS : NNCC_GEMM_NUM_FPARAMS, 0);
  step.fparams[NNCC_GEMM_ALPHA] = gemm.getAlpha().convertToDouble();
  step.fparams[NNCC_GEMM_BETA] = gemm.getBeta().convertToDouble();
  if (clip) {
    step.fparams[NNCC_GEMM_CLIP_MIN] = gemm.getClipMin().convertToDouble();
    step.fparams[NNCC_GEMM_CLIP_MAX] = gemm.getClipMax().convertToDouble();
  }
  return llvm::Error::success();
}

llvm::Expected<EntryPlan> EntryTranslator::run() {
  EntryPlan entry;
  entry.name = func_.getName().str();
  if (auto stage = func_->getAttrOfType<IntegerAttr>(dist::kPipelineStageAttrName)) {
    // `<name>.stage<s>`: the variant of entry <name> that stage s runs.
    std::string suffix = ".stage" + std::to_string(stage.getInt());
    if (stage.getInt() < 0 || stage.getInt() >= plan_.pipelineParallel || !StringRef(entry.name).ends_with(suffix))
      return fail(llvm::formatv("entry '{0}': {1} = {2} needs a stage below the module's {3} and the name "
                                "'<entry>{4}'",
                                entry.name, dist::kPipelineStageAttrName, stage.getInt(), plan_.pipelineParallel,
                                suffix)
                      .str());
    entry.name.resize(entry.name.size() - suffix.size());
    entry.pipelineStage = static_cast<int32_t>(stage.getInt());
  } else if (plan_.pipelineParallel > 1) {
    return fail("entry '" + entry.name + "' has no " + dist::kPipelineStageAttrName.str() +
                " in a module of pipeline stages");
  }
  auto arenaBytes = func_->getAttrOfType<IntegerAttr>(kArenaBytesAttrName);
  auto noReuse = func_->getAttrOfType<IntegerAttr>(kNoReuseBytesAttrName);
  auto lowerBound = func_->getAttrOfType<IntegerAttr>(kLiveLowerBoundAttrName);
  if (!arenaBytes || !noReuse || !lowerBound)
    return notPlanned(func_, "arena sizes");
  entry.arenaBytes = arenaBytes.getInt();
  entry.noReuseBytes = noReuse.getInt();
  entry.liveLowerBound = lowerBound.getInt();
  for (auto [i, arg] : llvm::enumerate(func_.getArguments())) {
    auto dtype = dtypeOf(arg.getType());
    if (!dtype)
      return dtype.takeError();
    auto name = func_.getArgAttrOfType<StringAttr>(i, "nn.name");
    auto shape = cast<RankedTensorType>(arg.getType()).getShape();
    entry.inputs.push_back({name ? name.str() : "input" + std::to_string(i), *dtype, {shape.begin(), shape.end()}});
    refs_[arg] = {NNCC_BUFFER_INPUT, (int32_t)i, 0, exec::bufferBytes(arg.getType())};
  }
  auto ret = cast<func::ReturnOp>(func_.getBody().front().getTerminator());
  // Results marked nncc.check (nncc-insert-index-checks) are run-time check
  // flags: arena values live to the end of the run, not outputs.
  auto checkOf = [&](unsigned i) { return func_.getResultAttrOfType<StringAttr>(i, "nncc.check"); };
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    if (checkOf(i))
      continue;
    auto dtype = dtypeOf(v.getType());
    if (!dtype)
      return dtype.takeError();
    auto name = func_.getResultAttrOfType<StringAttr>(i, "nn.name");
    auto shape = cast<RankedTensorType>(v.getType()).getShape();
    entry.outputs.push_back({name ? name.str() : "output" + std::to_string(i), *dtype, {shape.begin(), shape.end()}});
  }

  SmallVector<ml_program::GlobalStoreOp> stores;
  for (Operation &op : func_.getBody().front()) {
    if (auto c = dyn_cast<nn::ConstantOp>(op)) {
      if (auto err = addWeight(c))
        return std::move(err);
      continue;
    }
    if (auto load = dyn_cast<ml_program::GlobalLoadOp>(op)) {
      auto it = stateIndex_.find(load.getGlobal().getLeafReference());
      if (it == stateIndex_.end())
        return fail("'" + load.getGlobal().getLeafReference().str() + "' is no module state");
      refs_[load.getResult()] = {NNCC_BUFFER_STATE, it->second, 0, exec::bufferBytes(load.getType())};
      continue;
    }
    if (auto store = dyn_cast<ml_program::GlobalStoreOp>(op)) {
      stores.push_back(store);
      continue;
    }
    if (isa<exec::ViewOp, func::ReturnOp>(op))
      continue;
    if (!exec::isPlannedStep(&op))
      return fail(llvm::formatv("op '{0}' has no plan step", op.getName().getStringRef()));
    if (auto err = addResultBuffers(&op))
      return std::move(err);
    PlanStep step;
    if (auto launch = dyn_cast<exec::LaunchOp>(op)) {
      step.kind = NNCC_STEP_KERNEL;
      auto kernel = kernelOf(launch);
      if (!kernel)
        return kernel.takeError();
      step.kernel = *kernel;
      step.name = launch.getNodes().str();
      for (Value operand : op.getOperands())
        step.args.push_back(ref(operand));
      for (Value result : op.getResults())
        step.args.push_back(ref(result));
      auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(launch, launch.getKernelAttr());
      auto scratchBytes = callee ? callee->getAttrOfType<DenseI64ArrayAttr>(kScratchBytesAttrName) : nullptr;
      auto scratchOffsets = op.getAttrOfType<DenseI64ArrayAttr>(kScratchOffsetsAttrName);
      size_t scratchCount = scratchBytes ? scratchBytes.size() : 0;
      if (scratchCount != (scratchOffsets ? static_cast<size_t>(scratchOffsets.size()) : 0))
        return notPlanned(&op, "nncc.scratch offset for each scratch buffer of its kernel");
      for (size_t i = 0; i < scratchCount; ++i)
        step.args.push_back({NNCC_BUFFER_ARENA, 0, scratchOffsets[i], scratchBytes[i]});
      if (auto extent = callee ? callee->getAttrOfType<IntegerAttr>(kParallelExtentAttrName) : nullptr)
        step.parallelExtent = extent.getInt();
    } else if (dist::isCollectiveStep(&op)) {
      if (auto err = collectiveStep(&op, step))
        return std::move(err);
    } else {
      auto gemm = cast<exec::GemmOp>(op);
      step.kind = NNCC_STEP_GEMM;
      step.name = gemm.getNodes().str();
      if (auto err = gemmParams(gemm, step))
        return std::move(err);
      // GEMM accumulates into its output: a C operand is copied there first
      // (unless the output took over C's buffer).
      step.args = {ref(gemm.getA()), ref(gemm.getB()), ref(gemm.getOutput())};
      if (gemm.getBias())
        step.args.push_back(ref(gemm.getBias()));
      BufferRef c = gemm.getC() ? ref(gemm.getC()) : BufferRef{}, out = ref(gemm.getOutput());
      if (gemm.getC() && (c.kind != out.kind || c.index != out.index || c.offset != out.offset)) {
        PlanStep copy;
        copy.kind = NNCC_STEP_COPY;
        copy.name = step.name;
        copy.args = {c, out};
        entry.bytesMoved += 2 * copy.args[1].bytes;
        entry.steps.push_back(std::move(copy));
      }
      // With an accumulator the call reads its output buffer before writing it.
      if (gemm.getC())
        entry.bytesMoved += out.bytes;
    }
    for (const auto &arg : step.args)
      entry.bytesMoved += arg.bytes;
    entry.steps.push_back(std::move(step));
  }
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    StringAttr message = checkOf(i);
    if (!message)
      continue;
    BufferRef flag = ref(v);
    if (flag.kind != NNCC_BUFFER_ARENA || flag.bytes != 4)
      return fail("internal error: the check '" + message.str() + "' is not an i32 computed by a step");
    entry.checks.push_back({message.str(), flag.offset});
  }
  // Outputs not written by a step (inputs, weights, views of those, repeats).
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    if (checkOf(i))
      continue;
    BufferRef src = ref(v);
    if (src.kind == NNCC_BUFFER_OUTPUT && src.index == (int32_t)i)
      continue;
    PlanStep copy;
    copy.kind = NNCC_STEP_COPY;
    copy.name = "output copy";
    copy.args = {src, {NNCC_BUFFER_OUTPUT, (int32_t)i, 0, exec::bufferBytes(v.getType())}};
    entry.bytesMoved += 2 * src.bytes;
    entry.steps.push_back(std::move(copy));
  }
  // State updates last: every step and output copy above reads the values
  // the entry loaded before they change.
  for (ml_program::GlobalStoreOp store : stores) {
    auto it = stateIndex_.find(store.getGlobal().getLeafReference());
    if (it == stateIndex_.end())
      return fail("'" + store.getGlobal().getLeafReference().str() + "' is no module state");
    BufferRef src = ref(store.getValue());
    BufferRef dst{NNCC_BUFFER_STATE, it->second, 0, exec::bufferBytes(store.getValue().getType())};
    if (src.kind == dst.kind && src.index == dst.index && src.offset == 0)
      continue; // stores the value it loaded
    PlanStep copy;
    copy.kind = NNCC_STEP_COPY;
    copy.name = "state update";
    copy.args = {src, dst};
    entry.bytesMoved += 2 * src.bytes;
    entry.steps.push_back(std::move(copy));
  }
  return entry;
}

} // namespace

llvm::Expected<ModulePlan> buildPlan(ModuleOp execModule, const PlanOptions &options) {
  ModulePlan plan;
  DevicePlan &schedule = plan.plans.emplace_back();
  schedule.deviceKind = options.deviceKind;
  llvm::StringMap<int32_t> kernelIndex, stateIndex;
  if (auto err = readLayout(execModule, plan))
    return std::move(err);
  if (auto err = addStates(execModule, plan, stateIndex))
    return std::move(err);
  for (auto func : execModule.getOps<func::FuncOp>()) {
    if (func.isPrivate())
      continue;
    auto entry = EntryTranslator(func, plan, kernelIndex, stateIndex, options).run();
    if (!entry)
      return entry.takeError();
    schedule.entries.push_back(std::move(*entry));
  }
  plan.hostCode.assign(plan.kernels.size(), options.hostCode);
  return plan;
}

} // namespace nncc
