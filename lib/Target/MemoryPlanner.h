#ifndef NNCC_LIB_TARGET_MEMORYPLANNER_H
#define NNCC_LIB_TARGET_MEMORYPLANNER_H

#include <cstdint>
#include <vector>

namespace nncc {

/// Arena buffers and weights start at multiples of this many bytes (a cache
/// line, one AVX-512 vector).
constexpr int64_t kArenaAlignment = 64;
inline int64_t alignToArena(int64_t bytes) {
  return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

/// A buffer of the arena, live from step `begin` to step `end` (inclusive).
struct LiveBuffer {
  int64_t bytes = 0;
  int64_t begin = 0, end = 0;
  int64_t offset = -1; ///< set by packBuffers
};

struct ArenaLayout {
  int64_t arenaBytes = 0;
  /// Sum of all buffers: the arena without reuse.
  int64_t noReuseBytes = 0;
  /// The most bytes live at one step: no packing can do better.
  int64_t liveLowerBound = 0;
};

/// Assigns every buffer an offset (aligned to `alignment`) so that buffers
/// live at the same step never overlap: largest first, each into the
/// best-fitting gap among the buffers it overlaps in time.
ArenaLayout packBuffers(std::vector<LiveBuffer> &buffers, int64_t alignment = kArenaAlignment);

} // namespace nncc

#endif // NNCC_LIB_TARGET_MEMORYPLANNER_H
