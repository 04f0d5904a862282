//===- CollectiveSchedule.cpp ---------------------------------------------===//
#include "CollectiveSchedule.h"

#include <cstddef>

namespace nncc::rt {

namespace {

/// Whether two step arguments share a byte: the same arena, or the same
/// input, output or state, and overlapping ranges.
bool touches(const nncc_buffer_ref &a, const nncc_buffer_ref &b) {
  if (a.kind != b.kind || (a.kind != NNCC_BUFFER_ARENA && a.index != b.index))
    return false;
  return a.bytes > 0 && b.bytes > 0 && a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
}

/// The outputs of collective step `c`, args[begin, end): a receive's
/// args[0, k), none for a send, args[k, 2k) for the others.
void outputsOf(const nncc_step &st, int32_t *begin, int32_t *end) {
  int64_t op = st.iparams[NNCC_COLLECTIVE_OP];
  int32_t k = collectiveBufferCount(st);
  *begin = isPointToPoint(st) ? 0 : k;
  *end = op == NNCC_COLLECTIVE_SEND ? 0 : *begin + k;
}

/// The first step after collective step `c` with an argument that touches
/// one of its outputs; the step count when none does (always for a send).
int32_t firstToucher(const nncc_entry &entry, int32_t c) {
  const nncc_step &col = entry.steps[c];
  int32_t begin = 0, end = 0;
  outputsOf(col, &begin, &end);
  for (int32_t s = c + 1; s < entry.num_steps; ++s) {
    const nncc_step &st = entry.steps[s];
    for (int32_t a = 0; a < st.num_args; ++a)
      for (int32_t o = begin; o < end; ++o)
        if (touches(st.args[a], col.args[o]))
          return s;
  }
  return entry.num_steps;
}

} // namespace

CollectiveSchedule scheduleCollectives(const nncc_entry &entry) {
  CollectiveSchedule out;
  int32_t n = entry.num_steps;
  out.stagingOffset.assign(static_cast<size_t>(n), 0);
  out.slot.assign(static_cast<size_t>(n), -1);
  std::vector<std::vector<int32_t>> before(static_cast<size_t>(n) + 1);
  for (int32_t c = 0; c < n; ++c) {
    const nncc_step &st = entry.steps[c];
    if (st.kind != NNCC_STEP_COLLECTIVE)
      continue;
    out.stagingOffset[c] = out.stagingBytes;
    out.stagingBytes += collectiveStagingBytes(st);
    out.stagingBytes = (out.stagingBytes + 63) / 64 * 64; // each bucket on its own cache lines
    before[firstToucher(entry, c)].push_back(c);
    out.slot[c] = out.collectives++;
  }
  for (int32_t s = 0; s <= n; ++s) {
    out.waitsBegin.push_back(static_cast<int32_t>(out.waits.size()));
    out.waits.insert(out.waits.end(), before[s].begin(), before[s].end());
  }
  out.waitsBegin.push_back(static_cast<int32_t>(out.waits.size()));
  return out;
}

} // namespace nncc::rt
