/* The contract between the nncc compiler and runtime: the one C struct a
 * compiled model.so exports through `nncc_module_get`. The compiler writes it
 * (as generated C, linked with the kernels' object code and the weights); the
 * runtime reads it. Nothing else is shared between them.
 *
 * Rules: every change that alters layout or meaning bumps
 * NNCC_MODULE_ABI_VERSION; the runtime refuses any other version with a clear
 * error. Arrays are (count, pointer) pairs; strings are NUL-terminated UTF-8.
 */
#ifndef NNCC_MODULE_ABI_H
#define NNCC_MODULE_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NNCC_MODULE_MAGIC 0x4E4E4343u /* "NNCC" */
#define NNCC_MODULE_ABI_VERSION 9u
#define NNCC_MODULE_SYMBOL "nncc_module_get"

/** Element types, numbered like ONNX's TensorProto.DataType. */
typedef enum nncc_dtype {
  NNCC_DTYPE_F32 = 1,
  NNCC_DTYPE_U8 = 2,
  NNCC_DTYPE_I8 = 3,
  NNCC_DTYPE_U16 = 4,
  NNCC_DTYPE_I16 = 5,
  NNCC_DTYPE_I32 = 6,
  NNCC_DTYPE_I64 = 7,
  NNCC_DTYPE_BOOL = 9, /* one byte per element, 0 or 1 */
  NNCC_DTYPE_F16 = 10,
  NNCC_DTYPE_F64 = 11,
  NNCC_DTYPE_U32 = 12,
  NNCC_DTYPE_U64 = 13,
  NNCC_DTYPE_BF16 = 16
} nncc_dtype;

/** Bytes per element of an nncc_dtype (bool is one byte); 0 for a number
 * that is no nncc_dtype. */
static inline int32_t nncc_dtype_bytes(int32_t dtype) {
  switch (dtype) {
  case NNCC_DTYPE_U8:
  case NNCC_DTYPE_I8:
  case NNCC_DTYPE_BOOL: return 1;
  case NNCC_DTYPE_U16:
  case NNCC_DTYPE_I16:
  case NNCC_DTYPE_F16:
  case NNCC_DTYPE_BF16: return 2;
  case NNCC_DTYPE_F32:
  case NNCC_DTYPE_I32:
  case NNCC_DTYPE_U32: return 4;
  case NNCC_DTYPE_I64:
  case NNCC_DTYPE_F64:
  case NNCC_DTYPE_U64: return 8;
  default: return 0;
  }
}

/** A named, typed, statically shaped tensor of an entry point's signature. */
typedef struct nncc_tensor_desc {
  const char *name;
  int32_t dtype; /* nncc_dtype */
  int32_t rank;
  const int64_t *dims; /* rank entries */
} nncc_tensor_desc;

/** Where a plan step's operand lives. */
typedef enum nncc_buffer_kind {
  NNCC_BUFFER_ARENA = 0,  /* offset into the session's arena for this entry */
  NNCC_BUFFER_INPUT = 1,  /* index-th input of the entry (+ offset) */
  NNCC_BUFFER_OUTPUT = 2, /* index-th output of the entry (+ offset) */
  NNCC_BUFFER_WEIGHT = 3, /* index-th module weight (+ offset) */
  NNCC_BUFFER_STATE = 4   /* index-th module state (+ offset): lives on the session's device across runs */
} nncc_buffer_kind;

typedef struct nncc_buffer_ref {
  int32_t kind;  /* nncc_buffer_kind */
  int32_t index; /* input/output/weight index; unused for the arena */
  int64_t offset; /* bytes from the start of the buffer */
  int64_t bytes;  /* size of the region the step touches */
} nncc_buffer_ref;

