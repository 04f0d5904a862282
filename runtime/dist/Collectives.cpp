//===- Collectives.cpp ----------------------------------------------------===//
#include "Collectives.h"

#include "../Device.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <tuple>
#include <unistd.h>
#include <vector>

namespace nncc::rt {

namespace {

/// The layout for the world-size refusal: "2 data-parallel ranks
/// (--parallel=dp:2)", "8 ranks (--parallel=dp:2,pp:2,tp:2: 2 data- times 2
/// pipeline- times 2 tensor-parallel)".
std::string layoutText(int32_t dp, int32_t pp, int32_t tp) {
  std::string flag, parts;
  int dims = 0;
  for (auto [name, what, n] : {std::tuple{"dp", "data", dp}, {"pp", "pipeline", pp}, {"tp", "tensor", tp}}) {
    if (n == 1)
      continue;
    flag += format("%s%s:%d", flag.empty() ? "" : ",", name, n);
    parts += format("%s%d %s-", parts.empty() ? "" : " times ", n, what);
    ++dims;
  }
  if (dims == 0)
    return "1 rank";
  if (dims == 1)
    return format("%sparallel ranks (--parallel=%s)", parts.c_str(), flag.c_str());
  return format("%lld ranks (--parallel=%s: %sparallel)", (long long)dp * pp * tp, flag.c_str(), parts.c_str());
}

/// This process's machine: NNCC_HOST_NAME (containers that share one host
/// name; tests), else gethostname.
std::string machineName() {
  if (const char *name = std::getenv("NNCC_HOST_NAME"); name && *name)
    return name;
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0)
    return "?";
  return name;
}

/// A tensor group all-reduces inside every split layer, so its ranks belong
/// on one machine (NVLink, shared memory), with data and pipeline groups
/// across machines. The world's ranks exchange a 24-bit hash of their
/// machine's name (one all-reduce of `size` floats: exact below 2^24), and
/// world rank 0 warns about each tensor group on several machines, with how
/// to launch instead. A warning, not an error: the results are the same.
Status warnAboutSplitTensorGroups(Communicator &world, int32_t tp) {
  uint32_t hash = 2166136261u; // FNV-1a
  for (unsigned char c : machineName())
    hash = (hash ^ c) * 16777619u;
  std::vector<float> machine(static_cast<size_t>(world.size()), 0.0f);
  machine[static_cast<size_t>(world.rank())] = static_cast<float>(hash & 0xffffffu);
  NNCC_RETURN_IF_ERROR(world.allReduceF32(machine.data(), static_cast<int64_t>(machine.size()), false)
                           .prefix(format("rank %d of %d (%s): comparing the ranks' machines: ", world.rank(),
                                          world.size(), world.backend())));
  if (world.rank() != 0)
    return Status::ok();
  std::string split;
  int groups = 0;
  for (int first = 0; first < world.size(); first += tp)
    if (!std::all_of(machine.begin() + first, machine.begin() + first + tp,
                     [&](float m) { return m == machine[static_cast<size_t>(first)]; })) {
      if (++groups <= 4)
        split += format("%s%d-%d", split.empty() ? "" : ", ", first, first + tp - 1);
    }
  if (groups > 0)
    std::fprintf(stderr,
                 "nncc: warning: %d tensor-parallel group%s of %d ranks span%s machines (ranks %s%s): every split "
                 "layer's all-reduce crosses the network; start consecutive ranks on one machine, %d or a "
                 "multiple of %d per machine (mpirun --map-by slot, or --map-by ppr:%d:node)\n",
                 groups, groups == 1 ? "" : "s", tp, groups == 1 ? "s" : "", split.c_str(), groups > 4 ? ", ..." : "",
                 tp, tp, tp);
  return Status::ok();
}

} // namespace

