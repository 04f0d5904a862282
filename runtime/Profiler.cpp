//===- Profiler.cpp -------------------------------------------------------===//
#include "Profiler.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <sys/syscall.h>
#include <unistd.h>

namespace nncc::rt {

namespace {

/// Records buffered before they are written (40 bytes each).
constexpr size_t kFlushRecords = 1 << 16;

/// Process-wide state: trace paths handed out, live profilers (finished at
/// exit if never destroyed), the time origin of every trace of the process.
/// Leaked on purpose, so that a session destroyed during static destruction
/// still finds it.
struct Registry {
  std::mutex mutex;
  std::map<std::string, int> pathUses;
  std::set<Profiler *> live;
  int sessions = 0;
  int64_t epoch = 0;
};

Registry &registry() {
  static Registry *r = [] {
    auto *reg = new Registry();
    reg->epoch = Profiler::now();
    std::atexit([] {
      Registry &g = registry();
      std::lock_guard<std::mutex> lock(g.mutex);
      for (Profiler *p : g.live)
        p->finish();
    });
    return reg;
  }();
  return *r;
}

/// "trace.json" -> "trace.<n>.json"; "trace" -> "trace.<n>".
std::string numberedPath(const std::string &path, int n) {
  size_t slash = path.rfind('/');
  size_t dot = path.rfind('.');
  bool hasExt = dot != std::string::npos && dot > 0 &&
                (slash == std::string::npos || dot > slash + 1);
  std::string num = "." + std::to_string(n);
  return hasExt ? path.substr(0, dot) + num + path.substr(dot) : path + num;
}

/// Length of the valid UTF-8 sequence at s (of n bytes left), or 0.
size_t utf8Length(const unsigned char *s, size_t n) {
  unsigned char c = s[0];
  size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (len == 0 || len > n)
    return 0;
  for (size_t i = 1; i < len; ++i)
    if ((s[i] & 0xC0) != 0x80)
      return 0;
  if (len == 2 && c < 0xC2)
    return 0; // overlong
  if (len == 3) {
    unsigned cp = ((c & 0x0F) << 12) | ((s[1] & 0x3F) << 6) | (s[2] & 0x3F);
    if (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))
      return 0;
  }
  if (len == 4) {
    unsigned cp = ((c & 0x07) << 18) | ((s[1] & 0x3F) << 12) | ((s[2] & 0x3F) << 6) |
                  (s[3] & 0x3F);
    if (cp < 0x10000 || cp > 0x10FFFF)
      return 0;
  }
  return len;
}

/// A JSON string literal (quotes included). Names come from the module, so
/// anything may be in them: control characters are escaped and bytes that
/// are not UTF-8 become U+FFFD, which keeps the file valid JSON.
std::string quote(const char *s) {
  std::string out = "\"";
  if (!s)
    s = "";
  const auto *p = reinterpret_cast<const unsigned char *>(s);
  size_t n = std::strlen(s);
  for (size_t i = 0; i < n;) {
    unsigned char c = p[i];
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
      ++i;
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
      ++i;
    } else if (size_t len = utf8Length(p + i, n - i)) {
      out.append(s + i, len);
      i += len;
    } else {
      out += "\\ufffd";
      ++i;
    }
  }
  return out + "\"";
}

const char *kindName(int32_t kind) {
  switch (kind) {
  case NNCC_STEP_KERNEL: return "kernel";
  case NNCC_STEP_GEMM: return "gemm";
  case NNCC_STEP_COPY: return "copy";
  case NNCC_STEP_COLLECTIVE: return "collective";
  }
  return "unknown";
}

std::string baseName(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

} // namespace

int32_t Profiler::threadId() {
  thread_local int32_t tid = static_cast<int32_t>(syscall(SYS_gettid));
  return tid;
}

