//===- Profiler.h - per-step timing and Chrome trace-event output ---------===//
//
// A session opened with a profile path (nncc_session_options.profile, or the
// NNCC_PROFILE environment variable) owns a Profiler. The executor times
// every plan step it runs and hands the times here; the profiler keeps
// per-step totals (nncc_session_profile_stats) and writes a Chrome
// trace-event JSON file that Perfetto and chrome://tracing open:
//
//   {"traceEvents":[
//     {"name":"process_name","ph":"M","pid":P,"tid":T,"args":{"name":"nncc: model.so"}},
//     {"name":"Add_0+Relu_1","cat":"kernel","ph":"X","ts":12.345,"dur":6.789,"pid":P,"tid":T,
//      "args":{"entry":"forward","step":0,"kernel":"add_relu","nodes":"Add_0+Relu_1",
//              "bytes":1056,"device":"cpu","chunks":8,"run":0}},
//     {"name":"forward","cat":"run","ph":"X",...,"args":{"entry":"forward","run":0,...}},
//   ...],
//   "displayTimeUnit":"ms","otherData":{...}}
//
// A collective step started asynchronously (the MPI communication thread)
// adds two events: a "communication" span on the thread that ran it, from
// its start to its completion, so the trace shows it beside the kernels it
// overlaps; and a "wait" span on the run's thread where the run waited for it
// (before the first step that touches its result, or at the end of the run).
//
// Records are fixed-size and go into a buffer reserved when the session
// opens, so a profiled run allocates nothing; they are formatted and written
// when the buffer fills (after a run, never during one) and when the session
// is destroyed, which also closes the JSON. The executor pays nothing when a
// session does not profile: it picks a profiled or an unprofiled copy of its
// step loop once per run.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_PROFILER_H
#define NNCC_RUNTIME_PROFILER_H

#include "Module.h"
#include "Status.h"

#include <cstdint>
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

namespace nncc::rt {

class Profiler {
public:
  /// The trace's clock: CLOCK_MONOTONIC in nanoseconds.
  static int64_t now() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
  }
  /// The calling thread's id (the trace's "tid").
  static int32_t threadId();

  /// Opens the trace file for a session. `path` is what the caller asked
  /// for; the n-th (n >= 1) session of this process to ask for the same path
  /// writes "name.n.ext" instead, so sessions never overwrite each other.
  static Status create(const Module &module, const nncc_plan &plan, const std::string &path,
                       const std::string &deviceName, int threads,
                       std::unique_ptr<Profiler> *out);
  ~Profiler();
  Profiler(const Profiler &) = delete;
  Profiler &operator=(const Profiler &) = delete;

  /// The file this profiler writes.
  const std::string &path() const { return path_; }
  bool enabled() const { return enabled_; }
  void setEnabled(bool on) { enabled_ = on; }

  /// Around one run of `entry` (the session calls these).
  void beginRun(int32_t entry);
  void endRun(bool ok);

  /// One executed step of the current run (the executor calls this).
  void recordStep(int32_t step, int64_t startNs, int64_t endNs, int64_t chunks) {
    Record &r = records_[count_++];
    r.start = startNs;
    r.end = endNs;
    r.run = runs_;
    r.entry = entry_;
    r.step = step;
    r.chunks = static_cast<int32_t>(chunks);
    r.tid = tid_;
    r.kind = Record::Step;
    stepStats_[entry_][static_cast<size_t>(step)].add(endNs - startNs);
  }

  /// Collective step `step` of the current run, started at `startNs` and
  /// completed at `doneNs` on thread `tid`, was waited for from `waitStartNs`
  /// to `waitEndNs` on the run's thread, before step `waitedBefore` (the
  /// entry's step count: at the end of the run).
  void recordCollective(int32_t step, int64_t startNs, int64_t doneNs, int32_t tid,
                        int32_t waitedBefore, int64_t waitStartNs, int64_t waitEndNs) {
    Record &c = records_[count_++];
    c = Record{startNs, doneNs, runs_, entry_, step, waitedBefore, tid, Record::Communication};
    Record &w = records_[count_++];
    w = Record{waitStartNs, waitEndNs, runs_, entry_, step, waitedBefore, tid_, Record::Wait};
  }

  struct Stat {
    int64_t calls = 0;
    int64_t totalNs = 0;
    int64_t minNs = 0, maxNs = 0;
    void add(int64_t ns) {
      minNs = calls == 0 || ns < minNs ? ns : minNs;
      maxNs = calls == 0 || ns > maxNs ? ns : maxNs;
      ++calls;
      totalNs += ns;
    }
  };
  /// Totals of step `step` of `entry`, or of its whole runs for step = -1.
  Stat stats(int32_t entry, int32_t step) const {
    return step < 0 ? runStats_[entry] : stepStats_[entry][static_cast<size_t>(step)];
  }

  /// Writes what is buffered and closes the JSON; later calls do nothing.
  /// Called by the destructor, and at process exit for sessions never
  /// destroyed.
  void finish();

private:
  Profiler() = default;
  struct Record {
    int64_t start, end, run;
    int32_t entry, step; // step -1: the run itself
    int32_t chunks;      // runs: 1 = ok, 0 = failed; communication and wait: the step waited before
    int32_t tid;
    enum Kind : int32_t { Step, Communication, Wait } kind;
  };
  void flush();
  void writeEvent(const Record &r);

  const Module *module_ = nullptr;
  const nncc_plan *plan_ = nullptr; // the session's: its steps are the ones timed
  std::string path_, deviceName_;
  int threads_ = 1;
  FILE *file_ = nullptr;
  bool enabled_ = true;
  int session_ = 0; // the process's n-th profiled session (thread names)
  int pid_ = 0;
  int32_t tid_ = 0;   // thread of the current run
  int32_t entry_ = 0; // entry of the current run
  int64_t runs_ = 0;  // completed profiled runs
  int64_t runStart_ = 0;
  std::vector<Record> records_; // fixed capacity
  size_t count_ = 0;
  size_t flushAt_ = 0; // flush after a run once count_ passes this
  std::vector<std::vector<Stat>> stepStats_;
  std::vector<Stat> runStats_;
  // Per step: the event's fixed JSON before "ts" and its fixed args.
  std::vector<std::vector<std::string>> stepHead_, stepArgs_;
  std::vector<std::string> runHead_, runArgs_;
  std::vector<int32_t> namedTids_; // threads given a thread_name event
  std::string line_;               // formatting scratch
};

} // namespace nncc::rt

#endif // NNCC_RUNTIME_PROFILER_H
