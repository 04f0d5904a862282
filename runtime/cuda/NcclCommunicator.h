//===- NcclCommunicator.h - NCCL communicators for CUDA sessions ----------===//
//
// A CUDA session runs its collective steps with ncclAllReduce on its own
// stream, over the NCCL communicator of its rank and GPU (NcclRank). That
// communicator comes from the session's Communicator in one of two ways:
//   - many processes (mpirun, one GPU each): the session's communicator is
//     MPI's world; rank 0 makes the NCCL unique id, the world broadcasts it
//     and every rank joins with ncclCommInitRank on its session's GPU. One
//     NcclRank per (world, GPU) is shared by the sessions that use it.
//   - one process, several local GPUs: createNcclLocalCommunicators makes
//     one Communicator per GPU (ncclCommInitAll), each a rank of its own;
//     a session on that GPU takes that communicator, and the sessions run
//     together, one thread each.
// nccl.h stays out of this header: RuntimeC.cpp includes it.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_CUDA_NCCLCOMMUNICATOR_H
#define NNCC_RUNTIME_CUDA_NCCLCOMMUNICATOR_H

#include "../dist/Communicator.h"

#include <memory>
#include <string>
#include <vector>

struct ncclComm;

namespace nncc::rt {

class Nccl;

/// One rank's NCCL communicator, on one GPU; destroyed (ncclCommDestroy)
/// with the last session or communicator holding it.
class NcclRank {
public:
  NcclRank(const Nccl &nccl, ncclComm *comm, int device, int rank, int size)
      : nccl_(nccl), comm_(comm), device_(device), rank_(rank), size_(size) {}
  ~NcclRank();
  NcclRank(const NcclRank &) = delete;
  NcclRank &operator=(const NcclRank &) = delete;

  const Nccl &nccl() const { return nccl_; }
  ncclComm *comm() const { return comm_; }
  int device() const { return device_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  /// "rank 1 of 2 (nccl, cuda:1)": for messages.
  std::string describe() const;
  /// ncclCommAbort: ends this rank's pending NCCL work (a failed or hung
  /// peer); the communicator is unusable after.
  void abort();
  bool aborted() const { return aborted_; }

private:
  const Nccl &nccl_;
  ncclComm *comm_;
  int device_, rank_, size_;
  bool aborted_ = false;
};

/// One communicator per GPU of `devices` (CUDA indices, distinct), rank i
/// driving cuda:devices[i], all in this process (ncclCommInitAll). Their
/// host collectives (allReduceF32, broadcast, barrier) meet in this process
/// too: call them from one thread per rank.
Status createNcclLocalCommunicators(const std::vector<int> &devices,
                                    std::vector<std::shared_ptr<Communicator>> *out);

/// The NCCL communicator a CUDA session on cuda:`device` runs collective
/// steps over, for its session communicator `comm` (size > 1): a local
/// communicator's own (refused on another GPU), or one bootstrapped over
/// `comm` (MPI) as above. Every rank calls it in the same order.
Status ncclRankFor(const std::shared_ptr<Communicator> &comm, int device,
                   std::shared_ptr<NcclRank> *out);

/// Seconds per ncclAllReduce (f32, sum, in place) of `bytes` of device
/// memory on the GPU of `comm`, a rank of createNcclLocalCommunicators:
/// `warmup` untimed, then `iters` between two CUDA events on a stream of its
/// own (nccl-tests' measurement; nncc-info --bandwidth). Call it from one
/// thread per rank, every rank with the same arguments.
Status timeNcclAllReduce(Communicator &comm, int64_t bytes, int warmup, int iters, double *seconds);

} // namespace nncc::rt

#endif // NNCC_RUNTIME_CUDA_NCCLCOMMUNICATOR_H