typedef enum nncc_step_kind {
  /* Call kernels[kernel] with args (buffer pointers in order). A kernel with a
   * parallel extent E > 0 may be split: each call covers [begin, end) of its
   * outermost parallel loop, 0 <= begin < end <= E. */
  NNCC_STEP_KERNEL = 1,
  /* Batched GEMM: C = alpha * op(A) * op(B) + beta * C, row-major.
   * args: A, B, C. iparams: see nncc_gemm_iparam; fparams: see
   * nncc_gemm_fparam. An optional args[3] is a bias of N elements (dtype_c)
   * added to every row: C = act(alpha * op(A) * op(B) + beta * C + bias).
   * Products accumulate in f32; a low-precision C is rounded to nearest even
   * once, at the end. */
  NNCC_STEP_GEMM = 2,
  /* Copy args[0] to args[1] (bytes of args[1]). */
  NNCC_STEP_COPY = 3,
  /* A collective over one parallel group of the session's ranks (ABI v5;
   * the group since v7): args[0, k) are the inputs and args[k, 2k) the
   * outputs (num_args = 2k), output i of the bytes of input i; the k buffers
   * form one bucket communicated in one call. iparams: see
   * nncc_collective_iparam. */
  NNCC_STEP_COLLECTIVE = 4
} nncc_step_kind;

/** The iparams of an NNCC_STEP_COLLECTIVE, by index (all required). */
typedef enum nncc_collective_iparam {
  NNCC_COLLECTIVE_OP = 0,         /* nncc_collective_op */
  NNCC_COLLECTIVE_REDUCTION = 1,  /* nncc_reduction */
  NNCC_COLLECTIVE_DTYPE = 2,      /* nncc_dtype of every buffer: F32 */
  NNCC_COLLECTIVE_GROUP_SIZE = 3, /* ranks of the group: the module's
                                     data_parallel or tensor_parallel */
  NNCC_COLLECTIVE_GROUP = 4,      /* nncc_parallel_group (ABI v7) */
  NNCC_COLLECTIVE_PEER = 5,       /* send/recv: the group rank of the other
                                     side; broadcast: the root; -1 for the
                                     others (ABI v8) */
  NNCC_COLLECTIVE_NUM_IPARAMS = 6
} nncc_collective_iparam;

/** The parallel groups of a module's layout (nncc_module.data_parallel D,
 * pipeline_parallel P, tensor_parallel T; ABI v7, pipeline since v8). The
 * world has D*P*T ranks; world rank w = (d*P + p)*T + t, so a tensor group
 * is T consecutive ranks (one machine). A rank's index in a group (its group
 * rank) is its d, p or t. */
typedef enum nncc_parallel_group {
  NNCC_GROUP_DATA = 1,    /* the D ranks with rank w's p and t */
  NNCC_GROUP_TENSOR = 2,  /* the T ranks with rank w's d and p: consecutive */
  NNCC_GROUP_PIPELINE = 3 /* the P ranks with rank w's d and t, by stage p */
} nncc_parallel_group;

typedef enum nncc_collective_op {
  NNCC_COLLECTIVE_ALL_REDUCE = 1, /* every rank's outputs: the reduction over ranks */
  /* Point to point (ABI v8): args[0, k) (num_args = k, any dtypes; the
   * DTYPE and REDUCTION iparams are 0) go to, or come from, the group rank
   * NNCC_COLLECTIVE_PEER. Sends and receives between two ranks pair up in
   * the order each rank's plan lists them. A send's buffers are free once
   * the step has started (the runtime copies them), so a send never waits
   * for its receiver: pipeline schedules need no pairing of their steps. */
  NNCC_COLLECTIVE_SEND = 2,
  NNCC_COLLECTIVE_RECV = 3,
  /* One buffer each way (num_args = 2: args[0] the input, args[1] the
   * output), its parts along the outermost dims a plain split of its bytes
   * (the compiler gathers and scatters only where every dim before the axis
   * is 1, so no axis is needed here). Added within ABI v8: a runtime
   * without them refuses the op by number as unsupported.
   * All-gather: output = the group ranks' inputs concatenated in group-rank
   * order (output bytes = group size x input bytes; any dtype: DTYPE and
   * REDUCTION are 0). */
  NNCC_COLLECTIVE_ALL_GATHER = 4,
  /* Reduce-scatter: the inputs reduced over the ranks (f32, REDUCTION sum or
   * mean), group rank r's output is part r of it (input bytes = group size
   * x output bytes). */
  NNCC_COLLECTIVE_REDUCE_SCATTER = 5,
  /* Broadcast: every rank's output is group rank PEER's input (the root;
   * input and output of equal bytes, any dtype: DTYPE and REDUCTION 0). */
  NNCC_COLLECTIVE_BROADCAST = 6
} nncc_collective_op;

