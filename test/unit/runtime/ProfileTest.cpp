//===- ProfileTest.cpp - the profiler's trace files and totals ------------===//
//
// Runs the fixture module with profiling on (session option and
// NNCC_PROFILE), parses the trace with a strict JSON reader and checks the
// trace-event format and that every plan step appears once per run.
//
//===----------------------------------------------------------------------===//
#include "Json.h"
#include "TensorProto.h"
#include "TestUtil.h"
#include "nncc/runtime.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sys/wait.h>
#include <unistd.h>

using namespace nncc::test;
using ::testing::HasSubstr;

namespace {

std::string testDir() {
  return makeTempDir(std::string("Profile.") +
                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
}

SessionPtr openProfiled(nncc_module_handle *m, int threads, const char *profile) {
  nncc_session_options o;
  nncc_session_options_init(&o);
  o.threads = threads;
  o.profile = profile;
  nncc_session *s = nullptr;
  nncc_status st = nncc_session_create(m, "cpu", &o, &s);
  EXPECT_EQ(st, NNCC_OK) << nncc_last_error();
  return SessionPtr(st == NNCC_OK ? s : nullptr);
}

nncc_status runDouble(nncc_session *s) {
  static const int64_t dims[] = {FIXTURE_DOUBLE_LEN};
  int32_t a[FIXTURE_DOUBLE_LEN] = {1, 2, 3, 4, 5}, b[FIXTURE_DOUBLE_LEN] = {};
  nncc_tensor in[] = {{"a", NNCC_DTYPE_I32, 1, dims, a}};
  nncc_tensor out[] = {{"b", NNCC_DTYPE_I32, 1, dims, b}};
  return nncc_session_run(s, "double_it", in, 1, out, 1);
}

/// Parses a trace file and checks the trace-event rules every event must
/// follow (what Perfetto and chrome://tracing need); returns traceEvents.
std::vector<Json> readTrace(const std::string &path) {
  std::string text = readFile(path);
  Json doc;
  std::string error;
  EXPECT_TRUE(Json::parse(text, &doc, &error)) << path << ": " << error;
  EXPECT_EQ(doc.kind, Json::Object);
  EXPECT_EQ(doc["traceEvents"].kind, Json::Array) << path;
  std::vector<Json> events = doc["traceEvents"].array;
  for (const Json &e : events) {
    EXPECT_EQ(e.kind, Json::Object);
    EXPECT_EQ(e["name"].kind, Json::String);
    EXPECT_EQ(e["ph"].kind, Json::String);
    EXPECT_EQ(e["ts"].kind, Json::Number);
    EXPECT_EQ(e["pid"].kind, Json::Number);
    EXPECT_EQ(e["tid"].kind, Json::Number);
    if (e["ph"].string == "X") {
      EXPECT_EQ(e["dur"].kind, Json::Number) << e["name"].string;
      EXPECT_GE(e["dur"].number, 0) << e["name"].string;
    } else {
      EXPECT_EQ(e["ph"].string, "M") << "only complete and metadata events are written";
      EXPECT_EQ(e["args"]["name"].kind, Json::String);
    }
  }
  return events;
}

struct Expected {
  const char *name, *cat, *kernel;
  double bytes;
};
// The fixture's forward plan (relu_gemm.c).
const Expected kForward[] = {
    {"Add_0+Relu_1", "kernel", "add_relu", 512 + 32 + 512},
    {"MatMul_2", "gemm", "", 512 + 128 + 256},
    {"Identity_3", "copy", "", 256 + 256},
};

/// Step events of `entry` by run index, and run events by index.
void byRun(const std::vector<Json> &events, const std::string &entry,
           std::map<int, std::vector<const Json *>> *steps, std::map<int, const Json *> *runs) {
  for (const Json &e : events) {
    if (e["ph"].string != "X" || e["args"]["entry"].string != entry)
      continue;
    int run = static_cast<int>(e["args"]["run"].number);
    if (e["cat"].string == "run")
      (*runs)[run] = &e;
    else
      (*steps)[run].push_back(&e);
  }
}

TEST(Profile, EveryStepOncePerRun) {
  std::string dir = testDir(), path = dir + "/trace.json";
  ModulePtr m = loadModule(FIXTURE_OK_SO);
  ASSERT_TRUE(m);
  {
    SessionPtr s = openProfiled(m.get(), 2, path.c_str());
    ASSERT_TRUE(s);
    EXPECT_EQ(std::string(nncc_session_profile_path(s.get())), path);
    for (int r = 0; r < 3; ++r) {
      std::vector<float> x = makeX(r), y, yc;
      ASSERT_EQ(runForward(s.get(), x, &y, &yc), NNCC_OK) << nncc_last_error();
      EXPECT_EQ(y, referenceForward(x)); // profiling changes nothing
    }
    ASSERT_EQ(runDouble(s.get()), NNCC_OK) << nncc_last_error();
  } // destroying the session completes the file
  std::vector<Json> events = readTrace(path);

  std::map<int, std::vector<const Json *>> steps;
  std::map<int, const Json *> runs;
  byRun(events, "forward", &steps, &runs);
  ASSERT_EQ(runs.size(), 3u);
  ASSERT_EQ(steps.size(), 3u);
  for (auto &[run, evs] : steps) {
    ASSERT_TRUE(runs.count(run)) << run;
    const Json &re = *runs[run];
    EXPECT_EQ(re["name"].string, "forward");
    EXPECT_EQ(re["args"]["steps"].number, 3);
    EXPECT_EQ(re["args"]["status"].string, "ok");
    ASSERT_EQ(evs.size(), 3u) << "run " << run;
    for (size_t i = 0; i < evs.size(); ++i) {
      const Json &e = *evs[i];
      const Json &a = e["args"];
      EXPECT_EQ(a["step"].number, double(i));
      EXPECT_EQ(e["name"].string, kForward[i].name);
      EXPECT_EQ(a["nodes"].string, kForward[i].name);
      EXPECT_EQ(e["cat"].string, kForward[i].cat);
      EXPECT_EQ(a["kernel"].string, kForward[i].kernel);
      EXPECT_EQ(a["bytes"].number, kForward[i].bytes);
      EXPECT_EQ(a["device"].string, "cpu");
      // add_relu's 16 rows over 2 threads: 4 chunks per thread.
      EXPECT_EQ(a["chunks"].number, i == 0 ? 8 : 1);
      EXPECT_EQ(e["pid"].number, double(getpid()));
      EXPECT_EQ(e["tid"].number, re["tid"].number);
      // Inside the run's slice, in plan order.
      EXPECT_GE(e["ts"].number, re["ts"].number - 1e-3);
      EXPECT_LE(e["ts"].number + e["dur"].number, re["ts"].number + re["dur"].number + 2e-3);
      if (i > 0) {
        const Json &prev = *evs[i - 1];
        EXPECT_GE(e["ts"].number, prev["ts"].number + prev["dur"].number - 1e-3);
      }
    }
  }
  EXPECT_EQ((*steps[0][1])["args"]["gemm"].string, "2x(8x4x8)");
  EXPECT_EQ((*steps[0][1])["args"]["flops"].number, 2 * 2 * 8 * 4 * 8);

  // The other entry, numbered on from the session's run count.
  std::map<int, std::vector<const Json *>> dsteps;
  std::map<int, const Json *> druns;
  byRun(events, "double_it", &dsteps, &druns);
  ASSERT_EQ(druns.size(), 1u);
  EXPECT_EQ(druns.begin()->first, 3);
  ASSERT_EQ(dsteps[3].size(), 1u);
  EXPECT_EQ((*dsteps[3][0])["name"].string, "Mul_0");
  EXPECT_EQ((*dsteps[3][0])["args"]["chunks"].number, 5);

  // Metadata: the process and the running thread are named.
  bool process = false, thread = false;
  for (const Json &e : events) {
    if (e["ph"].string != "M")
      continue;
    process |= e["name"].string == "process_name" &&
               e["args"]["name"].string.find("relu_gemm_ok.so") != std::string::npos;
    thread |= e["name"].string == "thread_name" && e["tid"].number == (*runs[0])["tid"].number &&
              e["args"]["name"].string.find("cpu, 2 threads") != std::string::npos;
  }
  EXPECT_TRUE(process);
  EXPECT_TRUE(thread);
}

TEST(Profile, StatsAndPause) {
  std::string dir = testDir(), path = dir + "/trace.json";
  ModulePtr m = loadModule(FIXTURE_OK_SO);
  ASSERT_TRUE(m);
  SessionPtr s = openProfiled(m.get(), 1, path.c_str());
  ASSERT_TRUE(s);
  std::vector<float> x = makeX(1), y, yc;
  ASSERT_EQ(runForward(s.get(), x, &y, &yc), NNCC_OK);
  ASSERT_EQ(nncc_session_set_profiling(s.get(), 0), NNCC_OK);
  for (int i = 0; i < 4; ++i)
    ASSERT_EQ(runForward(s.get(), x, &y, &yc), NNCC_OK); // not recorded
  ASSERT_EQ(nncc_session_set_profiling(s.get(), 1), NNCC_OK);
  ASSERT_EQ(runForward(s.get(), x, &y, &yc), NNCC_OK);

  nncc_profile_stats run, step;
  ASSERT_EQ(nncc_session_profile_stats(s.get(), 0, -1, &run), NNCC_OK);
  EXPECT_EQ(run.calls, 2);
  int64_t stepsNs = 0;
  for (int32_t i = 0; i < 3; ++i) {
    ASSERT_EQ(nncc_session_profile_stats(s.get(), 0, i, &step), NNCC_OK);
    EXPECT_EQ(step.calls, 2);
    EXPECT_GE(step.min_ns, 0);
    EXPECT_LE(step.min_ns, step.max_ns);
    EXPECT_LE(step.min_ns + step.max_ns, step.total_ns);
    stepsNs += step.total_ns;
  }
  EXPECT_LE(stepsNs, run.total_ns);
  EXPECT_LE(run.min_ns, run.max_ns);
  ASSERT_EQ(nncc_session_profile_stats(s.get(), 1, -1, &run), NNCC_OK);
  EXPECT_EQ(run.calls, 0);
  EXPECT_EQ(run.min_ns, 0);
  EXPECT_EQ(nncc_session_profile_stats(s.get(), 0, 3, &step), NNCC_ERROR_NOT_FOUND);
  EXPECT_THAT(nncc_last_error(), HasSubstr("step 3 out of range (entry 'forward' has 3 steps)"));
  EXPECT_EQ(nncc_session_profile_stats(s.get(), 2, 0, &step), NNCC_ERROR_NOT_FOUND);

  s.reset();
  std::map<int, std::vector<const Json *>> steps;
  std::map<int, const Json *> runs;
  std::vector<Json> events = readTrace(path);
  byRun(events, "forward", &steps, &runs);
  EXPECT_EQ(runs.size(), 2u); // run indices count recorded runs: 0 and 1
  EXPECT_TRUE(runs.count(0) && runs.count(1));
  for (auto &[run, evs] : steps)
    EXPECT_EQ(evs.size(), 3u);
}

TEST(Profile, OffByDefault) {
  ModulePtr m = loadModule(FIXTURE_OK_SO);
  ASSERT_TRUE(m);
  unsetenv("NNCC_PROFILE");
  SessionPtr s = openSession(m.get(), 1);
  ASSERT_TRUE(s);
  EXPECT_STREQ(nncc_session_profile_path(s.get()), "");
  nncc_profile_stats st;
  EXPECT_EQ(nncc_session_profile_stats(s.get(), 0, -1, &st), NNCC_ERROR_UNAVAILABLE);
  EXPECT_THAT(nncc_last_error(), HasSubstr("does not profile"));
  EXPECT_EQ(nncc_session_set_profiling(s.get(), 1), NNCC_ERROR_UNAVAILABLE);
  EXPECT_STREQ(nncc_session_profile_path(nullptr), "");
}

TEST(Profile, EnvironmentVariableAndSeveralSessions) {
  std::string dir = testDir(), path = dir + "/env.json";
  ModulePtr m = loadModule(FIXTURE_OK_SO);
  ASSERT_TRUE(m);
  setenv("NNCC_PROFILE", path.c_str(), 1);
  SessionPtr a = openSession(m.get(), 1), b = openSession(m.get(), 2);
  SessionPtr off = openProfiled(m.get(), 1, ""); // "" overrides the environment
  unsetenv("NNCC_PROFILE");
  ASSERT_TRUE(a && b && off);
  // The second session to ask for a path writes a numbered file.
  EXPECT_EQ(std::string(nncc_session_profile_path(a.get())), path);
  EXPECT_EQ(std::string(nncc_session_profile_path(b.get())), dir + "/env.1.json");
  EXPECT_STREQ(nncc_session_profile_path(off.get()), "");
  std::vector<float> x = makeX(2), y, yc;
  ASSERT_EQ(runForward(a.get(), x, &y, &yc), NNCC_OK);
  ASSERT_EQ(runForward(b.get(), x, &y, &yc), NNCC_OK);
  ASSERT_EQ(runForward(b.get(), x, &y, &yc), NNCC_OK);
  ASSERT_EQ(runForward(off.get(), x, &y, &yc), NNCC_OK);
  a.reset();
  b.reset();
  for (auto [file, want] : {std::pair<std::string, size_t>{path, 1}, {dir + "/env.1.json", 2}}) {
    std::map<int, std::vector<const Json *>> steps;
    std::map<int, const Json *> runs;
    std::vector<Json> events = readTrace(file);
    byRun(events, "forward", &steps, &runs);
    EXPECT_EQ(runs.size(), want) << file;
    for (auto &[run, evs] : steps)
      EXPECT_EQ(evs.size(), 3u) << file;
  }
}

TEST(Profile, UnwritablePath) {
  ModulePtr m = loadModule(FIXTURE_OK_SO);
  ASSERT_TRUE(m);
  nncc_session_options o;
  nncc_session_options_init(&o);
  o.profile = "/nonexistent/dir/trace.json";
  nncc_session *s = nullptr;
  EXPECT_EQ(nncc_session_create(m.get(), "cpu", &o, &s), NNCC_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(nncc_last_error(),
              HasSubstr("cannot open profile file '/nonexistent/dir/trace.json'"));
  EXPECT_EQ(s, nullptr);
  // From the environment it only warns: a program that never asked for a
  // profile keeps working.
  setenv("NNCC_PROFILE", "/nonexistent/dir/env.json", 1);
  SessionPtr ok = openSession(m.get(), 1);
  unsetenv("NNCC_PROFILE");
  ASSERT_TRUE(ok);
  EXPECT_STREQ(nncc_session_profile_path(ok.get()), "");
}

TEST(Profile, OlderOptionsStructHasNoProfileField) {
  std::string dir = testDir();
  ModulePtr m = loadModule(FIXTURE_OK_SO);
  ASSERT_TRUE(m);
  nncc_session_options o;
  nncc_session_options_init(&o);
  o.struct_size = offsetof(nncc_session_options, profile); // a caller built before the field
  o.profile = "/nonexistent/never-read.json";
  nncc_session *s = nullptr;
  ASSERT_EQ(nncc_session_create(m.get(), "cpu", &o, &s), NNCC_OK) << nncc_last_error();
  EXPECT_STREQ(nncc_session_profile_path(s), "");
  nncc_session_destroy(s);
}

TEST(Profile, SessionNeverDestroyedStillCompletesAtExit) {
  std::string dir = testDir(), path = dir + "/exit.json";
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    nncc_module_handle *m = nullptr;
    nncc_session *s = nullptr;
    nncc_session_options o;
    nncc_session_options_init(&o);
    o.threads = 1;
    o.profile = path.c_str();
    if (nncc_module_load(FIXTURE_OK_SO, &m) != NNCC_OK ||
        nncc_session_create(m, "cpu", &o, &s) != NNCC_OK)
      _exit(2);
    std::vector<float> x = makeX(3), y, yc;
    if (runForward(s, x, &y, &yc) != NNCC_OK)
      _exit(3);
    std::exit(0); // a normal exit that never destroys the session
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  std::map<int, std::vector<const Json *>> steps;
  std::map<int, const Json *> runs;
  std::vector<Json> events = readTrace(path);
  byRun(events, "forward", &steps, &runs);
  EXPECT_EQ(runs.size(), 1u);
  EXPECT_EQ(steps[0].size(), 3u);
}

TEST(Profile, ManyRunsFlushInBatches) {
  // More records than one buffer holds (65536): the file is written in
  // batches between runs and stays one valid document.
  std::string dir = testDir(), path = dir + "/many.json";
  ModulePtr m = loadModule(FIXTURE_OK_SO);
  ASSERT_TRUE(m);
  constexpr int kRuns = 20000; // 4 records each
  {
    SessionPtr s = openProfiled(m.get(), 1, path.c_str());
    ASSERT_TRUE(s);
    std::vector<float> x = makeX(4), y, yc;
    for (int r = 0; r < kRuns; ++r)
      ASSERT_EQ(runForward(s.get(), x, &y, &yc), NNCC_OK);
  }
  std::vector<Json> events = readTrace(path);
  std::map<int, int> perRun;
  int runEvents = 0;
  for (const Json &e : events) {
    if (e["ph"].string != "X")
      continue;
    if (e["cat"].string == "run")
      ++runEvents;
    else
      ++perRun[static_cast<int>(e["args"]["run"].number)];
  }
  EXPECT_EQ(runEvents, kRuns);
  ASSERT_EQ(perRun.size(), size_t(kRuns));
  for (auto &[run, n] : perRun)
    ASSERT_EQ(n, 3) << "run " << run;
}

TEST(Profile, NamesAreEscaped) {
  std::string dir = testDir(), path = dir + "/odd.json";
  ModulePtr m = loadModule(FIXTURE_ODD_NAMES_SO);
  ASSERT_TRUE(m);
  {
    SessionPtr s = openProfiled(m.get(), 1, path.c_str());
    ASSERT_TRUE(s);
    std::vector<float> x = makeX(6), y, yc;
    ASSERT_EQ(runForward(s.get(), x, &y, &yc), NNCC_OK);
  }
  std::map<int, std::vector<const Json *>> steps;
  std::map<int, const Json *> runs;
  std::vector<Json> events = readTrace(path); // strict: valid UTF-8 and escapes
  byRun(events, "forward", &steps, &runs);
  ASSERT_EQ(steps[0].size(), 3u);
  // The byte 0xff is not UTF-8: it becomes U+FFFD; the rest is kept.
  EXPECT_EQ((*steps[0][0])["name"].string, "Add \"0\"\\\nRelu\xef\xbf\xbd_1\xc3\xa9");
  EXPECT_EQ((*steps[0][0])["args"]["nodes"].string, (*steps[0][0])["name"].string);
  // An unnamed GEMM step is called after its kind.
  EXPECT_EQ((*steps[0][1])["name"].string, "gemm");
  EXPECT_EQ((*steps[0][1])["args"]["nodes"].string, "");
}

TEST(Profile, StepInfo) {
  ModulePtr m = loadModule(FIXTURE_OK_SO);
  ASSERT_TRUE(m);
  nncc_step_info si;
  for (int32_t i = 0; i < 3; ++i) {
    ASSERT_EQ(nncc_module_step_info(m.get(), "cpu", 0, i, &si), NNCC_OK);
    EXPECT_STREQ(si.name, kForward[i].name);
    EXPECT_STREQ(si.kind, kForward[i].cat);
    EXPECT_STREQ(si.kernel, kForward[i].kernel);
    EXPECT_EQ(double(si.bytes), kForward[i].bytes);
  }
  ASSERT_EQ(nncc_module_step_info(m.get(), nullptr, 0, 0, &si), NNCC_OK); // the first plan
  EXPECT_EQ(si.parallel_extent, FIXTURE_ROWS);
  EXPECT_EQ(nncc_module_num_steps(m.get(), "cuda", 0), 3);
  EXPECT_EQ(nncc_module_num_steps(m.get(), "tpu", 0), -1);
  EXPECT_EQ(nncc_module_step_info(m.get(), "cpu", 0, 3, &si), NNCC_ERROR_NOT_FOUND);
  EXPECT_EQ(nncc_module_step_info(m.get(), "cpu", 5, 0, &si), NNCC_ERROR_NOT_FOUND);
  EXPECT_EQ(nncc_module_step_info(m.get(), "tpu", 0, 0, &si), NNCC_ERROR_NOT_FOUND);
  EXPECT_EQ(nncc_module_step_info(nullptr, "cpu", 0, 0, &si), NNCC_ERROR_INVALID_ARGUMENT);
}

TEST(Profile, CppApi) {
  std::string dir = testDir(), path = dir + "/cpp.json";
  nncc::Module mod = nncc::Module::load(FIXTURE_OK_SO);
  std::vector<nncc::StepInfo> steps = mod.steps("forward");
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[1].name, "MatMul_2");
  EXPECT_EQ(steps[1].kind, "gemm");
  EXPECT_EQ(mod.entry("double_it").numSteps, 1);
  EXPECT_EQ(mod.entry("double_it").index, 1);
  {
    nncc::SessionOptions o;
    o.threads = 1;
    o.profile = path;
    nncc::Session s(mod, nncc::Device::cpu(), o);
    EXPECT_TRUE(s.profiling());
    EXPECT_EQ(s.profilePath(), path);
    std::vector<float> x = makeX(5);
    auto xt = nncc::Tensor::wrap(x.data(), nncc::DType::f32, {FIXTURE_ROWS, FIXTURE_COLS});
    s.run("forward", {{"x", xt}});
    s.setProfiling(false);
    s.run("forward", {{"x", xt}});
    EXPECT_EQ(s.profileStats("forward").calls, 1);
    EXPECT_EQ(s.profileStats("forward", 2).calls, 1);
    EXPECT_THROW(s.profileStats("nope"), nncc::Error);
  }
  nncc::Session plain(mod, nncc::Device::cpu(), nncc::SessionOptions{1, std::string()});
  EXPECT_FALSE(plain.profiling());
  EXPECT_THROW(plain.setProfiling(true), nncc::Error);
  std::map<int, std::vector<const Json *>> st;
  std::map<int, const Json *> runs;
  std::vector<Json> events = readTrace(path);
  byRun(events, "forward", &st, &runs);
  EXPECT_EQ(runs.size(), 1u);
}

TEST(Profile, NnccRunProfileAndBench) {
  std::string dir = testDir(), path = dir + "/run.json";
  nncc::tools::HostTensor x;
  x.name = "x";
  x.dtype = NNCC_DTYPE_F32;
  x.dims = {FIXTURE_ROWS, FIXTURE_COLS};
  std::vector<float> xv = makeX(8);
  x.data.resize(xv.size() * 4);
  std::memcpy(x.data.data(), xv.data(), x.data.size());
  std::string error;
  ASSERT_TRUE(nncc::tools::writeTensorProtoFile(dir + "/input_0.pb", x, &error)) << error;
  std::string log = dir + "/log.txt";
  std::string cmd = std::string(NNCC_RUN_EXE) + " " + FIXTURE_OK_SO + " --input-dir " + dir +
                    " --bench 7 --threads 2 --profile " + path + " > " + log + " 2>&1";
  int status = std::system(cmd.c_str());
  std::string out = readFile(log);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
  EXPECT_THAT(out, HasSubstr("profile: 7 runs of 'forward', 3 steps:"));
  EXPECT_THAT(out, HasSubstr("top 3 steps by total time:"));
  EXPECT_THAT(out, ::testing::ContainsRegex(
                       "step +name +kind +calls +total ms +% run +mean us +min us"));
  EXPECT_THAT(out, ::testing::ContainsRegex(
                       "Add_0\\+Relu_1 +kernel +7 +[0-9.]+ +[0-9.]+% +[0-9.]+ +[0-9.]+"));
  EXPECT_THAT(out, ::testing::ContainsRegex("MatMul_2 +gemm +7 "));
  EXPECT_THAT(out, ::testing::ContainsRegex("Identity_3 +copy +7 "));
  EXPECT_THAT(out, HasSubstr("profile: wrote " + path));

  // Only the timed runs are recorded: not the first (checked) run or warm-up.
  std::map<int, std::vector<const Json *>> steps;
  std::map<int, const Json *> runs;
  std::vector<Json> events = readTrace(path);
  byRun(events, "forward", &steps, &runs);
  EXPECT_EQ(runs.size(), 7u);
  for (auto &[run, evs] : steps)
    EXPECT_EQ(evs.size(), 3u) << "run " << run;
}

} // namespace
