//===- StepArgs.h - the addresses of a plan's step arguments --------------===//
//
// Every executor resolves each step argument (an nncc_buffer_ref) once, when
// a session is created: an arena or weight argument to its address on the
// device, an entry input or output to a patch that each run fills with the
// caller's buffer. One walk, so the CPU and CUDA executors read the plan's
// buffer references the same way.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_STEPARGS_H
#define NNCC_RUNTIME_STEPARGS_H

#include "nncc/module_abi.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nncc::rt {

/// An argument that is an entry input or output: each run sets
/// StepArgs::ptrs[slot] to the caller's buffer `index` plus `offset`.
struct ArgPatch {
  size_t slot;
  int32_t kind; // NNCC_BUFFER_INPUT or NNCC_BUFFER_OUTPUT
  int32_t index;
  int64_t offset;
};

/// The arguments of every step of one entry, back to back in step order.
/// `Ptr` is the device's address type (void * on the CPU, CUdeviceptr).
template <typename Ptr> struct StepArgs {
  std::vector<Ptr> ptrs;          // each argument's address; inputs and outputs are patched
  std::vector<int64_t> offsets;   // each argument's byte offset into its arena, weight blob or caller buffer
  std::vector<size_t> first;      // per step, the index of its first argument
  std::vector<ArgPatch> patches;  // the slots each run fills

  /// The addresses of step `s`'s arguments.
  Ptr *of(int32_t s) { return ptrs.data() + first[s]; }
};

/// Whether a session of pipeline stage `stage` holds module state `i`:
/// every state without pipeline parallelism, else the states of its own
/// stage and those every stage updates alike (nncc_state.pipeline_stage
/// -1). The plan of a stage touches no other (the verifier checks it).
inline bool holdsState(const nncc_module &m, int32_t i, int32_t stage) {
  int32_t owner = m.states[i].pipeline_stage;
  return m.pipeline_parallel <= 1 || owner < 0 || owner == stage;
}

/// Where each module state a session of pipeline stage `stage` holds
/// (holdsState) lives in its one state block: offsets 64-byte aligned, in
/// state order, -1 for a state it does not hold; `*total` the block's bytes.
inline std::vector<int64_t> stateOffsets(const nncc_module &m, int32_t stage, int64_t *total) {
  std::vector<int64_t> offsets;
  int64_t at = 0;
  for (int32_t i = 0; i < m.num_states; ++i) {
    offsets.push_back(holdsState(m, i, stage) ? at : -1);
    if (holdsState(m, i, stage))
      at += (m.states[i].bytes + 63) / 64 * 64;
  }
  *total = at;
  return offsets;
}

/// Resolves the step arguments of `entry` of module `m` for a session of
/// pipeline stage `stage`: `at(kind, offset)` is the address `offset` bytes
/// into the arena (NNCC_BUFFER_ARENA), the weight blob (NNCC_BUFFER_WEIGHT,
/// the weight's own offset included) or the session's state block
/// (NNCC_BUFFER_STATE, the state's offset from stateOffsets included). A
/// state the session does not hold resolves to a null address (offset -1):
/// only another stage's entry refers to one, and this session never runs it.
template <typename Ptr, typename At>
void resolveStepArgs(const nncc_module &m, int32_t stage, const nncc_entry &entry, At at, StepArgs<Ptr> *out) {
  int64_t stateBytes = 0;
  const std::vector<int64_t> stateOffset = stateOffsets(m, stage, &stateBytes);
  for (int32_t s = 0; s < entry.num_steps; ++s) {
    const nncc_step &st = entry.steps[s];
    out->first.push_back(out->ptrs.size());
    for (int32_t a = 0; a < st.num_args; ++a) {
      const nncc_buffer_ref &r = st.args[a];
      int64_t offset = r.kind == NNCC_BUFFER_WEIGHT  ? m.weights[r.index].offset + r.offset
                       : r.kind == NNCC_BUFFER_STATE ? stateOffset[r.index] + r.offset
                                                     : r.offset;
      Ptr p{};
      if (r.kind == NNCC_BUFFER_STATE && stateOffset[r.index] < 0)
        offset = -1;
      else if (r.kind == NNCC_BUFFER_ARENA || r.kind == NNCC_BUFFER_WEIGHT || r.kind == NNCC_BUFFER_STATE)
        p = at(r.kind, offset);
      else
        out->patches.push_back(ArgPatch{out->ptrs.size(), r.kind, r.index, r.offset});
      out->ptrs.push_back(p);
      out->offsets.push_back(offset);
    }
  }
}

} // namespace nncc::rt

#endif // NNCC_RUNTIME_STEPARGS_H