typedef enum nncc_reduction {
  NNCC_REDUCTION_SUM = 1,
  NNCC_REDUCTION_MEAN = 2 /* the sum divided by the group size */
} nncc_reduction;

/** The iparams of an NNCC_STEP_GEMM, by index. The first
 * NNCC_GEMM_REQUIRED_IPARAMS are required; a step may stop after any later
 * one, and those it leaves out take the defaults named here. */
typedef enum nncc_gemm_iparam {
  NNCC_GEMM_BATCH = 0,
  NNCC_GEMM_M = 1,
  NNCC_GEMM_N = 2,
  NNCC_GEMM_K = 3,
  NNCC_GEMM_TRANS_A = 4, /* 0 or 1 */
  NNCC_GEMM_TRANS_B = 5, /* 0 or 1 */
  NNCC_GEMM_LDA = 6,
  NNCC_GEMM_LDB = 7,
  NNCC_GEMM_LDC = 8,
  NNCC_GEMM_STRIDE_A = 9, /* elements between batches; 0 broadcasts */
  NNCC_GEMM_STRIDE_B = 10,
  NNCC_GEMM_STRIDE_C = 11,
  NNCC_GEMM_REQUIRED_IPARAMS = 12,
  NNCC_GEMM_DTYPE_A = 12, /* nncc_dtype: F32, F16 or BF16; F32 when absent */
  NNCC_GEMM_DTYPE_B = 13,
  NNCC_GEMM_DTYPE_C = 14,
  NNCC_GEMM_ALLOW_TF32 = 15, /* 0 or 1; 0 when absent */
  NNCC_GEMM_ACTIVATION = 16, /* nncc_activation; NONE when absent */
  /* 0: the bias (args[3]) holds N values, one per column (a linear layer's);
   * 1: M values, one per row (a convolution's per output channel when the
   * weights are A, [M, positions] = W col); 0 when absent. */
  NNCC_GEMM_BIAS_PER_ROW = 17,
  NNCC_GEMM_MAX_IPARAMS = 18
} nncc_gemm_iparam;

/** The fparams of an NNCC_STEP_GEMM, by index. ALPHA and BETA are
 * required; CLIP_MIN and CLIP_MAX are present exactly when the activation is
 * NNCC_ACTIVATION_CLIP. */
typedef enum nncc_gemm_fparam {
  NNCC_GEMM_ALPHA = 0,
  NNCC_GEMM_BETA = 1,
  NNCC_GEMM_NUM_FPARAMS = 2,
  NNCC_GEMM_CLIP_MIN = 2,
  NNCC_GEMM_CLIP_MAX = 3,
  NNCC_GEMM_NUM_CLIP_FPARAMS = 4
} nncc_gemm_fparam;

/** The activation a GEMM step applies to its result (iparam
 * NNCC_GEMM_ACTIVATION). */
typedef enum nncc_activation {
  NNCC_ACTIVATION_NONE = 0,
  NNCC_ACTIVATION_RELU = 1,
  NNCC_ACTIVATION_GELU = 2, /* with erf */
  /* min(max(v, CLIP_MIN), CLIP_MAX) (fparams; crossed bounds give CLIP_MAX,
   * as ONNX Clip): ReLU6. The CPU
   * plan's convolution epilogues only: cuBLASLt has no clamp epilogue. */
  NNCC_ACTIVATION_CLIP = 3
} nncc_activation;

typedef struct nncc_step {
  int32_t kind;   /* nncc_step_kind */
  int32_t kernel; /* NNCC_STEP_KERNEL: index into nncc_module.kernels */
  int32_t num_args;
  const nncc_buffer_ref *args;
  int32_t num_iparams;
  const int64_t *iparams;
  int32_t num_fparams;
  const double *fparams;
  int64_t parallel_extent; /* NNCC_STEP_KERNEL: see above; 0 = call once with (0, 1) */
  const char *name;        /* the ONNX node name(s) this step computes, for profiles */
} nncc_step;

