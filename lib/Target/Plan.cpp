/// The exec-level schedule as plan data: buffers, steps and memory packing.
#include "lib/Target/Plan.h"
#include "lib/Support/Error.h"

#include "lib/Target/MemoryPlanner.h"

#include "dialects/Exec/ExecOps.h"
#include "dialects/Exec/ExecUtils.h"
#include "dialects/NN/NNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include "nncc/module_abi.h"
#include "nncc/plan_hash.h"

#include <algorithm>
#include <climits>
#include <iterator>

using namespace mlir;

namespace nncc {
namespace {

constexpr int64_t kAlignment = 64;
/// nncc_module.producer of every module.
constexpr const char *kProducer = "nncc 0.1";
int64_t alignUp(int64_t v) { return (v + kAlignment - 1) / kAlignment * kAlignment; }

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

/// Buffer assignment of one entry function.
class EntryPlanner {
public:
  EntryPlanner(func::FuncOp func, ModulePlan &plan, llvm::StringMap<int32_t> &kernelIndex,
               const llvm::StringMap<SmallVector<int64_t>> &scratchBytes,
               const PlanOptions &options)
      : func_(func), plan_(plan), kernelIndex_(kernelIndex), scratchBytes_(scratchBytes),
        options_(options) {}

  llvm::Expected<EntryPlan> run();

private:
  BufferRef ref(Value v) {
    Value r = exec::viewRoot(v);
    BufferRef result = refs_.lookup(r);
    result.bytes = exec::bufferBytes(v.getType());
    return result;
  }
  llvm::Error addWeight(nn::ConstantOp op);
  void packArena(EntryPlan &entry);

  func::FuncOp func_;
  ModulePlan &plan_;
  llvm::StringMap<int32_t> &kernelIndex_;
  const llvm::StringMap<SmallVector<int64_t>> &scratchBytes_;
  const PlanOptions &options_;
  /// Per step, the intervals of its kernel's scratch buffers.
  llvm::DenseMap<int64_t, SmallVector<size_t>> scratchOf_;
  llvm::DenseMap<Value, BufferRef> refs_;
  /// Arena values in definition order with their live range (step indices).
  struct Interval {
    SmallVector<Value, 2> values; // the defining value, then values computed in place into it
    int64_t bytes, begin, end;
    int64_t offset = -1;          // set by packArena
  };
  std::vector<Interval> intervals_;
  llvm::DenseMap<Value, size_t> intervalOf_;
};

llvm::Error EntryPlanner::addWeight(nn::ConstantOp op) {
  auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
  if (!dense)
    return fail("constants must be dense elements");
  WeightBlob &w = plan_.weights;
  int64_t offset = alignUp(w.data.size());
  w.data.resize(offset, '\0');
  std::string bytes = constantBytes(dense);
  w.data += bytes;
  std::string name;
  if (auto loc = dyn_cast<NameLoc>(op.getLoc()))
    name = loc.getName().str();
  w.names.push_back(name);
  w.offsets.push_back(offset);
  w.sizes.push_back(bytes.size());
  refs_[op.getResult()] = {NNCC_BUFFER_WEIGHT, (int32_t)w.names.size() - 1, 0, (int64_t)bytes.size()};
  return llvm::Error::success();
}

void EntryPlanner::packArena(EntryPlan &entry) {
  std::vector<LiveBuffer> buffers;
  for (const auto &iv : intervals_)
    buffers.push_back({iv.bytes, iv.begin, iv.end});
  ArenaLayout layout = packBuffers(buffers, kAlignment);
  if (!options_.reuse) { // Every buffer its own bytes (for comparisons).
    int64_t offset = 0;
    for (auto &b : buffers) {
      b.offset = offset;
      offset += alignUp(b.bytes);
    }
    layout.arenaBytes = offset;
  }
  entry.arenaBytes = layout.arenaBytes;
  // Without reuse every value, also those computed in place, has its own buffer.
  entry.noReuseBytes = 0;
  for (const auto &iv : intervals_)
    entry.noReuseBytes += iv.values.size() * alignUp(iv.bytes);
  entry.liveLowerBound = layout.liveLowerBound;
  for (auto [iv, buffer] : llvm::zip(intervals_, buffers)) {
    iv.offset = buffer.offset;
    for (Value v : iv.values)
      refs_[v] = {NNCC_BUFFER_ARENA, 0, buffer.offset, iv.bytes};
  }
}

llvm::Expected<EntryPlan> EntryPlanner::run() {
  EntryPlan entry;
  entry.name = func_.getName().str();
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

  // Outputs computed by a step are written straight into the caller's buffer.
  llvm::DenseMap<Value, int32_t> outputOf;
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    Value r = exec::viewRoot(v);
    Operation *def = r.getDefiningOp();
    if (!checkOf(i) && def && isa<exec::LaunchOp, exec::GemmOp>(def) && !outputOf.count(r) &&
        exec::bufferBytes(r.getType()) == exec::bufferBytes(v.getType()))
      outputOf[r] = i;
  }

