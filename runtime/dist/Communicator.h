//===- Communicator.h - collectives between the ranks of a job ------------===//
//
// What a session executes its collective steps with (NNCC_STEP_COLLECTIVE).
// A world of one rank needs no library (SelfCommunicator); the MPI backend
// lives in libnncc_mpi.so, loaded at run time (MpiCommunicator.cpp). NCCL on
// GPUs slots in behind the same interface.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_DIST_COMMUNICATOR_H
#define NNCC_RUNTIME_DIST_COMMUNICATOR_H

#include "../Status.h"
#include "nncc/runtime.h"

#include <cstdint>
#include <memory>

namespace nncc::rt {

class Communicator {
public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// `data` (`count` f32, host memory) becomes its sum over the ranks, or
  /// the mean with `mean`; every rank calls it in the same order.
  virtual Status allReduceF32(float *data, int64_t count, bool mean) = 0;
  /// `bytes` of `data` on every rank become rank `root`'s.
  virtual Status broadcast(void *data, int64_t bytes, int root) = 0;
  virtual Status barrier() = 0;
  /// Ends every process of the job with exit status `code` (a failed rank
  /// must not leave the others waiting in a collective); a world of one
  /// returns and lets the caller exit.
  virtual void abort(int code) = 0;
  /// "self", "mpi": for messages.
  virtual const char *backend() const = 0;
};

/// A world of one rank: every collective is the identity.
class SelfCommunicator final : public Communicator {
public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  Status allReduceF32(float *, int64_t, bool) override { return Status::ok(); }
  Status broadcast(void *, int64_t, int) override { return Status::ok(); }
  Status barrier() override { return Status::ok(); }
  void abort(int) override {}
  const char *backend() const override { return "self"; }
};

/// The world of the processes mpirun started, through libnncc_mpi.so
/// (NNCC_MPI_LIBRARY=path replaces the search: next to libnncc_runtime,
/// then the loader's path). MPI is initialized once per process and
/// finalized when the last communicator goes.
Status createMpiCommunicator(std::shared_ptr<Communicator> *out);

/// The communicator behind a C handle (RuntimeC.cpp).
std::shared_ptr<Communicator> communicatorOf(nncc_communicator *handle);

} // namespace nncc::rt

#endif // NNCC_RUNTIME_DIST_COMMUNICATOR_H
