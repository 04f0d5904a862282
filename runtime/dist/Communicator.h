//===- Communicator.h - collectives between the ranks of a job ------------===//
//
// What a session executes its collective steps with (NNCC_STEP_COLLECTIVE).
// A world of one rank needs no library (SelfCommunicator); the MPI backend
// lives in libnncc_mpi.so, loaded at run time (MpiCommunicator.cpp). NCCL on
// GPUs slots in behind the same interface.
//
// A session starts a bucket's all-reduce (start) and waits for it (wait)
// only before the first later step that touches its result, so the
// reduction overlaps the backward kernels in between (docs/distributed.md).
// Pipeline stages exchange activations and gradients point to point (Send,
// Recv): a send is posted and returns without waiting for its receiver, and
// completes at its wait (CollectiveRequest::pending).
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_DIST_COMMUNICATOR_H
#define NNCC_RUNTIME_DIST_COMMUNICATOR_H

#include "../Profiler.h"
#include "../Status.h"
#include "nncc/runtime.h"

#include <cstdint>
#include <functional>
#include <memory>

namespace nncc::rt {

class Communicator;

/// One collective started by Communicator::start and finished by wait. The
/// caller owns it (a session keeps one per collective step, so a run
/// allocates nothing) and leaves it and its data alone in between.
struct CollectiveRequest {
  /// Call: the backend runs `call` in the order of the collectives (how
  /// MPI splits a communicator on its communication thread).
  enum class Op { AllReduceF32, AllGather, ReduceScatterF32, Broadcast, Barrier, Call, Send, Recv };
  Op op = Op::AllReduceF32;
  void *data = nullptr;
  /// f32 elements (all-reduce; reduce-scatter: of one rank's part) or bytes
  /// (all-gather: of one rank's part; broadcast, send, recv).
  int64_t count = 0;
  bool mean = false; // all-reduce, reduce-scatter: divide the sum by the world's size
  int root = 0;      // broadcast
  int peer = 0;      // send, recv: the other side's rank in this communicator
  const std::function<Status()> *call = nullptr; // Op::Call
  /// Send: the backend's handle of the posted send, completed by wait
  /// (postSend/finishSend); null once completed or when posting failed.
  void *pending = nullptr;
  // Set by the communicator: the outcome, when the collective was started
  // and when it completed (Profiler::now's clock) and the thread it ran on.
  Status status;
  int64_t startNs = 0, doneNs = 0;
  int32_t tid = 0;
  // The communicator's own: completion flag, its queue link and the
  // communicator that runs it.
  bool done = false;
  CollectiveRequest *next = nullptr;
  Communicator *owner = nullptr;
};

class Communicator {
public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// `data` (`count` f32, host memory) becomes its sum over the ranks, or
  /// the mean with `mean`; every rank calls it in the same order.
  virtual Status allReduceF32(float *data, int64_t count, bool mean) = 0;
  /// `data` (host memory) holds size() parts of `bytes`, this rank's own at
  /// part rank(); every part becomes that rank's (in place, as MPI_IN_PLACE).
  virtual Status allGather(void *data, int64_t bytes) = 0;
  /// `data` holds size() parts of `count` f32; the first `count` become part
  /// rank() of their sum over the ranks (the mean with `mean`), the rest is
  /// scratch (in place, as MPI_Reduce_scatter_block's MPI_IN_PLACE).
  virtual Status reduceScatterF32(float *data, int64_t count, bool mean) = 0;
  /// `bytes` of `data` on every rank become rank `root`'s.
  virtual Status broadcast(void *data, int64_t bytes, int root) = 0;
  virtual Status barrier() = 0;
  /// Ends every process of the job with exit status `code` (a failed rank
  /// must not leave the others waiting in a collective); a world of one
  /// returns and lets the caller exit.
  virtual void abort(int code) = 0;
  /// "self", "mpi": for messages.
  virtual const char *backend() const = 0;
  /// The ranks of this communicator with the same `color`, ordered by
  /// `key` (then by rank): a communicator of their own, as MPI_Comm_split.
  /// Every rank calls it in the same order (a collective). Its collectives
  /// keep their order with this communicator's (one stream of work per
  /// process), so a plan's steps over several groups run in plan order.
  virtual Status split(int color, int key, std::shared_ptr<Communicator> *out) = 0;

