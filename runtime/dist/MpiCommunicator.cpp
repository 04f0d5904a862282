//===- MpiCommunicator.cpp - the MPI backend, loaded at run time ----------===//
#include "Communicator.h"

#include "../SharedLibrary.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace nncc::rt {

namespace {

/// libnncc_mpi.so's functions (runtime/dist/mpi_shim.c); `comm` is null for
/// the world or a handle of commSplit.
struct MpiSymbols {
  int (*init)(int wantThreads, int *rank, int *size, int *threaded, char *err, int errlen) = nullptr;
  int (*allReduceSumF32)(void *comm, float *data, int64_t count, char *err, int errlen) = nullptr;
  int (*allGather)(void *comm, void *data, int64_t bytes, char *err, int errlen) = nullptr;
  int (*reduceScatterSumF32)(void *comm, float *data, int64_t count, char *err, int errlen) = nullptr;
  int (*broadcast)(void *comm, void *data, int64_t bytes, int root, char *err, int errlen) = nullptr;
  int (*barrier)(void *comm, char *err, int errlen) = nullptr;
  int (*commSplit)(void *comm, int color, int key, void **out, int *rank, int *size, char *err,
                   int errlen) = nullptr;
  void (*commFree)(void *comm) = nullptr;
  int (*isend)(void *comm, const void *data, int64_t bytes, int peer, void **pending, char *err,
               int errlen) = nullptr;
  int (*waitSend)(void *pending, char *err, int errlen) = nullptr;
  int (*recv)(void *comm, void *data, int64_t bytes, int peer, char *err, int errlen) = nullptr;
  void (*finalize)() = nullptr;
  void (*abort)(int code) = nullptr;
};

void resolve(void *h, MpiSymbols *s, std::string *missing) {
  auto get = [&](auto &fn, const char *name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
    if (!fn)
      noteMissing(missing, name);
  };
  get(s->init, "nncc_mpi_init");
  get(s->allReduceSumF32, "nncc_mpi_allreduce_sum_f32");
  get(s->allGather, "nncc_mpi_allgather");
  get(s->reduceScatterSumF32, "nncc_mpi_reduce_scatter_sum_f32");
  get(s->broadcast, "nncc_mpi_broadcast");
  get(s->barrier, "nncc_mpi_barrier");
  get(s->commSplit, "nncc_mpi_comm_split");
  get(s->commFree, "nncc_mpi_comm_free");
  get(s->isend, "nncc_mpi_isend");
  get(s->waitSend, "nncc_mpi_wait_send");
  get(s->recv, "nncc_mpi_recv");
  get(s->finalize, "nncc_mpi_finalize");
  get(s->abort, "nncc_mpi_abort");
}

/// NNCC_MPI_LIBRARY, else libnncc_mpi.so next to this runtime, then the
/// loader's search path.
std::vector<std::string> candidates() {
  std::vector<std::string> out = pathsFromEnv("NNCC_MPI_LIBRARY");
  if (!out.empty())
    return out;
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&createMpiCommunicator), &info) && info.dli_fname) {
    std::string self = info.dli_fname;
    size_t slash = self.rfind('/');
    if (slash != std::string::npos)
      out.push_back(self.substr(0, slash + 1) + "libnncc_mpi.so");
  }
  out.push_back("libnncc_mpi.so");
  return out;
}

constexpr int kErrBytes = 512;

