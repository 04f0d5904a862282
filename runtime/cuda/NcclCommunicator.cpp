//===- NcclCommunicator.cpp -----------------------------------------------===//
#include "NcclCommunicator.h"

#include "CudaDriver.h"
#include "Nccl.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>

namespace nncc::rt {

namespace {

/// ncclAvg (the mean the plans ask for) is NCCL 2.10's; ncclSend and
/// ncclRecv (send/recv steps), 2.7's, come with it.
constexpr int kMinNcclVersion = 21000;

Status loadNccl(const Nccl **out) {
  NNCC_RETURN_IF_ERROR(Nccl::get(out));
  if ((*out)->version() < kMinNcclVersion)
    return error(NNCC_ERROR_UNAVAILABLE,
                 format("NCCL %s is version %d; collective steps need NCCL 2.10 or newer (ncclAvg)",
                        (*out)->library().c_str(), (*out)->version()));
  return Status::ok();
}

/// Where the ranks of one process meet for host collectives: each rank
/// brings its buffer; the last to arrive combines them all (the others are
/// waiting, their buffers untouched by anyone else) and releases them.
class LocalGroup {
public:
  explicit LocalGroup(int size) : size_(size), buffers_(static_cast<size_t>(size)) {}

  /// `combine` sees every rank's buffer, by rank, once all have arrived.
  template <typename Combine> void meet(int rank, void *data, Combine combine) {
    std::unique_lock<std::mutex> lock(mutex_);
    uint64_t generation = generation_;
    buffers_[rank] = data;
    if (++arrived_ == size_) {
      combine(buffers_);
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return generation_ != generation; });
  }

private:
  int size_;
  std::mutex mutex_;
  std::condition_variable cv_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
  std::vector<void *> buffers_;
};

/// Rank i of a one-process NCCL world (ncclCommInitAll).
class NcclLocalCommunicator final : public Communicator {
public:
  NcclLocalCommunicator(std::shared_ptr<NcclRank> rank, std::shared_ptr<LocalGroup> group)
      : rank_(std::move(rank)), group_(std::move(group)) {}

  int rank() const override { return rank_->rank(); }
  int size() const override { return rank_->size(); }
  const char *backend() const override { return "nccl"; }
  const std::shared_ptr<NcclRank> &ncclRank() const { return rank_; }

  Status allReduceF32(float *data, int64_t count, bool mean) override {
    int n = size();
    group_->meet(rank(), data, [&](const std::vector<void *> &all) {
      // Summed in rank order into rank 0's buffer, then copied: every rank
      // gets the same bits.
      auto *sum = static_cast<float *>(all[0]);
      for (int r = 1; r < n; ++r)
        for (int64_t i = 0; i < count; ++i)
          sum[i] += static_cast<const float *>(all[r])[i];
      if (mean)
        for (int64_t i = 0; i < count; ++i)
          sum[i] *= 1.0f / static_cast<float>(n);
      for (int r = 1; r < n; ++r)
        std::memcpy(all[r], sum, static_cast<size_t>(count) * sizeof(float));
    });
    return Status::ok();
  }
  Status allGather(void *data, int64_t bytes) override {
    group_->meet(rank(), data, [&](const std::vector<void *> &all) {
      size_t part = static_cast<size_t>(bytes);
      for (size_t r = 0; r < all.size(); ++r)
        for (size_t from = 0; from < all.size(); ++from)
          if (r != from)
            std::memcpy(static_cast<char *>(all[r]) + from * part, static_cast<const char *>(all[from]) + from * part,
                        part);
    });
    return Status::ok();
  }
  Status reduceScatterF32(float *data, int64_t count, bool mean) override {
    int n = size();
    group_->meet(rank(), data, [&](const std::vector<void *> &all) {
      // Part r summed in rank order into part r of rank r's buffer (element
      // i written only after every rank's element i of part r is read),
      // then moved to its front.
      for (int r = 0; r < n; ++r)
        for (int64_t i = r * count; i < (r + 1) * count; ++i) {
          float sum = 0.0f;
          for (int from = 0; from < n; ++from)
            sum += static_cast<const float *>(all[from])[i];
          static_cast<float *>(all[r])[i] = mean ? sum * (1.0f / static_cast<float>(n)) : sum;
        }
      for (int r = 0; r < n; ++r)
        std::memmove(all[r], static_cast<float *>(all[r]) + r * count, static_cast<size_t>(count) * sizeof(float));
    });
    return Status::ok();
  }
  Status broadcast(void *data, int64_t bytes, int root) override {
    group_->meet(rank(), data, [&](const std::vector<void *> &all) {
      for (size_t r = 0; r < all.size(); ++r)
        if (static_cast<int>(r) != root)
          std::memcpy(all[r], all[root], static_cast<size_t>(bytes));
    });
    return Status::ok();
  }
  Status barrier() override {
    group_->meet(rank(), nullptr, [](const std::vector<void *> &) {});
    return Status::ok();
  }
  /// One process: NCCL's pending work of this rank ends, and the caller
  /// exits (as a world of one does).
  void abort(int) override { rank_->abort(); }

