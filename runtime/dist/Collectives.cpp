//===- Collectives.cpp ----------------------------------------------------===//
#include "Collectives.h"

#include "../Device.h"

#include <algorithm>
#include <cstring>

namespace nncc::rt {

Status makeParallelGroups(const Module &module, const nncc_plan &plan, const std::shared_ptr<Communicator> &world,
                          ParallelGroups *out) {
  const nncc_module &m = module.abi();
  int32_t dp = m.data_parallel, tp = m.tensor_parallel;
  if (world->size() != dp * tp) {
    std::string layout = tp == 1   ? format("%d data-parallel ranks (--parallel=dp:%d)", dp, dp)
                         : dp == 1 ? format("%d tensor-parallel ranks (--parallel=tp:%d)", tp, tp)
                                   : format("%d ranks (--parallel=dp:%d,tp:%d: %d data- times %d tensor-parallel)",
                                            dp * tp, dp, tp, dp, tp);
    return error(NNCC_ERROR_INVALID_ARGUMENT,
                 format("module '%s' was compiled for %s, but this session's world has %d (%s): run it under "
                        "`mpirun -np %d` with an MPI communicator",
                        module.path().c_str(), layout.c_str(), world->size(), world->backend(), dp * tp));
  }
  bool needData = false, needTensor = false;
  for (int32_t e = 0; e < plan.num_entries; ++e)
    for (int32_t s = 0; s < plan.entries[e].num_steps; ++s) {
      const nncc_step &st = plan.entries[e].steps[s];
      if (st.kind == NNCC_STEP_COLLECTIVE)
        (st.iparams[NNCC_COLLECTIVE_GROUP] == NNCC_GROUP_TENSOR ? needTensor : needData) = true;
    }
  for (int32_t i = 0; i < m.num_states; ++i)
    needTensor |= m.states[i].shard_parts > 1;
  ParallelGroups g;
  int32_t d = world->rank() / tp;
  g.t = world->rank() % tp;
  // Each group is one of a kind: a single rank, the whole world, or a split
  // (only with both D and T above one). Every rank decides alike, from the
  // module, so the splits are called in the same order everywhere.
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
  NNCC_RETURN_IF_ERROR(make(needData, dp, g.t, d, &g.data));
  NNCC_RETURN_IF_ERROR(make(needTensor, tp, d, g.t, &g.tensor));
  *out = std::move(g);
  return Status::ok();
}

void startHostCollective(const nncc_step &st, void *const *args, Communicator &comm, void *staging,
                         CollectiveRequest *r) {
  int32_t k = st.num_args / 2;
  int64_t offset = 0;
  for (int32_t a = 0; a < k; ++a) {
    std::memcpy(static_cast<char *>(staging) + offset, args[a], static_cast<size_t>(st.args[a].bytes));
    offset += st.args[a].bytes;
  }
  r->op = CollectiveRequest::Op::AllReduceF32;
  r->data = staging;
  r->count = offset / int64_t(sizeof(float));
  r->mean = st.iparams[NNCC_COLLECTIVE_REDUCTION] == NNCC_REDUCTION_MEAN;
  comm.start(r);
}

Status finishHostCollective(const nncc_step &st, void *const *args, Communicator &comm,
                            CollectiveRequest *r) {
  NNCC_RETURN_IF_ERROR(comm.wait(r));
  int32_t k = st.num_args / 2;
  int64_t offset = 0;
  for (int32_t a = 0; a < k; ++a) {
    std::memcpy(args[k + a], static_cast<const char *>(r->data) + offset, static_cast<size_t>(st.args[a].bytes));
    offset += st.args[a].bytes;
  }
  return Status::ok();
}

} // namespace nncc::rt
