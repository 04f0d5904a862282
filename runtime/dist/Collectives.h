//===- Collectives.h - collective steps on host memory --------------------===//
//
// A collective step (NNCC_STEP_COLLECTIVE) packs its bucket into its own
// region of a staging buffer (an all-gather's input at this rank's part of
// it, the region holding the larger of inputs and outputs) and starts the
// collective there, in place; the session waits for it, and unpacks the
// result, where its CollectiveSchedule says.
// A send packs the same way and is posted from the staging copy, so its
// buffers are free once it started; a receive lands in its staging region
// and is unpacked into its buffers at its wait.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_DIST_COLLECTIVES_H
#define NNCC_RUNTIME_DIST_COLLECTIVES_H

#include "../Module.h"
#include "CollectiveSchedule.h"
#include "Communicator.h"
#include "Groups.h"

namespace nncc::rt {

/// Packs collective step `st`'s inputs args[0, k) into `staging` (not for a
/// receive) and starts reducing, sending or receiving it over `comm` as `r`.
void startHostCollective(const nncc_step &st, void *const *args, Communicator &comm, void *staging,
                         CollectiveRequest *r);

/// Waits for `r` (started by startHostCollective for `st`) and unpacks the
/// result into the outputs: args[0, k) of a receive, none for a send,
/// args[k, 2k) for the others.
Status finishHostCollective(const nncc_step &st, void *const *args, Communicator &comm,
                            CollectiveRequest *r);

} // namespace nncc::rt

#endif // NNCC_RUNTIME_DIST_COLLECTIVES_H