  /// ncclCommSplit, every rank from its own thread; the host collectives of
  /// the new communicators meet in groups agreed on over this one's.
  Status split(int color, int key, std::shared_ptr<Communicator> *out) override {
    const Nccl &nccl = rank_->nccl();
    std::string where = rank_->describe() + ": splitting it into parallel groups";
    if (!nccl.sym().ncclCommSplit)
      return error(NNCC_ERROR_UNSUPPORTED,
                   format("%s needs ncclCommSplit (NCCL 2.18 or newer), but %s is version %d: run one process "
                          "per GPU under mpirun instead of --devices",
                          where.c_str(), nccl.library().c_str(), nccl.version()));
    struct Ask {
      int color, key, rank;
      std::shared_ptr<LocalGroup> group;
      int newRank = 0, newSize = 0;
    } mine{color, key, rank(), nullptr};
    group_->meet(rank(), &mine, [](const std::vector<void *> &all) {
      // As MPI_Comm_split and ncclCommSplit: by color, then key, then rank.
      std::map<int, std::vector<Ask *>> byColor;
      for (void *a : all)
        byColor[static_cast<Ask *>(a)->color].push_back(static_cast<Ask *>(a));
      for (auto &[c, asks] : byColor) {
        std::sort(asks.begin(), asks.end(),
                  [](const Ask *a, const Ask *b) { return std::tie(a->key, a->rank) < std::tie(b->key, b->rank); });
        auto group = std::make_shared<LocalGroup>(static_cast<int>(asks.size()));
        for (size_t i = 0; i < asks.size(); ++i) {
          asks[i]->group = group;
          asks[i]->newRank = static_cast<int>(i);
          asks[i]->newSize = static_cast<int>(asks.size());
        }
      }
    });
    const CudaDriver *driver = nullptr;
    NNCC_RETURN_IF_ERROR(CudaDriver::get(&driver));
    CudaContextGuard ctx;
    NNCC_RETURN_IF_ERROR(driver->makeCurrent(rank_->device(), &ctx));
    ncclComm_t c = nullptr;
    NNCC_NCCL_CALL(nccl, where, ncclCommSplit, rank_->comm(), color, key, &c, nullptr);
    *out = std::make_shared<NcclLocalCommunicator>(
        std::make_shared<NcclRank>(nccl, c, rank_->device(), mine.newRank, mine.newSize), mine.group);
    return Status::ok();
  }

private:
  std::shared_ptr<NcclRank> rank_;
  std::shared_ptr<LocalGroup> group_;
};

/// Checks `devices` name distinct GPUs of this machine.
Status checkDevices(const CudaDriver &driver, const std::vector<int> &devices) {
  if (devices.empty())
    return error(NNCC_ERROR_INVALID_ARGUMENT, "a local NCCL communicator needs at least one device");
  for (size_t i = 0; i < devices.size(); ++i) {
    int d = devices[i];
    if (d < 0 || d >= driver.deviceCount())
      return error(NNCC_ERROR_UNAVAILABLE,
                   format("device cuda:%d does not exist (this machine has %d CUDA device%s)", d,
                          driver.deviceCount(), driver.deviceCount() == 1 ? "" : "s"));
    if (std::count(devices.begin(), devices.begin() + static_cast<long>(i), d))
      return error(NNCC_ERROR_INVALID_ARGUMENT,
                   format("device cuda:%d is listed twice: each rank needs a GPU of its own", d));
  }
  return Status::ok();
}

/// Bootstraps rank comm.rank() of comm.size() on cuda:device over `comm`.
Status bootstrap(Communicator &comm, int device, std::shared_ptr<NcclRank> *out) {
  const CudaDriver *driver = nullptr;
  NNCC_RETURN_IF_ERROR(CudaDriver::get(&driver));
  const Nccl *nccl = nullptr;
  NNCC_RETURN_IF_ERROR(loadNccl(&nccl));
  std::string where = format("rank %d of %d (%s), cuda:%d", comm.rank(), comm.size(), comm.backend(), device);
  ncclUniqueId id;
  std::memset(&id, 0, sizeof(id));
  if (comm.rank() == 0)
    NNCC_NCCL_CALL(*nccl, where, ncclGetUniqueId, &id);
  NNCC_RETURN_IF_ERROR(comm.broadcast(&id, sizeof(id), 0).prefix(where + ": sending NCCL's unique id: "));
  // NCCL takes the GPU from the current context.
  CudaContextGuard ctx;
  NNCC_RETURN_IF_ERROR(driver->makeCurrent(device, &ctx));
  ncclComm_t c = nullptr;
  NNCC_NCCL_CALL(*nccl, where, ncclCommInitRank, &c, comm.size(), id, comm.rank());
  *out = std::make_shared<NcclRank>(*nccl, c, device, comm.rank(), comm.size());
  return Status::ok();
}

} // namespace