Status Profiler::create(const Module &module, const nncc_plan &plan, const std::string &requested,
                        const std::string &deviceName, int threads,
                        std::unique_ptr<Profiler> *out) {
  Registry &reg = registry();
  std::string path;
  int session;
  {
    std::lock_guard<std::mutex> lock(reg.mutex);
    int uses = reg.pathUses[requested]++;
    path = uses == 0 ? requested : numberedPath(requested, uses);
    session = reg.sessions++;
  }
  FILE *f = std::fopen(path.c_str(), "w");
  if (!f)
    return error(NNCC_ERROR_INVALID_ARGUMENT,
                 "cannot open profile file '" + path + "': " + std::strerror(errno));

  std::unique_ptr<Profiler> p(new Profiler());
  p->module_ = &module;
  p->plan_ = &plan;
  p->path_ = path;
  p->deviceName_ = deviceName;
  p->threads_ = threads;
  p->file_ = f;
  p->pid_ = static_cast<int>(getpid());

  const nncc_module &m = module.abi();
  size_t maxRecords = 0; // of one run
  p->stepStats_.resize(static_cast<size_t>(plan.num_entries));
  p->runStats_.resize(static_cast<size_t>(plan.num_entries));
  p->stepHead_.resize(static_cast<size_t>(plan.num_entries));
  p->stepArgs_.resize(static_cast<size_t>(plan.num_entries));
  std::string device = quote(deviceName.c_str());
  for (int32_t e = 0; e < plan.num_entries; ++e) {
    const nncc_entry &entry = plan.entries[e];
    std::string entryName = quote(entry.name);
    size_t collectives = 0;
    for (int32_t s = 0; s < entry.num_steps; ++s)
      collectives += entry.steps[s].kind == NNCC_STEP_COLLECTIVE;
    maxRecords = std::max(maxRecords, static_cast<size_t>(entry.num_steps) + 2 * collectives + 1);
    p->stepStats_[e].resize(static_cast<size_t>(entry.num_steps));
    p->runHead_.push_back("{\"name\":" + entryName + ",\"cat\":\"run\",\"ph\":\"X\",");
    p->runArgs_.push_back("\"entry\":" + entryName + ",\"steps\":" +
                          std::to_string(entry.num_steps) + ",\"device\":" + device);
    for (int32_t s = 0; s < entry.num_steps; ++s) {
      const nncc_step &st = entry.steps[s];
      const char *kernel = st.kind == NNCC_STEP_KERNEL ? m.kernels[st.kernel].name : "";
      bool named = st.name && *st.name;
      // Named after the ONNX nodes; else the kernel; else the step's kind.
      const char *name = named ? st.name : *kernel ? kernel : kindName(st.kind);
      int64_t bytes = 0;
      for (int32_t a = 0; a < st.num_args; ++a)
        bytes += st.args[a].bytes;
      p->stepHead_[e].push_back("{\"name\":" + quote(name) + ",\"cat\":\"" + kindName(st.kind) +
                                "\",\"ph\":\"X\",");
      std::string args = "\"entry\":" + entryName + ",\"step\":" + std::to_string(s) +
                         ",\"kernel\":" + quote(kernel) + ",\"nodes\":" +
                         quote(named ? st.name : "") + ",\"bytes\":" + std::to_string(bytes) +
                         ",\"device\":" + device;
      if (st.kind == NNCC_STEP_GEMM) {
        const int64_t *ip = st.iparams;
        long long batch = ip[NNCC_GEMM_BATCH], m = ip[NNCC_GEMM_M], n = ip[NNCC_GEMM_N],
                  k = ip[NNCC_GEMM_K];
        args += format(",\"gemm\":\"%lldx(%lldx%lldx%lld)\",\"flops\":%lld", batch, m, n, k,
                       2 * batch * m * n * k);
      }
      p->stepArgs_[e].push_back(args);
    }
  }
  // Room for a full run past the flush mark: a run never fills the buffer.
  p->flushAt_ = kFlushRecords;
  p->records_.resize(kFlushRecords + maxRecords);

  std::string header = "{\"traceEvents\":[\n";
  header += "{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":0,\"pid\":" + std::to_string(p->pid_) +
            ",\"tid\":0,\"args\":{\"name\":" +
            quote(("nncc " + baseName(module.path())).c_str()) + "}}";
  p->session_ = session;
  if (std::fputs(header.c_str(), f) == EOF)
    return error(NNCC_ERROR_INVALID_ARGUMENT,
                 "cannot write profile file '" + path + "': " + std::strerror(errno));
  {
    std::lock_guard<std::mutex> lock(reg.mutex);
    reg.live.insert(p.get());
  }
  *out = std::move(p);
  return Status::ok();
}

Profiler::~Profiler() {
  Registry &reg = registry();
  {
    std::lock_guard<std::mutex> lock(reg.mutex);
    reg.live.erase(this);
  }
  finish();
}

void Profiler::beginRun(int32_t entry) {
  entry_ = entry;
  tid_ = threadId();
  runStart_ = now();
}

