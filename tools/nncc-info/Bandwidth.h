//===- Bandwidth.h - all-reduce bus bandwidth, as nccl-tests measures it --===//
//
// `nncc-info --bandwidth`: the time of an all-reduce of each message size
// over a communicator, and the two figures nccl-tests prints for it:
//   algbw = bytes / time
//   busbw = algbw * 2(n-1)/n
// busbw is what a ring all-reduce moves over each rank's busiest link, so it
// compares with the link's bandwidth whatever the number of ranks, and it is
// the input of the scaling model (docs/distributed.md, scripts/scaling_model.py).
// Only the runtime's C API is used, so nncc-info stays a runtime-only tool.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_TOOLS_NNCC_INFO_BANDWIDTH_H
#define NNCC_TOOLS_NNCC_INFO_BANDWIDTH_H

#include "nncc/runtime.h"

#include <cstdint>
#include <string>
#include <vector>

namespace nncc::info {

/// One message size's figures (the time averaged over the ranks).
struct BandwidthRow {
  int64_t bytes = 0;
  double us = 0;    // one all-reduce: the mean over the timed iterations
  double algbw = 0; // GB/s (1e9 bytes per second, as nccl-tests)
  double busbw = 0; // GB/s
};

/// "8,4K,1M,64M" (K, M, G are powers of 1024, as nccl-tests reads them):
/// each a positive multiple of 4 bytes (the messages are f32). On a bad
/// entry returns false and says which in `error`.
bool parseSizes(const std::string &text, std::vector<int64_t> *sizes, std::string *error);

/// algbw and busbw (GB/s) of `bytes` all-reduced in `seconds` by `ranks` ranks.
void bandwidthOf(int64_t bytes, double seconds, int ranks, double *algbw, double *busbw);

/// All-reduces (sum, in place) each size `warmup` times, then `iters` timed
/// times, between barriers; each rank's mean time per all-reduce is then
/// averaged over the ranks (as nccl-tests does). Every rank calls it with
/// the same arguments. False with `error` when a collective fails.
bool measureAllReduce(nncc_communicator *comm, const std::vector<int64_t> &sizes, int warmup,
                      int iters, std::vector<BandwidthRow> *rows, std::string *error);

/// The same over `gpus` local GPUs (cuda:0 .. cuda:gpus-1) with NCCL, one
/// process (nncc_communicator_create_nccl_local): each size's all-reduce of
/// device memory timed with CUDA events by every rank on a thread of its own
/// (nncc_communicator_time_all_reduce), averaged over the ranks. False with
/// `error` when NCCL cannot be loaded or a call fails; `*unavailable` tells
/// the first (a machine without NCCL: a skip, not a failure).
bool measureLocalGpus(int gpus, const std::vector<int64_t> &sizes, int warmup, int iters,
                      std::vector<BandwidthRow> *rows, std::string *error, bool *unavailable);

/// The table nncc-info prints: a header naming the backend and the ranks,
/// then one line per size.
std::string formatTable(const std::vector<BandwidthRow> &rows, const std::string &backend, int ranks,
                        int warmup, int iters);

} // namespace nncc::info

#endif // NNCC_TOOLS_NNCC_INFO_BANDWIDTH_H
