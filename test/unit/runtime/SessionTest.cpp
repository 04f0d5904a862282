//===- SessionTest.cpp - signatures, input checks, results, threads -------===//
#include "TestUtil.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <sched.h>
#include <thread>

using namespace nncc::test;
using ::testing::HasSubstr;

namespace {

class Forward : public ::testing::Test {
protected:
  void SetUp() override {
    module_ = loadModule(FIXTURE_OK_SO);
    ASSERT_TRUE(module_);
    session_ = openSession(module_.get(), 2);
    ASSERT_TRUE(session_);
  }

  /// Runs forward with the given input tensor; expects failure and returns
  /// the message.
  std::string inputError(const nncc_tensor *inputs, int32_t n) {
    std::vector<float> y(64), yc(64);
    nncc_tensor out[] = {{"y", NNCC_DTYPE_F32, 2, kYDims, y.data()},
                         {"y_copy", NNCC_DTYPE_F32, 2, kYDims, yc.data()}};
    nncc_status s = nncc_session_run(session_.get(), "forward", inputs, n, out, 2);
    EXPECT_EQ(s, NNCC_ERROR_INVALID_INPUT);
    return nncc_last_error();
  }

  std::string outputError(nncc_tensor *outputs, int32_t n) {
    nncc_tensor in[] = {{"x", NNCC_DTYPE_F32, 2, kXDims, x_.data()}};
    nncc_status s = nncc_session_run(session_.get(), "forward", in, 1, outputs, n);
    EXPECT_EQ(s, NNCC_ERROR_INVALID_INPUT);
    return nncc_last_error();
  }

  ModulePtr module_;
  SessionPtr session_;
  std::vector<float> x_ = makeX(0);
};

TEST_F(Forward, Signatures) {
  ASSERT_EQ(nncc_module_num_entries(module_.get()), 2);
  nncc_entry_info e;
  ASSERT_EQ(nncc_module_entry_info(module_.get(), 0, &e), NNCC_OK);
  EXPECT_STREQ(e.name, "forward");
  ASSERT_EQ(e.num_inputs, 1);
  EXPECT_STREQ(e.inputs[0].name, "x");
  EXPECT_EQ(e.inputs[0].dtype, NNCC_DTYPE_F32);
  ASSERT_EQ(e.inputs[0].rank, 2);
  EXPECT_EQ(e.inputs[0].dims[0], 16);
  EXPECT_EQ(e.inputs[0].dims[1], 8);
  ASSERT_EQ(e.num_outputs, 2);
  EXPECT_STREQ(e.outputs[0].name, "y");
  EXPECT_STREQ(e.outputs[1].name, "y_copy");
  EXPECT_EQ(e.arena_bytes, 512);
  EXPECT_EQ(e.num_steps, 3);

  int32_t index = -1;
  ASSERT_EQ(nncc_module_find_entry(module_.get(), "double_it", &index), NNCC_OK);
  EXPECT_EQ(index, 1);
  ASSERT_EQ(nncc_module_entry_info(module_.get(), index, &e), NNCC_OK);
  EXPECT_EQ(e.inputs[0].dtype, NNCC_DTYPE_I32);
  EXPECT_EQ(e.arena_bytes, 0);

  EXPECT_EQ(nncc_module_find_entry(module_.get(), "train_step", &index), NNCC_ERROR_NOT_FOUND);
  EXPECT_STREQ(nncc_last_error(),
               "unknown entry 'train_step' (the module has 'forward', 'double_it')");
  EXPECT_EQ(nncc_module_entry_info(module_.get(), 2, &e), NNCC_ERROR_NOT_FOUND);
}

TEST_F(Forward, ComputesTheReference) {
  std::vector<float> y, yc;
  ASSERT_EQ(runForward(session_.get(), x_, &y, &yc), NNCC_OK) << nncc_last_error();
  std::vector<float> ref = referenceForward(x_);
  for (size_t i = 0; i < ref.size(); ++i) {
    EXPECT_NEAR(y[i], ref[i], 1e-5) << i;
    EXPECT_EQ(yc[i], y[i]) << i;
  }
}

TEST_F(Forward, SecondEntryPoint) {
  const int64_t dims[] = {5};
  int32_t a[5] = {1, -2, 3, 1000000, 0}, b[5] = {};
  nncc_tensor in[] = {{"a", NNCC_DTYPE_I32, 1, dims, a}};
  nncc_tensor out[] = {{"b", NNCC_DTYPE_I32, 1, dims, b}};
  ASSERT_EQ(nncc_session_run(session_.get(), "double_it", in, 1, out, 1), NNCC_OK)
      << nncc_last_error();
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(b[i], 2 * a[i]);
}

TEST_F(Forward, RuntimeAllocatedOutputs) {
  nncc_tensor in[] = {{"x", NNCC_DTYPE_F32, 2, kXDims, x_.data()}};
  nncc_tensor out[] = {{"y", 0, 0, nullptr, nullptr}, {"y_copy", 0, 0, nullptr, nullptr}};
  ASSERT_EQ(nncc_session_run(session_.get(), "forward", in, 1, out, 2), NNCC_OK)
      << nncc_last_error();
  for (const nncc_tensor &t : out) {
    ASSERT_NE(t.data, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data) % 64, 0u);
    EXPECT_EQ(t.dtype, NNCC_DTYPE_F32);
    ASSERT_EQ(t.rank, 2);
    EXPECT_EQ(t.dims[0], 16);
    EXPECT_EQ(t.dims[1], 4);
  }
  std::vector<float> ref = referenceForward(x_);
  const float *y = static_cast<const float *>(out[0].data);
  for (size_t i = 0; i < ref.size(); ++i)
    EXPECT_NEAR(y[i], ref[i], 1e-5);
  nncc_buffer_free(out[0].data);
  nncc_buffer_free(out[1].data);
}

