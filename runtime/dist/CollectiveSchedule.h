//===- CollectiveSchedule.h - where a run waits for its collectives -------===//
//
// A session starts a collective step's reduction at the step and waits for
// it, unpacking the result into the step's outputs, only before the first
// later step that touches any byte of those outputs (or at the end of the
// run), so the reduction overlaps the steps in between. The plan needs no
// wait steps for this (nor a new module ABI): its buffer references say which
// steps touch what, and the memory planner keeps a value's bytes to itself
// from the step that defines it to its last reader, so no step in between
// reuses them. The inputs are free once packed into the staging buffer.
// A send (ABI v8) has no outputs: it is waited for, and completes, at the
// end of the run; a receive's outputs are its own buffers args[0, k).
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_DIST_COLLECTIVESCHEDULE_H
#define NNCC_RUNTIME_DIST_COLLECTIVESCHEDULE_H

#include "nncc/module_abi.h"

#include <cstdint>
#include <vector>

namespace nncc::rt {

/// Whether collective step `st` is a send or a receive: its buffers are
/// all inputs or all outputs, where the other collectives have args[0, k)
/// in and args[k, 2k) out.
inline bool isPointToPoint(const nncc_step &st) {
  int64_t op = st.iparams[NNCC_COLLECTIVE_OP];
  return op == NNCC_COLLECTIVE_SEND || op == NNCC_COLLECTIVE_RECV;
}

/// The buffers of collective step `st`'s bucket: k of args[0, k) (send,
/// receive: num_args; the others: num_args / 2).
inline int32_t collectiveBufferCount(const nncc_step &st) {
  return isPointToPoint(st) ? st.num_args : st.num_args / 2;
}

/// The staging bytes of collective step `st`: its inputs' or its outputs',
/// whichever are more (an all-gather's output is the group's parts).
inline int64_t collectiveStagingBytes(const nncc_step &st) {
  int32_t k = collectiveBufferCount(st);
  int64_t in = 0, out = 0;
  for (int32_t a = 0; a < st.num_args; ++a)
    (a < k ? in : out) += st.args[a].bytes;
  return in > out ? in : out;
}

/// Where an entry's collective steps stage and wait, found once when a
/// session is created.
struct CollectiveSchedule {
  /// Per step: its byte offset into the staging buffer and its slot (0, 1,
  /// ... in step order; -1 for other steps), the request a session keeps.
  std::vector<int64_t> stagingOffset;
  std::vector<int32_t> slot;
  /// The collective steps to wait for before step s are
  /// waits[waitsBegin[s], waitsBegin[s + 1]); s = the step count: at the end.
  std::vector<int32_t> waitsBegin, waits;
  int64_t stagingBytes = 0;
  int32_t collectives = 0;
};

/// The schedule of `entry`'s collective steps (verified).
CollectiveSchedule scheduleCollectives(const nncc_entry &entry);

} // namespace nncc::rt

#endif // NNCC_RUNTIME_DIST_COLLECTIVESCHEDULE_H
