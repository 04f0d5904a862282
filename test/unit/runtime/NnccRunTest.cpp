//===- NnccRunTest.cpp - nncc-run end to end on the fixture module --------===//
#include "TensorProto.h"
#include "TestUtil.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <sys/wait.h>

using namespace nncc::test;
using nncc::tools::HostTensor;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

struct Result {
  int exitCode;
  std::string output; // stdout and stderr
};

Result nnccRun(const std::string &args, const std::string &dir) {
  std::string log = dir + "/log.txt";
  std::string cmd = std::string(NNCC_RUN_EXE) + " " + args + " > " + log + " 2>&1";
  int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, readFile(log)};
}

HostTensor floats(const std::string &name, std::vector<int64_t> dims, const std::vector<float> &v) {
  HostTensor t;
  t.name = name;
  t.dtype = NNCC_DTYPE_F32;
  t.dims = std::move(dims);
  t.data.resize(v.size() * 4);
  std::memcpy(t.data.data(), v.data(), t.data.size());
  return t;
}

void write(const std::string &path, const HostTensor &t) {
  std::string error;
  ASSERT_TRUE(nncc::tools::writeTensorProtoFile(path, t, &error)) << error;
}

/// A backend-test style folder: inputs and expected outputs.
class NnccRun : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = makeTempDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    x_ = makeX(7);
    ref_ = referenceForward(x_);
    write(dir_ + "/input_0.pb", floats("x", {16, 8}, x_));
    write(dir_ + "/output_0.pb", floats("y", {16, 4}, ref_));
    write(dir_ + "/output_1.pb", floats("y_copy", {16, 4}, ref_));
  }
  std::string model() const { return std::string(FIXTURE_OK_SO); }
  std::string dir_;
  std::vector<float> x_, ref_;
};

TEST_F(NnccRun, CompareAndBench) {
  Result r = nnccRun(model() + " --input-dir " + dir_ + " --compare " + dir_ +
                         " --bench 20 --threads 2",
                     dir_);
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("entry 'forward' on cpu, 2 threads"));
  EXPECT_THAT(r.output, HasSubstr("allocated " + std::to_string(fixtureSessionBytes(2)) +
                                  " bytes on cpu"));
  EXPECT_THAT(r.output, HasSubstr("output 0 'y' f32[16,4]: ok"));
  EXPECT_THAT(r.output, HasSubstr("output 1 'y_copy' f32[16,4]: ok"));
  EXPECT_THAT(r.output, ::testing::ContainsRegex("median [0-9.]+ ms \\(min [0-9.]+ ms, max [0-9.]+ "
                                                 "ms, 20 runs\\)"));
}

TEST_F(NnccRun, Mismatch) {
  std::vector<float> bad = ref_;
  bad[6] += 0.5f;
  write(dir_ + "/output_1.pb", floats("y_copy", {16, 4}, bad));
  Result r = nnccRun(model() + " --input-dir " + dir_ + " --compare " + dir_, dir_);
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("output 0 'y' f32[16,4]: ok"));
  EXPECT_THAT(r.output, HasSubstr("output 1 'y_copy' f32[16,4]: MISMATCH"));
  EXPECT_THAT(r.output, HasSubstr("1 of 64 elements differ; first at index [1,2] (flat 6)"));
  EXPECT_THAT(r.output, HasSubstr("nncc-run: error: 1 of 2 outputs differ"));
}

TEST_F(NnccRun, LooseToleranceAccepts) {
  std::vector<float> off = ref_;
  for (float &v : off)
    v += 0.01f;
  write(dir_ + "/output_0.pb", floats("y", {16, 4}, off));
  Result r = nnccRun(model() + " --input-dir " + dir_ + " --compare " + dir_ +
                         " --rtol 0 --atol=0.02",
                     dir_);
  EXPECT_EQ(r.exitCode, 0) << r.output;
}