  // Steps, and the last step reading each value (the return reads after all).
  SmallVector<Operation *> stepOps;
  for (Operation &op : func_.getBody().front()) {
    if (auto c = dyn_cast<nn::ConstantOp>(op)) {
      if (auto err = addWeight(c))
        return std::move(err);
    } else if (isa<exec::LaunchOp, exec::GemmOp>(op)) {
      stepOps.push_back(&op);
    } else if (!isa<exec::ViewOp, func::ReturnOp>(op)) {
      return fail(llvm::formatv("op '{0}' has no plan step", op.getName().getStringRef()));
    }
  }
  llvm::DenseMap<Value, int64_t> lastUse;
  for (auto [step, op] : llvm::enumerate(stepOps))
    for (Value operand : op->getOperands())
      lastUse[exec::viewRoot(operand)] = step;
  for (Value v : ret.getOperands())
    lastUse[exec::viewRoot(v)] = stepOps.size();

  // Live ranges of the arena values. An elementwise kernel may write its
  // result over an operand of the same size that dies at that step, also
  // when it reads the operand through a view (a reshape keeps the element
  // order: the conv epilogue after a GEMM). A GEMM accumulates into the
  // buffer of its C operand when C dies there (a residual added by the
  // GEMM), unless it also reads that buffer as A, B or bias: the copy of C
  // into the output then disappears.
  for (auto [step, op] : llvm::enumerate(stepOps)) {
    SmallVector<Value> reusable;
    auto offer = [&](Value operand) {
      if (intervalOf_.count(operand) && lastUse.lookup(operand) == (int64_t)step &&
          !llvm::is_contained(reusable, operand))
        reusable.push_back(operand);
    };
    if (auto launch = dyn_cast<exec::LaunchOp>(op); launch && options_.reuse)
      if (auto inplace = launch.getInplaceOperands())
        for (int64_t i : *inplace)
          offer(exec::viewRoot(launch.getArgs()[i]));
    if (auto gemm = dyn_cast<exec::GemmOp>(op); gemm && gemm.getC() && options_.reuse) {
      Value c = exec::viewRoot(gemm.getC());
      if (c != exec::viewRoot(gemm.getA()) && c != exec::viewRoot(gemm.getB()) &&
          (!gemm.getBias() || c != exec::viewRoot(gemm.getBias())))
        offer(c);
    }
    for (Value r : op->getResults()) {
      if (outputOf.count(r)) {
        refs_[r] = {NNCC_BUFFER_OUTPUT, outputOf[r], 0, exec::bufferBytes(r.getType())};
        continue;
      }
      int64_t end = std::max<int64_t>(step, lastUse.lookup(r));
      auto donor = llvm::find_if(
          reusable, [&](Value v) { return exec::bufferBytes(v.getType()) == exec::bufferBytes(r.getType()); });
      if (donor != reusable.end()) {
        size_t index = intervalOf_[*donor];
        intervals_[index].values.push_back(r);
        intervals_[index].end = end;
        intervalOf_[r] = index;
        reusable.erase(donor);
        continue;
      }
      intervalOf_[r] = intervals_.size();
      intervals_.push_back({{r}, exec::bufferBytes(r.getType()), (int64_t)step, end});
    }
    if (auto launch = dyn_cast<exec::LaunchOp>(op))
      for (int64_t bytes : scratchBytes_.lookup(launch.getKernel())) {
        scratchOf_[step].push_back(intervals_.size());
        intervals_.push_back({{}, bytes, (int64_t)step, (int64_t)step});
      }
  }
  packArena(entry);