  /// Point to point, in this communicator's order like the collectives:
  /// posts `bytes` of `data` to rank `peer` and returns without waiting for
  /// the receiver (*pending: the handle finishSend completes; `data` must
  /// stay unchanged until then). Sends and receives between two ranks pair
  /// up in the order they are made.
  virtual Status postSend(const void *data, int64_t bytes, int peer, void **pending) {
    (void)data, (void)bytes, (void)peer, (void)pending;
    return noPointToPoint();
  }
  /// Blocks until the send of postSend's `pending` has completed.
  virtual Status finishSend(void *pending) {
    (void)pending;
    return noPointToPoint();
  }
  /// Receives `bytes` from rank `peer` into `data`; blocks until they came.
  virtual Status recv(void *data, int64_t bytes, int peer) {
    (void)data, (void)bytes, (void)peer;
    return noPointToPoint();
  }

  /// Starts `r`; collectives run in the order they are started (with the
  /// blocking calls above), the same on every rank. This default runs it to
  /// completion before returning; an asynchronous backend returns at once.
  virtual void start(CollectiveRequest *r) {
    r->startNs = Profiler::now();
    r->status = execute(*r);
    r->doneNs = Profiler::now();
    r->tid = Profiler::threadId();
    r->done = true;
  }
  /// Blocks until `r` (started) has completed; its outcome. A send
  /// completes here (its start only posted it).
  virtual Status wait(CollectiveRequest *r) { return completeSend(r); }
  /// Whether start returns before the collective completes.
  virtual bool asynchronous() const { return false; }

protected:
  /// Runs `r` with the blocking calls.
  Status execute(CollectiveRequest &r) {
    switch (r.op) {
    case CollectiveRequest::Op::AllReduceF32:
      return allReduceF32(static_cast<float *>(r.data), r.count, r.mean);
    case CollectiveRequest::Op::AllGather:
      return allGather(r.data, r.count);
    case CollectiveRequest::Op::ReduceScatterF32:
      return reduceScatterF32(static_cast<float *>(r.data), r.count, r.mean);
    case CollectiveRequest::Op::Broadcast:
      return broadcast(r.data, r.count, r.root);
    case CollectiveRequest::Op::Barrier:
      return barrier();
    case CollectiveRequest::Op::Call:
      return (*r.call)();
    case CollectiveRequest::Op::Send:
      return postSend(r.data, r.count, r.peer, &r.pending);
    case CollectiveRequest::Op::Recv:
      return recv(r.data, r.count, r.peer);
    }
    return error(NNCC_ERROR_INTERNAL, "unknown collective");
  }
  /// `r`'s outcome, after finishing its send when it posted one.
  Status completeSend(CollectiveRequest *r) {
    if (!r->status.isOk() || r->op != CollectiveRequest::Op::Send || !r->pending)
      return r->status;
    void *pending = r->pending;
    r->pending = nullptr;
    r->status = finishSend(pending);
    return r->status;
  }
  Status noPointToPoint() const {
    return error(NNCC_ERROR_UNSUPPORTED,
                 format("the %s communicator has no point-to-point send/recv for a CPU session (pipeline "
                        "parallelism runs over MPI on the CPU target, over NCCL in CUDA sessions)",
                        backend()));
  }
};

/// A world of one rank: every collective is the identity.
class SelfCommunicator final : public Communicator {
public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  Status allReduceF32(float *, int64_t, bool) override { return Status::ok(); }
  Status allGather(void *, int64_t) override { return Status::ok(); }
  Status reduceScatterF32(float *, int64_t, bool) override { return Status::ok(); }
  Status broadcast(void *, int64_t, int) override { return Status::ok(); }
  Status barrier() override { return Status::ok(); }
  void abort(int) override {}
  const char *backend() const override { return "self"; }
  Status split(int, int, std::shared_ptr<Communicator> *out) override {
    *out = std::make_shared<SelfCommunicator>();
    return Status::ok();
  }
  Status postSend(const void *, int64_t, int peer, void **) override { return noPeer(peer); }
  Status finishSend(void *) override { return Status::ok(); }
  Status recv(void *, int64_t, int peer) override { return noPeer(peer); }

private:
  static Status noPeer(int peer) {
    return error(NNCC_ERROR_INVALID_ARGUMENT,
                 format("send/recv with rank %d of a group of one rank, which has no peer", peer));
  }
};

/// The world of the processes mpirun started, through libnncc_mpi.so
/// (NNCC_MPI_LIBRARY=path replaces the search: next to libnncc_runtime,
/// then the loader's path). MPI is initialized once per process and
/// finalized when the last communicator goes. Collectives run on a
/// communication thread, so start returns at once, when MPI provides
/// MPI_THREAD_SERIALIZED or more and NNCC_SYNC_COLLECTIVES is not set to 1
/// (then start runs the collective before it returns).
Status createMpiCommunicator(std::shared_ptr<Communicator> *out);

/// The communicator behind a C handle (RuntimeC.cpp).
std::shared_ptr<Communicator> communicatorOf(nncc_communicator *handle);

} // namespace nncc::rt

#endif // NNCC_RUNTIME_DIST_COMMUNICATOR_H