NcclRank::~NcclRank() {
  // Its result is dropped: nothing can be done about it here (as with the
  // CUDA session's own teardown).
  if (!aborted_)
    nccl_.sym().ncclCommDestroy(comm_);
}

void NcclRank::abort() {
  if (!aborted_)
    nccl_.sym().ncclCommAbort(comm_);
  aborted_ = true;
}

std::string NcclRank::describe() const { return format("rank %d of %d (nccl, cuda:%d)", rank_, size_, device_); }

Status createNcclLocalCommunicators(const std::vector<int> &devices,
                                    std::vector<std::shared_ptr<Communicator>> *out) {
  const CudaDriver *driver = nullptr;
  NNCC_RETURN_IF_ERROR(CudaDriver::get(&driver));
  NNCC_RETURN_IF_ERROR(checkDevices(*driver, devices));
  const Nccl *nccl = nullptr;
  NNCC_RETURN_IF_ERROR(loadNccl(&nccl));
  int n = static_cast<int>(devices.size());
  std::vector<ncclComm_t> comms(devices.size(), nullptr);
  std::string list;
  for (int d : devices)
    list += (list.empty() ? "cuda:" : ",cuda:") + std::to_string(d);
  NNCC_NCCL_CALL(*nccl, "one-process NCCL world on " + list, ncclCommInitAll, comms.data(), n, devices.data());
  auto group = std::make_shared<LocalGroup>(n);
  out->clear();
  for (int r = 0; r < n; ++r)
    out->push_back(std::make_shared<NcclLocalCommunicator>(
        std::make_shared<NcclRank>(*nccl, comms[r], devices[r], r, n), group));
  return Status::ok();
}

Status ncclRankFor(const std::shared_ptr<Communicator> &comm, int device, std::shared_ptr<NcclRank> *out) {
  if (auto *local = dynamic_cast<NcclLocalCommunicator *>(comm.get())) {
    const std::shared_ptr<NcclRank> &rank = local->ncclRank();
    if (rank->device() != device)
      return error(NNCC_ERROR_INVALID_ARGUMENT,
                   format("the communicator of %s drives cuda:%d, but the session runs on cuda:%d: "
                          "open rank i's session on the i-th device of the communicator",
                          rank->describe().c_str(), rank->device(), device));
    *out = rank;
    return Status::ok();
  }
  // One NcclRank per (world, GPU), shared by the sessions of this process.
  struct Entry {
    std::weak_ptr<Communicator> world;
    std::weak_ptr<NcclRank> rank;
  };
  static std::mutex mutex;
  static std::map<std::pair<const Communicator *, int>, Entry> ranks;
  std::lock_guard<std::mutex> lock(mutex);
  Entry &entry = ranks[{comm.get(), device}];
  if (entry.world.lock() == comm)
    if ((*out = entry.rank.lock()))
      return Status::ok();
  NNCC_RETURN_IF_ERROR(bootstrap(*comm, device, out));
  entry = {comm, *out};
  return Status::ok();
}

