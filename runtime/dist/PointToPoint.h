//===- PointToPoint.h - send/recv steps as rendezvous groups (NCCL) -------===//
//
// On a GPU a send or receive step is ncclSend/ncclRecv on the session's
// stream, and NCCL's point-to-point calls are a rendezvous: a send does not
// end before its peer's matching receive has started (no staging copy holds
// the message, unlike MPI_Isend on the CPU, docs/distributed.md), and the
// steps after it on the stream wait for it. On one stream two stages that
// both send first wait for each other forever; 1F1B does exactly that:
// stage 0 sends y1 and then receives dx0, while stage 1 sends dx0 and then
// receives y1. So a run of consecutive send/recv steps over one group is
// issued as one NCCL group (ncclGroupStart/End), whose calls progress
// together: stage 0's {send y1, recv dx0} meets stage 1's {send dx0,
// recv y1}. Only consecutive steps are grouped: moving a receive before a
// kernel could overwrite what the kernel reads (the arena reuses memory).
//
// Whether every stage then runs to its end depends on the compiler's plan
// order, which is in the module: checkPointToPointOrder plays every stage's
// variant of each entry against the others' before a CUDA session is made,
// and refuses a plan whose steps would wait for each other (naming them)
// instead of letting it hang on the GPU.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_DIST_POINTTOPOINT_H
#define NNCC_RUNTIME_DIST_POINTTOPOINT_H

#include "../Status.h"
#include "nncc/module_abi.h"

#include <vector>

namespace nncc::rt {

/// Whether `st` is a send or receive step.
bool isPointToPoint(const nncc_step &st);

/// Per step of `entry`: for the first send/recv step of a run of
/// consecutive ones over the same group, one past the run's last step; 0
/// for the run's later steps (issued with the first, in one NCCL group); -1
/// for every other step.
std::vector<int32_t> pointToPointRuns(const nncc_entry &entry);

/// Plays the send and receive steps over the pipeline group of every entry
/// of `plan` as the ranks of one pipeline run them at once (stage p its
/// variant; each pointToPointRuns run one group whose calls end when their
/// peers' matching calls have started; the n-th send from p to q pairs with
/// q's n-th receive from p). INVALID_MODULE when they do not pair up (a
/// count, or the bytes of a pair, differ); UNSUPPORTED, naming the steps
/// each stage would wait in, when they would wait for each other forever.
/// `device` is the session's, for messages.
Status checkPointToPointOrder(const nncc_module &m, const nncc_plan &plan, const std::string &device);

} // namespace nncc::rt

#endif // NNCC_RUNTIME_DIST_POINTTOPOINT_H