  for (auto [stepIndex, op] : llvm::enumerate(stepOps)) {
    PlanStep step;
    if (auto launch = dyn_cast<exec::LaunchOp>(op)) {
      step.kind = NNCC_STEP_KERNEL;
      auto it = kernelIndex_.find(launch.getKernel());
      if (it == kernelIndex_.end()) {
        kernelIndex_[launch.getKernel()] = plan_.kernels.size();
        plan_.kernels.push_back(launch.getKernel().str());
        it = kernelIndex_.find(launch.getKernel());
      }
      step.kernel = it->second;
      step.name = launch.getNodes().str();
    } else {
      auto gemm = cast<exec::GemmOp>(op);
      step.kind = NNCC_STEP_GEMM;
      step.name = gemm.getNodes().str();
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
                                     .Default(NNCC_ACTIVATION_NONE);
      step.fparams.assign(NNCC_GEMM_NUM_FPARAMS, 0);
      step.fparams[NNCC_GEMM_ALPHA] = gemm.getAlpha().convertToDouble();
      step.fparams[NNCC_GEMM_BETA] = gemm.getBeta().convertToDouble();
    }
    if (auto gemm = dyn_cast<exec::GemmOp>(op)) {
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
    } else {
      for (Value operand : op->getOperands())
        step.args.push_back(ref(operand));
      for (Value result : op->getResults())
        step.args.push_back(ref(result));
      for (size_t index : scratchOf_.lookup(stepIndex))
        step.args.push_back({NNCC_BUFFER_ARENA, 0, intervals_[index].offset, intervals_[index].bytes});
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
  return entry;
}

std::string cString(llvm::StringRef s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += std::string("\\") + c;
    else if (c >= 32 && c < 127)
      out += c;
    else
      out += llvm::formatv("\\{0:o3}", (unsigned)(unsigned char)c).str();
  }
  return out + "\"";
}

template <typename T>
std::string cArray(const std::vector<T> &values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i)
    out += (i ? ", " : "") + llvm::formatv("{0}", values[i]).str();
  return out;
}

/// The C name of an ABI enum value in the emitted source, so plan.c reads
/// like the header; a number the header does not name stays a number.
std::string stepKindName(int32_t kind) {
  switch (kind) {
  case NNCC_STEP_KERNEL: return "NNCC_STEP_KERNEL";
  case NNCC_STEP_GEMM: return "NNCC_STEP_GEMM";
  case NNCC_STEP_COPY: return "NNCC_STEP_COPY";
  case NNCC_STEP_COLLECTIVE: return "NNCC_STEP_COLLECTIVE";
  }
  return std::to_string(kind);
}

std::string bufferKindName(int32_t kind) {
  switch (kind) {
  case NNCC_BUFFER_ARENA: return "NNCC_BUFFER_ARENA";
  case NNCC_BUFFER_INPUT: return "NNCC_BUFFER_INPUT";
  case NNCC_BUFFER_OUTPUT: return "NNCC_BUFFER_OUTPUT";
  case NNCC_BUFFER_WEIGHT: return "NNCC_BUFFER_WEIGHT";
  case NNCC_BUFFER_STATE: return "NNCC_BUFFER_STATE";
  }
  return std::to_string(kind);
}

std::string dtypeName(int32_t dtype) {
  switch (dtype) {
  case NNCC_DTYPE_F32: return "NNCC_DTYPE_F32";
  case NNCC_DTYPE_U8: return "NNCC_DTYPE_U8";
  case NNCC_DTYPE_I8: return "NNCC_DTYPE_I8";
  case NNCC_DTYPE_U16: return "NNCC_DTYPE_U16";
  case NNCC_DTYPE_I16: return "NNCC_DTYPE_I16";
  case NNCC_DTYPE_I32: return "NNCC_DTYPE_I32";
  case NNCC_DTYPE_I64: return "NNCC_DTYPE_I64";
  case NNCC_DTYPE_BOOL: return "NNCC_DTYPE_BOOL";
  case NNCC_DTYPE_F16: return "NNCC_DTYPE_F16";
  case NNCC_DTYPE_F64: return "NNCC_DTYPE_F64";
  case NNCC_DTYPE_U32: return "NNCC_DTYPE_U32";
  case NNCC_DTYPE_U64: return "NNCC_DTYPE_U64";
  case NNCC_DTYPE_BF16: return "NNCC_DTYPE_BF16";
  }
  return std::to_string(dtype);
}

std::string activationName(int64_t activation) {
  switch (activation) {
  case NNCC_ACTIVATION_NONE: return "NNCC_ACTIVATION_NONE";
  case NNCC_ACTIVATION_RELU: return "NNCC_ACTIVATION_RELU";
  case NNCC_ACTIVATION_GELU: return "NNCC_ACTIVATION_GELU";
  }
  return std::to_string(activation);
}

/// The index names of a GEMM step's iparams (nncc_gemm_iparam), in order.
constexpr const char *kGemmIparamNames[] = {
    "NNCC_GEMM_BATCH",    "NNCC_GEMM_M",        "NNCC_GEMM_N",          "NNCC_GEMM_K",
    "NNCC_GEMM_TRANS_A",  "NNCC_GEMM_TRANS_B",  "NNCC_GEMM_LDA",        "NNCC_GEMM_LDB",
    "NNCC_GEMM_LDC",      "NNCC_GEMM_STRIDE_A", "NNCC_GEMM_STRIDE_B",   "NNCC_GEMM_STRIDE_C",
    "NNCC_GEMM_DTYPE_A",  "NNCC_GEMM_DTYPE_B",  "NNCC_GEMM_DTYPE_C",    "NNCC_GEMM_ALLOW_TF32",
    "NNCC_GEMM_ACTIVATION"};
static_assert(std::size(kGemmIparamNames) == NNCC_GEMM_MAX_IPARAMS);
constexpr const char *kGemmFparamNames[] = {"NNCC_GEMM_ALPHA", "NNCC_GEMM_BETA"};
static_assert(std::size(kGemmFparamNames) == NNCC_GEMM_NUM_FPARAMS);

/// Bytes of the arena values live at the worst step of `order` (no reuse of
/// operands in place), for comparing schedules.
int64_t peakBytes(ArrayRef<Operation *> order, func::ReturnOp ret,
                  const llvm::DenseSet<Value> &arenaValues) {
  llvm::DenseMap<Value, int64_t> lastUse, defined;
  for (auto [step, op] : llvm::enumerate(order)) {
    for (Value operand : op->getOperands())
      lastUse[exec::viewRoot(operand)] = step;
    for (Value r : op->getResults())
      defined[r] = step;
  }
  for (Value v : ret.getOperands())
    lastUse[exec::viewRoot(v)] = order.size();
  std::vector<int64_t> delta(order.size() + 2, 0);
  for (auto [v, step] : defined) {
    if (!arenaValues.contains(v))
      continue;
    int64_t end = std::max(step, lastUse.lookup(v));
    delta[step] += alignUp(exec::bufferBytes(v.getType()));
    delta[end + 1] -= alignUp(exec::bufferBytes(v.getType()));
  }
  int64_t live = 0, peak = 0;
  for (int64_t d : delta)
    peak = std::max(peak, live += d);
  return peak;
}

/// Reorders the steps of `func` when another topological order has a lower
/// peak of live arena bytes: a list schedule that prefers the ready step
/// freeing the most bytes (ties: program order). Reordering never adds
/// launches; it is kept only when it lowers the peak.
void scheduleForMemory(func::FuncOp func) {
  Block &block = func.getBody().front();
  auto ret = cast<func::ReturnOp>(block.getTerminator());
  SmallVector<Operation *> steps;
  for (Operation &op : block)
    if (isa<exec::LaunchOp, exec::GemmOp>(op))
      steps.push_back(&op);
  if (steps.size() < 3)
    return;
  llvm::DenseMap<Operation *, size_t> index;
  for (auto [i, op] : llvm::enumerate(steps))
    index[op] = i;
  llvm::DenseSet<Value> arenaValues;
  for (Operation *op : steps)
    for (Value r : op->getResults())
      arenaValues.insert(r);
  // Dependencies through (views of) results, and readers of each value.
  std::vector<SmallVector<size_t>> users(steps.size());
  std::vector<int> pending(steps.size(), 0);
  llvm::DenseMap<Value, int> readers;
  for (auto [i, op] : llvm::enumerate(steps)) {
    llvm::SmallDenseSet<size_t> producers;
    for (Value operand : op->getOperands()) {
      Value r = exec::viewRoot(operand);
      ++readers[r];
      if (Operation *def = r.getDefiningOp(); def && index.count(def))
        producers.insert(index[def]);
    }
    for (size_t p : producers) {
      users[p].push_back(i);
      ++pending[i];
    }
  }
  for (Value v : ret.getOperands())
    ++readers[exec::viewRoot(v)];
  SmallVector<Operation *> order;
  std::vector<bool> done(steps.size(), false);
  llvm::DenseMap<Value, int> remaining = readers;
  for (size_t n = 0; n < steps.size(); ++n) {
    int64_t bestGain = INT64_MIN;
    size_t best = 0;
    for (size_t i = 0; i < steps.size(); ++i) {
      if (done[i] || pending[i] != 0)
        continue;
      int64_t gain = 0;
      llvm::SmallDenseSet<Value> counted;
      for (Value operand : steps[i]->getOperands()) {
        Value r = exec::viewRoot(operand);
        int uses = 0;
        for (Value o : steps[i]->getOperands())
          uses += exec::viewRoot(o) == r;
        if (arenaValues.contains(r) && remaining.lookup(r) == uses && counted.insert(r).second)
          gain += exec::bufferBytes(r.getType());
      }
      for (Value r : steps[i]->getResults())
        gain -= exec::bufferBytes(r.getType());
      if (gain > bestGain) {
        bestGain = gain;
        best = i;
      }
    }
    done[best] = true;
    order.push_back(steps[best]);
    for (Value operand : steps[best]->getOperands())
      --remaining[exec::viewRoot(operand)];
    for (size_t u : users[best])
      --pending[u];
  }
  if (peakBytes(order, ret, arenaValues) >= peakBytes(steps, ret, arenaValues))
    return;
  // Move the steps into the new order, then each view right after its source.
  for (Operation *op : order)
    op->moveBefore(ret);
  SmallVector<exec::ViewOp> views(block.getOps<exec::ViewOp>());
  for (exec::ViewOp view : views)
    if (Operation *def = view.getInput().getDefiningOp())
      view->moveAfter(def);
}

} // namespace

