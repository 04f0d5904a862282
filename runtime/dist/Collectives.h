//===- Collectives.h - collective steps on host memory --------------------===//
#ifndef NNCC_RUNTIME_DIST_COLLECTIVES_H
#define NNCC_RUNTIME_DIST_COLLECTIVES_H

#include "../Module.h"
#include "Communicator.h"

#include <vector>

namespace nncc::rt {

/// The f32 elements of the largest bucket of any collective step: the
/// staging buffer a session packs a bucket into, sized once.
int64_t collectiveStagingFloats(const nncc_plan &plan);

/// Runs collective step `st` (NNCC_STEP_COLLECTIVE, verified) whose buffers
/// are the host pointers `args`: inputs args[0, k) packed into `staging`,
/// reduced in one call, unpacked into the outputs args[k, 2k).
Status runHostCollective(const nncc_step &st, void *const *args, Communicator &comm, float *staging);

} // namespace nncc::rt

#endif // NNCC_RUNTIME_DIST_COLLECTIVES_H
