//===- MpiCommunicator.cpp - the MPI backend, loaded at run time ----------===//
#include "Communicator.h"

#include "../SharedLibrary.h"

#include <dlfcn.h>
#include <mutex>
#include <type_traits>
#include <string>
#include <vector>

namespace nncc::rt {

namespace {

/// libnncc_mpi.so's functions (runtime/dist/mpi_shim.c).
struct MpiSymbols {
  int (*init)(int *rank, int *size, char *err, int errlen) = nullptr;
  int (*allReduceSumF32)(float *data, int64_t count, char *err, int errlen) = nullptr;
  int (*broadcast)(void *data, int64_t bytes, int root, char *err, int errlen) = nullptr;
  int (*barrier)(char *err, int errlen) = nullptr;
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
  get(s->broadcast, "nncc_mpi_broadcast");
  get(s->barrier, "nncc_mpi_barrier");
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

class MpiCommunicator final : public Communicator {
public:
  MpiCommunicator(const MpiSymbols &mpi, int rank, int size) : mpi_(mpi), rank_(rank), size_(size) {}
  ~MpiCommunicator() override { mpi_.finalize(); }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const char *backend() const override { return "mpi"; }

  Status allReduceF32(float *data, int64_t count, bool mean) override {
    char err[kErrBytes] = "";
    if (mpi_.allReduceSumF32(data, count, err, kErrBytes))
      return failed(err);
    if (mean && size_ > 1) {
      float scale = 1.0f / static_cast<float>(size_);
      for (int64_t i = 0; i < count; ++i)
        data[i] *= scale;
    }
    return Status::ok();
  }
  Status broadcast(void *data, int64_t bytes, int root) override {
    char err[kErrBytes] = "";
    return mpi_.broadcast(data, bytes, root, err, kErrBytes) ? failed(err) : Status::ok();
  }
  void abort(int code) override { mpi_.abort(code); }
  Status barrier() override {
    char err[kErrBytes] = "";
    return mpi_.barrier(err, kErrBytes) ? failed(err) : Status::ok();
  }

private:
  Status failed(const char *why) const {
    return error(NNCC_ERROR_INTERNAL, format("rank %d of %d (mpi): %s", rank_, size_, why));
  }
  MpiSymbols mpi_;
  int rank_, size_;
};

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
  int rank = 0, size = 0;
  char err[kErrBytes] = "";
  if (mpi.init(&rank, &size, err, kErrBytes))
    return error(NNCC_ERROR_UNAVAILABLE, std::string("cannot start MPI: ") + err);
  auto comm = std::make_shared<MpiCommunicator>(mpi, rank, size);
  world = comm;
  *out = comm;
  return Status::ok();
}

} // namespace nncc::rt