/** A run-time check one of an entry's kernels performs (an index in range):
 * the kernel stores a nonzero int32 at arena byte `offset` when the check
 * fails. The runtime zeroes every flag before a run and, after it, fails the
 * run with `message` (which names the ONNX node) for each flag that is set. */
typedef struct nncc_check {
  const char *message;
  int64_t offset; /* bytes into the entry's arena; 4-byte aligned */
} nncc_check;

/** A named entry point ("forward"; later also "train_step"...). */
typedef struct nncc_entry {
  const char *name;
  int32_t num_inputs;
  const nncc_tensor_desc *inputs;
  int32_t num_outputs;
  const nncc_tensor_desc *outputs;
  int64_t arena_bytes; /* bytes of scratch memory this entry needs */
  int32_t num_steps;
  const nncc_step *steps;
  int32_t num_checks;
  const nncc_check *checks;
  /* The pipeline stage whose ranks run this entry (ABI v8), 0 <= stage <
   * nncc_module.pipeline_parallel P. With P > 1 each entry name is listed
   * once per stage, with the same inputs and outputs: a session runs the
   * variant of its rank's stage. */
  int32_t pipeline_stage;
} nncc_entry;

/** The kinds of device a plan is for. */
typedef enum nncc_device_kind {
  NNCC_DEVICE_CPU = 1,
  NNCC_DEVICE_CUDA = 2
} nncc_device_kind;

/** The schedule of every entry point for one kind of device (ABI v6). A
 * module carries one plan per device kind it was compiled for, so each
 * device runs steps and kernels shaped for it (direct convolutions on the
 * CPU, im2col + cuBLASLt on a GPU); a session runs the plan of its device's
 * kind. Every plan lists the same entries (names, inputs, outputs) in the
 * same order, so an entry's index is the same in every plan; kernels,
 * weights and state are the module's, shared by its plans. */
typedef struct nncc_plan {
  int32_t device_kind; /* nncc_device_kind; at most one plan per kind */
  int32_t num_entries;
  const nncc_entry *entries;
} nncc_plan;

/** Host code of a kernel: args[i] is the i-th buffer of the step. */
typedef void (*nncc_cpu_kernel_fn)(void **args, int64_t begin, int64_t end);

/** One launch of a kernel's GPU code: entry `function` of every GPU image,
 * called with one device pointer per step arg, in order. */
typedef struct nncc_gpu_launch {
  const char *function;
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t shared_bytes; /* dynamic shared memory */
} nncc_gpu_launch;

typedef struct nncc_kernel {
  const char *name;
  nncc_cpu_kernel_fn cpu; /* NULL for a kernel only a CUDA plan calls */
  /* GPU code: launches run in order on the session's stream (a kernel with
   * several loop nests needs one launch per nest). 0 for a kernel only the
   * CPU plan calls. */
  int32_t num_gpu_launches;
  const nncc_gpu_launch *gpu_launches;
} nncc_kernel;

/** The device code of every kernel for one GPU architecture. */
typedef struct nncc_gpu_image {
  const char *arch;       /* "sm_90" */
  const char *ptx;        /* NUL-terminated PTX with every nncc_gpu_launch.function */
  const uint8_t *cubin;   /* ptxas output for `arch`, or NULL (the driver JITs the PTX) */
  int64_t cubin_bytes;
} nncc_gpu_image;

/** Module state: a tensor each session keeps on its device across runs
 * (weights a user may update, trained parameters, optimizer moments). Steps
 * read and write it through NNCC_BUFFER_STATE refs. A session starts it as
 * a copy of weight `init_weight` (bytes equal), or zero-filled when -1.
 *
 * A sharded state (shard_parts > 1, ABI v7) is split over the tensor group:
 * dims and bytes are one part's (the whole tensor's dims with
 * dims[shard_axis] divided by shard_parts, which equals the module's
 * tensor_parallel), and the rank with tensor index t holds part t along
 * shard_axis. Its init_weight is the WHOLE tensor (bytes * shard_parts);
 * a session starts from its own part of it. */
