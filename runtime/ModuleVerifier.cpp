//===- ModuleVerifier.cpp - check a module's tables before running them ---===//
//
// The executor trusts the plan: every buffer reference is in bounds, every
// index valid, every GEMM's operands fit their buffers. This file establishes
// that once, at load, so a compiler bug or a corrupt module is a clear error
// naming the entry and step instead of a wild write at run time.
//
//===----------------------------------------------------------------------===//
#include "ModuleVerifier.h"

#include "DType.h"
#include "GemmParams.h"

#include <climits>
#include <cstring>
#include <set>

namespace nncc::rt {

namespace {

constexpr int32_t kMaxRank = 64;
/// Beyond any device's memory; keeps size arithmetic (alignment, staging)
/// far from overflow.
constexpr int64_t kMaxArenaBytes = int64_t(1) << 52;

bool validCount(int32_t n, const void *p) { return n >= 0 && (n == 0 || p != nullptr); }

Status invalid(const std::string &msg) { return error(NNCC_ERROR_INVALID_MODULE, msg); }

/// Verifies one signature tensor and returns its byte size.
Status verifyDesc(const std::string &where, const nncc_tensor_desc &d, int64_t *bytes) {
  if (!d.name)
    return invalid(where + " has no name");
  std::string w = where + " '" + d.name + "'";
  if (dtypeSize(d.dtype) == 0)
    return invalid(w + " has unknown dtype " + std::to_string(d.dtype));
  if (d.rank < 0 || d.rank > kMaxRank || (d.rank > 0 && !d.dims))
    return invalid(w + " has invalid rank " + std::to_string(d.rank));
  if (!byteSize(d.dtype, d.rank, d.dims, bytes))
    return invalid(w + " has an invalid shape " + typeString(d.dtype, d.rank, d.dims));
  return Status::ok();
}

Status verifyDescs(const std::string &where, int32_t n, const nncc_tensor_desc *descs,
                   std::vector<int64_t> *bytes) {
  std::set<std::string> names;
  bytes->resize(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) {
    NNCC_RETURN_IF_ERROR(verifyDesc(where, descs[i], &(*bytes)[i]));
    if (!names.insert(descs[i].name).second)
      return invalid(where + " '" + descs[i].name + "' appears twice");
  }
  return Status::ok();
}

/// GPU launches: a function name, a non-empty grid and a block the hardware
/// accepts (at most 1024 threads).
Status verifyKernel(int32_t k, const nncc_kernel &kernel) {
  if (!kernel.name)
    return invalid("kernel " + std::to_string(k) + " has no name");
  std::string where = "kernel '" + std::string(kernel.name) + "'";
  if (!validCount(kernel.num_gpu_launches, kernel.gpu_launches))
    return invalid(where + " has an invalid GPU launch table");
  for (int32_t l = 0; l < kernel.num_gpu_launches; ++l) {
    const nncc_gpu_launch &g = kernel.gpu_launches[l];
    std::string wl = where + " GPU launch " + std::to_string(l);
    if (!g.function)
      return invalid(wl + " has no function name");
    uint64_t threads = uint64_t(g.block[0]) * g.block[1] * g.block[2];
    if (g.grid[0] == 0 || g.grid[1] == 0 || g.grid[2] == 0 || threads == 0)
      return invalid(wl + format(" ('%s') has an empty grid %ux%ux%u or block %ux%ux%u",
                                 g.function, g.grid[0], g.grid[1], g.grid[2], g.block[0],
                                 g.block[1], g.block[2]));
    if (threads > 1024)
      return invalid(wl + format(" ('%s') has a block of %llu threads (at most 1024)", g.function,
                                 static_cast<unsigned long long>(threads)));
    // CUDA's limits on every GPU so far.
    if (g.grid[0] > 2147483647u || g.grid[1] > 65535 || g.grid[2] > 65535 || g.block[2] > 64)
      return invalid(wl + format(" ('%s') has a grid %ux%ux%u or block %ux%ux%u beyond CUDA's "
                                 "limits (2^31-1 x 65535 x 65535, z of a block at most 64)",
                                 g.function, g.grid[0], g.grid[1], g.grid[2], g.block[0],
                                 g.block[1], g.block[2]));
  }
  return Status::ok();
}

/// A GPU image names its architecture and always has PTX (the fallback the
/// driver can JIT); a cubin is optional.
Status verifyGpuImage(int32_t i, const nncc_gpu_image &img) {
  std::string where = "GPU image " + std::to_string(i);
  if (!img.arch || std::strncmp(img.arch, "sm_", 3) != 0)
    return invalid(where + " has no architecture (expected \"sm_XY\")");
  where += " (" + std::string(img.arch) + ")";
  if (!img.ptx)
    return invalid(where + " has no PTX");
  if (img.cubin_bytes < 0 || (img.cubin_bytes > 0) != (img.cubin != nullptr))
    return invalid(where + " has an inconsistent cubin (pointer and size disagree)");
  return Status::ok();
}

bool gemmDtype(int32_t t) {
  return t == NNCC_DTYPE_F32 || t == NNCC_DTYPE_F16 || t == NNCC_DTYPE_BF16;
}

/// The size the module's layout gives parallel group `group`, or 0 for no
/// group of it.
int64_t groupSize(const nncc_module &m, int64_t group) {
  return group == NNCC_GROUP_DATA       ? m.data_parallel
         : group == NNCC_GROUP_TENSOR   ? m.tensor_parallel
         : group == NNCC_GROUP_PIPELINE ? m.pipeline_parallel
                                        : 0;
}

const char *groupName(int64_t group) {
  return group == NNCC_GROUP_DATA ? "data" : group == NNCC_GROUP_TENSOR ? "tensor" : "pipeline";
}

/// The group of a collective step: one of the module's layout, with that
/// group's size.
Status verifyGroupOf(const nncc_module &m, const std::string &where, const int64_t *ip) {
  int64_t group = ip[NNCC_COLLECTIVE_GROUP], size = groupSize(m, group);
  if (size == 0)
    return invalid(where + format("unknown parallel group %lld (1: data, 2: tensor, 3: pipeline)", (long long)group));
  if (ip[NNCC_COLLECTIVE_GROUP_SIZE] != size)
    return invalid(where + format("its %s group has %lld ranks, but the module's layout dp=%d x pp=%d x tp=%d "
                                  "gives it %lld",
                                  groupName(group), (long long)ip[NNCC_COLLECTIVE_GROUP_SIZE], m.data_parallel,
                                  m.pipeline_parallel, m.tensor_parallel, (long long)size));
  return Status::ok();
}

/// A send or receive (ABI v8): any buffers, no reduction or dtype, a group
/// of the layout with a peer in it.
Status verifyPointToPoint(const nncc_module &m, const std::string &where, const nncc_step &st) {
  const int64_t *ip = st.iparams;
  const char *what = ip[NNCC_COLLECTIVE_OP] == NNCC_COLLECTIVE_SEND ? "send" : "receive";
  if (st.num_args < 1)
    return invalid(where + format("a %s needs at least one buffer", what));
  if (ip[NNCC_COLLECTIVE_REDUCTION] != 0 || ip[NNCC_COLLECTIVE_DTYPE] != 0)
    return invalid(where + format("a %s has reduction and dtype 0 (has %lld and %lld)", what,
                                  (long long)ip[NNCC_COLLECTIVE_REDUCTION], (long long)ip[NNCC_COLLECTIVE_DTYPE]));
  NNCC_RETURN_IF_ERROR(verifyGroupOf(m, where, ip));
  int64_t group = ip[NNCC_COLLECTIVE_GROUP], size = ip[NNCC_COLLECTIVE_GROUP_SIZE];
  int64_t peer = ip[NNCC_COLLECTIVE_PEER];
  if (size < 2 || peer < 0 || peer >= size)
    return invalid(where + format("a %s to or from rank %lld of its %s group of %lld ranks (the peer must be "
                                  "another rank of the group)",
                                  what, (long long)peer, groupName(group), (long long)size));
  return Status::ok();
}

/// The collectives with inputs args[0, k) and outputs args[k, 2k): their
/// name, and whether they reduce (f32, a reduction) or move bytes.
struct CollectiveKind {
  const char *name; // with its article: "an all-reduce"
  bool reduces;
};
const CollectiveKind *collectiveKind(int64_t op) {
  static const CollectiveKind allReduce{"an all-reduce", true}, allGather{"an all-gather", false},
      reduceScatter{"a reduce-scatter", true}, broadcast{"a broadcast", false};
  switch (op) {
  case NNCC_COLLECTIVE_ALL_REDUCE: return &allReduce;
  case NNCC_COLLECTIVE_ALL_GATHER: return &allGather;
  case NNCC_COLLECTIVE_REDUCE_SCATTER: return &reduceScatter;
  case NNCC_COLLECTIVE_BROADCAST: return &broadcast;
  default: return nullptr;
  }
}

/// Whether output `out` of collective `op` over `size` ranks has the bytes
/// input `in` implies: the group's parts gathered, one part of a scatter,
/// or the same bytes; a reduction's buffers hold whole f32.
bool pairedBytes(int64_t op, int64_t size, int64_t in, int64_t out) {
  const CollectiveKind *kind = collectiveKind(op);
  if (kind->reduces && (in % 4 != 0 || out % 4 != 0))
    return false;
  return op == NNCC_COLLECTIVE_ALL_GATHER       ? out == in * size
         : op == NNCC_COLLECTIVE_REDUCE_SCATTER ? in == out * size
                                                : in == out;
}

/// A collective step: the op, reduction and dtype this runtime executes,
/// a group of the module's layout with that group's size, and inputs and
/// outputs paired by size (pairedBytes; all-gather, reduce-scatter and
/// broadcast take one buffer each way); see verifyPointToPoint for sends
/// and receives.
Status verifyCollective(const nncc_module &m, const std::string &where, const nncc_step &st) {
  if (st.num_iparams != NNCC_COLLECTIVE_NUM_IPARAMS)
    return invalid(where + format("a collective needs %d integer parameters (has %d)", NNCC_COLLECTIVE_NUM_IPARAMS,
                                  st.num_iparams));
  const int64_t *ip = st.iparams;
  int64_t op = ip[NNCC_COLLECTIVE_OP];
  if (op == NNCC_COLLECTIVE_SEND || op == NNCC_COLLECTIVE_RECV)
    return verifyPointToPoint(m, where, st);
  const CollectiveKind *kind = collectiveKind(op);
  if (!kind)
    return error(NNCC_ERROR_UNSUPPORTED,
                 where + format("collective op %lld is not supported by this runtime (all-reduce, all-gather, "
                                "reduce-scatter, broadcast, send and receive are)",
                                (long long)op));
  if (op == NNCC_COLLECTIVE_ALL_REDUCE ? st.num_args < 2 || st.num_args % 2 != 0 : st.num_args != 2)
    return invalid(where + format("%s needs %s (inputs, then outputs; has %d)", kind->name,
                                  op == NNCC_COLLECTIVE_ALL_REDUCE ? "an even number of args" : "2 args",
                                  st.num_args));
  if (op != NNCC_COLLECTIVE_BROADCAST && ip[NNCC_COLLECTIVE_PEER] != -1)
    return invalid(where + format("%s has peer -1 (has %lld)", kind->name, (long long)ip[NNCC_COLLECTIVE_PEER]));
  if (!kind->reduces && (ip[NNCC_COLLECTIVE_REDUCTION] != 0 || ip[NNCC_COLLECTIVE_DTYPE] != 0))
    return invalid(where + format("%s moves bytes: reduction and dtype 0 (has %lld and %lld)", kind->name,
                                  (long long)ip[NNCC_COLLECTIVE_REDUCTION], (long long)ip[NNCC_COLLECTIVE_DTYPE]));
  if (kind->reduces && ip[NNCC_COLLECTIVE_REDUCTION] != NNCC_REDUCTION_SUM &&
      ip[NNCC_COLLECTIVE_REDUCTION] != NNCC_REDUCTION_MEAN)
    return invalid(where + format("unknown reduction %lld", (long long)ip[NNCC_COLLECTIVE_REDUCTION]));
  if (kind->reduces && ip[NNCC_COLLECTIVE_DTYPE] != NNCC_DTYPE_F32)
    return error(NNCC_ERROR_UNSUPPORTED, where + "collectives reduce f32 only");
  NNCC_RETURN_IF_ERROR(verifyGroupOf(m, where, ip));
  int64_t size = ip[NNCC_COLLECTIVE_GROUP_SIZE];
  if (op == NNCC_COLLECTIVE_BROADCAST && (ip[NNCC_COLLECTIVE_PEER] < 0 || ip[NNCC_COLLECTIVE_PEER] >= size))
    return invalid(where + format("a broadcast from rank %lld of its %s group of %lld ranks (the root, its peer, "
                                  "must be a rank of the group)",
                                  (long long)ip[NNCC_COLLECTIVE_PEER], groupName(ip[NNCC_COLLECTIVE_GROUP]),
                                  (long long)size));
  int32_t k = st.num_args / 2;
  for (int32_t a = 0; a < k; ++a)
    if (!pairedBytes(op, size, st.args[a].bytes, st.args[k + a].bytes))
      return invalid(where + format("the input %d (%lld bytes) and output %d (%lld bytes) of %s do not pair up "
                                    "over %lld ranks%s",
                                    a, (long long)st.args[a].bytes, k + a, (long long)st.args[k + a].bytes,
                                    kind->name, (long long)size,
                                    kind->reduces ? " as whole f32" : ""));
  return Status::ok();
}

/// A GEMM step: parameter counts, sizes, flags, dtypes, and every operand
/// (bias included) inside its buffer region.
Status verifyGemm(const std::string &where, const nncc_step &st, int32_t deviceKind) {
  if (st.num_args < 3 || st.num_args > 4 || st.num_iparams < NNCC_GEMM_REQUIRED_IPARAMS ||
      st.num_iparams > NNCC_GEMM_MAX_IPARAMS || st.num_fparams < NNCC_GEMM_NUM_FPARAMS)
    return invalid(where + format("a GEMM needs 3 or 4 args, %d to %d integer and %d float "
                                  "parameters (has %d, %d, %d)",
                                  NNCC_GEMM_REQUIRED_IPARAMS, NNCC_GEMM_MAX_IPARAMS,
                                  NNCC_GEMM_NUM_FPARAMS, st.num_args, st.num_iparams,
                                  st.num_fparams));
  int32_t writtenKind = st.args[2].kind;
  if (writtenKind == NNCC_BUFFER_INPUT || writtenKind == NNCC_BUFFER_WEIGHT)
    return invalid(where + "arg 2 is written but refers to an input or a weight");
  GemmParams g = decodeGemm(st);
  if (g.batch < 0 || g.m < 0 || g.n < 0 || g.k < 0 || g.m > INT_MAX || g.n > INT_MAX ||
      g.k > INT_MAX)
    return invalid(where + "GEMM sizes out of range");
  const int64_t *p = st.iparams;
  auto isFlag = [](int64_t v) { return v == 0 || v == 1; };
  if (!isFlag(p[NNCC_GEMM_TRANS_A]) || !isFlag(p[NNCC_GEMM_TRANS_B]))
    return invalid(where + "GEMM transpose flags must be 0 or 1");
  if (g.strideA < 0 || g.strideB < 0 || g.strideC < 0)
    return invalid(where + "negative GEMM stride");
  if (g.strideC == 0 && g.batch > 1 && g.m > 0 && g.n > 0)
    return invalid(where + format("GEMM output C has stride 0 over a batch of %lld: the "
                                  "batches would overwrite each other",
                                  static_cast<long long>(g.batch)));
  if (!gemmDtype(g.dtypeA) || !gemmDtype(g.dtypeB) || !gemmDtype(g.dtypeC))
    return invalid(where + format("GEMM dtypes %s x %s -> %s: each must be f32, f16 or bf16",
                                  dtypeName(g.dtypeA), dtypeName(g.dtypeB),
                                  dtypeName(g.dtypeC)));
  if (st.num_iparams > NNCC_GEMM_ALLOW_TF32 && !isFlag(p[NNCC_GEMM_ALLOW_TF32]))
    return invalid(where + "GEMM allow_tf32 must be 0 or 1");
  if (g.activation < NNCC_ACTIVATION_NONE || g.activation > NNCC_ACTIVATION_CLIP)
    return invalid(where + format("unknown GEMM activation %lld (0 none, 1 relu, 2 gelu, 3 clip)",
                                  static_cast<long long>(g.activation)));
  bool clip = g.activation == NNCC_ACTIVATION_CLIP;
  if (st.num_fparams != (clip ? NNCC_GEMM_NUM_CLIP_FPARAMS : NNCC_GEMM_NUM_FPARAMS))
    return invalid(where + format("a GEMM %s activation takes %d float parameters (has %d)",
                                  clip ? "with a clip" : "without a clip",
                                  clip ? NNCC_GEMM_NUM_CLIP_FPARAMS : NNCC_GEMM_NUM_FPARAMS,
                                  st.num_fparams));
  if (st.num_iparams > NNCC_GEMM_BIAS_PER_ROW && !isFlag(p[NNCC_GEMM_BIAS_PER_ROW]))
    return invalid(where + "GEMM bias_per_row must be 0 or 1");
  // cuBLASLt's epilogues add one bias per column and have no clamp.
  if (deviceKind != NNCC_DEVICE_CPU && (clip || g.biasPerRow))
    return invalid(where + format("a GEMM with %s runs only in a CPU plan",
                                  clip ? "a clip activation" : "a bias per row"));
  // Row-major: op(A) is MxK, stored MxK (ld >= K) or KxM (ld >= M).
  auto ldOk = [](int64_t ld, int64_t cols) { return ld >= (cols > 1 ? cols : 1) && ld <= INT_MAX; };
  if (!ldOk(g.lda, g.aCols()) || !ldOk(g.ldb, g.bCols()) || !ldOk(g.ldc, g.n))
    return invalid(where + format("GEMM leading dimensions lda=%lld ldb=%lld ldc=%lld too "
                                  "small for M=%lld N=%lld K=%lld",
                                  (long long)g.lda, (long long)g.ldb, (long long)g.ldc,
                                  (long long)g.m, (long long)g.n, (long long)g.k));
  const int64_t spans[3][5] = {{g.batch, g.aRows(), g.aCols(), g.lda, g.strideA},
                               {g.batch, g.bRows(), g.bCols(), g.ldb, g.strideB},
                               {g.batch, g.m, g.n, g.ldc, g.strideC}};
  const int32_t dtypes[3] = {g.dtypeA, g.dtypeB, g.dtypeC};
  for (int a = 0; a < 3; ++a) {
    int64_t elems, bytes;
    if (!matrixSpan(spans[a][0], spans[a][1], spans[a][2], spans[a][3], spans[a][4], &elems) ||
        __builtin_mul_overflow(elems, static_cast<int64_t>(dtypeSize(dtypes[a])), &bytes) ||
        bytes > st.args[a].bytes)
      return invalid(where + format("GEMM operand %c spans more than its %lld-byte region",
                                    "ABC"[a], static_cast<long long>(st.args[a].bytes)));
  }
  if (g.hasBias &&
      st.args[3].bytes < g.biasCount() * static_cast<int64_t>(dtypeSize(g.dtypeC)))
    return invalid(where + format("GEMM bias (arg 3) has %lld bytes, needs %s=%lld %s elements",
                                  static_cast<long long>(st.args[3].bytes), g.biasPerRow ? "M" : "N",
                                  static_cast<long long>(g.biasCount()), dtypeName(g.dtypeC)));
  return Status::ok();
}

/// The entries of one plan: tables, regions, parameters. `kernelArgs`
/// holds the arity each kernel was called with (across plans: a kernel
/// reads exactly that many args).
Status verifyEntries(const nncc_module &m, const nncc_plan &plan, std::vector<int32_t> &kernelArgs,
                     std::vector<VerifiedPlan::IOBytes> &ioBytes) {
  std::set<std::pair<std::string, int32_t>> entryNames; // (name, stage)
  for (int32_t e = 0; e < plan.num_entries; ++e) {
    const nncc_entry &entry = plan.entries[e];
    if (!entry.name)
      return invalid("entry " + std::to_string(e) + " has no name");
    std::string en = "entry '" + std::string(entry.name) + "'";
    if (m.pipeline_parallel > 1)
      en += format(" (stage %d)", entry.pipeline_stage);
    if (m.num_plans > 1)
      en = std::string(deviceKindName(plan.device_kind)) + " plan " + en;
    if (entry.pipeline_stage < 0 || entry.pipeline_stage >= m.pipeline_parallel)
      return invalid(en + format(" is for pipeline stage %d, but the module has %d stage%s", entry.pipeline_stage,
                                 m.pipeline_parallel, m.pipeline_parallel == 1 ? " (0)" : "s"));
    if (!entryNames.insert({entry.name, entry.pipeline_stage}).second)
      return invalid(en + " appears twice");
    if (!validCount(entry.num_inputs, entry.inputs) ||
        !validCount(entry.num_outputs, entry.outputs) ||
        !validCount(entry.num_steps, entry.steps) ||
        !validCount(entry.num_checks, entry.checks) || entry.arena_bytes < 0 ||
        entry.arena_bytes > kMaxArenaBytes)
      return invalid(en + " has invalid tables or arena size");
    VerifiedPlan::IOBytes &io = ioBytes[e];
    NNCC_RETURN_IF_ERROR(verifyDescs(en + " input", entry.num_inputs, entry.inputs, &io.inputs));
    NNCC_RETURN_IF_ERROR(
        verifyDescs(en + " output", entry.num_outputs, entry.outputs, &io.outputs));
    for (int32_t c = 0; c < entry.num_checks; ++c) {
      const nncc_check &check = entry.checks[c];
      if (!check.message)
        return invalid(en + " check " + std::to_string(c) + " has no message");
      if (check.offset < 0 || check.offset % 4 != 0 || check.offset > entry.arena_bytes - 4)
        return invalid(en + format(" check %d ('%s'): flag at arena offset %lld is not an "
                                   "aligned int32 inside the %lld-byte arena",
                                   c, check.message, static_cast<long long>(check.offset),
                                   static_cast<long long>(entry.arena_bytes)));
    }

    for (int32_t s = 0; s < entry.num_steps; ++s) {
      const nncc_step &st = entry.steps[s];
      std::string where = en + " step " + std::to_string(s);
      if (st.name)
        where += " ('" + std::string(st.name) + "')";
      where += ": ";
      if (!validCount(st.num_args, st.args) || !validCount(st.num_iparams, st.iparams) ||
          !validCount(st.num_fparams, st.fparams))
        return invalid(where + "invalid argument or parameter table");

      for (int32_t a = 0; a < st.num_args; ++a) {
        const nncc_buffer_ref &r = st.args[a];
        std::string wa = where + "arg " + std::to_string(a) + ": ";
        int64_t size;
        switch (r.kind) {
        case NNCC_BUFFER_ARENA:
          size = entry.arena_bytes;
          break;
        case NNCC_BUFFER_INPUT:
          if (r.index < 0 || r.index >= entry.num_inputs)
            return invalid(wa + format("input index %d out of range (entry has %d inputs)",
                                       r.index, entry.num_inputs));
          size = io.inputs[r.index];
          break;
        case NNCC_BUFFER_OUTPUT:
          if (r.index < 0 || r.index >= entry.num_outputs)
            return invalid(wa + format("output index %d out of range (entry has %d outputs)",
                                       r.index, entry.num_outputs));
          size = io.outputs[r.index];
          break;
        case NNCC_BUFFER_WEIGHT:
          if (r.index < 0 || r.index >= m.num_weights)
            return invalid(wa + format("weight index %d out of range (module has %d weights)",
                                       r.index, m.num_weights));
          size = m.weights[r.index].bytes;
          break;
        case NNCC_BUFFER_STATE:
          if (r.index < 0 || r.index >= m.num_states)
            return invalid(wa + format("state index %d out of range (module has %d states)",
                                       r.index, m.num_states));
          size = m.states[r.index].bytes;
          // A session allocates only its stage's states (and every
          // stage's): another stage's is not there to reference.
          if (m.pipeline_parallel > 1 && m.states[r.index].pipeline_stage >= 0 &&
              m.states[r.index].pipeline_stage != entry.pipeline_stage)
            return invalid(wa + format("state '%s' belongs to pipeline stage %d, which alone allocates it, not to "
                                       "this entry's stage %d (an internal compiler error: a stage's plan "
                                       "touches only its own states and those of every stage, -1)",
                                       m.states[r.index].name, m.states[r.index].pipeline_stage,
                                       entry.pipeline_stage));
          break;
        default:
          return invalid(wa + "unknown buffer kind " + std::to_string(r.kind));
        }
        if (r.offset < 0 || r.bytes < 0 || r.offset > size || r.bytes > size - r.offset)
          return invalid(wa + format("region [%lld, %lld) lies outside its %lld-byte buffer",
                                     static_cast<long long>(r.offset),
                                     static_cast<long long>(r.offset) +
                                         static_cast<long long>(r.bytes),
                                     static_cast<long long>(size)));
      }

      // Operands a step writes must not be inputs (caller memory we promised
      // to only read) or weights (shared, possibly a read-only mapping).
      auto writable = [&](int32_t a) -> Status {
        int32_t kind = st.args[a].kind;
        if (kind == NNCC_BUFFER_INPUT || kind == NNCC_BUFFER_WEIGHT)
          return invalid(where + "arg " + std::to_string(a) +
                         " is written but refers to an input or a weight");
        return Status::ok();
      };

      switch (st.kind) {
      case NNCC_STEP_KERNEL:
        if (st.kernel < 0 || st.kernel >= m.num_kernels)
          return invalid(where + format("kernel index %d out of range (module has %d kernels)",
                                        st.kernel, m.num_kernels));
        if (st.parallel_extent < 0)
          return invalid(where + "negative parallel extent");
        if (kernelArgs[st.kernel] >= 0 && kernelArgs[st.kernel] != st.num_args)
          return invalid(where + format("kernel '%s' called with %d args, elsewhere with %d",
                                        m.kernels[st.kernel].name, st.num_args,
                                        kernelArgs[st.kernel]));
        kernelArgs[st.kernel] = st.num_args;
        break;
      case NNCC_STEP_GEMM:
        NNCC_RETURN_IF_ERROR(verifyGemm(where, st, plan.device_kind));
        break;
      case NNCC_STEP_COPY:
        if (st.num_args != 2)
          return invalid(where + "a copy needs 2 args");
        NNCC_RETURN_IF_ERROR(writable(1));
        if (st.args[0].bytes < st.args[1].bytes)
          return invalid(where + "copy source is smaller than its destination");
        break;
      case NNCC_STEP_COLLECTIVE: {
        NNCC_RETURN_IF_ERROR(verifyCollective(m, where, st));
        // The buffers it writes: a receive's buffers, a send's none, the
        // others' outputs.
        int64_t op = st.iparams[NNCC_COLLECTIVE_OP];
        int32_t first = op == NNCC_COLLECTIVE_RECV ? 0 : op == NNCC_COLLECTIVE_SEND ? st.num_args : st.num_args / 2;
        for (int32_t a = first; a < st.num_args; ++a)
          NNCC_RETURN_IF_ERROR(writable(a));
        break;
      }
      default:
        return invalid(where + "unknown step kind " + std::to_string(st.kind));
      }
    }
  }
  return Status::ok();
}

bool sameDescs(int32_t n, const nncc_tensor_desc *a, int32_t k, const nncc_tensor_desc *b) {
  if (n != k)
    return false;
  for (int32_t i = 0; i < n; ++i)
    if (std::strcmp(a[i].name, b[i].name) != 0 || a[i].dtype != b[i].dtype || a[i].rank != b[i].rank ||
        !std::equal(a[i].dims, a[i].dims + a[i].rank, b[i].dims))
      return false;
  return true;
}

/// An entry's index is the same in every plan: the plans list the same
/// entries, with the same signatures, in the same order.
Status verifySameSignatures(const nncc_plan &first, const nncc_plan &plan) {
  if (plan.num_entries != first.num_entries)
    return invalid(format("the %s plan has %d entries, the %s plan %d", deviceKindName(plan.device_kind),
                          plan.num_entries, deviceKindName(first.device_kind), first.num_entries));
  for (int32_t e = 0; e < plan.num_entries; ++e) {
    const nncc_entry &a = first.entries[e], &b = plan.entries[e];
    if (std::strcmp(a.name, b.name) != 0 || a.pipeline_stage != b.pipeline_stage ||
        !sameDescs(a.num_inputs, a.inputs, b.num_inputs, b.inputs) ||
        !sameDescs(a.num_outputs, a.outputs, b.num_outputs, b.outputs))
      return invalid(format("entry %d differs between the %s plan ('%s') and the %s plan ('%s'): every "
                            "plan lists the same entries with the same signatures and stages",
                            e, deviceKindName(first.device_kind), a.name, deviceKindName(plan.device_kind),
                            b.name));
  }
  return Status::ok();
}

/// With P > 1 stages every entry name is listed once per stage (verifyEntries
/// rejects a name twice in one stage), each variant with the first one's
/// signature: a session runs its own stage's.
Status verifyStages(const nncc_module &m, const nncc_plan &plan) {
  if (m.pipeline_parallel == 1)
    return Status::ok();
  for (int32_t e = 0; e < plan.num_entries; ++e) {
    const nncc_entry &a = plan.entries[e];
    int32_t stages = 0;
    for (int32_t f = 0; f < plan.num_entries; ++f) {
      const nncc_entry &b = plan.entries[f];
      if (std::strcmp(a.name, b.name) != 0)
        continue;
      ++stages;
      if (!sameDescs(a.num_inputs, a.inputs, b.num_inputs, b.inputs) ||
          !sameDescs(a.num_outputs, a.outputs, b.num_outputs, b.outputs))
        return invalid(format("entry '%s' has other inputs or outputs in stage %d than in stage %d: every stage's "
                              "variant of an entry has the same signature",
                              a.name, b.pipeline_stage, a.pipeline_stage));
    }
    if (stages != m.pipeline_parallel)
      return invalid(format("entry '%s' is listed for %d of the module's %d pipeline stages: a pipeline-parallel "
                            "module lists every entry once per stage",
                            a.name, stages, m.pipeline_parallel));
  }
  return Status::ok();
}

} // namespace

const char *deviceKindName(int32_t kind) {
  return kind == NNCC_DEVICE_CPU ? "cpu" : kind == NNCC_DEVICE_CUDA ? "cuda" : "unknown";
}

Status verifyPlan(const nncc_module &m, VerifiedPlan *out) {
  if (!validCount(m.num_plans, m.plans) || m.num_plans == 0 || !validCount(m.num_kernels, m.kernels) ||
      !validCount(m.num_weights, m.weights))
    return invalid("invalid plan, kernel or weight table");
  if (m.weights_bytes < 0)
    return invalid("negative weights_bytes");

  for (int32_t k = 0; k < m.num_kernels; ++k)
    NNCC_RETURN_IF_ERROR(verifyKernel(k, m.kernels[k]));
  if (!validCount(m.num_gpu_images, m.gpu_images))
    return invalid("invalid GPU image table");
  for (int32_t k = 0; k < m.num_kernels; ++k)
    if (m.kernels[k].num_gpu_launches > 0 && m.num_gpu_images == 0)
      return invalid(format("kernel '%s' has GPU launches but the module has no GPU image",
                            m.kernels[k].name));
  for (int32_t i = 0; i < m.num_gpu_images; ++i)
    NNCC_RETURN_IF_ERROR(verifyGpuImage(i, m.gpu_images[i]));
  for (int32_t w = 0; w < m.num_weights; ++w) {
    const nncc_weight &wt = m.weights[w];
    std::string name = wt.name ? wt.name : "#" + std::to_string(w);
    if (wt.offset < 0 || wt.bytes < 0 || wt.offset > m.weights_bytes ||
        wt.bytes > m.weights_bytes - wt.offset)
      return invalid(format("weight '%s' (offset %lld, %lld bytes) lies outside the %lld-byte "
                            "weight blob",
                            name.c_str(), static_cast<long long>(wt.offset),
                            static_cast<long long>(wt.bytes),
                            static_cast<long long>(m.weights_bytes)));
  }

  // Before the steps: collectives are checked against the layout.
  if (m.data_parallel < 1 || m.pipeline_parallel < 1 || m.tensor_parallel < 1 ||
      int64_t(m.data_parallel) * m.pipeline_parallel * m.tensor_parallel > INT32_MAX)
    return invalid(format("invalid parallel layout dp=%d x pp=%d x tp=%d (each at least 1, the product an int32)",
                          m.data_parallel, m.pipeline_parallel, m.tensor_parallel));
  if (!validCount(m.num_states, m.states))
    return invalid("invalid state table");
  std::set<std::string> stateNames;
  for (int32_t i = 0; i < m.num_states; ++i) {
    const nncc_state &st = m.states[i];
    nncc_tensor_desc desc{st.name, st.dtype, st.rank, st.dims};
    int64_t bytes = 0;
    NNCC_RETURN_IF_ERROR(verifyDesc("state", desc, &bytes));
    if (!stateNames.insert(st.name).second)
      return invalid(format("state '%s' appears twice", st.name));
    if (st.bytes != bytes)
      return invalid(format("state '%s' has %lld bytes, its shape %lld", st.name,
                            static_cast<long long>(st.bytes), static_cast<long long>(bytes)));
    // A sharded state holds one of tensor_parallel parts (module_abi.h);
    // its weight is the whole tensor.
    int64_t parts = st.shard_parts > 1 ? st.shard_parts : 1;
    int64_t blocks = st.shard_blocks > 1 ? st.shard_blocks : 1;
    if (st.shard_parts < 0 || st.shard_blocks < 0 ||
        (parts > 1 && (parts != m.tensor_parallel || st.shard_axis < 0 || st.shard_axis >= st.rank ||
                       st.dims[st.shard_axis] % blocks != 0)) ||
        (parts == 1 && (st.shard_axis != 0 || blocks != 1)))
      return invalid(format("state '%s' is split in %d parts along axis %d, but a sharded state needs as many "
                            "parts as the module's tensor-parallel ranks (%d), an axis below its rank %d and "
                            "blocks (%d) that divide its part",
                            st.name, st.shard_parts, st.shard_axis, m.tensor_parallel, st.rank, st.shard_blocks));
    if (st.pipeline_stage < -1 || st.pipeline_stage >= m.pipeline_parallel)
      return invalid(format("state '%s' is updated by pipeline stage %d, but the module has %d stage%s (-1: every "
                            "stage alike)",
                            st.name, st.pipeline_stage, m.pipeline_parallel, m.pipeline_parallel == 1 ? "" : "s"));
    if (st.init_weight < -1 || st.init_weight >= m.num_weights || st.bytes > INT64_MAX / parts ||
        (st.init_weight >= 0 && m.weights[st.init_weight].bytes != st.bytes * parts))
      return invalid(format("state '%s' starts from weight %d, which is no weight of its %ssize", st.name,
                            st.init_weight, parts > 1 ? "whole (all parts') " : ""));
  }

  // The runtime does not know a kernel's arity: every step calling a kernel
  // must pass the same number of args (a kernel reads exactly that many).
  std::vector<int32_t> kernelArgs(static_cast<size_t>(m.num_kernels), -1);
  std::set<int32_t> deviceKinds;
  for (int32_t p = 0; p < m.num_plans; ++p) {
    const nncc_plan &plan = m.plans[p];
    if (plan.device_kind != NNCC_DEVICE_CPU && plan.device_kind != NNCC_DEVICE_CUDA)
      return invalid(format("plan %d is for unknown device kind %d", p, plan.device_kind));
    if (!deviceKinds.insert(plan.device_kind).second)
      return invalid(format("two plans for %s devices", deviceKindName(plan.device_kind)));
    if (!validCount(plan.num_entries, plan.entries))
      return invalid(format("the %s plan has an invalid entry table", deviceKindName(plan.device_kind)));
    std::vector<VerifiedPlan::IOBytes> ioBytes(static_cast<size_t>(plan.num_entries));
    NNCC_RETURN_IF_ERROR(verifyEntries(m, plan, kernelArgs, ioBytes));
    NNCC_RETURN_IF_ERROR(verifyStages(m, plan));
    if (p == 0) {
      out->io = std::move(ioBytes);
      continue;
    }
    NNCC_RETURN_IF_ERROR(verifySameSignatures(m.plans[0], plan));
  }
  return Status::ok();
}

} // namespace nncc::rt