llvm::Expected<ModulePlan> buildPlan(ModuleOp execModule,
                                     const llvm::StringMap<SmallVector<int64_t>> &scratchBytes,
                                     const PlanOptions &options) {
  ModulePlan plan;
  llvm::StringMap<int32_t> kernelIndex;
  for (auto func : execModule.getOps<func::FuncOp>()) {
    if (func.isPrivate())
      continue;
    if (options.reuse)
      scheduleForMemory(func);
    auto entry = EntryPlanner(func, plan, kernelIndex, scratchBytes, options).run();
    if (!entry)
      return entry.takeError();
    plan.entries.push_back(std::move(*entry));
  }
  return plan;
}

uint64_t weightsChecksum(const std::string &data) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : data) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

uint64_t planChecksum(const ModulePlan &plan, const std::string &weightsFile) {
  // The order and encoding of runtime/PlanChecksum.cpp's walk of the emitted
  // nncc_module, value for value.
  PlanHash h;
  // Strings are emitted as C literals, which end at a NUL a name may hold.
  auto str = [&](llvm::StringRef s) {
    s = s.take_until([](char c) { return c == '\0'; });
    h.string(s.data(), s.size());
  };
  auto descs = [&](const std::vector<TensorDesc> &ds) {
    h.integer(ds.size());
    for (const TensorDesc &d : ds) {
      str(d.name);
      h.integer(d.dtype);
      h.integer(d.dims.size());
      for (int64_t dim : d.dims)
        h.integer(dim);
    }
  };
  str(kProducer);
  h.integer(plan.entries.size());
  for (const EntryPlan &entry : plan.entries) {
    str(entry.name);
    descs(entry.inputs);
    descs(entry.outputs);
    h.integer(entry.arenaBytes);
    h.integer(entry.steps.size());
    for (const PlanStep &step : entry.steps) {
      h.integer(step.kind);
      h.integer(step.kernel);
      h.integer(step.args.size());
      for (const BufferRef &a : step.args) {
        h.integer(a.kind);
        h.integer(a.index);
        h.integer(a.offset);
        h.integer(a.bytes);
      }
      h.integer(step.iparams.size());
      for (int64_t v : step.iparams)
        h.integer(v);
      h.integer(step.fparams.size());
      for (double v : step.fparams)
        h.real(v);
      h.integer(step.parallelExtent);
      str(step.name);
    }
    h.integer(entry.checks.size());
    for (const PlanCheck &c : entry.checks) {
      str(c.message);
      h.integer(c.offset);
    }
  }
  h.integer(plan.kernels.size());
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    str(plan.kernels[k]);
    h.integer(plan.hostKernels);
    const std::vector<GpuLaunch> none;
    const std::vector<GpuLaunch> &launches =
        k < plan.gpuLaunches.size() ? plan.gpuLaunches[k] : none;
    h.integer(launches.size());
    for (const GpuLaunch &l : launches) {
      str(l.function);
      for (uint32_t v : l.grid)
        h.integer(v);
      for (uint32_t v : l.block)
        h.integer(v);
      h.integer(0); // shared_bytes
    }
  }
  const WeightBlob &w = plan.weights;
  h.integer(w.names.size());
  for (size_t i = 0; i < w.names.size(); ++i) {
    str(w.names[i]);
    h.integer(w.offsets[i]);
    h.integer(w.sizes[i]);
  }
  h.integer(weightsFile.empty()); // the blob is embedded
  if (weightsFile.empty())
    h.absent();
  else
    str(weightsFile);
  h.integer(w.data.size());
  h.integer(static_cast<int64_t>(weightsChecksum(w.data)));
  h.integer(plan.gpuImages.size());
  for (const GpuImage &image : plan.gpuImages) {
    str(image.arch);
    str(image.ptx);
    h.integer(image.cubin.size());
    h.integer(!image.cubin.empty());
    h.bytes(image.cubin.data(), image.cubin.size());
  }
  str(plan.cpuName);
  str(llvm::join(plan.cpuFeatures, ","));
  return h.value();
}

