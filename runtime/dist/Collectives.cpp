//===- Collectives.cpp ----------------------------------------------------===//
#include "Collectives.h"

#include "../Device.h"

#include <algorithm>
#include <cstring>

namespace nncc::rt {

Status checkCollectiveWorld(const Module &module, const nncc_plan &plan, const Communicator &comm) {
  for (int32_t e = 0; e < plan.num_entries; ++e)
    for (int32_t s = 0; s < plan.entries[e].num_steps; ++s) {
      const nncc_step &st = plan.entries[e].steps[s];
      if (st.kind != NNCC_STEP_COLLECTIVE)
        continue;
      int64_t group = st.iparams[NNCC_COLLECTIVE_GROUP_SIZE];
      if (group != comm.size())
        return error(NNCC_ERROR_INVALID_ARGUMENT,
                     format("module '%s' entry '%s' was compiled for %lld data-parallel ranks "
                            "(--parallel=dp:%lld), but this session's world has %d (%s): run it under "
                            "`mpirun -np %lld` with an MPI communicator",
                            module.path().c_str(), plan.entries[e].name, (long long)group, (long long)group,
                            comm.size(), comm.backend(), (long long)group));
    }
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