TEST_F(NnccRun, WritesOutputs) {
  std::string out = dir_ + "/out";
  ASSERT_EQ(std::system(("mkdir -p " + out).c_str()), 0);
  Result r = nnccRun(model() + " --input-dir " + dir_ + " --output-dir " + out, dir_);
  ASSERT_EQ(r.exitCode, 0) << r.output;
  HostTensor y;
  std::string error;
  ASSERT_TRUE(nncc::tools::readTensorProtoFile(out + "/output_0.pb", &y, &error)) << error;
  EXPECT_EQ(y.name, "y");
  EXPECT_EQ(y.dims, (std::vector<int64_t>{16, 4}));
  const float *v = reinterpret_cast<const float *>(y.data.data());
  for (size_t i = 0; i < ref_.size(); ++i)
    EXPECT_NEAR(v[i], ref_[i], 1e-5);
}

TEST_F(NnccRun, PrintsOutputsWithoutCompare) {
  Result r = nnccRun(model() + " --input-dir=" + dir_ + " --entry forward", dir_);
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("output 0 'y' f32[16,4]:"));
  EXPECT_THAT(r.output, HasSubstr("(64 values)"));
}

TEST_F(NnccRun, WrongInputShapeNamesTheFile) {
  write(dir_ + "/input_0.pb", floats("x", {2, 2}, {1, 2, 3, 4}));
  Result r = nnccRun(model() + " --input-dir " + dir_, dir_);
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_THAT(r.output, HasSubstr("nncc-run: error: " + dir_ +
                                  "/input_0.pb: input 'x': expected f32[16,8], got f32[2,2]"));
}

TEST_F(NnccRun, Errors) {
  std::vector<uint8_t> junk = {0x4a, 0x7f, 1, 2};
  writeFile(dir_ + "/input_0.pb", junk.data(), junk.size());
  Result r = nnccRun(model() + " --input-dir " + dir_, dir_);
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_THAT(r.output, HasSubstr("nncc-run: error: " + dir_ + "/input_0.pb: malformed TensorProto"));

  r = nnccRun(model() + " --input-dir " + dir_ + "/nope", dir_);
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_THAT(r.output, HasSubstr("input_0.pb: no such file (entry 'forward' has 1 inputs: x f32[16,8])"));

  r = nnccRun(model() + " --input-dir " + dir_ + " --device cuda:0", dir_);
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_THAT(r.output, HasSubstr("nncc-run: error: cannot open device cuda:0: no CUDA driver "
                                  "(/nonexistent/libcuda.so.1) found"));

  r = nnccRun("/nonexistent.so --input-dir " + dir_, dir_);
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_THAT(r.output, HasSubstr("nncc-run: error: cannot load module '/nonexistent.so'"));

  r = nnccRun(model() + " --input-dir " + dir_ + " --entry train", dir_);
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_THAT(r.output, HasSubstr("unknown entry 'train'"));

  r = nnccRun(model() + " --input-dir " + dir_ + " --threads -3", dir_);
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_THAT(r.output, HasSubstr("nncc-run: error: --threads needs an integer"));

  r = nnccRun(model(), dir_);
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_THAT(r.output, HasSubstr("--input-dir is required"));
}

TEST_F(NnccRun, ExtraInputFile) {
  write(dir_ + "/input_1.pb", floats("z", {1}, {1}));
  Result r = nnccRun(model() + " --input-dir " + dir_, dir_);
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_THAT(r.output, HasSubstr("input_1.pb exists, but entry 'forward' has only 1 inputs"));
}

TEST_F(NnccRun, ExtraExpectedOutputFile) {
  write(dir_ + "/output_2.pb", floats("z", {1}, {1}));
  Result r = nnccRun(model() + " --input-dir " + dir_ + " --compare " + dir_, dir_);
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr(dir_ + "/output_2.pb exists, but entry 'forward' has only 2 "
                                         "outputs: y f32[16,4], y_copy f32[16,4]"));
}

TEST_F(NnccRun, MissingExpectedOutput) {
  std::remove((dir_ + "/output_1.pb").c_str());
  Result r = nnccRun(model() + " --input-dir " + dir_ + " --compare " + dir_, dir_);
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_THAT(r.output, HasSubstr("output_1.pb: No such file"));
}

} // namespace
