//===- Train.h - nncc-run --train: train_step over .npy data --------------===//
#ifndef NNCC_TOOLS_NNCC_RUN_TRAIN_H
#define NNCC_TOOLS_NNCC_RUN_TRAIN_H

#include "nncc/runtime.hpp"

#include <cstdint>
#include <string>

namespace nncc::tools {

struct TrainOptions {
  std::string dataDir;
  long steps = 0;  ///< 0: epochs x batches per epoch
  long epochs = 0; ///< 0: 1 (when steps is 0)
  double lr = 0.01;
  uint64_t seed = 0;
  bool shuffle = false;
  std::string lossFile; ///< one loss per line; empty: none
  /// Data parallel: this process is rank `rank` of `ranks`, each running
  /// train_step on its shard of every global batch (ranks x the compiled
  /// batch): rank r takes the r-th slice.
  int rank = 0, ranks = 1;
  /// Prints the progress lines (one rank of a process's ranks does).
  bool report = true;
};

/// Runs the module's `train_step` over the data in `o.dataDir`: one
/// `<input>.npy` per input of train_step but `lr` (the labels included),
/// samples along the first axis, cut into the compiled batch (step k takes
/// the k-th batch in file order, or in a permutation drawn per epoch from
/// `seed` with `shuffle`, wrapping at the end of an epoch). Prints a
/// progress line about ten times; throws nncc::Error naming the file at
/// fault (type, shape, too few samples, a label out of range).
void train(const nncc::Module &module, nncc::Session &session, const TrainOptions &o);

} // namespace nncc::tools

#endif // NNCC_TOOLS_NNCC_RUN_TRAIN_H