TEST_F(Forward, WrongShape) {
  const int64_t dims[] = {16, 7};
  nncc_tensor in[] = {{"x", NNCC_DTYPE_F32, 2, dims, x_.data()}};
  EXPECT_EQ(inputError(in, 1), "input 'x': expected f32[16,8], got f32[16,7]");
}

TEST_F(Forward, WrongRank) {
  const int64_t dims[] = {128};
  nncc_tensor in[] = {{"x", NNCC_DTYPE_F32, 1, dims, x_.data()}};
  EXPECT_EQ(inputError(in, 1), "input 'x': expected f32[16,8], got f32[128]");
}

TEST_F(Forward, WrongDtype) {
  nncc_tensor in[] = {{"x", NNCC_DTYPE_I32, 2, kXDims, x_.data()}};
  EXPECT_EQ(inputError(in, 1), "input 'x': expected f32[16,8], got i32[16,8]");
}

TEST_F(Forward, MissingInput) {
  EXPECT_EQ(inputError(nullptr, 0), "missing input 'x' (expected f32[16,8])");
}

TEST_F(Forward, MisnamedInput) {
  nncc_tensor in[] = {{"X", NNCC_DTYPE_F32, 2, kXDims, x_.data()}};
  EXPECT_EQ(inputError(in, 1), "unexpected input 'X': entry 'forward' has inputs 'x'");
}

TEST_F(Forward, ExtraInput) {
  nncc_tensor in[] = {{"x", NNCC_DTYPE_F32, 2, kXDims, x_.data()},
                      {"z", NNCC_DTYPE_F32, 2, kXDims, x_.data()}};
  EXPECT_EQ(inputError(in, 2), "unexpected input 'z': entry 'forward' has inputs 'x'");
}

TEST_F(Forward, DuplicateInput) {
  nncc_tensor in[] = {{"x", NNCC_DTYPE_F32, 2, kXDims, x_.data()},
                      {"x", NNCC_DTYPE_F32, 2, kXDims, x_.data()}};
  EXPECT_EQ(inputError(in, 2), "input 'x' is given twice");
}

TEST_F(Forward, NullInputData) {
  nncc_tensor in[] = {{"x", NNCC_DTYPE_F32, 2, kXDims, nullptr}};
  EXPECT_EQ(inputError(in, 1), "input 'x': data is NULL");
}

