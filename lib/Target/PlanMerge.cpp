/// Joins the CPU and GPU plans of one graph into one module (ABI v6: a plan
/// per device kind, shared kernel table, weights and state).
#include "lib/Support/Error.h"
#include "lib/Target/MemoryPlanner.h"
#include "lib/Target/Plan.h"
#include "llvm/Support/FormatVariadic.h"

#include "llvm/ADT/StringMap.h"

namespace nncc {
namespace {

/// The bytes of weight `i` of `w`.
llvm::StringRef weightBytes(const WeightBlob &w, size_t i) {
  return llvm::StringRef(w.data).substr(w.offsets[i], w.sizes[i]);
}

/// Index in `into` of a weight of `from` (index `i`): an equal one (name and
/// bytes) when `into` has it, else a copy appended.
int32_t shareWeight(WeightBlob &into, llvm::StringMap<std::vector<int32_t>> &byName, const WeightBlob &from,
                    size_t i) {
  llvm::StringRef bytes = weightBytes(from, i);
  std::vector<int32_t> &same = byName[from.names[i]];
  for (int32_t j : same)
    if (weightBytes(into, j) == bytes)
      return j;
  int64_t offset = alignToArena(into.data.size());
  into.data.resize(offset, '\0');
  into.data += bytes.str();
  into.names.push_back(from.names[i]);
  into.offsets.push_back(offset);
  into.sizes.push_back(bytes.size());
  same.push_back(into.names.size() - 1);
  return into.names.size() - 1;
}

bool sameDesc(const TensorDesc &a, const TensorDesc &b) {
  return a.name == b.name && a.dtype == b.dtype && a.dims == b.dims;
}

} // namespace

llvm::Expected<ModulePlan> mergePlans(ModulePlan cpu, ModulePlan gpu) {
  ModulePlan merged = std::move(cpu);
  int32_t kernelBase = merged.kernels.size();
  merged.gpuLaunches.resize(kernelBase);
  for (size_t k = 0; k < gpu.kernels.size(); ++k) {
    merged.kernels.push_back(gpu.kernels[k]);
    merged.hostCode.push_back(gpu.hostCode[k]);
    merged.gpuLaunches.push_back(k < gpu.gpuLaunches.size() ? gpu.gpuLaunches[k] : std::vector<GpuLaunch>{});
  }

  llvm::StringMap<std::vector<int32_t>> byName;
  for (size_t i = 0; i < merged.weights.names.size(); ++i)
    byName[merged.weights.names[i]].push_back(i);
  std::vector<int32_t> weightIndex(gpu.weights.names.size());
  for (size_t i = 0; i < weightIndex.size(); ++i)
    weightIndex[i] = shareWeight(merged.weights, byName, gpu.weights, i);

  // Both plans run on the same ranks: one layout per module.
  if (gpu.dataParallel != merged.dataParallel || gpu.tensorParallel != merged.tensorParallel ||
      gpu.pipelineParallel != merged.pipelineParallel)
    return fail(llvm::formatv("the CPU plan is laid out for dp={0} x tp={1} x pp={2} ranks, the GPU plan for "
                              "dp={3} x tp={4} x pp={5}",
                              merged.dataParallel, merged.tensorParallel, merged.pipelineParallel,
                              gpu.dataParallel, gpu.tensorParallel, gpu.pipelineParallel)
                    .str());
  // Both plans read and write the same state: same tensors, same start.
  if (gpu.states.size() != merged.states.size())
    return fail("the CPU and GPU plans have different module states");
  for (size_t i = 0; i < gpu.states.size(); ++i) {
    const StateDesc &a = merged.states[i], &b = gpu.states[i];
    int32_t init = b.initWeight < 0 ? -1 : weightIndex[b.initWeight];
    if (!sameDesc(a.desc, b.desc) || a.bytes != b.bytes || a.initWeight != init || a.shardParts != b.shardParts ||
        a.shardAxis != b.shardAxis || a.shardBlocks != b.shardBlocks || a.pipelineStage != b.pipelineStage)
      return fail("the CPU and GPU plans disagree on module state '" + a.desc.name + "'");
  }

  for (DevicePlan &plan : gpu.plans) {
    // The runtime finds an entry by its index in any plan.
    const std::vector<EntryPlan> &first = merged.plans.front().entries;
    if (plan.entries.size() != first.size())
      return fail("the CPU and GPU plans have different entries");
    for (size_t e = 0; e < first.size(); ++e)
      if (plan.entries[e].name != first[e].name || plan.entries[e].pipelineStage != first[e].pipelineStage)
        return fail("the CPU and GPU plans list entries '" + first[e].name + "' and '" + plan.entries[e].name +
                    "' in the same place");
    for (EntryPlan &entry : plan.entries)
      for (PlanStep &step : entry.steps) {
        if (step.kind == NNCC_STEP_KERNEL)
          step.kernel += kernelBase;
        for (BufferRef &arg : step.args)
          if (arg.kind == NNCC_BUFFER_WEIGHT)
            arg.index = weightIndex[arg.index];
      }
    merged.plans.push_back(std::move(plan));
  }
  merged.gpuImages = std::move(gpu.gpuImages);
  return merged;
}

} // namespace nncc