/// What the world and the communicators split from it share: the MPI
/// library and one communication thread with one queue. Collectives run
/// either on the calling thread (MPI_THREAD_FUNNELED, or
/// NNCC_SYNC_COLLECTIVES=1) or, asynchronously, on the communication thread
/// that takes started requests in order and makes the blocking MPI call for
/// each. Why a thread and not MPI_Iallreduce: Open MPI 4.1 has no
/// asynchronous progress ("OMPI progress: no" in ompi_info), so a
/// non-blocking collective only advances inside MPI calls, which the thread
/// running kernels does not make; the communication thread's blocking call
/// drives it to completion while the kernels run (PyTorch's MPI process group
/// does the same). Every MPI call goes through the thread, one at a time
/// (MPI_THREAD_SERIALIZED), so the blocking calls keep their order with the
/// started ones, over every communicator of the process: the ranks of a
/// plan start the same collectives in the same order, so one queue runs
/// them in an order every rank agrees on. Only abort calls MPI directly.
class MpiEngine {
public:
  MpiEngine(const MpiSymbols &mpi, bool threaded) : mpi(mpi), latency_(emulatedLatency()) {
    if (threaded)
      worker_ = std::thread([this] { serve(); });
  }
  ~MpiEngine() {
    if (worker_.joinable()) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
      }
      wake_.notify_one();
      worker_.join();
    }
    mpi.finalize();
  }

  bool threaded() const { return worker_.joinable(); }
  /// Whether MPI may be called here: on the worker, or without one.
  bool onWorker() const { return !worker_.joinable() || std::this_thread::get_id() == worker_.get_id(); }
  void start(CollectiveRequest *r) {
    r->startNs = Profiler::now();
    r->next = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      r->done = false;
      (tail_ ? tail_->next : head_) = r;
      tail_ = r;
    }
    wake_.notify_one();
  }
  Status wait(CollectiveRequest *r) {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [r] { return r->done; });
    return r->status;
  }

  /// Holds a started collective (not an internal MPI call) for
  /// NNCC_COLLECTIVE_DELAY_US before it runs, on the thread that runs it.
  void emulateLatency(const CollectiveRequest &r) const {
    if (latency_.count() > 0 && r.op != CollectiveRequest::Op::Call)
      std::this_thread::sleep_for(latency_);
  }

  const MpiSymbols mpi;

private:
  /// The communication thread: runs the started requests in order.
  void serve();
  /// NNCC_COLLECTIVE_DELAY_US: an interconnect slower than this machine's
  /// shared memory, emulated, to see how much communication a plan hides
  /// (and to make that visible on a host with no core to spare).
  static std::chrono::microseconds emulatedLatency() {
    const char *v = std::getenv("NNCC_COLLECTIVE_DELAY_US");
    return std::chrono::microseconds(v ? std::max(0L, std::strtol(v, nullptr, 10)) : 0L);
  }

  const std::chrono::microseconds latency_;

  std::mutex mutex_;
  std::condition_variable wake_, done_;
  CollectiveRequest *head_ = nullptr, *tail_ = nullptr; // started, not yet taken
  bool stop_ = false;
  std::thread worker_;
};