Status makeParallelGroups(const Module &module, const nncc_plan &plan, const std::shared_ptr<Communicator> &world,
                          ParallelGroups *out) {
  const nncc_module &m = module.abi();
  int32_t dp = m.data_parallel, pp = m.pipeline_parallel, tp = m.tensor_parallel;
  int64_t ranks = int64_t(dp) * pp * tp; // the verifier keeps it an int32
  if (world->size() != ranks)
    return error(NNCC_ERROR_INVALID_ARGUMENT,
                 format("module '%s' was compiled for %s, but this session's world has %d (%s): run it under "
                        "`mpirun -np %lld` with an MPI communicator",
                        module.path().c_str(), layoutText(dp, pp, tp).c_str(), world->size(), world->backend(),
                        (long long)ranks));
  bool needData = false, needTensor = false, needPipeline = false;
  for (int32_t e = 0; e < plan.num_entries; ++e)
    for (int32_t s = 0; s < plan.entries[e].num_steps; ++s) {
      const nncc_step &st = plan.entries[e].steps[s];
      if (st.kind != NNCC_STEP_COLLECTIVE)
        continue;
      int64_t group = st.iparams[NNCC_COLLECTIVE_GROUP];
      (group == NNCC_GROUP_TENSOR ? needTensor : group == NNCC_GROUP_PIPELINE ? needPipeline : needData) = true;
    }
  for (int32_t i = 0; i < m.num_states; ++i) {
    needTensor |= m.states[i].shard_parts > 1;
    needPipeline |= m.states[i].pipeline_stage >= 0;
  }
  ParallelGroups g;
  int32_t w = world->rank();
  int32_t d = w / (pp * tp);
  g.p = (w / tp) % pp;
  g.t = w % tp;
  // Each group is one of a kind: a single rank, the whole world, or a split.
  // Every rank decides alike, from the module, so the splits are called in
  // the same order everywhere.
  auto make = [&](bool needed, int32_t size, int color, int key, std::shared_ptr<Communicator> *group) -> Status {
    if (needed && size == world->size()) {
      *group = world;
      return Status::ok();
    }
    if (!needed || size == 1) {
      *group = std::make_shared<SelfCommunicator>();
      return Status::ok();
    }
    return world->split(color, key, group)
        .prefix(format("rank %d of %d (%s): making its parallel groups: ", world->rank(), world->size(),
                       world->backend()));
  };
  NNCC_RETURN_IF_ERROR(make(needData, dp, g.p * tp + g.t, d, &g.data));
  NNCC_RETURN_IF_ERROR(make(needTensor, tp, d * pp + g.p, g.t, &g.tensor));
  NNCC_RETURN_IF_ERROR(make(needPipeline, pp, d * tp + g.t, g.p, &g.pipeline));
  // Processes of one machine (NCCL's local communicator) need no check.
  if (needTensor && tp > 1 && std::strcmp(world->backend(), "mpi") == 0)
    NNCC_RETURN_IF_ERROR(warnAboutSplitTensorGroups(*world, tp));
  *out = std::move(g);
  return Status::ok();
}

void startHostCollective(const nncc_step &st, void *const *args, Communicator &comm, void *staging,
                         CollectiveRequest *r) {
  int64_t op = st.iparams[NNCC_COLLECTIVE_OP];
  int32_t k = collectiveBufferCount(st);
  // An all-gather's input is this rank's part of the staged output.
  int64_t offset = op == NNCC_COLLECTIVE_ALL_GATHER ? comm.rank() * st.args[0].bytes : 0;
  for (int32_t a = 0; a < k; ++a) {
    if (op != NNCC_COLLECTIVE_RECV)
      std::memcpy(static_cast<char *>(staging) + offset, args[a], static_cast<size_t>(st.args[a].bytes));
    offset += st.args[a].bytes;
  }
  using Op = CollectiveRequest::Op;
  r->op = op == NNCC_COLLECTIVE_SEND             ? Op::Send
          : op == NNCC_COLLECTIVE_RECV           ? Op::Recv
          : op == NNCC_COLLECTIVE_ALL_GATHER     ? Op::AllGather
          : op == NNCC_COLLECTIVE_REDUCE_SCATTER ? Op::ReduceScatterF32
          : op == NNCC_COLLECTIVE_BROADCAST      ? Op::Broadcast
                                                 : Op::AllReduceF32;
  r->data = staging;
  // All-gather: one rank's part; reduce-scatter: f32 of one rank's part.
  r->count = op == NNCC_COLLECTIVE_ALL_GATHER       ? st.args[0].bytes
             : op == NNCC_COLLECTIVE_REDUCE_SCATTER ? st.args[1].bytes / int64_t(sizeof(float))
             : op == NNCC_COLLECTIVE_ALL_REDUCE     ? offset / int64_t(sizeof(float))
                                                    : offset;
  r->mean = st.iparams[NNCC_COLLECTIVE_REDUCTION] == NNCC_REDUCTION_MEAN;
  r->peer = static_cast<int>(st.iparams[NNCC_COLLECTIVE_PEER]);
  r->root = r->peer;
  comm.start(r);
}

Status finishHostCollective(const nncc_step &st, void *const *args, Communicator &comm,
                            CollectiveRequest *r) {
  NNCC_RETURN_IF_ERROR(comm.wait(r));
  int64_t op = st.iparams[NNCC_COLLECTIVE_OP];
  if (op == NNCC_COLLECTIVE_SEND)
    return Status::ok();
  // Receive: args[0, k) themselves; the others: outputs args[k, 2k), from
  // the start of the staging (a reduce-scatter leaves its part there).
  int32_t k = collectiveBufferCount(st), first = op == NNCC_COLLECTIVE_RECV ? 0 : k;
  int64_t offset = 0;
  for (int32_t a = first; a < first + k; ++a) {
    std::memcpy(args[a], static_cast<const char *>(r->data) + offset, static_cast<size_t>(st.args[a].bytes));
    offset += st.args[a].bytes;
  }
  return Status::ok();
}

} // namespace nncc::rt