void Profiler::endRun(bool ok) {
  int64_t end = now();
  Record &r = records_[count_++];
  r.start = runStart_;
  r.end = end;
  r.run = runs_;
  r.entry = entry_;
  r.step = -1;
  r.chunks = ok ? 1 : 0;
  r.tid = tid_;
  r.kind = Record::Step;
  if (ok)
    runStats_[static_cast<size_t>(entry_)].add(end - runStart_);
  ++runs_;
  if (count_ >= flushAt_)
    flush();
}

void Profiler::writeEvent(const Record &r) {
  int64_t epoch = registry().epoch;
  char nums[200];
  const std::string &head = r.step < 0 ? runHead_[r.entry] : stepHead_[r.entry][r.step];
  const std::string &args = r.step < 0 ? runArgs_[r.entry] : stepArgs_[r.entry][r.step];
  line_.assign(",\n");
  if (r.kind == Record::Step) {
    line_ += head;
  } else {
    // The collective's name; its own category.
    const nncc_step &st = plan_->entries[r.entry].steps[r.step];
    std::string name = st.name && *st.name ? st.name : "collective";
    if (r.kind == Record::Wait)
      name = "wait for " + name;
    line_ += "{\"name\":" + quote(name.c_str()) + ",\"cat\":\"" +
             (r.kind == Record::Wait ? "wait" : "communication") + "\",\"ph\":\"X\",";
  }
  std::snprintf(nums, sizeof(nums), "\"ts\":%.3f,\"dur\":%.3f,\"pid\":%d,\"tid\":%d,\"args\":{",
                double(r.start - epoch) / 1e3, double(std::max<int64_t>(0, r.end - r.start)) / 1e3,
                pid_, r.tid);
  line_ += nums;
  line_ += args;
  if (r.step < 0)
    std::snprintf(nums, sizeof(nums), ",\"run\":%lld,\"status\":\"%s\"}}", (long long)r.run,
                  r.chunks ? "ok" : "error");
  else if (r.kind == Record::Step)
    std::snprintf(nums, sizeof(nums), ",\"chunks\":%d,\"run\":%lld}}", r.chunks,
                  (long long)r.run);
  else
    std::snprintf(nums, sizeof(nums), ",\"waited_before_step\":%d,\"run\":%lld}}", r.chunks,
                  (long long)r.run);
  line_ += nums;
  std::fwrite(line_.data(), 1, line_.size(), file_);
}

void Profiler::flush() {
  if (!file_) {
    count_ = 0;
    return;
  }
  for (size_t i = 0; i < count_; ++i) {
    const Record &r = records_[i];
    // A thread_name event the first time a thread shows up.
    if (std::find(namedTids_.begin(), namedTids_.end(), r.tid) == namedTids_.end()) {
      namedTids_.push_back(r.tid);
      std::string name = r.kind == Record::Communication && r.tid != tid_
                             ? std::string("nncc communication thread")
                             : format("nncc session %d (%s, %d thread%s)", session_,
                                      deviceName_.c_str(), threads_, threads_ == 1 ? "" : "s");
      std::fprintf(file_,
                   ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"ts\":0,\"pid\":%d,\"tid\":%d,"
                   "\"args\":{\"name\":%s}}",
                   pid_, r.tid, quote(name.c_str()).c_str());
    }
    writeEvent(r);
  }
  count_ = 0;
}

void Profiler::finish() {
  if (!file_)
    return;
  flush();
  const nncc_plan &plan = *plan_;
  std::string tail = "\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"runtime\":\"nncc " +
                     std::string(NNCC_RUNTIME_VERSION) + "\",\"producer\":" +
                     quote(module_->producer()) + ",\"module\":" + quote(module_->path().c_str()) +
                     ",\"device\":" + quote(deviceName_.c_str()) +
                     ",\"plan\":" + quote(deviceKindName(plan.device_kind)) + ",\"threads\":" + std::to_string(threads_) +
                     ",\"runs\":" + std::to_string(runs_) + ",\"steps\":{";
  for (int32_t e = 0; e < plan.num_entries; ++e)
    tail += (e ? "," : "") + quote(plan.entries[e].name) + ":" +
            std::to_string(plan.entries[e].num_steps);
  tail += "}}}\n";
  std::fputs(tail.c_str(), file_);
  bool failed = std::ferror(file_) != 0;
  failed |= std::fclose(file_) != 0;
  file_ = nullptr;
  if (failed)
    std::fprintf(stderr, "nncc: warning: could not write the profile '%s' completely\n",
                 path_.c_str());
}

} // namespace nncc::rt