namespace {

/// The device memory, stream and events of one timing, released on every path.
struct TimingResources {
  const CudaDriver &driver;
  CUdeviceptr data = 0;
  CUstream stream = nullptr;
  CUevent start = nullptr, stop = nullptr;
  ~TimingResources() {
    if (stream)
      driver.sym().cuStreamSynchronize(stream);
    if (start)
      driver.sym().cuEventDestroy(start);
    if (stop)
      driver.sym().cuEventDestroy(stop);
    if (stream)
      driver.sym().cuStreamDestroy(stream);
    if (data)
      driver.sym().cuMemFree(data);
  }
};

} // namespace

Status timeNcclAllReduce(Communicator &comm, int64_t bytes, int warmup, int iters, double *seconds) {
  auto *local = dynamic_cast<NcclLocalCommunicator *>(&comm);
  if (!local)
    return error(NNCC_ERROR_INVALID_ARGUMENT,
                 format("timing an NCCL all-reduce needs a rank of local GPUs "
                        "(nncc_communicator_create_nccl_local), not a '%s' communicator",
                        comm.backend()));
  if (bytes < 4 || bytes % 4 != 0 || iters < 1 || warmup < 0)
    return error(NNCC_ERROR_INVALID_ARGUMENT,
                 format("timing an NCCL all-reduce: %lld bytes (a positive multiple of 4), %d iterations "
                        "(at least 1), %d warm-up (at least 0)",
                        static_cast<long long>(bytes), iters, warmup));
  const NcclRank &rank = *local->ncclRank();
  const Nccl &nccl = rank.nccl();
  const CudaDriver *driver = nullptr;
  NNCC_RETURN_IF_ERROR(CudaDriver::get(&driver));
  CudaContextGuard guard;
  NNCC_RETURN_IF_ERROR(driver->makeCurrent(rank.device(), &guard));
  std::string where = "cuda:" + std::to_string(rank.device()) + " (" + rank.describe() + ")";
  TimingResources t{*driver};
  NNCC_CU_CALL(*driver, where, cuMemAlloc, &t.data, static_cast<size_t>(bytes));
  NNCC_CU_CALL(*driver, where, cuStreamCreate, &t.stream, 0);
  NNCC_CU_CALL(*driver, where, cuEventCreate, &t.start, 0);
  NNCC_CU_CALL(*driver, where, cuEventCreate, &t.stop, 0);
  // Zeros: their sum stays zero however often it is reduced.
  NNCC_CU_CALL(*driver, where, cuMemsetD8Async, t.data, 0, static_cast<size_t>(bytes), t.stream);
  auto *data = reinterpret_cast<void *>(t.data);
  size_t count = static_cast<size_t>(bytes) / sizeof(float);
  for (int i = 0; i < warmup; ++i)
    NNCC_NCCL_CALL(nccl, where, ncclAllReduce, data, data, count, ncclFloat32, ncclSum, rank.comm(), t.stream);
  NNCC_CU_CALL(*driver, where, cuEventRecord, t.start, t.stream);
  for (int i = 0; i < iters; ++i)
    NNCC_NCCL_CALL(nccl, where, ncclAllReduce, data, data, count, ncclFloat32, ncclSum, rank.comm(), t.stream);
  NNCC_CU_CALL(*driver, where, cuEventRecord, t.stop, t.stream);
  NNCC_CU_CALL(*driver, where, cuStreamSynchronize, t.stream);
  float ms = 0;
  NNCC_CU_CALL(*driver, where, cuEventElapsedTime, &ms, t.start, t.stop);
  *seconds = static_cast<double>(ms) * 1e-3 / iters;
  return Status::ok();
}

} // namespace nncc::rt