std::string emitPlanSource(const ModulePlan &plan, const std::string &weightsFile) {
  // Every struct is written with designated initializers (and GEMM
  // parameters with their index names), so a field that module_abi.h renames
  // or removes breaks the module's build instead of misplacing data.
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "/* Generated by nncc: the plan of a compiled module. */\n"
     << "#include \"module_abi.h\"\n#include <stddef.h>\n\n";
  if (plan.hostKernels)
    for (const auto &k : plan.kernels)
      os << "extern void nncc_" << k << "(void **, int64_t, int64_t);\n";
  for (size_t i = 0; i < plan.gpuImages.size(); ++i) {
    os << "extern const char nncc_gpu_ptx_" << i << "[];\n";
    if (!plan.gpuImages[i].cubin.empty())
      os << "extern const uint8_t nncc_gpu_cubin_" << i << "[];\n";
  }
  if (weightsFile.empty())
    os << "extern const uint8_t nncc_weights_blob[];\n";
  os << "\n";
  auto orNull = [](bool present, const std::string &name) { return present ? name : "NULL"; };
  auto tensors = [&](const std::string &prefix, const std::vector<TensorDesc> &descs) {
    for (size_t i = 0; i < descs.size(); ++i)
      os << "static const int64_t " << prefix << i << "_dims[] = {" << cArray(descs[i].dims)
         << (descs[i].dims.empty() ? "0" : "") << "};\n";
    if (descs.empty())
      return;
    os << "static const nncc_tensor_desc " << prefix << "[] = {\n";
    for (size_t i = 0; i < descs.size(); ++i)
      os << "  {.name = " << cString(descs[i].name) << ", .dtype = " << dtypeName(descs[i].dtype)
         << ", .rank = " << descs[i].dims.size() << ", .dims = " << prefix << i << "_dims},\n";
    os << "};\n";
  };
  // A GEMM's parameters by index name (its dtypes and activation by enum
  // name); other steps' (none today) in order.
  auto iparam = [](const PlanStep &step, size_t i) {
    int64_t v = step.iparams[i];
    if (step.kind != NNCC_STEP_GEMM || i >= NNCC_GEMM_MAX_IPARAMS)
      return std::to_string(v);
    std::string value = i >= NNCC_GEMM_DTYPE_A && i <= NNCC_GEMM_DTYPE_C ? dtypeName(v)
                        : i == NNCC_GEMM_ACTIVATION                      ? activationName(v)
                                                                         : std::to_string(v);
    return "[" + std::string(kGemmIparamNames[i]) + "] = " + value;
  };
  auto fparam = [](const PlanStep &step, size_t i) {
    std::string v = llvm::formatv("{0:e17}", step.fparams[i]).str();
    if (step.kind != NNCC_STEP_GEMM || i >= NNCC_GEMM_NUM_FPARAMS)
      return v;
    return "[" + std::string(kGemmFparamNames[i]) + "] = " + v;
  };
  for (size_t e = 0; e < plan.entries.size(); ++e) {
    const EntryPlan &entry = plan.entries[e];
    std::string p = "e" + std::to_string(e);
    tensors(p + "_in", entry.inputs);
    tensors(p + "_out", entry.outputs);
    for (size_t i = 0; i < entry.steps.size(); ++i) {
      const PlanStep &step = entry.steps[i];
      os << "static const nncc_buffer_ref " << p << "_s" << i << "_args[] = {";
      for (const auto &a : step.args)
        os << "{.kind = " << bufferKindName(a.kind) << ", .index = " << a.index
           << ", .offset = " << a.offset << ", .bytes = " << a.bytes << "}, ";
      os << "};\n";
      if (!step.iparams.empty()) {
        os << "static const int64_t " << p << "_s" << i << "_i[] = {";
        for (size_t j = 0; j < step.iparams.size(); ++j)
          os << (j ? ", " : "") << iparam(step, j);
        os << "};\n";
      }
      if (!step.fparams.empty()) {
        os << "static const double " << p << "_s" << i << "_f[] = {";
        for (size_t j = 0; j < step.fparams.size(); ++j)
          os << (j ? ", " : "") << fparam(step, j);
        os << "};\n";
      }
    }
    os << "static const nncc_step " << p << "_steps[] = {\n";
    for (size_t i = 0; i < entry.steps.size(); ++i) {
      const PlanStep &step = entry.steps[i];
      std::string sp = p + "_s" + std::to_string(i);
      os << "  {.kind = " << stepKindName(step.kind) << ", .kernel = " << step.kernel
         << ", .num_args = " << step.args.size() << ", .args = " << sp << "_args"
         << ", .num_iparams = " << step.iparams.size()
         << ", .iparams = " << orNull(!step.iparams.empty(), sp + "_i")
         << ", .num_fparams = " << step.fparams.size()
         << ", .fparams = " << orNull(!step.fparams.empty(), sp + "_f")
         << ", .parallel_extent = " << step.parallelExtent << ", .name = " << cString(step.name)
         << "},\n";
    }
    os << "};\n";
    if (!entry.checks.empty()) {
      os << "static const nncc_check " << p << "_checks[] = {\n";
      for (const PlanCheck &c : entry.checks)
        os << "  {.message = " << cString(c.message) << ", .offset = " << c.offset << "},\n";
      os << "};\n";
    }
  }
  os << "static const nncc_entry entries[] = {\n";
  for (size_t e = 0; e < plan.entries.size(); ++e) {
    const EntryPlan &entry = plan.entries[e];
    std::string p = "e" + std::to_string(e);
    os << "  {.name = " << cString(entry.name) << ",\n"
       << "   .num_inputs = " << entry.inputs.size()
       << ", .inputs = " << orNull(!entry.inputs.empty(), p + "_in")
       << ", .num_outputs = " << entry.outputs.size()
       << ", .outputs = " << orNull(!entry.outputs.empty(), p + "_out") << ",\n"
       << "   .arena_bytes = " << entry.arenaBytes << ", .num_steps = " << entry.steps.size()
       << ", .steps = " << orNull(!entry.steps.empty(), p + "_steps")
       << ", .num_checks = " << entry.checks.size()
       << ", .checks = " << orNull(!entry.checks.empty(), p + "_checks") << "},\n";
  }
  os << "};\n";
  for (size_t k = 0; k < plan.gpuLaunches.size(); ++k) {
    if (plan.gpuLaunches[k].empty())
      continue;
    os << "static const nncc_gpu_launch k" << k << "_launches[] = {\n";
    for (const GpuLaunch &l : plan.gpuLaunches[k])
      os << "  {.function = " << cString(l.function) << ", .grid = {" << l.grid[0] << ", "
         << l.grid[1] << ", " << l.grid[2] << "}, .block = {" << l.block[0] << ", " << l.block[1]
         << ", " << l.block[2] << "}, .shared_bytes = 0},\n";
    os << "};\n";
  }
  if (!plan.kernels.empty()) {
    os << "static const nncc_kernel kernels[] = {\n";
    for (size_t k = 0; k < plan.kernels.size(); ++k) {
      size_t launches = k < plan.gpuLaunches.size() ? plan.gpuLaunches[k].size() : 0;
      os << "  {.name = " << cString(plan.kernels[k])
         << ", .cpu = " << orNull(plan.hostKernels, "nncc_" + plan.kernels[k])
         << ", .num_gpu_launches = " << launches
         << ", .gpu_launches = " << orNull(launches, "k" + std::to_string(k) + "_launches")
         << "},\n";
    }
    os << "};\n";
  }
  if (!plan.gpuImages.empty()) {
    os << "static const nncc_gpu_image gpu_images[] = {\n";
    for (size_t i = 0; i < plan.gpuImages.size(); ++i) {
      const GpuImage &image = plan.gpuImages[i];
      os << "  {.arch = " << cString(image.arch) << ", .ptx = nncc_gpu_ptx_" << i
         << ", .cubin = " << orNull(!image.cubin.empty(), "nncc_gpu_cubin_" + std::to_string(i))
         << ", .cubin_bytes = " << image.cubin.size() << "},\n";
    }
    os << "};\n";
  }
  const WeightBlob &w = plan.weights;
  if (!w.names.empty()) {
    os << "static const nncc_weight weights[] = {\n";
    for (size_t i = 0; i < w.names.size(); ++i)
      os << "  {.name = " << cString(w.names[i]) << ", .offset = " << w.offsets[i]
         << ", .bytes = " << w.sizes[i] << "},\n";
    os << "};\n";
  }
  os << "static const nncc_module module = {\n"
     << "  .magic = NNCC_MODULE_MAGIC,\n"
     << "  .abi_version = NNCC_MODULE_ABI_VERSION,\n"
     << "  .struct_size = sizeof(nncc_module),\n"
     << "  .producer = " << cString(kProducer) << ",\n"
     << "  .num_entries = " << plan.entries.size() << ",\n"
     << "  .entries = entries,\n"
     << "  .num_kernels = " << plan.kernels.size() << ",\n"
     << "  .kernels = " << orNull(!plan.kernels.empty(), "kernels") << ",\n"
     << "  .num_weights = " << w.names.size() << ",\n"
     << "  .weights = " << orNull(!w.names.empty(), "weights") << ",\n"
     << "  .weights_data = " << orNull(weightsFile.empty(), "nncc_weights_blob") << ",\n"
     << "  .weights_file = " << (weightsFile.empty() ? "NULL" : cString(weightsFile)) << ",\n"
     << "  .weights_bytes = " << w.data.size() << ",\n"
     << "  .weights_checksum = " << weightsChecksum(w.data) << "ull,\n"
     << "  .num_gpu_images = " << plan.gpuImages.size() << ",\n"
     << "  .gpu_images = " << orNull(!plan.gpuImages.empty(), "gpu_images") << ",\n"
     << "  .cpu_name = " << cString(plan.cpuName) << ",\n"
     << "  .cpu_features = " << cString(llvm::join(plan.cpuFeatures, ",")) << ",\n"
     << "  .plan_checksum = " << planChecksum(plan, weightsFile) << "ull,\n};\n\n"
     << "__attribute__((visibility(\"default\"))) const nncc_module *nncc_module_get(void) {\n"
     << "  return &module;\n}\n";
  return s;
}

} // namespace nncc