TEST_F(Forward, OutputErrors) {
  std::vector<float> y(64), yc(64);
  const int64_t bad[] = {4, 16};
  nncc_tensor wrong[] = {{"y", NNCC_DTYPE_F32, 2, bad, y.data()},
                         {"y_copy", NNCC_DTYPE_F32, 2, kYDims, yc.data()}};
  EXPECT_EQ(outputError(wrong, 2), "output 'y': expected f32[16,4], got f32[4,16]");
  nncc_tensor missing[] = {{"y", NNCC_DTYPE_F32, 2, kYDims, y.data()}};
  EXPECT_THAT(outputError(missing, 1), HasSubstr("missing output 'y_copy' (expected f32[16,4])"));
  nncc_tensor unknown[] = {{"y", NNCC_DTYPE_F32, 2, kYDims, y.data()},
                           {"y_copy", NNCC_DTYPE_F32, 2, kYDims, yc.data()},
                           {"logits", NNCC_DTYPE_F32, 2, kYDims, yc.data()}};
  EXPECT_EQ(outputError(unknown, 3),
            "unexpected output 'logits': entry 'forward' has outputs 'y', 'y_copy'");
}

TEST_F(Forward, OutputsMayNotOverlapInputsOrEachOther) {
  // Compiled kernels assume separate buffers: an output over the input, or
  // two outputs on the same memory, is refused before anything runs.
  nncc_tensor in[] = {{"x", NNCC_DTYPE_F32, 2, kXDims, x_.data()}};
  std::vector<float> y(64), yc(64);
  nncc_tensor overInput[] = {{"y", NNCC_DTYPE_F32, 2, kYDims, x_.data() + 8},
                             {"y_copy", NNCC_DTYPE_F32, 2, kYDims, yc.data()}};
  EXPECT_EQ(nncc_session_run(session_.get(), "forward", in, 1, overInput, 2),
            NNCC_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(nncc_last_error(), HasSubstr("output 'y' overlaps input 'x'"));
  nncc_tensor shared[] = {{"y", NNCC_DTYPE_F32, 2, kYDims, y.data()},
                          {"y_copy", NNCC_DTYPE_F32, 2, kYDims, y.data() + 32}};
  EXPECT_EQ(nncc_session_run(session_.get(), "forward", in, 1, shared, 2),
            NNCC_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(nncc_last_error(), HasSubstr("outputs 'y' and 'y_copy' overlap"));
  nncc_tensor apart[] = {{"y", NNCC_DTYPE_F32, 2, kYDims, y.data()},
                         {"y_copy", NNCC_DTYPE_F32, 2, kYDims, yc.data()}};
  EXPECT_EQ(nncc_session_run(session_.get(), "forward", in, 1, apart, 2), NNCC_OK);
}

TEST_F(Forward, UnknownEntry) {
  EXPECT_EQ(nncc_session_run(session_.get(), "backward", nullptr, 0, nullptr, 0),
            NNCC_ERROR_NOT_FOUND);
  EXPECT_STREQ(nncc_last_error(), "unknown entry 'backward' (the module has 'forward', 'double_it')");
}

TEST_F(Forward, ArenaIsAllocatedOnceAndNotPerRun) {
  // One 64-byte aligned arena sized for the largest entry (512 bytes), the
  // GEMM's packed weight and scratch; runs allocate nothing.
  const int64_t bytes = fixtureSessionBytes(2);
  EXPECT_EQ(nncc_session_allocated_bytes(session_.get()), bytes);
  std::vector<float> y, yc;
  std::vector<float> ref = referenceForward(x_);
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(runForward(session_.get(), x_, &y, &yc), NNCC_OK) << nncc_last_error();
    ASSERT_EQ(nncc_session_allocated_bytes(session_.get()), bytes) << "run " << i;
  }
  EXPECT_NEAR(y[17], ref[17], 1e-5);
}

TEST(Session, DeviceErrors) {
  ModulePtr m = loadModule(FIXTURE_OK_SO);
  ASSERT_TRUE(m);
  nncc_session *s = nullptr;
  EXPECT_EQ(nncc_session_create(m.get(), "cuda:0", nullptr, &s), NNCC_ERROR_UNAVAILABLE);
  EXPECT_THAT(nncc_last_error(), ::testing::StartsWith("cannot open device cuda:0: no CUDA driver "
                                                       "(/nonexistent/libcuda.so.1) found"));
  EXPECT_EQ(nncc_session_create(m.get(), "cuda:3", nullptr, &s), NNCC_ERROR_UNAVAILABLE);
  EXPECT_THAT(nncc_last_error(), HasSubstr("cannot open device cuda:3: no CUDA driver"));
  EXPECT_EQ(nncc_session_create(m.get(), "tpu", nullptr, &s), NNCC_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(nncc_last_error(), "unknown device 'tpu' (expected 'cpu' or 'cuda:N')");
  EXPECT_EQ(nncc_session_create(m.get(), "cuda:x", nullptr, &s), NNCC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nncc_device_count("cpu"), 1);
  EXPECT_EQ(nncc_device_count("cuda"), 0);

  nncc_session_options o;
  nncc_session_options_init(&o);
  o.threads = -1;
  EXPECT_EQ(nncc_session_create(m.get(), "cpu", &o, &s), NNCC_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(nncc_last_error(), HasSubstr("threads must be between 0"));
  o.struct_size = 2;
  o.threads = 1;
  EXPECT_EQ(nncc_session_create(m.get(), "cpu", &o, &s), NNCC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(s, nullptr);
}

TEST(Session, KernelsWithoutCpuCode) {
  ModulePtr m = loadModule(FIXTURE_NO_CPU_SO); // loads: it might run on a GPU
  ASSERT_TRUE(m);
  nncc_session *s = nullptr;
  EXPECT_EQ(nncc_session_create(m.get(), "cpu", nullptr, &s), NNCC_ERROR_UNAVAILABLE);
  EXPECT_THAT(nncc_last_error(),
              HasSubstr("has no plan for cpu devices (it was compiled for cuda; compile it with a "
                        "target list that includes cpu"));
}

TEST(Session, DefaultThreadsIsAllCores) {
  ModulePtr m = loadModule(FIXTURE_OK_SO);
  ASSERT_TRUE(m);
  SessionPtr s = openSession(m.get(), 0);
  ASSERT_TRUE(s);
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  EXPECT_EQ(nncc_session_threads(s.get()), CPU_COUNT(&set));
  EXPECT_STREQ(nncc_session_device(s.get()), "cpu");
}

TEST(Session, OneAndFourThreadsAgree) {
  ModulePtr m = loadModule(FIXTURE_OK_SO);
  ASSERT_TRUE(m);
  SessionPtr s1 = openSession(m.get(), 1), s4 = openSession(m.get(), 4);
  ASSERT_TRUE(s1 && s4);
  EXPECT_EQ(nncc_session_threads(s4.get()), 4);
  for (int seed = 0; seed < 5; ++seed) {
    std::vector<float> x = makeX(seed), y1, c1, y4, c4;
    ASSERT_EQ(runForward(s1.get(), x, &y1, &c1), NNCC_OK) << nncc_last_error();
    ASSERT_EQ(runForward(s4.get(), x, &y4, &c4), NNCC_OK) << nncc_last_error();
    EXPECT_EQ(y1, y4);
    EXPECT_EQ(c1, c4);
  }
}

TEST(Session, ManySessionsOnOneModuleConcurrently) {
  ModulePtr m = loadModule(FIXTURE_OK_SO);
  ASSERT_TRUE(m);
  constexpr int kThreads = 8, kRuns = 50;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      nncc_session_options o;
      nncc_session_options_init(&o);
      o.threads = 1 + t % 3; // some sessions with their own pools
      nncc_session *s = nullptr;
      if (nncc_session_create(m.get(), "cpu", &o, &s) != NNCC_OK) {
        ++failures;
        return;
      }
      for (int r = 0; r < kRuns; ++r) {
        std::vector<float> x = makeX(t * kRuns + r), y, yc;
        if (runForward(s, x, &y, &yc) != NNCC_OK) {
          ++failures;
          break;
        }
        std::vector<float> ref = referenceForward(x);
        for (size_t i = 0; i < ref.size(); ++i)
          if (std::fabs(y[i] - ref[i]) > 1e-5f || yc[i] != y[i]) {
            ++failures;
            break;
          }
      }
      nncc_session_destroy(s);
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(failures.load(), 0);
}

// One session shared by threads: runs are serialized, each gets its own
// results (some threads have the runtime allocate the outputs, which shared
// per-run scratch once handed to the wrong thread and freed twice).
TEST(Session, OneSessionFromManyThreads) {
  ModulePtr m = loadModule(FIXTURE_OK_SO);
  ASSERT_TRUE(m);
  SessionPtr s = openSession(m.get(), 2);
  ASSERT_TRUE(s);
  constexpr int kThreads = 8, kRuns = 100;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRuns; ++r) {
        std::vector<float> x = makeX(t * kRuns + r), ref = referenceForward(x);
        nncc_tensor in[] = {{"x", NNCC_DTYPE_F32, 2, kXDims, x.data()}};
        std::vector<float> y(ref.size());
        nncc_tensor out[] = {{"y", NNCC_DTYPE_F32, 2, kYDims, t % 2 ? y.data() : nullptr},
                             {"y_copy", 0, 0, nullptr, nullptr}};
        if (nncc_session_run(s.get(), "forward", in, 1, out, 2) != NNCC_OK) {
          ++failures;
          return;
        }
        const float *got = static_cast<const float *>(out[0].data);
        const float *copy = static_cast<const float *>(out[1].data);
        for (size_t i = 0; i < ref.size(); ++i)
          if (std::fabs(got[i] - ref[i]) > 1e-5f || copy[i] != got[i]) {
            ++failures;
            break;
          }
        if (!(t % 2))
          nncc_buffer_free(out[0].data);
        nncc_buffer_free(out[1].data);
      }
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(failures.load(), 0);
}

// A kernel's run-time check (an index out of range) fails the run with the
// check's message; the flag is cleared before each run, so the next good
// run succeeds.
TEST(Session, RunTimeCheckFailsTheRun) {
  ModulePtr m = loadModule(FIXTURE_CHECKED_OK_SO);
  ASSERT_TRUE(m);
  SessionPtr s = openSession(m.get(), 2);
  ASSERT_TRUE(s);
  const int64_t tableDims[] = {4, 2}, idxDims[] = {3}, rowsDims[] = {3, 2};
  float table[8] = {0, 1, 10, 11, 20, 21, 30, 31}, rows[6] = {};
  auto run = [&](std::vector<int32_t> idx) {
    nncc_tensor in[] = {{"table", NNCC_DTYPE_F32, 2, tableDims, table},
                        {"idx", NNCC_DTYPE_I32, 1, idxDims, idx.data()}};
    nncc_tensor out[] = {{"rows", NNCC_DTYPE_F32, 2, rowsDims, rows}};
    return nncc_session_run(s.get(), "forward", in, 2, out, 1);
  };
  ASSERT_EQ(run({3, -1, 1}), NNCC_OK) << nncc_last_error();
  EXPECT_EQ(rows[0], 30);
  EXPECT_EQ(rows[3], 31);
  EXPECT_EQ(rows[5], 11);
  EXPECT_EQ(run({0, 4, 1}), NNCC_ERROR_INVALID_INPUT);
  EXPECT_STREQ(nncc_last_error(),
               "entry 'forward': Gather_0: index out of range [-4, 4) in input 'idx'");
  EXPECT_EQ(run({2, 1, 0}), NNCC_OK) << nncc_last_error();
  EXPECT_EQ(rows[0], 20);
}

TEST(Session, ErrorMessagesAreThreadLocal) {
  ModulePtr m = loadModule(FIXTURE_OK_SO);
  ASSERT_TRUE(m);
  nncc_session *s = nullptr;
  ASSERT_NE(nncc_session_create(m.get(), "tpu", nullptr, &s), NNCC_OK);
  std::string other;
  std::thread([&] {
    nncc_module_handle *h = nullptr;
    nncc_module_load("/nonexistent.so", &h);
    other = nncc_last_error();
  }).join();
  EXPECT_THAT(other, HasSubstr("/nonexistent.so"));
  EXPECT_THAT(nncc_last_error(), HasSubstr("unknown device 'tpu'"));
}

} // namespace