/** States whose name starts with this prefix are fixed by the module's
 * layout, not by training (nncc-tensor-parallel's per-rank index: each rank
 * of the tensor group holds its own t). A checkpoint, which is the whole
 * model and loads at any layout, neither saves nor expects them. */
#define NNCC_LAYOUT_STATE_PREFIX "nncc.layout."

typedef struct nncc_state {
  const char *name;
  int32_t dtype; /* nncc_dtype */
  int32_t rank;
  const int64_t *dims; /* rank entries */
  int64_t bytes;
  int32_t init_weight; /* index into nncc_module.weights, or -1 */
  int32_t shard_parts; /* 0 or 1: whole on every rank; else parts over the tensor group */
  int32_t shard_axis;  /* the split dimension, 0 <= shard_axis < rank; 0 when whole */
  /* 0 or 1: part t is one run along shard_axis. B > 1: the whole axis is B
   * equal blocks (a fused Q/K/V weight: B = 3) and part t is part t of each
   * block, in block order (dims[shard_axis] divides by B). 0 when whole. */
  int32_t shard_blocks;
  /* The pipeline stage that updates this state (ABI v8): its ranks hold it
   * current, and reading it whole reads theirs. -1: every stage updates it
   * alike (an optimizer's step count). 0 when P = 1. */
  int32_t pipeline_stage;
} nncc_state;

/** A constant tensor (model weight) stored in the module's weight blob. */
typedef struct nncc_weight {
  const char *name;
  int64_t offset; /* bytes from the start of the weight blob (64-byte aligned) */
  int64_t bytes;
} nncc_weight;

typedef struct nncc_module {
  uint32_t magic;       /* NNCC_MODULE_MAGIC */
  uint32_t abi_version; /* NNCC_MODULE_ABI_VERSION */
  uint64_t struct_size; /* sizeof(nncc_module) as the compiler saw it */
  const char *producer; /* "nncc <version>" */
  int32_t num_plans;    /* at least one */
  const nncc_plan *plans;
  int32_t num_kernels;
  const nncc_kernel *kernels;
  int32_t num_weights;
  const nncc_weight *weights;
  /* The weight blob: embedded (weights_data != NULL) or in a side file next to
   * the .so (weights_file, memory-mapped at load). */
  const uint8_t *weights_data;
  const char *weights_file;
  int64_t weights_bytes;
  uint64_t weights_checksum; /* FNV-1a 64 of the blob, checked at load */
  /* CUDA targets: one image per architecture (the runtime picks the cubin of
   * the device's compute capability, else the newest PTX it can JIT). */
  int32_t num_gpu_images;
  const nncc_gpu_image *gpu_images;
  /* Host code: the CPU it was compiled for ("x86-64-v3", or an LLVM CPU
   * name) and the x86 features its instructions need, comma separated without
   * '+' ("avx,avx2,fma,..."; the names of LLVM's X86 target). The runtime
   * refuses the module when the machine lacks one. Both "" without host code. */
  const char *cpu_name;
  const char *cpu_features;
  /* FNV-1a 64 over every table of the module but the weight blob (which has
   * weights_checksum), in the canonical order of runtime/PlanChecksum.cpp
   * and lib/Target/Plan.cpp's planChecksum: checked at load, before any
   * count or index of the plan is trusted. */
  uint64_t plan_checksum;
  /* The module's state (nncc_state); 0 and NULL when it has none. */
  int32_t num_states;
  const nncc_state *states;
  /* The parallel layout (ABI v7): data_parallel D times tensor_parallel T
   * ranks (both >= 1; 1, 1 for a module of one rank), times pipeline_parallel
   * P stages (ABI v8; >= 1). A session's world must have D*P*T ranks; see
   * nncc_parallel_group for the rank order. */
  int32_t data_parallel;
  int32_t tensor_parallel;
  int32_t pipeline_parallel;
} nncc_module;

/** The one symbol a model.so exports. */
typedef const nncc_module *(*nncc_module_get_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* NNCC_MODULE_ABI_H */
