#ifndef NNCC_LIB_TARGET_PLAN_H
#define NNCC_LIB_TARGET_PLAN_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"
#include "nncc/module_abi.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace nncc {

/// One buffer operand of a plan step (mirrors nncc_buffer_ref).
struct BufferRef {
  int32_t kind = 0; // nncc_buffer_kind
  int32_t index = 0;
  int64_t offset = 0;
  int64_t bytes = 0;
};

struct PlanStep {
  int32_t kind = 0; // nncc_step_kind
  int32_t kernel = -1;
  std::vector<BufferRef> args;
  std::vector<int64_t> iparams;
  std::vector<double> fparams;
  int64_t parallelExtent = 0;
  std::string name;
};

struct TensorDesc {
  std::string name;
  int32_t dtype = 0;
  std::vector<int64_t> dims;
};

/// A run-time check of an entry (mirrors nncc_check): a kernel sets the
/// int32 flag at arena byte `offset` when it fails.
struct PlanCheck {
  std::string message;
  int64_t offset = 0;
};

struct EntryPlan {
  std::string name;
  std::vector<TensorDesc> inputs, outputs;
  std::vector<PlanStep> steps;
  std::vector<PlanCheck> checks;
  int64_t arenaBytes = 0;
  /// Sum of all arena buffers (what the arena would take without reuse).
  int64_t noReuseBytes = 0;
  /// The largest total of arena buffers live at one step: no packing beats it.
  int64_t liveLowerBound = 0;
  /// Bytes each step reads and writes, summed (inputs read once, outputs written once).
  int64_t bytesMoved = 0;
  /// The pipeline stage whose ranks run this variant of the entry.
  int32_t pipelineStage = 0;
};

/// A module state (mirrors nncc_state): starts as weight `initWeight`, or
/// zero-filled when -1. A sharded one (`nncc.shard`, shardParts > 1) has
/// one part's dims and bytes and the whole tensor as its weight.
struct StateDesc {
  TensorDesc desc;
  int64_t bytes = 0;
  int32_t initWeight = -1;
  int32_t shardParts = 0;
  int32_t shardAxis = 0;
  int32_t shardBlocks = 0; // > 1: the axis holds that many blocks, each split
  /// The pipeline stage that updates it; -1: every stage alike.
  int32_t pipelineStage = 0;
};

struct WeightBlob {
  std::vector<std::string> names;
  std::vector<int64_t> offsets, sizes;
  std::string data; // 64-byte aligned entries
};

/// One launch of a kernel's GPU code (mirrors nncc_gpu_launch).
struct GpuLaunch {
  std::string function;
  std::array<uint32_t, 3> grid{1, 1, 1}, block{1, 1, 1};
};

/// The device code of every kernel for one GPU architecture.
struct GpuImage {
  std::string arch; ///< "sm_90"
  std::string ptx;
  std::string cubin; ///< empty when ptxas was not found
};

/// The schedule of every entry for one kind of device (mirrors nncc_plan).
struct DevicePlan {
  int32_t deviceKind = NNCC_DEVICE_CPU; // nncc_device_kind
  std::vector<EntryPlan> entries;
};

/// The whole plan of a module: one schedule per device kind (the CPU's
/// first), kernel names (in kernel-table order), weights, and the code each
/// target contributes.
struct ModulePlan {
  std::vector<DevicePlan> plans;
  std::vector<std::string> kernels;
  WeightBlob weights;
  /// The module's state, in NNCC_BUFFER_STATE index order.
  std::vector<StateDesc> states;
  /// Per kernel (kernel-table order), whether it has host code (an
  /// `nncc_<kernel>` symbol).
  std::vector<char> hostCode;
  /// Per kernel (kernel-table order), its GPU launches; empty without a
  /// CUDA target.
  std::vector<std::vector<GpuLaunch>> gpuLaunches;
  std::vector<GpuImage> gpuImages;
  /// The CPU host code was compiled for and the features it needs (LLVM
  /// X86 feature names, no '+'); empty without host code.
  std::string cpuName;
  std::vector<std::string> cpuFeatures;
  /// The parallel layout (`nncc.parallel`): data- times pipeline- times
  /// tensor-parallel ranks, 1 x 1 x 1 without the attribute.
  int32_t dataParallel = 1;
  int32_t tensorParallel = 1;
  int32_t pipelineParallel = 1;
};

struct PlanOptions {
  /// Share arena bytes between buffers whose lifetimes do not overlap (and
  /// reorder steps to lower the peak); off gives every buffer its own bytes
  /// (the plan pipeline's `reuse`).
  bool reuse = true;
  /// Let f32 GEMMs use TF32 tensor cores (`--precision=tf32`): GEMM steps
  /// carry allow_tf32 = 1.
  bool allowTf32 = false;
  /// The device kind the schedule is for, and whether its kernels get host
  /// code (the CPU plan's; an emulated GPU plan's).
  int32_t deviceKind = NNCC_DEVICE_CPU;
  bool hostCode = true;
};

/// Translates an exec module the plan pipeline annotated
/// (buildPlanPipeline, lib/Target/PlanPasses.h) into the plan: one step per
/// launch, GEMM call, accumulator copy and output copy, in op order, with
/// the buffers, scratch offsets and arena sizes the IR records, the weights
/// from its constants, and each kernel's host parallel extent and GPU
/// launches from its attributes (recordKernelFacts). An entry the pipeline
/// did not annotate is an error.
llvm::Expected<ModulePlan> buildPlan(mlir::ModuleOp execModule, const PlanOptions &options = {});

/// One module of the plans of `cpu` and `gpu` (each built by buildPlan for
/// one device kind from the same nn module): the CPU plan first, both
/// kernel tables (the GPU's indices shifted), and one weight blob in which
/// a GPU weight equal to a CPU weight (name and bytes) is stored once. The
/// states must agree (they come from the same graph).
llvm::Expected<ModulePlan> mergePlans(ModulePlan cpu, ModulePlan gpu);

/// Writes the C source declaring the nncc_module struct of `plan` (the kernel
/// entries are `nncc_<kernel>` symbols; the weight blob is the symbol
/// `nncc_weights_blob`, or `weightsFile` when not empty; GPU image i is
/// `nncc_gpu_ptx_<i>` and `nncc_gpu_cubin_<i>`).
std::string emitPlanSource(const ModulePlan &plan, const std::string &weightsFile);

/// FNV-1a 64 over every table of the plan but the weight blob, in the
/// order runtime/PlanChecksum.cpp walks the emitted nncc_module.
uint64_t planChecksum(const ModulePlan &plan, const std::string &weightsFile);

/// FNV-1a 64 of the weight blob (checked by the runtime at load).
uint64_t weightsChecksum(const std::string &data);

} // namespace nncc

#endif // NNCC_LIB_TARGET_PLAN_H
