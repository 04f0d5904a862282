//===- Checkpoint.h - a session's module state in a file ------------------===//
//
// A checkpoint holds every module state of a session (trained weights,
// optimizer buffers, the step count) by name, dtype and shape, so it loads
// into any module with the same state (recompiled for other targets, other
// precision or none of the training entries), and is refused, naming the
// difference, by one with other state. States fixed by the module's layout
// (NNCC_LAYOUT_STATE_PREFIX: a tensor-parallel rank's index) are not the
// model's: left out, and not expected. Layout (little-endian):
//   "NNCCCKP1", u32 version (1), u32 count,
//   per state: u32 name length, name, i32 dtype, i32 rank, i64 dims[rank],
//              i64 bytes, the bytes;
//   u64 FNV-1a 64 of everything before.
// Written to a temporary file renamed over the target when complete.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_CHECKPOINT_H
#define NNCC_RUNTIME_CHECKPOINT_H

#include "Session.h"
#include "Status.h"

namespace nncc::rt {

Status saveCheckpoint(Session &session, const char *path);
Status loadCheckpoint(Session &session, const char *path);

} // namespace nncc::rt

#endif // NNCC_RUNTIME_CHECKPOINT_H