/// The world (handle null) or a communicator split from it.
class MpiCommunicator final : public Communicator {
public:
  MpiCommunicator(std::shared_ptr<MpiEngine> engine, void *handle, int rank, int size)
      : engine_(std::move(engine)), handle_(handle), rank_(rank), size_(size) {}
  ~MpiCommunicator() override {
    if (!handle_)
      return;
    void *handle = handle_;
    const MpiEngine &engine = *engine_;
    std::function<Status()> free = [&] {
      engine.mpi.commFree(handle);
      return Status::ok();
    };
    if (engine_->onWorker()) {
      (void)free();
      return;
    }
    CollectiveRequest r;
    r.op = CollectiveRequest::Op::Call;
    r.call = &free;
    (void)startAndWait(&r);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const char *backend() const override { return "mpi"; }
  bool asynchronous() const override { return engine_->threaded(); }

  Status allReduceF32(float *data, int64_t count, bool mean) override {
    if (engine_->onWorker())
      return allReduceHere(data, count, mean);
    CollectiveRequest r;
    r.data = data;
    r.count = count;
    r.mean = mean;
    return startAndWait(&r);
  }
  Status allGather(void *data, int64_t bytes) override {
    return onThread([&] {
      char err[kErrBytes] = "";
      return engine_->mpi.allGather(handle_, data, bytes, err, kErrBytes) ? failed(err) : Status::ok();
    });
  }
  Status reduceScatterF32(float *data, int64_t count, bool mean) override {
    return onThread([&] {
      char err[kErrBytes] = "";
      if (engine_->mpi.reduceScatterSumF32(handle_, data, count, err, kErrBytes))
        return failed(err);
      scaleForMean(data, count, mean);
      return Status::ok();
    });
  }
  Status broadcast(void *data, int64_t bytes, int root) override {
    if (engine_->onWorker()) {
      char err[kErrBytes] = "";
      return engine_->mpi.broadcast(handle_, data, bytes, root, err, kErrBytes) ? failed(err) : Status::ok();
    }
    CollectiveRequest r;
    r.op = CollectiveRequest::Op::Broadcast;
    r.data = data;
    r.count = bytes;
    r.root = root;
    return startAndWait(&r);
  }
  Status barrier() override {
    if (engine_->onWorker()) {
      char err[kErrBytes] = "";
      return engine_->mpi.barrier(handle_, err, kErrBytes) ? failed(err) : Status::ok();
    }
    CollectiveRequest r;
    r.op = CollectiveRequest::Op::Barrier;
    return startAndWait(&r);
  }
  void abort(int code) override { engine_->mpi.abort(code); }

  Status split(int color, int key, std::shared_ptr<Communicator> *out) override {
    void *handle = nullptr;
    int rank = 0, size = 0;
    char err[kErrBytes] = "";
    std::function<Status()> call = [&] {
      return engine_->mpi.commSplit(handle_, color, key, &handle, &rank, &size, err, kErrBytes) ? failed(err)
                                                                                                 : Status::ok();
    };
    if (engine_->onWorker()) {
      NNCC_RETURN_IF_ERROR(call());
    } else {
      CollectiveRequest r;
      r.op = CollectiveRequest::Op::Call;
      r.call = &call;
      NNCC_RETURN_IF_ERROR(startAndWait(&r));
    }
    *out = std::make_shared<MpiCommunicator>(engine_, handle, rank, size);
    return Status::ok();
  }

  /// Why sends and receives on the one communication thread cannot
  /// deadlock: a send only posts MPI_Isend (of the session's staging copy)
  /// and never blocks, so the thread blocks only in receives and
  /// collectives, which every rank reaches in its plan's order; a pipeline
  /// schedule (1F1B: stage 0 sends y0, y1, then receives dx0 while stage 1
  /// receives y0 and sends dx0) is a valid program when sends are buffered,
  /// which posting makes them, whatever the message size (a blocking
  /// MPI_Send above the eager limit would wait for the receiver and hang
  /// both stages). A send completes at its wait, which the session makes at
  /// the end of the run (a send has no outputs): finishSend queues
  /// MPI_Waitall behind every operation of the run, so no receive of the
  /// run waits behind it, and by then the peer has posted (or will post,
  /// in its own run's order) the matching receive. Blocking MPI calls
  /// progress the posted sends (Open MPI has no progress thread), so a
  /// large send moves while this thread waits in a receive or in the final
  /// wait. The plans must pair every send of a run with a receive of the
  /// peer's same run: a send left unmatched waits at the end forever.
  Status postSend(const void *data, int64_t bytes, int peer, void **pending) override {
    return onThread([&] {
      char err[kErrBytes] = "";
      return engine_->mpi.isend(handle_, data, bytes, peer, pending, err, kErrBytes) ? failed(err) : Status::ok();
    });
  }
  Status finishSend(void *pending) override {
    return onThread([&] {
      char err[kErrBytes] = "";
      return engine_->mpi.waitSend(pending, err, kErrBytes) ? failed(err) : Status::ok();
    });
  }
  Status recv(void *data, int64_t bytes, int peer) override {
    return onThread([&] {
      char err[kErrBytes] = "";
      return engine_->mpi.recv(handle_, data, bytes, peer, err, kErrBytes) ? failed(err) : Status::ok();
    });
  }

  void start(CollectiveRequest *r) override {
    if (!engine_->threaded()) {
      int64_t issued = Profiler::now();
      engine_->emulateLatency(*r);
      Communicator::start(r);
      r->startNs = issued;
      return;
    }
    r->owner = this;
    engine_->start(r);
  }
  Status wait(CollectiveRequest *r) override {
    if (engine_->threaded())
      (void)engine_->wait(r);
    return completeSend(r);
  }

  /// On the communication thread: runs `r` with the blocking calls.
  Status runHere(CollectiveRequest &r) {
    engine_->emulateLatency(r);
    return execute(r);
  }

private:
  /// Runs `call` where MPI may be called: here on the communication thread
  /// (or without one), else queued to it in order, waiting for it.
  template <typename F> Status onThread(F &&call) {
    if (engine_->onWorker())
      return call();
    std::function<Status()> fn = call;
    CollectiveRequest r;
    r.op = CollectiveRequest::Op::Call;
    r.call = &fn;
    return startAndWait(&r);
  }
  Status startAndWait(CollectiveRequest *r) {
    start(r);
    return wait(r);
  }
  Status allReduceHere(float *data, int64_t count, bool mean) {
    char err[kErrBytes] = "";
    if (engine_->mpi.allReduceSumF32(handle_, data, count, err, kErrBytes))
      return failed(err);
    scaleForMean(data, count, mean);
    return Status::ok();
  }
  /// A sum over the ranks made their mean.
  void scaleForMean(float *data, int64_t count, bool mean) const {
    if (!mean || size_ == 1)
      return;
    float scale = 1.0f / static_cast<float>(size_);
    for (int64_t i = 0; i < count; ++i)
      data[i] *= scale;
  }
  Status failed(const char *why) const {
    return error(NNCC_ERROR_INTERNAL,
                 format("rank %d of %d (mpi%s): %s", rank_, size_, handle_ ? ", a group" : "", why));
  }
  std::shared_ptr<MpiEngine> engine_;
  void *handle_; // null: the world
  int rank_, size_;
};

void MpiEngine::serve() {
  int32_t tid = Profiler::threadId();
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return head_ || stop_; });
    if (!head_)
      return; // stopped with nothing left
    CollectiveRequest *r = head_;
    head_ = r->next;
    if (!head_)
      tail_ = nullptr;
    lock.unlock();
    r->status = static_cast<MpiCommunicator *>(r->owner)->runHere(*r);
    r->doneNs = Profiler::now();
    r->tid = tid;
    lock.lock();
    r->done = true;
    done_.notify_all();
  }
}

