//===- Groups.h - the parallel groups of a session's ranks ----------------===//
//
// A module laid out for D data-parallel times T tensor-parallel ranks
// (nncc_module.data_parallel, tensor_parallel) runs on a world of D*T ranks;
// world rank w is (d, t) = (w / T, w % T), so a tensor group is T
// consecutive ranks (one machine under mpirun's default mapping). A
// collective step runs over its group (NNCC_COLLECTIVE_GROUP): "data", the
// D ranks with the same t; "tensor", the T ranks with the same d. A session
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
  /// Never null: a SelfCommunicator for a group of one, the world itself
  /// when the group is the world.
  std::shared_ptr<Communicator> data, tensor;
  /// The communicator of nncc_parallel_group `group`.
  Communicator &of(int64_t group) const { return group == NNCC_GROUP_TENSOR ? *tensor : *data; }
  const std::shared_ptr<Communicator> &shared(int64_t group) const {
    return group == NNCC_GROUP_TENSOR ? tensor : data;
  }
};

/// Checks that `world` has the module's D*T ranks (naming the layout and
/// the mpirun line when not) and makes the groups `plan` needs: a group its
/// collectives use, and the tensor group when the module has sharded state
/// (reading it gathers the parts).
Status makeParallelGroups(const Module &module, const nncc_plan &plan, const std::shared_ptr<Communicator> &world,
                          ParallelGroups *out);

} // namespace nncc::rt

#endif // NNCC_RUNTIME_DIST_GROUPS_H
