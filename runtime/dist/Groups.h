//===- Groups.h - the parallel groups of a session's ranks ----------------===//
//
// A module laid out for D data-parallel times P pipeline stages times T
// tensor-parallel ranks (nncc_module.data_parallel, pipeline_parallel,
// tensor_parallel) runs on a world of D*P*T ranks; world rank w is
// (d, p, t) = (w / (P*T), (w / T) % P, w % T), so a tensor group is T
// consecutive ranks (one machine under mpirun's default mapping). A
// collective step runs over its group (NNCC_COLLECTIVE_GROUP): "data", the
// D ranks with the same p and t; "tensor", the T ranks with the same d and
// p; "pipeline", the P ranks with the same d and t, by stage. A session
// makes the group communicators its module needs when it is created
// (Communicator::split, a collective of the world, in the same order on
// every rank).
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_DIST_GROUPS_H
#define NNCC_RUNTIME_DIST_GROUPS_H

#include "../Module.h"
#include "Communicator.h"

#include <memory>

namespace nncc::rt {

/// The groups of one rank of a session.
struct ParallelGroups {
  int32_t t = 0; // this rank's index in its tensor group
  int32_t p = 0; // this rank's pipeline stage: the entries it runs
  /// Never null: a SelfCommunicator for a group of one (or one no step
  /// uses), the world itself when the group is the world.
  std::shared_ptr<Communicator> data, tensor, pipeline;
  /// The communicator of nncc_parallel_group `group`.
  Communicator &of(int64_t group) const { return *shared(group); }
  const std::shared_ptr<Communicator> &shared(int64_t group) const {
    return group == NNCC_GROUP_TENSOR ? tensor : group == NNCC_GROUP_PIPELINE ? pipeline : data;
  }
};

/// Checks that `world` has the module's D*P*T ranks (naming the layout and
/// the mpirun line when not) and makes the groups `plan` needs: a group its
/// collectives use, the tensor group when the module has sharded state
/// (reading it gathers the parts) and the pipeline group when it has state
/// of one stage (reading it takes that stage's value).
Status makeParallelGroups(const Module &module, const nncc_plan &plan, const std::shared_ptr<Communicator> &world,
                          ParallelGroups *out);

} // namespace nncc::rt

#endif // NNCC_RUNTIME_DIST_GROUPS_H