/// NNCC_SYNC_COLLECTIVES=1 runs every collective on the session's thread,
/// before start returns: the synchronous baseline (docs/distributed.md).
bool syncRequested() {
  const char *v = std::getenv("NNCC_SYNC_COLLECTIVES");
  return v && std::strcmp(v, "1") == 0;
}

} // namespace

Status createMpiCommunicator(std::shared_ptr<Communicator> *out) {
  // One MPI world per process: every communicator shares it, and the last
  // one to go finalizes MPI.
  static std::mutex mutex;
  static std::weak_ptr<Communicator> world;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto existing = world.lock()) {
    *out = existing;
    return Status::ok();
  }
  MpiSymbols mpi;
  std::string tried;
  if (loadFirstWithSymbols(candidates(), resolve, &mpi, &tried).empty())
    return error(NNCC_ERROR_UNAVAILABLE,
                 "no MPI backend found (" + tried +
                     "); build nncc with Open MPI (libopenmpi-dev) or set NNCC_MPI_LIBRARY");
  int rank = 0, size = 0, threaded = 0;
  char err[kErrBytes] = "";
  if (mpi.init(syncRequested() ? 0 : 1, &rank, &size, &threaded, err, kErrBytes))
    return error(NNCC_ERROR_UNAVAILABLE, std::string("cannot start MPI: ") + err);
  auto comm = std::make_shared<MpiCommunicator>(std::make_shared<MpiEngine>(mpi, threaded != 0), nullptr, rank,
                                                size);
  world = comm;
  *out = comm;
  return Status::ok();
}

} // namespace nncc::rt
