//===- ThreadPool.h - a small persistent fork-join pool -------------------===//
//
// Each CPU session owns one pool: `threads - 1` workers that sleep between
// steps, plus the calling thread, which always takes part (so threads = 1
// spawns nothing and runs everything inline). parallelFor hands out task
// indices through an atomic counter, so a slow or preempted thread does not
// hold the others back. One thread at a time may call parallelFor, which is
// what a session guarantees.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_CPU_THREADPOOL_H
#define NNCC_RUNTIME_CPU_THREADPOOL_H

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace nncc::rt {

class ThreadPool {
public:
  using TaskFn = void (*)(void *context, int64_t task);

  /// `threads` >= 1 counts the calling thread.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  /// Runs fn(context, i) for every i in [0, tasks) on the workers and the
  /// caller; returns when all have finished.
  void parallelFor(int64_t tasks, TaskFn fn, void *context);

private:
  void workerLoop();
  void runTasks();

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;     // workers: a new job or stop
  std::condition_variable finished_; // caller: job done / workers idle
  uint64_t generation_ = 0;          // bumped per job, under mutex_
  int busy_ = 0;                     // workers inside runTasks, under mutex_
  bool stop_ = false;

  // The current job: written under mutex_ while busy_ == 0.
  TaskFn fn_ = nullptr;
  void *context_ = nullptr;
  int64_t tasks_ = 0;
  std::atomic<int64_t> next_{0};
  std::atomic<int64_t> done_{0};
};

/// Cores this process may run on (its CPU affinity mask), at least 1.
int availableCores();

} // namespace nncc::rt

#endif // NNCC_RUNTIME_CPU_THREADPOOL_H
