//===- ThreadPool.cpp -----------------------------------------------------===//
#include "ThreadPool.h"

#include <sched.h>

namespace nncc::rt {

int availableCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0)
      return n;
  }
  unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? static_cast<int>(n) : 1;
}

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < threads; ++i)
    workers_.emplace_back([this] { workerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread &t : workers_)
    t.join();
}

void ThreadPool::runTasks() {
  for (;;) {
    int64_t i = next_.fetch_add(1, std::memory_order_relaxed);
    if (i >= tasks_)
      return;
    fn_(context_, i);
    if (done_.fetch_add(1, std::memory_order_acq_rel) + 1 == tasks_) {
      std::lock_guard<std::mutex> lock(mutex_);
      finished_.notify_all();
    }
  }
}

void ThreadPool::workerLoop() {
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_)
      return;
    seen = generation_;
    ++busy_;
    lock.unlock();
    runTasks();
    lock.lock();
    if (--busy_ == 0)
      finished_.notify_all();
  }
}

void ThreadPool::parallelFor(int64_t tasks, TaskFn fn, void *context) {
  if (tasks <= 0)
    return;
  if (workers_.empty() || tasks == 1) {
    for (int64_t i = 0; i < tasks; ++i)
      fn(context, i);
    return;
  }
  {
    std::unique_lock<std::mutex> lock(mutex_);
    // A worker still leaving the previous job reads its fields; wait for it.
    finished_.wait(lock, [&] { return busy_ == 0; });
    fn_ = fn;
    context_ = context;
    tasks_ = tasks;
    next_.store(0, std::memory_order_relaxed);
    done_.store(0, std::memory_order_relaxed);
    ++generation_;
  }
  wake_.notify_all();
  runTasks();
  std::unique_lock<std::mutex> lock(mutex_);
  finished_.wait(lock, [&] { return done_.load(std::memory_order_acquire) == tasks; });
}

} // namespace nncc::rt
